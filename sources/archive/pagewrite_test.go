package archive

import (
	"context"
	"testing"
)

// A check's write of one page, on both engines: a new page is stored and
// found, a page read again as it was changes nothing a search reads, and
// one read again with new text replaces it; the statistics stay those of
// the documents, and on SQLite every write moves their version (its
// heads' cache goes by it), while on PostgreSQL a page read again
// unchanged leaves the statistics row alone (no cache there goes by it,
// and it is every writer's to lock).
func TestPageWrites(t *testing.T) {
	eachEngine(t, func(t *testing.T, s *Store) {
		ctx := context.Background()
		version := func() int64 {
			t.Helper()
			st, err := s.collection(ctx)
			if err != nil {
				t.Fatal(err)
			}
			return st.version
		}
		page := Doc{URL: "https://news.example/bridge", Title: "Bridge reopens", Text: "The river bridge reopened on Monday after repairs."}
		if err := s.Add(ctx, page); err != nil {
			t.Fatal(err)
		}
		v1 := version()
		if hits, err := s.Search(ctx, "bridge reopened", SearchOptions{}); err != nil || len(hits) != 1 || hits[0].URL != page.URL {
			t.Fatalf("Search = %v, %v; want the page", hits, err)
		}
		if err := s.Add(ctx, page); err != nil {
			t.Fatal(err)
		}
		if v := version(); s.postgres && v != v1 || !s.postgres && v <= v1 {
			t.Errorf("version %d after the page read again unchanged, %d before", v, v1)
		}
		if n, err := s.Count(ctx); err != nil || n != 1 {
			t.Errorf("Count = %d, %v; want 1", n, err)
		}
		changed := page
		changed.Text = "The river bridge closed again on Tuesday for a flood."
		if err := s.Add(ctx, changed); err != nil {
			t.Fatal(err)
		}
		if v := version(); v <= v1 {
			t.Errorf("version %d after the page changed, %d before", v, v1)
		}
		if hits, err := s.Search(ctx, "flood", SearchOptions{}); err != nil || len(hits) != 1 || hits[0].URL != page.URL {
			t.Errorf("Search(flood) = %v, %v; want the page as changed", hits, err)
		}
		if hits, err := s.Search(ctx, "repairs", SearchOptions{}); err != nil || len(hits) != 0 {
			t.Errorf("Search(repairs) = %v, %v; want nothing: the old text is gone", hits, err)
		}
		if d, err := s.Get(ctx, page.URL); err != nil || d.Text != changed.Text || d.Title != page.Title {
			t.Errorf("Get = %+v, %v; want the new text under the title kept", d, err)
		}
		checkStats(t, s)
		if s.postgres {
			checkTerms(t, s)
		}
	})
}
