package archive

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// TestFirstSighting: a domain's first sighting is the earliest a page of
// it, or of a subdomain, came into the archive, whether as a document
// or as a fetched page (asked for or redirected to); an address merely
// holding the domain's name, or a look-alike name, is not a sighting; a
// page fetched again keeps its document's first addition. Since is the
// oldest document's addition, Docs the archive's count.
func TestFirstSighting(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		day := func(d string) time.Time {
			at, err := time.Parse("2006-01-02", d)
			if err != nil {
				t.Fatal(err)
			}
			return at
		}
		got, err := s.FirstSighting(ctx, "farm.example")
		if err != nil || !got.First.IsZero() || !got.Since.IsZero() || got.Docs != 0 {
			t.Fatalf("empty archive: %+v %v", got, err)
		}
		add := func(at, u string) {
			s.now = func() time.Time { return day(at) }
			if err := s.Add(ctx, Doc{URL: u, Title: "A page", Text: "Words of a page about the council's vote on bicycles."}); err != nil {
				t.Fatal(err)
			}
		}
		save := func(at, u, final string) {
			if err := s.SavePage(ctx, &fetch.Page{URL: u, FinalURL: final, Status: 200, Raw: []byte("<p>x</p>"), Body: []byte("<p>x</p>"), FetchedAt: day(at)}); err != nil {
				t.Fatal(err)
			}
		}
		add("2023-01-02", "https://old.example.org/first")
		add("2023-05-01", "https://notfarm.example/story")                   // a longer name holding it
		add("2023-05-02", "https://other.example/links/farm.example/review") // its name in a path
		add("2023-05-03", "https://farm.example.evil.example/x")             // its name as a subdomain of another
		save("2023-05-04", "https://other.example/go?to=farm.example", "")
		add("2024-03-01", "https://www.farm.example/a/b")
		save("2024-02-10", "https://cdn.farm.example/p", "")
		if got, err = s.FirstSighting(ctx, "farm.example"); err != nil || !got.First.Equal(day("2024-02-10")) {
			t.Errorf("after a subdomain's fetch: %+v %v, want 2024-02-10", got, err)
		}
		save("2024-02-05", "https://short.example/x", "https://news.farm.example/y") // redirected there
		save("2024-06-01", "https://www.farm.example/a/b", "")                       // fetched again
		add("2024-06-01", "https://www.farm.example/a/b")                            // and stored again
		got, err = s.FirstSighting(ctx, "FARM.example")
		if err != nil {
			t.Fatal(err)
		}
		if !got.First.Equal(day("2024-02-05")) || !got.Since.Equal(day("2023-01-02")) || got.Docs != 5 {
			t.Errorf("first %v since %v docs %d, want 2024-02-05, 2023-01-02, 5", got.First, got.Since, got.Docs)
		}
		if got, err = s.FirstSighting(ctx, "example.org"); err != nil || !got.First.Equal(day("2023-01-02")) {
			t.Errorf("example.org: %+v %v", got, err)
		}
		if got, err = s.FirstSighting(ctx, "never.example"); err != nil || !got.First.IsZero() || got.Docs != 5 {
			t.Errorf("a domain never read: %+v %v", got, err)
		}
		if _, err = s.FirstSighting(ctx, "farm.example/%"); err == nil {
			t.Error("a pattern was taken for a domain")
		}
	})
}

