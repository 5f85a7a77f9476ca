package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/sqlitedb"
)

// checkStats compares the kept collection statistics with a full scan.
func checkStats(t *testing.T, s *Store) {
	t.Helper()
	var kept, scanned [4]int64
	if err := s.db.QueryRow(s.sql(`SELECT n, title_len, lead_len, rest_len FROM docs_stats`)).
		Scan(&kept[0], &kept[1], &kept[2], &kept[3]); err != nil {
		t.Fatal(err)
	}
	scan := `SELECT count(*), coalesce(sum(title_len), 0), coalesce(sum(min(text_len, ?)), 0),
	coalesce(sum(max(text_len - ?, 0)), 0) FROM docs`
	if s.postgres {
		scan = strings.NewReplacer("min(", "least(", "max(", "greatest(").Replace(scan)
	}
	if err := s.db.QueryRow(s.sql(scan), leadWords, leadWords).
		Scan(&scanned[0], &scanned[1], &scanned[2], &scanned[3]); err != nil {
		t.Fatal(err)
	}
	if kept != scanned {
		t.Errorf("kept statistics %v; a scan says %v", kept, scanned)
	}
	if s.postgres {
		return // the tsvector is a generated column
	}
	// What a search reads of its candidates is each document's own: its
	// stems' ids are those docs_terms gives its stems.
	var stale int
	if err := s.db.QueryRow(`SELECT count(*) FROM (
	SELECT id, published, updated_at, title_len, text_len FROM docs
	EXCEPT SELECT id, published, updated_at, title_len, text_len FROM docs_rank
	UNION ALL
	SELECT id, published, updated_at, title_len, text_len FROM docs_rank
	EXCEPT SELECT id, published, updated_at, title_len, text_len FROM docs)`).Scan(&stale); err != nil {
		t.Fatal(err)
	}
	if stale != 0 {
		t.Errorf("docs_rank differs from docs in %d rows", stale)
	}
	terms := map[uint32]string{}
	rows, err := s.db.Query(`SELECT id, term FROM docs_terms`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id uint32
		var term string
		if err := rows.Scan(&id, &term); err != nil {
			t.Fatal(err)
		}
		if prev, dup := terms[id]; dup || id == 0 {
			t.Errorf("id %d given to %q and %q", id, prev, term)
		}
		terms[id] = term
	}
	rows.Close()
	rows, err = s.db.Query(`SELECT d.id, d.title_terms, d.text_terms, r.title_ids, r.text_ids FROM docs d JOIN docs_rank r ON r.id = d.id`)
	if err != nil {
		t.Fatal(err)
	}
	unpack := func(b []byte) string {
		var ts []string
		eachID(b, func(_ int, id uint32) { ts = append(ts, terms[id]) })
		return strings.Join(ts, " ")
	}
	for rows.Next() {
		var id int64
		var title, text string
		var titleIDs, textIDs []byte
		if err := rows.Scan(&id, &title, &text, &titleIDs, &textIDs); err != nil {
			t.Fatal(err)
		}
		if got, want := unpack(titleIDs), strings.Join(strings.Fields(title), " "); got != want {
			t.Errorf("document %d: docs_rank's title is %q; want %q", id, got, want)
		}
		if got, want := unpack(textIDs), strings.Join(strings.Fields(text), " "); got != want {
			t.Errorf("document %d: docs_rank's text is %q; want %q", id, got, want)
		}
	}
	rows.Close()
	checkPostings(t, s, terms)
}

