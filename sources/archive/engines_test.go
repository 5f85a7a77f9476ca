package archive

import (
	"context"
	"slices"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// eachEngine runs test on a new SQLite archive and on a new PostgreSQL
// one (skipped, saying so, when MUSE_TEST_DATABASE_URL is unset).
func eachEngine(t *testing.T, test func(t *testing.T, s *Store)) {
	t.Helper()
	t.Run("sqlite", func(t *testing.T) {
		s, _ := openTemp(t)
		test(t, s)
	})
	t.Run("postgres", func(t *testing.T) { test(t, openPostgresTemp(t)) })
}

// openPostgresTemp opens an archive in a fresh database on the test
// cluster.
func openPostgresTemp(tb testing.TB) *Store {
	tb.Helper()
	url := pgdbtest.Fresh(tb)
	s, err := Open(context.Background(), url)
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	return s
}

// TestRetrievalOnPostgres measures the retrieval figure on PostgreSQL: the
// 467 fact-checks in a fresh database, each benchmark tweet asked with the
// default ranker. Both engines index the same stems and the first stage and
// rerank are the same code, so every tweet must get the same candidates in
// the same order as on SQLite, and the same MRR and recall@10; the
// cross-validated figure (TestRetrievalCrossValidated) is then the same on
// both.
func TestRetrievalOnPostgres(t *testing.T) {
	fc := loadFactChecks(t)
	pg := openPostgresTemp(t)
	if err := pg.AddAll(context.Background(), fc.docs); err != nil {
		t.Fatal(err)
	}
	lite := indexFactChecks(t, fc.docs)
	ctx := context.Background()
	for i, text := range fc.queries {
		q := parseQuery(text, "en")
		a, err := lite.firstPass(ctx, q, time.Time{}, 100, defaultRanker)
		if err != nil {
			t.Fatal(err)
		}
		b, err := pg.firstPass(ctx, q, time.Time{}, 100, defaultRanker)
		if err != nil {
			t.Fatal(err)
		}
		if got, want := candidateURLs(b.cands), candidateURLs(a.cands); !slices.Equal(got, want) {
			t.Fatalf("tweet %d: PostgreSQL's first stage differs from SQLite's:\n%v\n%v", i, got, want)
		}
	}
	onLite := evaluate(t, lite, fc, defaultRanker)
	onPG := evaluate(t, pg, fc, defaultRanker)
	t.Logf("SQLite:     %v", onLite)
	t.Logf("PostgreSQL: %v", onPG)
	if onPG != onLite {
		t.Errorf("PostgreSQL %v; SQLite %v", onPG, onLite)
	}
}

func candidateURLs(cs []*candidate) []string {
	out := make([]string, len(cs))
	for i, c := range cs {
		out[i] = c.hit.URL
	}
	return out
}

// One batch holding a document twice, and a document already stored,
// merges as adding them one by one does (on PostgreSQL new documents go in
// by hundreds per statement, the rest one by one).
func TestAddAllMergesInOrder(t *testing.T) { eachEngine(t, testAddAllMergesInOrder) }

func testAddAllMergesInOrder(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.Add(ctx, sample[1]); err != nil {
		t.Fatal(err)
	}
	batch := []Doc{
		sample[0],
		{URL: sample[1].URL, Text: "Crime figures were revised in 2019."},
		sample[2],
		{URL: sample[0].URL + "?utm_source=x", Text: "Updated text about soda levies."},
	}
	if err := s.AddAll(ctx, batch); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 3 {
		t.Errorf("Count = %d; want 3", n)
	}
	a, _ := s.Get(ctx, sample[0].URL)
	b, _ := s.Get(ctx, sample[1].URL)
	if a.Title != sample[0].Title || a.Text != batch[3].Text || b.Title != sample[1].Title || b.Text != batch[1].Text {
		t.Errorf("merged documents: %+v\n%+v", a, b)
	}
	checkStats(t, s)
	if hits, _ := s.Search(ctx, "soda levies", SearchOptions{}); len(hits) != 1 || hits[0].URL != sample[0].URL {
		t.Errorf("search for the merged text: %+v", hits)
	}
}