// sightingArchive fills s with documents and pages of farm.example and of
// names like it (as TestFirstSighting does) and returns the domains asked
// about with their first sightings.
func sightingArchive(t *testing.T, s *Store) map[string]time.Time {
	t.Helper()
	ctx := context.Background()
	day := func(d string) time.Time { at, _ := time.Parse(time.DateOnly, d); return at } // constants below
	for _, d := range []struct{ at, url string }{
		{"2023-01-02", "https://old.example.org/first"},
		{"2023-05-01", "https://notfarm.example/story"},
		{"2023-05-02", "https://other.example/links/farm.example/review"},
		{"2023-05-03", "https://farm.example.evil.example/x"},
		{"2024-03-01", "https://www.farm.example/a/b"},
	} {
		s.now = func() time.Time { return day(d.at) }
		if err := s.Add(ctx, Doc{URL: d.url, Title: "A page", Text: "Words of a page about the council's vote on bicycles."}); err != nil {
			t.Fatal(err)
		}
	}
	for _, p := range []struct{ at, url, final string }{
		{"2023-05-04", "https://other.example/go?to=farm.example", ""},
		{"2024-02-10", "https://cdn.farm.example/p", ""},
		{"2022-11-05", "https://short.example/x", "https://news.notfarm.example/y"},
	} {
		if err := s.SavePage(ctx, &fetch.Page{URL: p.url, FinalURL: p.final, Status: 200, Raw: []byte("<p>x</p>"), Body: []byte("<p>x</p>"), FetchedAt: day(p.at)}); err != nil {
			t.Fatal(err)
		}
	}
	return map[string]time.Time{"farm.example": day("2024-02-10"), "notfarm.example": day("2022-11-05"),
		"example.org": day("2023-01-02"), "other.example": day("2023-05-02"), "evil.example": day("2023-05-03"),
		"short.example": day("2022-11-05"), "never.example": {}}
}

func checkSightings(t *testing.T, s *Store, want map[string]time.Time) {
	t.Helper()
	for d, first := range want {
		got, err := s.FirstSighting(context.Background(), d)
		if err != nil || !got.First.Equal(first) {
			t.Errorf("%s: first sighting %v (%v); want %v", d, got.First, err, first)
		}
	}
}

// An archive made before the domain columns (SQLite's migration 9) gets
// them filled from its addresses when opened, and answers as before.
func TestFirstSightingMigrateVersion8(t *testing.T) {
	s, path := openTemp(t)
	want := sightingArchive(t, s)
	checkSightings(t, s, want)
	if _, err := s.db.Exec(`DROP INDEX docs_domain; DROP INDEX pages_domain; DROP INDEX pages_final_domain;
ALTER TABLE docs DROP COLUMN domain; ALTER TABLE pages DROP COLUMN domain; ALTER TABLE pages DROP COLUMN final_domain;
PRAGMA user_version = 8;`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v, empty int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	s.db.QueryRow(`SELECT (SELECT count(*) FROM docs WHERE domain = '') + (SELECT count(*) FROM pages WHERE domain = '' OR final_domain = '')`).Scan(&empty)
	if v != len(migrations) || empty != 0 {
		t.Errorf("user_version %d, %d rows without their domain; want %d, none", v, empty, len(migrations))
	}
	checkSightings(t, s, want)
	var plan string
	var id, parent, unused int
	if err := s.db.QueryRow(`EXPLAIN QUERY PLAN SELECT min(added_at) FROM docs WHERE domain = ?`, "farm.example").Scan(&id, &parent, &unused, &plan); err != nil || !strings.Contains(plan, "docs_domain") {
		t.Errorf("the first sighting among documents is read %q (%v); want from the index docs_domain", plan, err)
	}
}

// On PostgreSQL, rows whose domain is NULL (stored before migration 7, or
// by a muse that did not know the columns) are filled when the archive is
// opened, and answer as before.
func TestFirstSightingFillsDomainsOnPostgres(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	want := sightingArchive(t, s)
	checkSightings(t, s, want)
	if _, err := s.db.ExecContext(ctx, `UPDATE archive_docs SET domain = NULL`); err != nil {
		t.Fatal(err)
	}
	if _, err := s.db.ExecContext(ctx, `UPDATE archive_pages SET domain = NULL, final_domain = NULL`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(ctx, url); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var missing int
	s.db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM archive_docs WHERE domain IS NULL) +
	(SELECT count(*) FROM archive_pages WHERE domain IS NULL OR final_domain IS NULL)`).Scan(&missing)
	if missing != 0 {
		t.Errorf("%d rows without their domain after opening", missing)
	}
	checkSightings(t, s, want)
}
