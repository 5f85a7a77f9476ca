package feeds

import (
	"bufio"
	"context"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/posts"
)

// URLs is a list of post URLs, one a line (blank lines and lines starting
// with '#' skipped): a file, or standard input. Its cursor is the number of
// the last line delivered, so a file read again goes on after it. A post
// is delivered by its URL alone; whoever triages it reads it.
type URLs struct {
	// Source names the list (a file's path, "-" for standard input).
	Source string
	Open   func() (io.ReadCloser, error)
}

// Name is the list's identity.
func (u *URLs) Name() string { return "urls " + u.Source }

// Run delivers the list's URLs after line cursor, then returns nil.
func (u *URLs) Run(ctx context.Context, cursor string, emit func(Post) error) error {
	after := 0
	if cursor != "" {
		n, err := strconv.Atoi(cursor)
		if err != nil || n < 0 {
			return fmt.Errorf("url list cursor %q: not a line number", cursor)
		}
		after = n
	}
	rc, err := u.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	sc := bufio.NewScanner(rc)
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for line := 1; sc.Scan(); line++ {
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if line <= after {
			continue
		}
		s := strings.TrimSpace(sc.Text())
		p := Post{Cursor: strconv.Itoa(line)}
		if s != "" && !strings.HasPrefix(s, "#") {
			if _, err := sources.ParseHTTP(s); err != nil {
				return fmt.Errorf("%s line %d: %w", u.Source, line, err)
			}
			p.ID, p.Post = s, &posts.Post{URL: s}
		}
		if err := emit(p); err != nil {
			return err
		}
	}
	return sc.Err()
}
