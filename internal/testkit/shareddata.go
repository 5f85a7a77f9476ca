package testkit

// The project's real benchmark and evaluation data (../shared/data beside
// the repository), which tests and benchmarks read in place and never copy
// into the repository.

import (
	"os"
	"path/filepath"
	"testing"
)

// SharedDataEnv names a directory that overrides where the shared data is
// looked for.
const SharedDataEnv = "MUSE_SHARED_DATA"

// SharedDataRoot returns the shared data directory, or "" when it cannot be
// found. It honours $MUSE_SHARED_DATA, then looks for ../shared/data beside the
// repository root (the nearest parent directory holding go.mod).
func SharedDataRoot() string {
	if d := os.Getenv(SharedDataEnv); d != "" {
		if isDir(d) {
			return d
		}
		return ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return ""
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			d := filepath.Join(filepath.Dir(dir), "shared", "data")
			if isDir(d) {
				return d
			}
			return ""
		}
		if filepath.Dir(dir) == dir {
			return ""
		}
	}
}

// SharedData returns the named data set's directory (e.g. "mbfc-ratings"), or skips
// the test or benchmark, saying why, when it is absent.
func SharedData(tb testing.TB, name string) string {
	tb.Helper()
	root := SharedDataRoot()
	if root == "" {
		tb.Skipf("shared data not found (set %s or place it at ../shared/data beside the repository); skipping", SharedDataEnv)
	}
	d := filepath.Join(root, name)
	if !isDir(d) {
		tb.Skipf("shared data set %s not found under %s; skipping", name, root)
	}
	return d
}

func isDir(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.IsDir()
}
