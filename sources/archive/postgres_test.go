package archive

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

func TestPostingTerms(t *testing.T) {
	long := strings.Repeat("a", maxTerm+1)
	r := docRow{titleTerms: "vaccin kill", textTerms: "kill peopl vaccin " + long + " kill", pubTerms: "reuter", titleLen: 2, textLen: 5}
	got := postingTerms(r)
	want := []string{"vaccin", "kill", "peopl", "reuter", "!vaccin", "!kill"}
	if !slices.Equal(got, want) {
		t.Errorf("postingTerms = %q; want %q", got, want)
	}
	if got := countedStems(got); !slices.Equal(got, want[:4]) {
		t.Errorf("countedStems = %q; want %q", got, want[:4])
	}
	if got := postingTerms(docRow{textTerms: "only text"}); !slices.Equal(got, []string{"only", "text"}) {
		t.Errorf("untitled: %q", got)
	}
	if got := postingTerms(docRow{}); len(got) != 0 {
		t.Errorf("empty row: %q", got)
	}
}

// idListCodec sends an idList exactly as pgx's own array codec sends the
// same []int64, and leaves every other value to it.
func TestIDListEncoding(t *testing.T) {
	m := pgtype.NewMap()
	for _, ids := range [][]int64{{1}, {1, 2, 300, 1 << 40}, {}} {
		want, err := m.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, ids, nil)
		if err != nil {
			t.Fatal(err)
		}
		fast := pgtype.NewMap()
		useIDLists(fast)
		useIDLists(fast) // once is enough; twice wraps nothing twice
		if _, ok := fast.TypeForOID(pgtype.Int8ArrayOID); !ok {
			t.Fatal("no bigint[] type")
		}
		got, err := fast.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, idList(ids), nil)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(got, want) {
			t.Errorf("idList %v encodes as % x; pgx: % x", ids, got, want)
		}
		plain, err := fast.Encode(pgtype.Int8ArrayOID, pgtype.BinaryFormatCode, ids, nil)
		if err != nil || !slices.Equal(plain, want) {
			t.Errorf("[]int64 %v through the wrapped codec: % x, %v; want % x", ids, plain, err, want)
		}
	}
}

// The server's archive_doc_terms (the delete trigger's) gives the terms
// postingTerms gives.
func TestPostgresDocTermsMatch(t *testing.T) {
	s := openPostgresTemp(t)
	long := strings.Repeat("é", maxTerm/2) // 2,048 bytes: too long
	for _, r := range []docRow{
		{titleTerms: "vaccin kill", textTerms: "kill peopl vaccin " + long + " kill", pubTerms: "reuter"},
		{textTerms: "only text"},
		{titleTerms: "a  b", textTerms: " b c ", pubTerms: ""},
		{titleTerms: strings.Repeat("x", maxTerm), textTerms: strings.Repeat("x", maxTerm)},
		{},
	} {
		var got []string
		if err := s.db.QueryRowContext(context.Background(), `SELECT archive_doc_terms($1, $2, $3)`,
			r.titleTerms, r.textTerms, r.pubTerms).Scan(pgtypeArray(&got)); err != nil {
			t.Fatal(err)
		}
		if want := slices.Sorted(slices.Values(postingTerms(r))); !slices.Equal(got, want) && len(got)+len(want) > 0 {
			t.Errorf("archive_doc_terms(%.20q, %.20q, %q) = %.40q; want %.40q", r.titleTerms, r.textTerms, r.pubTerms, got, want)
		}
	}
}

// pgtypeArray scans a PostgreSQL array into *dst.
func pgtypeArray(dst *[]string) any { return pgtype.NewMap().SQLScanner(dst) }

// rowSizes are the sizes of a term's postings rows, by lo.
func rowSizes(t *testing.T, s *Store, term string) []int {
	t.Helper()
	return queryInts(t, s, `SELECT n FROM archive_postings WHERE term = $1 ORDER BY lo`, term)
}

