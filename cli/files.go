package cli

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"syscall"
)

// createOutput opens path for an export: a new file (O_EXCL), or with
// force an existing regular file truncated; never through a symbolic link
// (O_NOFOLLOW), which a colleague or a program may have planted where the
// export goes.
func createOutput(path string, force bool) (*os.File, error) {
	flags := os.O_WRONLY | os.O_CREATE | syscall.O_NOFOLLOW
	if force {
		flags |= os.O_TRUNC
	} else {
		flags |= os.O_EXCL
	}
	f, err := os.OpenFile(path, flags, 0o644)
	if err != nil {
		return nil, outputError(path, err, force)
	}
	if err := regular(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// appendOutput opens path to add results to (`muse batch -o`), creating it,
// never through a symbolic link.
func appendOutput(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_CREATE|os.O_APPEND|syscall.O_NOFOLLOW, 0o644)
	if err != nil {
		return nil, outputError(path, err, true)
	}
	if err := regular(f, path); err != nil {
		return nil, err
	}
	return f, nil
}

// regular refuses an output that is not a regular file (a device, a FIFO).
func regular(f *os.File, path string) error {
	st, err := f.Stat()
	if err == nil && !st.Mode().IsRegular() {
		err = fmt.Errorf("%s is not a regular file", path)
	}
	if err != nil {
		f.Close()
		return err
	}
	return nil
}

func outputError(path string, err error, force bool) error {
	if st, lerr := os.Lstat(path); lerr == nil && st.Mode()&fs.ModeSymlink != 0 {
		return fmt.Errorf("%s is a symbolic link; muse does not write through one (remove it or choose another file)", path)
	}
	if !force && errors.Is(err, fs.ErrExist) {
		return fmt.Errorf("%s exists; muse does not overwrite it without --force", path)
	}
	return err
}
