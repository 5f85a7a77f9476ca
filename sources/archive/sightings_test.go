package archive

import (
	"context"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/fetch"
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
