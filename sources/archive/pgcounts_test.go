package archive

import (
	"context"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// checkCounts says whether termCounts gives, for every stem of the
// archived documents, the number of documents holding it (counted here
// afresh from their stems), whether each postings row counts its ids, and
// whether no stem that no document holds has postings.
func checkCounts(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.db.QueryContext(ctx, `SELECT title_terms, text_terms, publisher_terms FROM archive_docs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	want := map[string]float64{}
	for rows.Next() {
		var r docRow
		if err := rows.Scan(&r.titleTerms, &r.textTerms, &r.pubTerms); err != nil {
			t.Fatal(err)
		}
		for _, st := range countedStems(postingTerms(r)) {
			want[st]++
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var posted []string
	res, err := s.db.QueryContext(ctx, `SELECT DISTINCT term FROM archive_postings WHERE term NOT LIKE '!%'`)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Close()
	for res.Next() {
		var term string
		if err := res.Scan(&term); err != nil {
			t.Fatal(err)
		}
		posted = append(posted, term)
		if want[term] == 0 {
			t.Errorf("term %q has postings; no document holds it", term)
		}
	}
	if err := res.Err(); err != nil {
		t.Fatal(err)
	}
	terms := slices.Sorted(maps.Keys(want))
	got := map[string]float64{}
	if err := s.termCounts(ctx, terms, termPostings{df: got, ids: map[string]uint32{}}); err != nil {
		t.Fatal(err)
	}
	bad := 0
	for _, term := range terms {
		if got[term] != want[term] {
			if bad++; bad <= 10 {
				t.Errorf("term %q: counted in %v documents; %v hold it", term, got[term], want[term])
			}
		}
	}
	if bad > 10 {
		t.Errorf("and %d terms more", bad-10)
	}
	var miscounted int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM archive_postings WHERE n <> cardinality(ids)`).Scan(&miscounted); err != nil {
		t.Fatal(err)
	}
	if miscounted != 0 {
		t.Errorf("%d postings rows miscount their ids", miscounted)
	}
}

// Adding, merging (a title and a text that change the stems) and deleting
// keep each term's document count exact, and a search reads them.
func TestPostgresTermCountsKeptInStep(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	if err := s.AddAll(ctx, []Doc{
		{URL: "https://e.example/1", Title: "Flooding in the valley", Text: "Rivers rose overnight."},
		{URL: "https://e.example/2", Title: "Valley roads", Text: "Roads closed by the rivers."},
		{URL: "https://e.example/1", Text: "Rivers rose overnight and bridges closed."}, // merges into the first
	}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s)
	if err := s.Add(ctx, Doc{URL: "https://e.example/2", Title: "Mountain passes", Text: "Snow on the passes."}); err != nil {
		t.Fatal(err)
	}
	checkCounts(t, s)
	df := map[string]float64{}
	if err := s.termCounts(ctx, []string{"river", "valley", "snow", "absent"}, termPostings{df: df, ids: map[string]uint32{}}); err != nil {
		t.Fatal(err)
	}
	if want := map[string]float64{"river": 1, "valley": 1, "snow": 1, "absent": 0}; fmt.Sprint(df) != fmt.Sprint(want) {
		t.Errorf("termCounts = %v; want %v", df, want)
	}
	if ok, err := s.Delete(ctx, "https://e.example/1"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	checkCounts(t, s)
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM archive_postings WHERE term IN ('bridg', 'flood')`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d terms of the deleted document only are still counted; want 0", left)
	}
}

// An archive made before the counts (migration 3) gets them when it is
// opened.
func TestPostgresMigrationBuildsTermCounts(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	db := migratedTo(t, url, 3)
	// Version 3's writer: documents and their archive_terms rows.
	old := &Store{now: time.Now, postgres: true}
	for i, d := range []Doc{
		{URL: "https://f.example/1", Title: "Bridge closed", Text: "The old bridge over the river closed for repairs."},
		{URL: "https://f.example/2", Title: "River festival", Text: "The festival by the river drew crowds."},
	} {
		r, err := old.newRow(d)
		if err != nil {
			t.Fatal(err)
		}
		var id int64
		if err := db.QueryRowContext(ctx, `INSERT INTO archive_docs (url, orig_url, title, text, added_at, updated_at,
	title_len, text_len, title_terms, text_terms) VALUES ($1, $2, $3, $4, $5, $5, $6, $7, $8, $9) RETURNING id`,
			r.key, r.url, r.title, r.text, int64(i), r.titleLen, r.textLen, r.titleTerms, r.textTerms).Scan(&id); err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO archive_terms (id, tsv) VALUES ($1, array_to_tsvector($2::text[]))`, id, r.terms); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `UPDATE archive_stats SET n = 2`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkCounts(t, s)
	df := map[string]float64{}
	if err := s.termCounts(ctx, []string{"river", "bridg", "festiv"}, termPostings{df: df, ids: map[string]uint32{}}); err != nil {
		t.Fatal(err)
	}
	if df["river"] != 2 || df["bridg"] != 1 || df["festiv"] != 1 {
		t.Errorf("counts after the migration = %v; want river 2, bridg 1, festiv 1", df)
	}
	checkTerms(t, s)
	// The migrated postings are the trigger's to move.
	if ok, err := s.Delete(ctx, "https://f.example/1"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	checkTerms(t, s)
	checkCounts(t, s)
}

// Two checkers importing at once into one archive, their pages sharing
// most terms and some pages, neither deadlock nor lose a count.
func TestPostgresConcurrentImportsKeepCounts(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	words := strings.Fields("river bridge flood valley mayor election vaccine school budget storm harbour festival " +
		"council railway hospital drought wildfire tariff senate court")
	dir := t.TempDir()
	var paths []string
	for f := range 2 {
		var lines []string
		for i := range 2500 {
			// Pages 0-499 are in both files; the rest are the file's own.
			n := i
			if i >= 500 {
				n = 10000*(f+1) + i
			}
			var text []string
			for j := range 12 {
				text = append(text, words[(n*7+j*(f+3))%len(words)])
			}
			text = append(text, fmt.Sprintf("page%d", n))
			lines = append(lines, fmt.Sprintf(`{"url":"https://g.example/%d","title":"%s %s","text":"%s"}`,
				n, words[n%len(words)], words[(n/3)%len(words)], strings.Join(text, " ")))
		}
		p := filepath.Join(dir, fmt.Sprintf("part%d.jsonl", f))
		if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
			t.Fatal(err)
		}
		paths = append(paths, p)
	}
	stores := openStores(t, url, 2)
	var wg sync.WaitGroup
	results := make([]ImportResult, 2)
	errs := make([]strings.Builder, 2)
	for i, s := range stores {
		wg.Go(func() { results[i] = s.Import(ctx, []string{paths[i]}, ImportOptions{Errors: &errs[i]}) })
	}
	wg.Wait()
	for i, r := range results {
		if r.Added != 2500 || r.Failed != 0 {
			t.Errorf("import %d = %+v; want 2500 added: %s", i, r, errs[i].String())
		}
	}
	if n, _ := stores[0].Count(ctx); n != 4500 {
		t.Errorf("archive holds %d documents; want 4500", n)
	}
	checkTerms(t, stores[0])
	checkCounts(t, stores[0])
	checkStats(t, stores[0])
}

// At a scale where common words are in thousands of pages, PostgreSQL's
// first stage picks the same rarest words as SQLite's from the same exact
// counts, so every tweet gets the same hits in the same order on both
// (with counts estimated from a word's first 1,000 postings they
// differed). 3,000 synthetic pages of real sentences and the fact-checks.
func TestPostgresMatchesSQLiteAtScale(t *testing.T) {
	if testing.Short() {
		t.Skip("builds two archives of 3,467 pages")
	}
	fc := loadFactChecks(t)
	ctx := context.Background()
	docs := slices.Collect(syntheticDocs(realSentences(t, fc), 3000, 11))
	docs = append(docs, fc.docs...)
	pg := openPostgresTemp(t)
	lite := indexFactChecks(t, nil)
	for start := 0; start < len(docs); start += batchSize {
		part := docs[start:min(start+batchSize, len(docs))]
		for _, s := range []*Store{lite, pg} {
			if err := s.AddAll(ctx, part); err != nil {
				t.Fatal(err)
			}
		}
	}
	var common int
	if err := pg.db.QueryRowContext(ctx, `SELECT count(*) FROM (SELECT term FROM archive_postings
	WHERE term NOT LIKE '!%' GROUP BY term HAVING sum(n) > 1000) c`).Scan(&common); err != nil {
		t.Fatal(err)
	}
	if common < 20 {
		t.Fatalf("%d terms in more than 1,000 pages; the test wants many", common)
	}
	for i := 0; i < len(fc.queries); i += 10 {
		a, err := lite.Search(ctx, fc.queries[i], SearchOptions{Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		b, err := pg.Search(ctx, fc.queries[i], SearchOptions{Limit: 20})
		if err != nil {
			t.Fatal(err)
		}
		if ka, kb := hitKeys(a), hitKeys(b); !slices.Equal(ka, kb) {
			t.Fatalf("tweet %d: PostgreSQL's hits differ from SQLite's:\n%v\n%v", i, kb, ka)
		}
	}
}

// Migration 5 undone gives back archive_terms and archive_term_df as
// migration 4 kept them: a row of each document's terms, and each term's
// count.
func TestPostgresPostingsMigrationDown(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddAll(ctx, []Doc{
		{URL: "https://h.example/1", Title: "Bridge closed", Text: "The old bridge over the river closed for repairs."},
		{URL: "https://h.example/2", Title: "River festival", Text: "The festival by the river drew crowds."},
	}); err != nil {
		t.Fatal(err)
	}
	s.Close()
	db := migratedTo(t, url, 5)
	if _, err := pgProvider(t, db).DownTo(ctx, 4); err != nil {
		t.Fatal(err)
	}
	var rows, river, title int
	if err := db.QueryRowContext(ctx, `SELECT (SELECT count(*) FROM archive_terms), (SELECT df FROM archive_term_df WHERE term = 'river'),
	(SELECT count(*) FROM archive_terms WHERE tsv @@ $$'!river'$$::tsquery)`).Scan(&rows, &river, &title); err != nil {
		t.Fatal(err)
	}
	if rows != 2 || river != 2 || title != 1 {
		t.Errorf("after the down migration: %d archive_terms rows, river counted in %d, in %d titles; want 2, 2, 1", rows, river, title)
	}
}