// checkPostings compares docs_postings with the stems the documents
// hold: each term's blocks, per field, hold exactly the documents holding
// it there, ascending, in disjoint full blocks; and docs_terms counts
// them.
func checkPostings(t *testing.T, s *Store, terms map[uint32]string) {
	t.Helper()
	ids := make(map[string]uint32, len(terms))
	for id, term := range terms {
		ids[term] = id
	}
	want := map[postTerm][]int64{}
	rows, err := s.db.Query(`SELECT id, title_terms, text_terms, publisher_terms FROM docs ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var id int64
		var title, text, pub string
		if err := rows.Scan(&id, &title, &text, &pub); err != nil {
			t.Fatal(err)
		}
		for _, st := range distinctStems(title, text, pub) {
			k := postTerm{ids[st], fieldAny}
			want[k] = append(want[k], id)
		}
		for _, st := range distinctStems(title) {
			k := postTerm{ids[st], fieldTitle}
			want[k] = append(want[k], id)
		}
	}
	rows.Close()
	got := map[postTerm][]int64{}
	rows, err = s.db.Query(`SELECT block, hi, n, ids FROM docs_postings ORDER BY block`)
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var key, hi int64
		var n int
		var b []byte
		if err := rows.Scan(&key, &hi, &n, &b); err != nil {
			t.Fatal(err)
		}
		k := postTerm{uint32(key >> 32), int(key >> 31 & 1)}
		lo := key & maxPostingID
		list, err := decodeBlock(nil, b, 0)
		if err != nil || len(list) == 0 || len(list) != n || n > blockIDs || list[0] != lo || list[n-1] != hi {
			t.Errorf("block %x of %q: %d ids %v (%v); its row says %d, %d..%d", key, terms[k.term], len(list), list, err, n, lo, hi)
			continue
		}
		if prev := got[k]; len(prev) > 0 && prev[len(prev)-1] >= lo {
			t.Errorf("block %x of %q starts at %d, within the block before it (..%d)", key, terms[k.term], lo, prev[len(prev)-1])
		}
		got[k] = append(got[k], list...)
	}
	rows.Close()
	for k, list := range want {
		if fmt.Sprint(got[k]) != fmt.Sprint(list) {
			t.Errorf("postings of %q (field %d): %v; the documents say %v", terms[k.term], k.field, got[k], list)
		}
	}
	for k, list := range got {
		if _, ok := want[k]; !ok {
			t.Errorf("postings of %q (field %d): %v; no document holds it", terms[k.term], k.field, list)
		}
	}
	// The kept document frequencies are what the postings count.
	for id, term := range terms {
		var df int
		if err := s.db.QueryRow(`SELECT df FROM docs_terms WHERE id = ?`, id).Scan(&df); err != nil {
			t.Fatal(err)
		}
		if n := len(want[postTerm{id, fieldAny}]); df != n {
			t.Errorf("docs_terms counts %d documents holding %q; they are %d", df, term, n)
		}
	}
}

// blockSizes is how many ids each block of a term's postings holds.
func blockSizes(t *testing.T, s *Store, term string, field int) []int {
	t.Helper()
	var id uint32
	if err := s.db.QueryRow(`SELECT id FROM docs_terms WHERE term = ?`, term).Scan(&id); err != nil {
		t.Fatal(err)
	}
	from, to := postRange(id, field)
	return queryInts(t, s, `SELECT n FROM docs_postings WHERE block BETWEEN ? AND ? ORDER BY block`, from, to)
}

// queryInts runs a query of one integer column and returns its rows.
func queryInts(t *testing.T, s *Store, q string, args ...any) []int {
	t.Helper()
	rows, err := s.db.Query(q, args...)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	var out []int
	for rows.Next() {
		var n int
		if err := rows.Scan(&n); err != nil {
			t.Fatal(err)
		}
		out = append(out, n)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	return out
}

func TestStatisticsFollowWrites(t *testing.T) { eachEngine(t, testStatisticsFollowWrites) }

func testStatisticsFollowWrites(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	checkStats(t, s)
	long := strings.Repeat("measles vaccine autism study children ", 30)
	if err := s.Add(ctx, Doc{URL: sample[2].URL, Text: long}); err != nil {
		t.Fatal(err)
	}
	checkStats(t, s)
	if ok, err := s.Delete(ctx, sample[0].URL); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if ok, err := s.Delete(ctx, sample[0].URL); err != nil || ok {
		t.Fatalf("second Delete = %v, %v; want false", ok, err)
	}
	checkStats(t, s)
	// One transaction putting a page twice, the second time rewritten.
	twice := []Doc{{URL: "https://twice.example/a", Title: "first draft", Text: "budget deficit grows"},
		{URL: "https://twice.example/a", Text: "budget surplus shrinks"}}
	if err := s.AddAll(ctx, twice); err != nil {
		t.Fatal(err)
	}
	checkStats(t, s)
	if ok, err := s.Delete(ctx, twice[0].URL); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	if n, _ := s.Count(ctx); n != len(sample)-1 {
		t.Errorf("Count = %d after a delete", n)
	}
	if hits, _ := s.Search(ctx, "sugar tax soda prices", SearchOptions{}); len(hits) != 0 {
		t.Errorf("a deleted document is still found: %+v", hits)
	}
	hits, err := s.Search(ctx, "vaccine autism children", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].URL != sample[2].URL {
		t.Errorf("updated document not found first: %+v, %v", hits, err)
	}
}

// An archive written by the version-1 schema (FTS5's porter tokenizer, no
// statistics) opens, is upgraded and is searchable.
func TestMigrateVersion1(t *testing.T) {
	path := filepath.Join(t.TempDir(), "archive.db")
	db, err := sqlitedb.Open(path, sqlitedb.Options{Busy: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(migrations[0].sql + "PRAGMA user_version = 1;"); err != nil {
		t.Fatal(err)
	}
	for i, d := range sample {
		if _, err := db.Exec(`INSERT INTO docs (url, orig_url, title, text, publisher, published, added_at, updated_at)
VALUES (?, ?, ?, ?, ?, ?, 0, 0)`, fmt.Sprint("k", i), d.URL, d.Title, d.Text, d.Publisher, sql.NullInt64{}); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != len(migrations) {
		t.Errorf("user_version = %d; want %d", v, len(migrations))
	}
	checkStats(t, s)
	hits, err := s.Search(context.Background(), "violent crimes rising", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].URL != sample[1].URL {
		t.Errorf("search after migration: %+v, %v", hits, err)
	}
}

// Words are stemmed in the document's language: a Spanish query finds a
// Spanish page through other inflections of its words.
func TestLanguageStemming(t *testing.T) { eachEngine(t, testLanguageStemming) }

func testLanguageStemming(t *testing.T, s *Store) {
	ctx := context.Background()
	docs := []Doc{
		{URL: "https://es.example/vacunas", Title: "Las vacunas no causan autismo", Language: "es",
			Text: "Los estudios con millones de niños vacunados no encontraron relación con el autismo."},
		{URL: "https://en.example/vaccines", Title: "Vaccines do not cause autism", Text: "Studies of millions of vaccinated children."},
	}
	if err := s.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "vacuna estudio niño", SearchOptions{Language: "es-MX"})
	if err != nil || len(hits) != 1 || hits[0].URL != docs[0].URL {
		t.Errorf("Spanish query: %+v, %v; want the Spanish page only", hits, err)
	}
	hits, err = s.Search(ctx, "vaccinating a child", SearchOptions{})
	if err != nil || len(hits) != 1 || hits[0].URL != docs[1].URL {
		t.Errorf("English query: %+v, %v; want the English page only", hits, err)
	}
	if d, _ := s.Get(ctx, docs[0].URL); d.Language != "es" {
		t.Errorf("stored language %q", d.Language)
	}
	if got, want := stem("running", "en"), "run"; got != want {
		t.Errorf("stem(running) = %q; want %q", got, want)
	}
	if got := stem("café", "xx"); got != "cafe" {
		t.Errorf("a language without a stemmer folds accents only: %q", got)
	}
}

// A search that runs out of time says so with ErrCut and keeps what it
// has.
func TestSearchBudget(t *testing.T) { eachEngine(t, testSearchBudget) }

func testSearchBudget(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	_, err := s.Search(ctx, "crime rate tax vaccine", SearchOptions{Budget: time.Nanosecond})
	if !errors.Is(err, ErrCut) {
		t.Errorf("search with a 1 ns budget: %v; want ErrCut", err)
	}
	dl, cancel := context.WithDeadline(ctx, time.Now().Add(-time.Second))
	defer cancel()
	if _, err := s.Search(dl, "crime rate", SearchOptions{}); !errors.Is(err, ErrCut) {
		t.Errorf("search past the caller's deadline: %v; want ErrCut", err)
	}
	gone, cancel2 := context.WithCancel(ctx)
	cancel2()
	if _, err := s.Search(gone, "crime rate", SearchOptions{}); err == nil || errors.Is(err, ErrCut) {
		t.Errorf("cancelled search: %v; want an error that is not ErrCut", err)
	}
	hits, err := s.Search(ctx, "crime rate tax vaccine", SearchOptions{Budget: time.Minute})
	if err != nil || len(hits) != len(sample) {
		t.Errorf("search within its budget: %d hits, %v", len(hits), err)
	}
}

// The first stage reads the rarest terms first and stays within its
// postings budget, always keeping minTerms.
func TestFirstTerms(t *testing.T) {
	r := ranker{postings: 100, minTerms: 2}
	df := map[string]float64{"common": 90, "rare": 3, "mid": 40, "gone": 0, "other": 70}
	got := r.firstTerms([]string{"common", "rare", "mid", "gone", "other"}, df)
	if strings.Join(got, " ") != "rare mid" {
		t.Errorf("firstTerms = %v; want [rare mid]", got)
	}
	r.postings = 10
	if got := r.firstTerms([]string{"common", "rare", "mid"}, df); strings.Join(got, " ") != "rare mid" {
		t.Errorf("firstTerms under a tight budget = %v; want the two rarest", got)
	}
}

func TestImportProgress(t *testing.T) {
	s, _ := openTemp(t)
	path := filepath.Join(t.TempDir(), "many.jsonl")
	var b strings.Builder
	const n = 2*batchSize + 10
	for i := range n {
		fmt.Fprintf(&b, `{"url":"https://p.example/%d","title":"page %d","text":"progress report number %d"}`+"\n", i, i, i)
	}
	b.WriteString("not json\n")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []int
	res := s.Import(context.Background(), []string{path}, ImportOptions{Progress: func(done int) { seen = append(seen, done) }})
	if res.Added != n || res.Failed != 1 {
		t.Fatalf("Import = %+v", res)
	}
	if len(seen) < 3 || seen[0] != batchSize || seen[len(seen)-1] != n+1 {
		t.Errorf("progress calls %v; want one per batch of %d, ending at %d", seen, batchSize, n+1)
	}
	checkStats(t, s)
	// Three batches of a word every page holds fill its blocks one after
	// the other.
	full := fullBlocks
	if got := blockSizes(t, s, "progress", fieldAny); fmt.Sprint(got) != fmt.Sprint(full(n)) {
		t.Errorf("blocks of a word in all %d pages hold %v ids; want %v", n, got, full(n))
	}
	// A few pages added to a larger archive leave the index as it is.
	small := filepath.Join(t.TempDir(), "few.jsonl")
	if err := os.WriteFile(small, []byte(`{"url":"https://p.example/x","title":"another page","text":"one more report"}`+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := s.Import(context.Background(), []string{small}, ImportOptions{}); res.Added != 1 {
		t.Fatalf("Import = %+v", res)
	}
	if got := blockSizes(t, s, "report", fieldAny); fmt.Sprint(got) != fmt.Sprint(full(n+1)) {
		t.Errorf("blocks of a word in all %d pages hold %v ids; want the last one's added to the last block", n+1, got)
	}
	checkStats(t, s)
}

// A file of long pages is read in batches bounded by their size, not
// only by their number.
func TestImportBatchesOfLongPages(t *testing.T) {
	s, _ := openTemp(t)
	path := filepath.Join(t.TempDir(), "long.jsonl")
	long := strings.Repeat("a long page of many words ", 40_000) // about 1 MB
	var b strings.Builder
	const n = 40
	for i := range n {
		fmt.Fprintf(&b, `{"url":"https://p.example/%d","title":"long page %d","text":%q}`+"\n", i, i, long)
	}
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	var seen []int
	res := s.Import(context.Background(), []string{path}, ImportOptions{Progress: func(done int) { seen = append(seen, done) }})
	if res.Added != n || res.Failed != 0 {
		t.Fatalf("Import = %+v", res)
	}
	per := batchBytes/len(long) + 1
	if per >= n {
		t.Fatalf("a batch may hold %d pages of 1 MB: the file's %d are one batch", per, n)
	}
	if len(seen) < 2 || seen[0] > per || seen[len(seen)-1] != n {
		t.Errorf("progress calls %v; want batches of at most %d pages of 1 MB", seen, per)
	}
}

func TestSearcherWith(t *testing.T) { eachEngine(t, testSearcherWith) }

func testSearcherWith(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Searcher().Search(ctx, search.Query{Text: "violent crime rate", Count: 2})
	if err != nil || len(hits) == 0 || hits[0].URL != sample[1].URL || hits[0].Provider != "archive" || hits[0].Rank != 1 {
		t.Errorf("Searcher: %+v, %v", hits, err)
	}
	if _, err := s.SearcherWith(SearcherOptions{Budget: time.Nanosecond}).Search(ctx, search.Query{Text: "violent crime rate"}); !errors.Is(err, ErrCut) {
		t.Errorf("Searcher with a 1 ns budget: %v; want ErrCut", err)
	}
}

// A snippet starts near the earliest of the query's words in the text,
// whichever of them the query names first.
func TestSnippetFindsEarliestWord(t *testing.T) {
	filler := strings.Repeat("lorem ipsum dolor sit amet ", 40)
	text := filler + "the measles outbreak spread " + filler + "vaccine rates fell " + filler
	for _, words := range [][]string{
		{"vaccine", "measles"}, {"measles", "vaccine"}, {"absent", "vaccine", "outbreak", "measles"},
	} {
		got := snippet(text, words, 60)
		if !strings.Contains(got, "measles") {
			t.Errorf("snippet(%v) = %q; want it around the first mention, measles", words, got)
		}
	}
	if got := snippet(text, []string{"absent", "rates"}, 60); !strings.Contains(got, "rates") {
		t.Errorf("snippet = %q; want it around rates", got)
	}
}

// An archive as version 6 left it (stems in docs_rank as text, docs_terms
// without ids) is converted by migration 7, and every query gets the same
// hits in the same order as before.
func TestMigrateVersion6(t *testing.T) {
	fc, path, s := factCheckArchive(t)
	var err error
	queries := fc.queries[:60]
	search := func(s *Store) []string { return hitLists(t, s, queries) }
	before := search(s)
	toVersion7(t, s)
	v6 := migrations[5].sql
	if _, err := s.db.Exec(`DROP TRIGGER docs_ad; DROP TABLE docs_rank;
CREATE TABLE docs_terms6 (term TEXT PRIMARY KEY, df INTEGER NOT NULL) WITHOUT ROWID;
INSERT INTO docs_terms6 SELECT term, df FROM docs_terms WHERE df > 0;
DROP TABLE docs_terms;
ALTER TABLE docs_terms6 RENAME TO docs_terms;` +
		v6[:strings.Index(v6, "INSERT INTO docs_rank")] + `
INSERT INTO docs_rank SELECT id, published, updated_at, title_len, text_len, title_terms, text_terms FROM docs;` +
		v6[strings.Index(v6, "CREATE TRIGGER"):] + `PRAGMA user_version = 6;`); err != nil {
		t.Fatal(err)
	}
	s.Close()
	if s, err = Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != len(migrations) || v != 9 {
		t.Errorf("user_version = %d; want 9", v)
	}
	checkStats(t, s)
	after := search(s)
	for i := range queries {
		if before[i] != after[i] {
			t.Errorf("query %d: hits before migration 7 %q, after %q", i, before[i], after[i])
		}
	}
	// The commonest term got the smallest id.
	var first string
	if err := s.db.QueryRow(`SELECT term FROM docs_terms ORDER BY df DESC, term LIMIT 1`).Scan(&first); err != nil {
		t.Fatal(err)
	}
	var id int
	s.db.QueryRow(`SELECT id FROM docs_terms WHERE term = ?`, first).Scan(&id)
	if id != 1 {
		t.Errorf("commonest term %q has id %d; want 1", first, id)
	}
	// Writes after the migration keep everything in step.
	if err := s.Add(context.Background(), Doc{URL: fc.docs[0].URL, Title: "An updated title about measles vaccines"}); err != nil {
		t.Fatal(err)
	}
	if ok, err := s.Delete(context.Background(), fc.docs[1].URL); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	checkStats(t, s)
}

// factCheckArchive is a new archive file at path holding the PolitiFact
// fact-checks.
func factCheckArchive(t *testing.T) (factChecks, string, *Store) {
	t.Helper()
	fc := loadFactChecks(t)
	path := filepath.Join(t.TempDir(), "archive.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	if err := s.AddAll(context.Background(), fc.docs); err != nil {
		t.Fatal(err)
	}
	return fc, path, s
}

// hitLists is each query's hits, URL and score.
func hitLists(t *testing.T, s *Store, queries []string) []string {
	t.Helper()
	var out []string
	for _, q := range queries {
		hits, err := s.Search(context.Background(), q, SearchOptions{})
		if err != nil {
			t.Fatal(err)
		}
		var urls []string
		for _, h := range hits {
			urls = append(urls, fmt.Sprintf("%s %.6f", h.URL, h.Score))
		}
		out = append(out, strings.Join(urls, " "))
	}
	return out
}

// toVersion7 turns s's archive back into what version 7 made of it: a
// term's postings in FTS5's two indexes, with the delete trigger of
// migration 6 keeping them.
func toVersion7(t testing.TB, s *Store) {
	t.Helper()
	v6 := migrations[5].sql
	if _, err := s.db.Exec(`DROP TRIGGER docs_ad; DROP TABLE docs_postings;
CREATE VIRTUAL TABLE docs_fts USING fts5(title_terms, text_terms, publisher_terms,
	content='docs', content_rowid='id', tokenize='ascii', detail=none);
INSERT INTO docs_fts(docs_fts) VALUES ('rebuild');
CREATE VIRTUAL TABLE docs_title_fts USING fts5(title_terms, content='docs', content_rowid='id', tokenize='ascii', detail=none);
INSERT INTO docs_title_fts(docs_title_fts) VALUES ('rebuild');` +
		v6[strings.Index(v6, "CREATE TRIGGER"):] + `PRAGMA user_version = 7;`); err != nil {
		t.Fatal(err)
	}
}

// fullBlocks is how many ids each block of a word in n pages written in id
// order holds: full blocks, then the rest.
func fullBlocks(n int) []int {
	var sizes []int
	for ; n > blockIDs; n -= blockIDs {
		sizes = append(sizes, blockIDs)
	}
	return append(sizes, n)
}

// Migration 8 fills a frequent word's blocks one after the other, and a
// rare word's only block, from a version-7 archive larger than a block.
func TestMigrateVersion7FullBlocks(t *testing.T) {
	s, path := openTemp(t)
	const n = 2*blockIDs + 300
	docs := make([]Doc, n)
	for i := range docs {
		docs[i] = Doc{URL: fmt.Sprintf("https://p.example/%d", i), Title: fmt.Sprintf("page %d", i),
			Text: fmt.Sprintf("progress report number %d", i)}
		if i%7 == 0 {
			docs[i].Title += " budget"
		}
	}
	if err := s.AddAll(context.Background(), docs); err != nil {
		t.Fatal(err)
	}
	toVersion7(t, s)
	s.Close()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkStats(t, s)
	if got := blockSizes(t, s, "progress", fieldAny); fmt.Sprint(got) != fmt.Sprint(fullBlocks(n)) {
		t.Errorf("blocks of a word in all %d pages hold %v ids; want %v", n, got, fullBlocks(n))
	}
	if got, want := blockSizes(t, s, "budget", fieldTitle), fullBlocks((n+6)/7); fmt.Sprint(got) != fmt.Sprint(want) {
		t.Errorf("title blocks of a word in every seventh title hold %v ids; want %v", got, want)
	}
	if got := blockSizes(t, s, "2047", fieldAny); fmt.Sprint(got) != "[1]" {
		t.Errorf("blocks of a number in one page hold %v ids; want [1]", got)
	}
}

// An archive as version 7 left it (postings in FTS5) is converted by
// migration 8: each term's postings are FTS5's, and every query gets the
// same hits in the same order, with the same scores, as from the postings
// the writes kept.
func TestMigrateVersion7(t *testing.T) {
	fc, path, s := factCheckArchive(t)
	var err error
	queries := fc.queries[:200]
	search := func(s *Store) []string { return hitLists(t, s, queries) }
	// The first stage as version 7 read it: from FTS5.
	ftsDocs := func(ts []string, title bool) map[string][]int64 {
		out := map[string][]int64{}
		table := "docs_fts"
		if title {
			table = "docs_title_fts"
		}
		for _, term := range ts {
			rows, err := s.db.Query(`SELECT rowid FROM `+table+` WHERE `+table+` MATCH ? ORDER BY rowid LIMIT 20000`, quote(term))
			if err != nil {
				t.Fatal(err)
			}
			for rows.Next() {
				var id int64
				rows.Scan(&id)
				out[term] = append(out[term], id)
			}
			rows.Close()
		}
		return out
	}
	// Hits from the postings the writes kept, to compare with those
	// migration 8 builds.
	before := search(s)
	toVersion7(t, s)
	var sample []string
	for _, q := range queries[:20] {
		sample = append(sample, parseQuery(q, "en").distinct...)
	}
	slices.Sort(sample)
	sample = slices.Compact(sample)
	fromFTS, titlesFTS := ftsDocs(sample, false), ftsDocs(sample, true)
	s.Close()
	if s, err = Open(context.Background(), path); err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	var v int
	s.db.QueryRow("PRAGMA user_version").Scan(&v)
	if v != 9 {
		t.Errorf("user_version = %d; want 9", v)
	}
	var fts int
	s.db.QueryRow(`SELECT count(*) FROM sqlite_schema WHERE name LIKE 'docs%fts%'`).Scan(&fts)
	if fts != 0 {
		t.Errorf("%d FTS5 tables left after migration 8", fts)
	}
	checkStats(t, s)
	ps, err := s.postings(context.Background(), sample, collStats{n: 1})
	if err != nil {
		t.Fatal(err)
	}
	for _, title := range []bool{false, true} {
		want := fromFTS
		if title {
			want = titlesFTS
		}
		got, err := s.termDocs(context.Background(), sample, ps.ids, ps.df, 20000, title)
		if err != nil {
			t.Fatal(err)
		}
		for _, term := range sample {
			if fmt.Sprint(got[term]) != fmt.Sprint(want[term]) {
				t.Errorf("postings of %q (title %v): %v; FTS5 had %v", term, title, got[term], want[term])
			}
		}
	}
	after := search(s)
	for i := range queries {
		if before[i] != after[i] {
			t.Errorf("query %d: hits before migration 8 %q, after %q", i, before[i], after[i])
		}
	}
}

// Postings lists read back as the ids written, and anything else is an
// error rather than a wrong id.
func TestParseIDs(t *testing.T) {
	for in, want := range map[string]string{"": "[]", "7": "[7]", "1,22,333": "[1 22 333]", "1,,2,": "[1 2]",
		"9223372036854775": "[9223372036854775]"} {
		got, err := parseIDs(in)
		if err != nil || fmt.Sprint(got) != want {
			t.Errorf("parseIDs(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, bad := range []string{"1,x", "-1", "1 2", "12345678901234567890"} {
		if got, err := parseIDs(bad); err == nil {
			t.Errorf("parseIDs(%q) = %v; want an error", bad, got)
		}
	}
}

func TestSearchTimePrior(t *testing.T) { eachEngine(t, testSearchTimePrior) }

// Four fact-checks of one claim in the same words, dated long before a
// post, shortly before it, after it, and not at all: given the post's
// time, the one from shortly before comes first among the dated, the
// one after it last; the undated one loses nothing, so it comes first;
// without the post's time all four score alike.
func testSearchTimePrior(t *testing.T, s *Store) {
	ctx := context.Background()
	day := func(y int, m time.Month, d int) time.Time { return time.Date(y, m, d, 0, 0, 0, 0, time.UTC) }
	const title, text = "Did the governor cut school funding by 20 percent?",
		"The governor cut school funding by 20 percent, a viral post says. The budget shows a cut of 2 percent."
	docs := []Doc{
		{URL: "https://checks.example/old", Title: title, Text: text, Published: day(2012, time.March, 1)},
		{URL: "https://checks.example/recent", Title: title, Text: text, Published: day(2017, time.January, 20)},
		{URL: "https://checks.example/later", Title: title, Text: text, Published: day(2018, time.June, 1)},
		{URL: "https://checks.example/undated", Title: title, Text: text},
	}
	if err := s.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	post := "The governor just cut school funding by 20 percent!!"
	plain, err := s.Search(ctx, post, SearchOptions{})
	if err != nil || len(plain) != 4 {
		t.Fatalf("search without the post's time: %d hits, %v", len(plain), err)
	}
	for _, h := range plain[1:] {
		if h.Score != plain[0].Score {
			t.Errorf("without the post's time, %s scores %g and %s %g; want the same", h.URL, h.Score, plain[0].URL, plain[0].Score)
		}
	}
	dated, err := s.Search(ctx, post, SearchOptions{Posted: day(2017, time.February, 2).Add(15 * time.Hour)})
	if err != nil || len(dated) != 4 {
		t.Fatalf("search with the post's time: %d hits, %v", len(dated), err)
	}
	var order []string
	score := map[string]float64{}
	for _, h := range dated {
		name := h.URL[strings.LastIndex(h.URL, "/")+1:]
		order = append(order, name)
		score[name] = h.Score
	}
	if want := []string{"undated", "recent", "old", "later"}; !slices.Equal(order, want) {
		t.Errorf("with the post's time the hits come %v; want %v", order, want)
	}
	if !(score["undated"] > score["recent"] && score["recent"] > score["old"] && score["old"] > score["later"]) {
		t.Errorf("with the post's time the scores are %v; want each below the one before", score)
	}
	// A check asks through the Searcher, with the post's time in the query.
	hits, err := s.Searcher().Search(ctx, search.Query{Text: post, Posted: day(2017, time.February, 2).Add(15 * time.Hour)})
	if err != nil || len(hits) != 4 {
		t.Fatalf("Searcher with the post's time: %d hits, %v", len(hits), err)
	}
	for i, h := range hits {
		if h.URL != dated[i].URL {
			t.Errorf("Searcher hit %d is %s; the search with the post's time gives %s", i+1, h.URL, dated[i].URL)
		}
	}
}
