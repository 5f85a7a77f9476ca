package archive

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
)

// ImportOptions says how Import reads what it is given.
type ImportOptions struct {
	// Fetcher fetches URL arguments (and archives the raw page when its
	// Store is this archive). Nil: URL arguments fail.
	Fetcher *fetch.Fetcher
	// Errors receives one line per item that could not be added; nil
	// discards them.
	Errors io.Writer
}

// ImportResult counts what Import did.
type ImportResult struct {
	Added, Failed int
}

// Import adds each argument to the archive: an http(s) URL is fetched and
// extracted, an .html/.htm file extracted, a .jsonl/.ndjson file read as
// one {url,title,text,published,publisher} record a line, and a folder
// walked for all of those. A bad item is reported on o.Errors and the rest
// go on.
func (s *Store) Import(ctx context.Context, args []string, o ImportOptions) ImportResult {
	var res ImportResult
	fail := func(what string, err error) {
		res.Failed++
		if o.Errors != nil {
			fmt.Fprintf(o.Errors, "muse: archive add %s: %v\n", what, err)
		}
	}
	for _, arg := range args {
		if ctx.Err() != nil {
			fail(arg, ctx.Err())
			continue
		}
		lower := strings.ToLower(arg)
		if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
			if err := s.importURL(ctx, arg, o.Fetcher); err != nil {
				fail(arg, err)
			} else {
				res.Added++
			}
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			fail(arg, err)
			continue
		}
		if !fi.IsDir() {
			s.importFile(ctx, arg, &res, fail)
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				fail(p, err)
				return nil
			}
			if !d.IsDir() && importable(p) {
				s.importFile(ctx, p, &res, fail)
			}
			return ctx.Err()
		})
		if err != nil {
			fail(arg, err)
		}
	}
	return res
}

func importable(p string) bool {
	switch strings.ToLower(filepath.Ext(p)) {
	case ".html", ".htm", ".jsonl", ".ndjson":
		return true
	}
	return false
}

func (s *Store) importFile(ctx context.Context, path string, res *ImportResult, fail func(string, error)) {
	switch strings.ToLower(filepath.Ext(path)) {
	case ".jsonl", ".ndjson":
		s.importJSONL(ctx, path, res, fail)
	case ".html", ".htm":
		a, err := extract.Options{}.ExtractFile(path, "")
		if err == nil {
			err = s.addArticle(ctx, a, "")
		}
		if err != nil {
			fail(path, err)
			return
		}
		res.Added++
	default:
		fail(path, errors.New("not an HTML (.html, .htm) or JSONL (.jsonl, .ndjson) file"))
	}
}

func (s *Store) importURL(ctx context.Context, rawURL string, f *fetch.Fetcher) error {
	if f == nil {
		return errors.New("fetching is not available here")
	}
	p, err := f.Fetch(ctx, rawURL)
	if err != nil {
		return err
	}
	a, err := extract.Extract(p.Body, p.FinalURL)
	if err != nil {
		return err
	}
	return s.addArticle(ctx, a, p.FinalURL)
}

// addArticle archives an extracted article under its canonical URL, else
// the URL it was read from.
func (s *Store) addArticle(ctx context.Context, a *extract.Article, pageURL string) error {
	u := a.CanonicalURL
	if u == "" {
		u = a.URL
	}
	if u == "" {
		u = pageURL
	}
	if u == "" {
		return errors.New("the page names no URL of its own (no canonical link or og:url); give its URL instead")
	}
	pub := a.Publisher
	if pub == "" {
		pub = a.SiteName
	}
	return s.Add(ctx, Doc{URL: u, Title: a.Title, Text: a.Text, Publisher: pub, Published: a.Published})
}

// record is one JSONL line.
type record struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Text      string `json:"text"`
	Published string `json:"published"`
	Publisher string `json:"publisher"`
}

func (s *Store) importJSONL(ctx context.Context, path string, res *ImportResult, fail func(string, error)) {
	f, err := os.Open(path)
	if err != nil {
		fail(path, err)
		return
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 0, 64*1024), 64<<20)
	for line := 1; sc.Scan(); line++ {
		b := strings.TrimSpace(sc.Text())
		if b == "" {
			continue
		}
		where := fmt.Sprintf("%s:%d", path, line)
		var r record
		if err := json.Unmarshal([]byte(b), &r); err != nil {
			fail(where, fmt.Errorf("decode JSON record: %w", err))
			continue
		}
		pub, err := parseDate(r.Published)
		if err != nil {
			fail(where, err)
			continue
		}
		if err := s.Add(ctx, Doc{URL: r.URL, Title: r.Title, Text: r.Text, Publisher: r.Publisher, Published: pub}); err != nil {
			fail(where, err)
			continue
		}
		res.Added++
	}
	if err := sc.Err(); err != nil {
		fail(path, fmt.Errorf("read: %w", err))
	}
}

// parseDate accepts RFC 3339 and YYYY-MM-DD; empty means unknown.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("published %q: want RFC 3339 or YYYY-MM-DD", s)
}
