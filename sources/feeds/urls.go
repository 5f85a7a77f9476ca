package feeds

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"hash"
	"io"
	"strconv"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/posts"
)

// URLs is a list of post URLs, one a line (blank lines and lines starting
// with '#' skipped): a file, or standard input. Its cursor is the number of
// the last line delivered and a hash of the lines up to it ("12:9f86d081…"),
// so a list read again goes on after it when it begins with those lines (a
// file appended to), and from its first line when it does not (another list
// on standard input, a file written anew): the lines of another list are
// not skipped for their number. A post is delivered by its URL alone;
// whoever triages it reads it.
type URLs struct {
	// Source names the list (a file's path, "-" for standard input).
	Source string
	Open   func() (io.ReadCloser, error)
}

// Name is the list's identity.
func (u *URLs) Name() string { return "urls " + u.Source }

// Run delivers the list's URLs after line cursor, then returns nil.
func (u *URLs) Run(ctx context.Context, cursor string, emit func(Post) error) error {
	after, want := 0, "" // the cursor's line and hash ("" in an older cursor)
	if cursor != "" {
		num, h, _ := strings.Cut(cursor, ":")
		n, err := strconv.Atoi(num)
		if err != nil || n < 0 {
			return fmt.Errorf("url list cursor %q: not a line number", cursor)
		}
		after, want = n, h
	}
	rc, err := u.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	h := sha256.New()
	type read struct{ text, sum string }
	var skipped []read      // the lines up to the cursor, while they may be another list's
	again := func() error { // another list: the lines skipped are read after all
		for i, r := range skipped {
			if err := u.deliver(i+1, r.text, r.sum, emit); err != nil {
				return err
			}
		}
		skipped = nil
		return nil
	}
	for line := 1; sc.Scan(); line++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		h.Write(sc.Bytes())
		h.Write([]byte{'\n'})
		sum := linesSum(h)
		if line <= after {
			skipped = append(skipped, read{sc.Text(), sum})
			if line == after && want != "" && sum != want {
				if err := again(); err != nil {
					return err
				}
			}
			continue
		}
		if err := u.deliver(line, sc.Text(), sum, emit); err != nil {
			return err
		}
	}
	if err := sc.Err(); err != nil {
		return err
	}
	if want != "" && len(skipped) < after {
		return again() // shorter than the list read before: another one
	}
	return nil
}

// linesSum is the cursor's hash of the lines read so far.
func linesSum(h hash.Hash) string { return hex.EncodeToString(h.Sum(nil)[:8]) }

// deliver emits line n of the list; its cursor is n and sum, the hash of
// the lines up to it.
func (u *URLs) deliver(n int, line, sum string, emit func(Post) error) error {
	s := strings.TrimSpace(line)
	p := Post{Cursor: strconv.Itoa(n) + ":" + sum}
	if s != "" && !strings.HasPrefix(s, "#") {
		if _, err := sources.ParseHTTP(s); err != nil {
			return fmt.Errorf("%s line %d: %w", u.Source, n, err)
		}
		p.ID, p.Post = s, &posts.Post{URL: s}
	}
	return emit(p)
}
