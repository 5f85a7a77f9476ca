package pipeline

import (
	"context"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/sqlitedb"
)

func flagOf(s *Source, kind string) *SourceFlag {
	for i := range s.Flags {
		if s.Flags[i].Kind == kind {
			return &s.Flags[i]
		}
	}
	return nil
}

// TestFirstSeenFlagged: with a real SQLite archive that has collected a
// thousand pages since 2022, an unrated domain an earlier check first
// read twelve days before the post is flagged as new, saying when muse
// first read it; a domain first read a year before is not, and neither is
// a domain muse reads for the first time in this check (every domain is
// read a first time), though "why this source" says so of each.
func TestFirstSeenFlagged(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "archive.db")
	store, err := archive.Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	var docs []archive.Doc
	for i := range 1000 {
		docs = append(docs, archive.Doc{URL: fmt.Sprintf("https://site%d.example/story", i), Title: "Council news", Text: "The council met on Tuesday."})
	}
	docs = append(docs,
		archive.Doc{URL: "https://www.copied-news.example/older", Title: "Older", Text: "A story from last year."},
		archive.Doc{URL: "https://www.gazette.example/earlier", Title: "Earlier", Text: "A story read by an earlier check."})
	if err := store.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	// The archive as collected over time: the same database, its documents
	// dated as an archive kept since 2022 would hold them.
	db, err := sqlitedb.Open(path, sqlitedb.Options{Busy: 5 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	for u, at := range map[string]string{"https://site%": "2022-01-01", "https://copied-news.example/older": "2023-03-01", "https://gazette.example/earlier": "2024-01-20"} {
		day, _ := time.Parse("2006-01-02", at)
		if _, err := db.Exec(`UPDATE docs SET added_at = ? WHERE url LIKE ?`, day.Unix(), u); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	w := flagWorld()
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w,
		Archive: ArchiveOf(store)}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	gazette := c.SourceByURL("https://www.gazette.example/riders")
	// The count is the archive's when the page was read: the thousand and
	// two, with the pages this check had read by then.
	want := regexp.MustCompile(`^muse first read a page of gazette\.example on 2024-01-20, 12 days before the post, though its archive has been collecting since 2022-01-01 \(10(0[2-9]|1[0-9]) pages\)$`)
	if f := flagOf(gazette, FlagNewDomain); f == nil || !want.MatchString(f.Reason) {
		t.Errorf("a domain first read twelve days before the post: %+v", gazette.Flags)
	}
	if got := gazette.FirstReadText(c.CreatedAt); got != "first read by muse on 2024-01-20" {
		t.Errorf("gazette: %q", got)
	}
	copied := c.SourceByURL("https://www.copied-news.example/springfield")
	if f := flagOf(copied, FlagNewDomain); f != nil {
		t.Errorf("a domain first read a year before the post flagged: %s", f.Reason)
	}
	if got := copied.FirstReadText(c.CreatedAt); got != "first read by muse on 2023-03-01" {
		t.Errorf("copied-news: %q", got)
	}
	sfgate := c.SourceByURL("https://www.sfgate.example/ap-springfield")
	if f := flagOf(sfgate, FlagNewDomain); f != nil {
		t.Errorf("a domain first read by this check flagged: %s", f.Reason)
	}
	if got := sfgate.FirstReadText(c.CreatedAt); !strings.HasPrefix(got, "first read by muse in this check (") {
		t.Errorf("sfgate: %q", got)
	}
}

// firstSeenFlag needs an archive that has collected long and much before
// the window, and a sighting by an earlier check within it.
func TestFirstSeenFlagRule(t *testing.T) {
	day := func(d string) time.Time {
		at, err := time.Parse("2006-01-02", d)
		if err != nil {
			t.Fatal(err)
		}
		return at
	}
	ref, created := day("2024-02-01"), day("2024-02-02")
	src := func(first, since string, docs int) Source {
		return Source{URL: "https://news.fresh.example/a", FirstRead: &DomainSighting{First: day(first), ArchiveSince: day(since), ArchiveDocs: docs}}
	}
	for _, c := range []struct {
		name string
		s    Source
		flag bool
	}{
		{"first read in the window, an old and large archive", src("2024-01-01", "2022-06-01", 5000), true},
		{"first read after the post, before this check", src("2024-02-01", "2022-06-01", 5000), true},
		{"first read before the window", src("2023-10-01", "2022-06-01", 5000), false},
		{"first read by this check", src("2024-02-02", "2022-06-01", 5000), false},
		{"an archive begun less than a year before the window", src("2024-01-01", "2023-01-01", 5000), false},
		{"an archive of few pages", src("2024-01-01", "2022-06-01", 999), false},
		{"no sighting", Source{URL: "https://fresh.example/a"}, false},
	} {
		f, ok := firstSeenFlag(c.s, ref, created)
		if ok != c.flag {
			t.Errorf("%s: flagged %v (%s), want %v", c.name, ok, f.Reason, c.flag)
		}
		if ok && (f.Kind != FlagNewDomain || !strings.Contains(f.Reason, "fresh.example on "+c.s.FirstRead.First.Format("2006-01-02"))) {
			t.Errorf("%s: %+v", c.name, f)
		}
	}
}

// countingSighter is an archive that counts the first sightings asked of it.
type countingSighter struct {
	mu    sync.Mutex
	asked map[string]int
}

func (a *countingSighter) Save(context.Context, ArchivedPage) error { return nil }

func (a *countingSighter) FirstSighting(_ context.Context, domain string) (DomainSighting, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.asked[domain]++
	return DomainSighting{First: time.Date(2024, 1, 20, 0, 0, 0, 0, time.UTC), ArchiveDocs: 5}, nil
}

// TestFirstSightingAskedOncePerDomain: the pages of one domain read in a
// check, at once or one after another, ask the archive once, and each
// page still says when the domain was first read.
func TestFirstSightingAskedOncePerDomain(t *testing.T) {
	a := &countingSighter{asked: map[string]int{}}
	r := &run{e: &Engine{deps: Deps{Archive: a}}, c: &Check{}}
	var srcs []*Source
	for i, u := range []string{"https://news.farm.example/a", "https://www.farm.example/b", "https://farm.example/c", "https://other.example/d"} {
		srcs = append(srcs, &Source{URL: u, Tier: TierUnrated, Paragraphs: []string{fmt.Sprint("text ", i)}})
	}
	var wg sync.WaitGroup
	for _, s := range srcs[:2] {
		wg.Go(func() { r.firstSighting(context.Background(), s) })
	}
	wg.Wait()
	for _, s := range srcs[2:] {
		r.firstSighting(context.Background(), s)
	}
	if a.asked["farm.example"] != 1 || a.asked["other.example"] != 1 || len(a.asked) != 2 {
		t.Errorf("asked %v, want each domain once", a.asked)
	}
	for _, s := range srcs {
		if s.FirstRead == nil || s.FirstReadText(time.Time{}) != "first read by muse on 2024-01-20" {
			t.Errorf("%s: first read %v", s.URL, s.FirstRead)
		}
	}
}