// checkTerms says whether archive_postings lists each document under
// exactly the terms postingTerms gives for its stems, each term's rows
// holding ids ascending within their bounds, and each id once a term.
func checkTerms(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.db.QueryContext(ctx, `SELECT term, lo, hi, ids FROM archive_postings`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	posted := map[int64][]string{}
	seen := map[posting]bool{}
	for rows.Next() {
		var term string
		var lo, hi int64
		var ids []int64
		if err := rows.Scan(&term, &lo, &hi, pgtype.NewMap().SQLScanner(&ids)); err != nil {
			t.Fatal(err)
		}
		if len(ids) == 0 || !slices.IsSorted(ids) || ids[0] < lo || ids[len(ids)-1] > hi {
			t.Errorf("term %q: row [%d, %d] holds %v; want ids ascending within its bounds", term, lo, hi, ids)
		}
		for _, id := range ids {
			if seen[posting{term, id}] {
				t.Errorf("term %q lists document %d twice", term, id)
			}
			seen[posting{term, id}] = true
			posted[id] = append(posted[id], term)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	rows, err = s.db.QueryContext(ctx, `SELECT id, title_terms, text_terms, publisher_terms FROM archive_docs`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var r docRow
		if err := rows.Scan(&id, &r.titleTerms, &r.textTerms, &r.pubTerms); err != nil {
			t.Fatal(err)
		}
		got := posted[id]
		slices.Sort(got)
		if want := slices.Sorted(slices.Values(postingTerms(r))); !slices.Equal(got, want) {
			t.Errorf("document %d is listed under %q; want %q", id, got, want)
		}
		delete(posted, id)
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	for id, terms := range posted {
		t.Errorf("no document %d, yet listed under %q", id, terms)
	}
}

// Adding, merging (a title that changes the stems) and deleting keep
// the postings in step with the documents.
func TestPostgresTermsKeptInStep(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	docs := []Doc{
		{URL: "https://a.example/1", Title: "Flooding in the valley", Text: "Rivers rose overnight."},
		{URL: "https://a.example/2", Title: "Élections régionales", Text: "Les électeurs ont voté dimanche.", Language: "fr"},
		{URL: "https://a.example/1", Text: "Rivers rose overnight and bridges closed."}, // merges into the first
	}
	if err := s.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.Add(ctx, Doc{URL: "https://a.example/2", Title: "Regional elections"}); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, s)
	hits, err := s.Search(ctx, "bridges closed after flooding", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].URL != "https://a.example/1" {
		t.Fatalf("Search = %v, %v; want a.example/1 first", hits, err)
	}
	// Non-ASCII stems are matched as they are, as on SQLite.
	hits, err = s.Search(ctx, "électeurs", SearchOptions{Language: "fr"})
	if err != nil || len(hits) != 1 {
		t.Fatalf("Search(électeurs) = %v, %v; want a.example/2", hits, err)
	}
	if ok, err := s.Delete(ctx, "https://a.example/1"); err != nil || !ok {
		t.Fatalf("Delete = %v, %v", ok, err)
	}
	checkTerms(t, s)
	checkStats(t, s)
}

// Merging several documents of one batch row at once, each losing and
// gaining terms it shares with the others, moves each of them alone, and
// a row left empty goes.
func TestPostgresMergesMovePostings(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	var docs []Doc
	for i := range 6 {
		docs = append(docs, Doc{URL: fmt.Sprintf("https://m.example/%d", i), Title: "alpha beta", Text: fmt.Sprintf("gamma delta word%d", i)})
	}
	if err := s.AddAll(ctx, docs); err != nil {
		t.Fatal(err)
	}
	if err := s.AddAll(ctx, []Doc{
		{URL: "https://m.example/1", Title: "epsilon", Text: "zeta"},
		{URL: "https://m.example/3", Title: "epsilon beta", Text: "gamma eta"},
		{URL: "https://m.example/new", Title: "eta"},
		{URL: "https://m.example/1", Text: "zeta theta"}, // the same document again
		{URL: "https://m.example/4", Text: "gamma delta word4 iota"},
	}); err != nil {
		t.Fatal(err)
	}
	checkTerms(t, s)
	checkCounts(t, s)
	var left int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM archive_postings WHERE term IN ('word1', 'word3')`).Scan(&left); err != nil {
		t.Fatal(err)
	}
	if left != 0 {
		t.Errorf("%d rows of terms no document holds any more; want none", left)
	}
}

// An archive made before archive_terms (migration 1) gets its documents'
// postings when it is opened (through archive_terms, migrations 2 and 5),
// and finds them by text and by title.
func TestPostgresMigrationBuildsTerms(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	db := migratedTo(t, url, 1)
	// Version 1's writer: the server computed the tsvector.
	old := &Store{now: time.Now}
	for i, d := range []Doc{
		{URL: "https://b.example/1", Title: "Bridge closed", Text: "The old bridge over the river closed for repairs.", Publisher: "Courier"},
		{URL: "https://b.example/2", Title: "Mayor re-elected", Text: "Voters returned the mayor for a third term."},
		{URL: "https://b.example/3", Text: strings.Repeat("x", 3000) + " long stems are no lexemes"},
	} {
		r, err := old.newRow(d)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := db.ExecContext(ctx, `INSERT INTO archive_docs (url, orig_url, title, text, publisher, added_at, updated_at,
	title_len, text_len, title_terms, text_terms, publisher_terms) VALUES ($1, $2, $3, $4, $5, $6, $6, $7, $8, $9, $10, $11)`,
			r.key, r.url, r.title, r.text, r.publisher, int64(i), r.titleLen, r.textLen, r.titleTerms, r.textTerms, r.pubTerms); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := db.ExecContext(ctx, `UPDATE archive_stats SET n = 3`); err != nil {
		t.Fatal(err)
	}
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	checkTerms(t, s)
	hits, err := s.Search(ctx, "mayor elected", SearchOptions{})
	if err != nil || len(hits) == 0 || hits[0].URL != "https://b.example/2" {
		t.Fatalf("Search = %v, %v; want b.example/2 first", hits, err)
	}
	titles, err := s.termDocs(ctx, []string{"bridg", "river"}, nil, nil, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(titles["bridg"]) != 1 || len(titles["river"]) != 0 {
		t.Errorf("title postings = %v; want bridg in one title, river in none", titles)
	}
}

// A writer that stores a key between copyNew's look-up and its COPY makes
// the COPY fail on the unique key: copyNew undoes it and looks the keys up
// again, copying the new row and leaving the other writer's to put, so
// nothing is lost and nothing is stored twice.
func TestPostgresCopyMeetsAnotherWriter(t *testing.T) {
	url := pgdbtest.Fresh(t)
	ctx := context.Background()
	s, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	other, err := Open(ctx, url)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	// The other writer's document, inserted but not yet committed: the
	// look-up does not see it, and the COPY waits on its key.
	r, err := other.newRow(Doc{URL: "https://c.example/shared", Title: "First version", Text: "written by the other process"})
	if err != nil {
		t.Fatal(err)
	}
	tx, err := other.db.BeginTx(ctx, nil)
	if err != nil {
		t.Fatal(err)
	}
	defer tx.Rollback()
	var id int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO archive_docs (url, orig_url, title, text, added_at, updated_at, title_len, text_len,
	title_terms, text_terms) VALUES ($1, $2, $3, $4, 0, 0, $5, $6, $7, $8) RETURNING id`,
		r.key, r.url, r.title, r.text, r.titleLen, r.textLen, r.titleTerms, r.textTerms).Scan(&id); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO archive_postings (term, lo, hi, n, ids)
SELECT t, $1, $1, 1, ARRAY[$1::bigint] FROM unnest($2::text[]) t`, id, postingTerms(r)); err != nil {
		t.Fatal(err)
	}
	if _, err := tx.ExecContext(ctx, `UPDATE archive_stats SET n = n + 1, title_len = title_len + $1, lead_len = lead_len + $2`,
		r.titleLen, min(r.textLen, leadWords)); err != nil {
		t.Fatal(err)
	}
	done := make(chan error, 1)
	go func() {
		done <- s.AddAll(ctx, []Doc{
			{URL: "https://c.example/new", Title: "Only here", Text: "a document nobody else writes"},
			{URL: "https://c.example/shared", Title: "Second version"},
		})
	}()
	// Wait until the COPY waits for the other transaction, then commit it.
	for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		var waiting int
		if err := other.db.QueryRowContext(ctx, `SELECT count(*) FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock' AND query LIKE 'copy%'`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting > 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the COPY never waited on the other writer's key")
		}
	}
	if err := tx.Commit(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != 2 {
		t.Errorf("archive holds %d documents; want 2", n)
	}
	d, err := s.Get(ctx, "https://c.example/shared")
	if err != nil || d.Title != "Second version" || d.Text != "written by the other process" {
		t.Errorf("shared document = %+v, %v; want the second title merged into the other writer's text", d, err)
	}
	checkTerms(t, s)
	checkStats(t, s)
}

// A batch of an import appends one postings row to each term it holds:
// a term in every page of three batches has three rows, and a word of one
// page one row.
func TestPostgresImportAppendsPostings(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pages.jsonl")
	var lines []string
	for i := range 2*batchSize + 10 {
		lines = append(lines, fmt.Sprintf(`{"url":"https://d.example/%d","title":"Page %d","text":"words of page%d about rivers and bridges"}`, i, i, i))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	res := s.Import(ctx, []string{path}, ImportOptions{})
	if res.Added != len(lines) || res.Failed != 0 {
		t.Fatalf("Import = %+v; want %d added", res, len(lines))
	}
	if res.Merged.Terms != 0 || res.MergeErr != nil {
		t.Errorf("an import of 3 batches merged %+v (%v); want nothing: fewer than mergeRows rows a term", res.Merged, res.MergeErr)
	}
	for term, want := range map[string]int{"river": 3, "!page": 3, "page17": 1, "!river": 0} {
		if got := len(rowSizes(t, s, term)); got != want {
			t.Errorf("term %q has %d postings rows; want %d", term, got, want)
		}
	}
	ids, err := s.termDocs(ctx, []string{"river", "page17"}, nil, nil, 5, false)
	if err != nil {
		t.Fatal(err)
	}
	if len(ids["river"]) != 5 || ids["river"][0] != 1 || !slices.IsSorted(ids["river"]) || len(ids["page17"]) != 1 {
		t.Errorf("termDocs = %v; want river's first five ids from 1, page17's one", ids)
	}
	checkTerms(t, s)
}

// Writes of a few pages, as checks archive them, add their postings to
// each term's last row with room rather than a row each: 60 writes of 10
// pages sharing a word leave it ceil(600 / rowIDs) rows, not 60, and a
// word of one page one row; the ids stay ascending and a search reads
// them in order. A write of more than appendDocs pages (an import's
// batch) still writes rows of its own.
func TestPostgresSmallWritesFillRows(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	const writes, per = 60, 10
	for w := range writes {
		var docs []Doc
		for i := range per {
			k := w*per + i
			docs = append(docs, Doc{URL: fmt.Sprintf("https://f.example/%d", k), Title: fmt.Sprintf("Harbour %d", k),
				Text: fmt.Sprintf("ferries in the harbour, item%d", k)})
		}
		if err := s.AddAll(ctx, docs); err != nil {
			t.Fatal(err)
		}
	}
	full := (writes*per + rowIDs - 1) / rowIDs
	for term, want := range map[string]int{"ferri": full, "harbour": full, "!harbour": full, "item17": 1} {
		if got := len(rowSizes(t, s, term)); got != want {
			t.Errorf("term %q has %d postings rows; want %d", term, got, want)
		}
	}
	ids, err := s.termDocs(ctx, []string{"ferri"}, nil, nil, writes*per, false)
	if err != nil {
		t.Fatal(err)
	}
	if got := ids["ferri"]; len(got) != writes*per || !slices.IsSorted(got) {
		t.Errorf("termDocs(ferri) = %d ids (sorted %v); want %d ascending", len(got), slices.IsSorted(got), writes*per)
	}
	var big []Doc
	for i := range appendDocs {
		big = append(big, Doc{URL: fmt.Sprintf("https://f.example/big/%d", i), Title: "Ferries", Text: "ferries again"})
	}
	if err := s.AddAll(ctx, big); err != nil {
		t.Fatal(err)
	}
	if got := len(rowSizes(t, s, "ferri")); got != full+1 {
		t.Errorf("after a write of %d pages, ferri has %d rows; want %d, one of the write's own", appendDocs, got, full+1)
	}
	checkTerms(t, s)
	checkCounts(t, s)
	checkStats(t, s)
}

// migratedTo opens the database at url with the archive's migrations
// applied up to version only: an archive as an older muse left it.
func migratedTo(t *testing.T, url string, version int64) *sql.DB {
	t.Helper()
	db, err := sql.Open("pgx", url)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { db.Close() })
	if _, err := pgProvider(t, db).UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}

// pgProvider runs the archive's PostgreSQL migrations on db, as Open does.
func pgProvider(t *testing.T, db *sql.DB) *goose.Provider {
	t.Helper()
	sub, err := fs.Sub(pgMigrations, "migrations/postgres")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithTableName("muse_archive_migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	return p
}

// A document's rows are found by both bounds in the index (migration 6):
// the delete trigger's and flushPostings' look-ups test hi on the index
// entries, not on rows read from the table.
func TestPostgresPostingsFoundByRange(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	c, err := s.db.Conn(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// The table is tiny here; the plan wanted is the one a large archive
	// gets.
	if _, err := c.ExecContext(ctx, `SET enable_seqscan = off`); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{
		`SELECT 1 FROM archive_postings WHERE term = ANY('{river,bridg}'::text[]) AND lo <= 7 AND 7 <= hi AND 7 = ANY(ids) ORDER BY term, lo, ctid FOR UPDATE`,
		`SELECT 1 FROM archive_postings p JOIN unnest('{river}'::text[], '{7}'::bigint[]) AS u(t, d) ON p.term = u.t AND p.lo <= u.d AND u.d <= p.hi AND u.d = ANY(p.ids)`,
	} {
		var plan string
		if err := c.QueryRowContext(ctx, `EXPLAIN (FORMAT JSON) `+q).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if !regexp.MustCompile(`"Index Cond": "[^"]*\bhi\b`).MatchString(plan) {
			t.Errorf("the rows holding a document are not found by hi in the index:\n%s\n%s", q, plan)
		}
	}
}
