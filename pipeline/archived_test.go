package pipeline

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/search"
)

// A page that cannot be fetched (offline, or gone) but that the local
// archive holds is read from the archive and can be quoted; a page the
// archive does not hold still fails.
// Imported records (JSONL exports) separate paragraphs with a blank line or
// with a single line break; both are read as paragraphs, not one block.
func TestUnfetchablePageReadFromArchive(t *testing.T) {
	for name, sep := range map[string]string{"blank lines": "\n\n", "line breaks": "\n"} {
		t.Run(name, func(t *testing.T) { testUnfetchablePageReadFromArchive(t, sep) })
	}
}

func testUnfetchablePageReadFromArchive(t *testing.T, sep string) {
	ctx := context.Background()
	store, err := archive.Open(ctx, filepath.Join(t.TempDir(), "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	doc := archive.Doc{URL: "https://www.reuters.com/a", Title: "Springfield did not ban bicycles", Publisher: "Reuters",
		Text:      refuteA + sep + filler("bicycles on Main Street", 12),
		Published: time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC)}
	if err := store.Add(ctx, doc); err != nil {
		t.Fatal(err)
	}
	w := newWorld()
	offline := errors.New("fetch https://www.reuters.com/a: resolve www.reuters.com: no such host")
	w.pages["https://www.reuters.com/a"] = fakePage{err: offline}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w,
		Extract: w.extract, Rater: w, Archive: ArchiveOf(store)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	s := c.SourceByURL("https://www.reuters.com/a")
	if s == nil || s.Status != StatusUsed {
		t.Fatalf("archived page: %+v, want it used", s)
	}
	if len(s.Paragraphs) < 2 {
		t.Errorf("archived page read as %d paragraph(s)", len(s.Paragraphs))
	}
	quoted := false
	for _, ev := range c.Evidence {
		quoted = quoted || (ev.SourceURL == s.URL && ev.Quote == refuteA && ev.Verified && ev.Included)
	}
	if !quoted {
		t.Errorf("the archived page's refuting paragraph was not quoted: %+v", c.Evidence)
	}
	if got := statusOf(c, "https://broken.example/h"); got != StatusFetchFailed {
		t.Errorf("a page the archive lacks: status %s, want %s", got, StatusFetchFailed)
	}
}

// An archived page at an address the fetcher refuses (an internal host the
// archive holds from before the address policy, or spelled so that an old
// guard let it through) is refused again, never read from the archive.
func TestRefusedURLNotReadFromArchive(t *testing.T) {
	ctx := context.Background()
	store, err := archive.Open(ctx, filepath.Join(t.TempDir(), "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	internal := "http://127.1/admin/springfield"
	if err := store.Add(ctx, archive.Doc{URL: internal, Title: "Springfield bicycles", Text: refuteA + "\n\n" + filler("bicycles on Main Street", 12)}); err != nil {
		t.Fatal(err)
	}
	w := newWorld()
	w.pages[internal] = fakePage{err: fmt.Errorf("fetch %s: %w: 127.0.0.1 is loopback", internal, fetch.ErrPrivateAddress)}
	for n, urls := range w.results {
		w.results[n] = append([]string{internal}, urls...)
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w,
		Extract: w.extract, Rater: w, Archive: ArchiveOf(store)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	runCheck(t, e, c)
	if got := statusOf(c, internal); got != StatusFetchFailed {
		t.Errorf("refused URL: status %s, want %s", got, StatusFetchFailed)
	}
	for _, ev := range c.Evidence {
		if ev.SourceURL == internal {
			t.Errorf("evidence from a refused URL: %+v", ev)
		}
	}
}
