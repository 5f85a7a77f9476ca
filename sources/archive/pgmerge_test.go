package archive

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/jackc/pgx/v5/pgtype"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// batchDocs are n pages of one import-sized write: every page holds
// "ferries", one in twenty "lighthouse", and page k "itemk".
func batchDocs(from, n int) []Doc {
	var docs []Doc
	for k := from; k < from+n; k++ {
		text := fmt.Sprintf("ferries cross the bay, item%d", k)
		if k%20 == 0 {
			text += ", past the lighthouse"
		}
		docs = append(docs, Doc{URL: fmt.Sprintf("https://g.example/%d", k), Title: fmt.Sprintf("Bay crossing %d", k), Text: text})
	}
	return docs
}

// An archive written in import-sized batches has a row a batch for each
// shared word; merging leaves each word's documents in rows of up to
// mergedRowIDs ids, ascending, and a search finds the same pages with the same
// scores. A word of fewer than mergeRows rows is left as it is; a delete
// and a small write afterwards keep the postings right.
func TestPostgresMergePostings(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	const batches, per = 22, appendDocs // 4,400 pages: more than mergedRowIDs hold "ferries"
	for b := range batches {
		if err := s.AddAll(ctx, batchDocs(b*per, per)); err != nil {
			t.Fatal(err)
		}
	}
	// A word of three batches only.
	for b := range 3 {
		docs := []Doc{{URL: fmt.Sprintf("https://g.example/rare/%d", b), Text: "a rare kittiwake"}}
		for i := 1; i < appendDocs; i++ {
			docs = append(docs, Doc{URL: fmt.Sprintf("https://g.example/rare/%d/%d", b, i), Text: "filler"})
		}
		if err := s.AddAll(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	if got := len(rowSizes(t, s, "ferri")); got != batches {
		t.Fatalf("before merging, ferri has %d rows; want one a batch, %d", got, batches)
	}
	queries := []string{"lighthouse past the bay", "ferries item17", "kittiwake", "bay crossing 4242"}
	search := func() [][]Hit {
		var all [][]Hit
		for _, q := range queries {
			hits, err := s.Search(ctx, q, SearchOptions{Limit: 20})
			if err != nil {
				t.Fatal(err)
			}
			all = append(all, hits)
		}
		return all
	}
	before := search()
	termCounts := func() string {
		var c string
		if err := s.db.QueryRowContext(ctx, `SELECT string_agg(term || '=' || total, ' ' ORDER BY term) FROM
(SELECT term, sum(n) total FROM archive_postings WHERE term IN ('ferri', 'lighthous', 'kittiwak') GROUP BY term) c`).Scan(&c); err != nil {
			t.Fatal(err)
		}
		return c
	}
	counts := termCounts()

	res, err := s.MergePostings(ctx, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("merged %+v", res)
	if got, want := rowSizes(t, s, "ferri"), []int{mergedRowIDs, batches*per - mergedRowIDs}; !slices.Equal(got, want) {
		t.Errorf("after merging, ferri's rows hold %v ids; want %v", got, want)
	}
	if got := rowSizes(t, s, "lighthous"); !slices.Equal(got, []int{batches * per / 20}) {
		t.Errorf("after merging, lighthous's rows hold %v ids; want one row of %d", got, batches*per/20)
	}
	if got := rowSizes(t, s, "kittiwak"); !slices.Equal(got, []int{1, 1, 1}) {
		t.Errorf("kittiwak (%d rows, fewer than mergeRows) was changed: %v", 3, got)
	}
	if res.Terms == 0 || res.After >= res.Before {
		t.Errorf("MergePostings = %+v; want terms merged into fewer rows", res)
	}
	after := search()
	for i := range queries {
		if !slices.EqualFunc(before[i], after[i], func(a, b Hit) bool { return a.URL == b.URL && a.Score == b.Score }) {
			t.Errorf("%q: %v before merging, %v after", queries[i], urls(before[i]), urls(after[i]))
		}
	}
	if again := termCounts(); again != counts {
		t.Errorf("term counts %s before merging, %s after", counts, again)
	}
	checkTerms(t, s)
	checkCounts(t, s)

	// A second merge finds nothing left to do.
	if res, err := s.MergePostings(ctx, nil, nil); err != nil || res.Terms != 0 {
		t.Errorf("merging again = %+v, %v; want nothing merged", res, err)
	}
	if ok, err := s.Delete(ctx, "https://g.example/40"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if err := s.AddAll(ctx, batchDocs(100000, 10)); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, s)
	checkCounts(t, s)
	checkStats(t, s)

	// Only the terms asked for.
	for b := range mergeRows {
		if err := s.AddAll(ctx, batchDocs(200000+b*per, per)); err != nil {
			t.Fatal(err)
		}
	}
	res, err = s.MergePostings(ctx, []string{"lighthous"}, nil)
	if err != nil || res.Terms != 1 {
		t.Errorf("MergePostings(lighthous) = %+v, %v; want one term", res, err)
	}
	if n := len(rowSizes(t, s, "lighthous")); n != 1 {
		t.Errorf("lighthous has %d rows after its merge; want 1", n)
	}
	if n := len(rowSizes(t, s, "ferri")); n < mergeRows {
		t.Errorf("ferri has %d rows; a merge of lighthous alone merged it too", n)
	}
	checkTerms(t, s)
}

// An import of more than mergeRows batches ends by merging the small rows
// of its terms, and says so as it goes.
func TestPostgresImportMergesPostings(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pages.jsonl")
	var lines []string
	for i := range (mergeRows+1)*batchSize + 10 {
		text := fmt.Sprintf("rivers rose at gauge%d", i)
		if i%50 == 0 {
			text += " near the weir"
		}
		lines = append(lines, fmt.Sprintf(`{"url":"https://w.example/%d","title":"Gauge %d","text":%q}`, i, i, text))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	var calls, last, of int
	res := s.Import(ctx, []string{path}, ImportOptions{Merging: func(done, total int) { calls, last, of = calls+1, done, total }})
	if res.Added != len(lines) || res.Failed != 0 || res.MergeErr != nil {
		t.Fatalf("Import = %+v; want %d added, merged", res, len(lines))
	}
	if res.Merged.Terms == 0 || calls == 0 || last != of || last != res.Merged.Terms {
		t.Errorf("merged %+v, progress called %d times, last %d of %d; want the terms merged, reported", res.Merged, calls, last, of)
	}
	// A word of one page in 50 had a small row a batch: one row now. A
	// word of every page has its batches' rows of 2,000 still (more than
	// rowIDs: not small), but the last batch's ten.
	if got, want := rowSizes(t, s, "weir"), []int{len(lines)/50 + 1}; !slices.Equal(got, want) {
		t.Errorf("weir has rows of %v ids; want %v", got, want)
	}
	if got := rowSizes(t, s, "river"); len(got) != mergeRows+2 || got[0] != batchSize || got[len(got)-1] != 10 {
		t.Errorf("river has rows of %v ids; want the import's %d", got, mergeRows+2)
	}
	checkTerms(t, s)
	checkCounts(t, s)
}

// A merge running beside writers that add, rewrite and delete pages of the
// same words, through two Stores (as two muse processes), aborts none of
// them and leaves every posting once in its term's rows.
func TestPostgresMergeBesideWriters(t *testing.T) {
	url := pgdbtest.Fresh(t)
	stores := openStores(t, url, 2)
	ctx := context.Background()
	var retries atomic.Int32
	onConflictRetry = func(error) { retries.Add(1) }
	t.Cleanup(func() { onConflictRetry = nil })
	for b := range mergeRows {
		if err := stores[0].AddAll(ctx, batchDocs(b*appendDocs, appendDocs)); err != nil {
			t.Fatal(err)
		}
	}
	const writers, writes = 3, 20
	var wg sync.WaitGroup
	start := make(chan struct{})
	for g := range writers {
		wg.Go(func() {
			<-start
			for w := range writes {
				k := 10000 + (g*writes+w)*appendDocs
				n := 10
				if w%4 == 0 {
					n = appendDocs // a batch's rows of its own, for the merges to meet
				}
				docs := batchDocs(k, n)
				// A page of the import rewritten with other words, one
				// deleted.
				docs = append(docs, Doc{URL: fmt.Sprintf("https://g.example/%d", (g*writes+w)*7), Text: "ferries moved to the harbour"})
				if err := stores[g%2].AddAll(ctx, docs); err != nil {
					t.Errorf("writer %d, write %d: %v", g, w, err)
					return
				}
				if _, err := stores[g%2].Delete(ctx, fmt.Sprintf("https://g.example/%d", (g*writes+w)*7+3)); err != nil {
					t.Errorf("writer %d, delete %d: %v", g, w, err)
					return
				}
			}
		})
	}
	var merged MergeResult
	done, merger := make(chan struct{}), make(chan struct{})
	go func() {
		defer close(merger)
		<-start
		for range 200 { // until the writers are done
			r, err := stores[1].MergePostings(ctx, nil, nil)
			if err != nil {
				t.Errorf("merge: %v", err)
				return
			}
			merged.Terms += r.Terms
			select {
			case <-done:
				return
			default:
			}
		}
	}()
	close(start)
	wg.Wait()
	close(done)
	<-merger
	t.Logf("merges rewrote %d terms; %d writes run again", merged.Terms, retries.Load())
	if merged.Terms == 0 {
		t.Error("the merges merged nothing")
	}
	if _, err := stores[0].MergePostings(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, stores[0])
	checkCounts(t, stores[0])
	checkStats(t, stores[0])
	var ids []int64
	if err := stores[0].db.QueryRowContext(ctx, `SELECT array_agg(d ORDER BY d) FROM archive_postings, unnest(ids) d WHERE term = 'ferri'`).
		Scan(pgtype.NewMap().SQLScanner(&ids)); err != nil {
		t.Fatal(err)
	}
	if n, _ := stores[0].Count(ctx); len(ids) != n {
		t.Errorf("ferri lists %d documents; the archive holds %d, every one with ferries", len(ids), n)
	}
}

// termDocs on PostgreSQL reads a term's lowest ids from the rows that can
// hold them only (see pgTermDocs); whatever the rows' layout (a batch's
// own, rows small writes filled, merged rows spanning the others, rows a
// delete left with loose bounds), it returns the limit lowest ids the term
// lists, as reading them all would.
func TestPostgresTermDocsLowestIDs(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	k := 0
	write := func(n int) {
		t.Helper()
		if err := s.AddAll(ctx, batchDocs(k, n)); err != nil {
			t.Fatal(err)
		}
		k += n
	}
	// Merged: a row of mergedRowIDs ids and one of 104, with room.
	for range mergedRowIDs/appendDocs + 1 {
		write(appendDocs)
	}
	if _, err := s.MergePostings(ctx, nil, nil); err != nil {
		t.Fatal(err)
	}
	// A batch's row of 250 ids, then small writes: the batch's row has no
	// room for them, so they go to the merged row of 104, whose range then
	// spans the batch's.
	write(250)
	write(9)
	write(12)
	for _, u := range []int{0, 5, 201, 3000, k - 1} { // the first page, the lowest ids, a merged row's last
		if _, err := s.Delete(ctx, fmt.Sprintf("https://g.example/%d", u)); err != nil {
			t.Fatal(err)
		}
	}
	write(3)
	var all []int64
	if err := s.db.QueryRowContext(ctx, `SELECT array_agg(d ORDER BY d) FROM archive_postings, unnest(ids) d WHERE term = 'ferri'`).
		Scan(pgtype.NewMap().SQLScanner(&all)); err != nil {
		t.Fatal(err)
	}
	var overlaps bool
	if err := s.db.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM archive_postings a, archive_postings b
WHERE a.term = 'ferri' AND b.term = 'ferri' AND a.ctid <> b.ctid AND a.lo < b.lo AND b.lo < a.hi)`).Scan(&overlaps); err != nil {
		t.Fatal(err)
	}
	t.Logf("ferri: %d ids in rows of %v", len(all), rowSizes(t, s, "ferri"))
	if !overlaps {
		t.Fatal("no two of ferri's rows overlap; the test wants a row spanning another")
	}
	for _, limit := range []int{1, 2, 7, 150, 199, 200, 201, 1000, mergedRowIDs, len(all) - 1, len(all), len(all) + 5} {
		got, err := s.termDocs(ctx, []string{"ferri"}, nil, nil, limit, false)
		if err != nil {
			t.Fatal(err)
		}
		want := all[:min(limit, len(all))]
		if !slices.Equal(got["ferri"], want) {
			t.Errorf("limit %d: %d ids from %v; want the %d lowest, from %v", limit, len(got["ferri"]), first(got["ferri"]), len(want), first(want))
		}
	}
}

func first(ids []int64) []int64 { return ids[:min(3, len(ids))] }

// The bound pgTermDocs reads up to comes from the rows' upper bounds: a
// wide row starting first and a narrow one inside it, read for the four
// lowest ids, give 1, 2, 3 and 50, though the narrow row's bound (3) is
// reached with four ids counted in lo order. And for yy, whose first row
// (by lo) holds only a high id left after removals, the two lowest are 5
// and 6: counted in lo order the bound would be 5, and the row holding 6
// would not be read.
func TestPostgresTermDocsOverlappingRows(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	if _, err := s.db.ExecContext(ctx, `INSERT INTO archive_postings (term, lo, hi, n, ids) VALUES
('zz', 1, 100, 3, '{1,50,100}'), ('zz', 2, 3, 2, '{2,3}'),
('yy', 1, 1000, 1, '{1000}'), ('yy', 2, 5, 1, '{5}'), ('yy', 6, 7, 2, '{6,7}')`); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		term  string
		limit int
		want  []int64
	}{
		{"zz", 1, []int64{1}}, {"zz", 3, []int64{1, 2, 3}}, {"zz", 4, []int64{1, 2, 3, 50}},
		{"zz", 5, []int64{1, 2, 3, 50, 100}}, {"zz", 9, []int64{1, 2, 3, 50, 100}},
		{"yy", 1, []int64{5}}, {"yy", 2, []int64{5, 6}}, {"yy", 3, []int64{5, 6, 7}}, {"yy", 4, []int64{5, 6, 7, 1000}},
	} {
		got, err := s.termDocs(ctx, []string{c.term}, nil, nil, c.limit, false)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got[c.term], c.want) {
			t.Errorf("%s, limit %d: %v; want %v", c.term, c.limit, got[c.term], c.want)
		}
	}
}
