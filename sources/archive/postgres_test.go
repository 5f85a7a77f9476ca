package archive

import (
	"context"
	"database/sql"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgtype"
	_ "github.com/jackc/pgx/v5/stdlib" // database/sql driver "pgx"
	"github.com/pressly/goose/v3"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

func lexemes(v pgtype.TSVector) []string {
	out := make([]string, len(v.Lexemes))
	for i, l := range v.Lexemes {
		out[i] = l.Word
	}
	return out
}

func TestTermVector(t *testing.T) {
	long := strings.Repeat("a", maxLexeme+1)
	r := docRow{titleTerms: "vaccin kill", textTerms: "kill peopl vaccin " + long + " kill", pubTerms: "reuter", titleLen: 2, textLen: 5}
	got := lexemes(termVector(r))
	want := []string{"!kill", "!vaccin", "kill", "peopl", "reuter", "vaccin"}
	if !slices.Equal(got, want) {
		t.Errorf("termVector = %q; want %q", got, want)
	}
	for _, l := range termVector(r).Lexemes {
		if len(l.Positions) != 0 {
			t.Errorf("lexeme %q has positions %v; the first stage reads none", l.Word, l.Positions)
		}
	}
	if got := lexemes(termVector(docRow{textTerms: "only text"})); !slices.Equal(got, []string{"only", "text"}) {
		t.Errorf("untitled: %q", got)
	}
	// A page of more distinct stems than a tsvector holds keeps what fits.
	var huge []string
	for i := range 200_000 {
		huge = append(huge, "w"+strings.Repeat("x", i%7)+string(rune('a'+i%26))+strings.Repeat("y", i%5)+string(rune('a'+i/26%26))+string(rune('a'+i/676%26)))
	}
	v := termVector(docRow{textTerms: strings.Join(huge, " ")})
	size := 0
	for _, l := range v.Lexemes {
		size += len(l.Word) + 4
	}
	if size > maxVectorBytes || len(v.Lexemes) == 0 {
		t.Errorf("huge page: %d lexemes, %d bytes; want some, at most %d bytes", len(v.Lexemes), size, maxVectorBytes)
	}
}

// checkTerms says whether archive_terms holds exactly one row per
// document, the one termVector builds from the document's stems.
func checkTerms(t *testing.T, s *Store) {
	t.Helper()
	ctx := context.Background()
	rows, err := s.db.QueryContext(ctx, `SELECT d.id, d.title_terms, d.text_terms, d.publisher_terms, t.tsv
FROM archive_docs d LEFT JOIN archive_terms t ON t.id = d.id`)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	docs := 0
	for rows.Next() {
		var id int64
		var r docRow
		var tsv pgtype.TSVector
		if err := rows.Scan(&id, &r.titleTerms, &r.textTerms, &r.pubTerms, &tsv); err != nil {
			t.Fatal(err)
		}
		docs++
		if !tsv.Valid {
			t.Errorf("document %d has no archive_terms row", id)
			continue
		}
		if got, want := lexemes(tsv), lexemes(termVector(r)); !slices.Equal(got, want) {
			t.Errorf("document %d: archive_terms %q; want %q", id, got, want)
		}
	}
	if err := rows.Err(); err != nil {
		t.Fatal(err)
	}
	var terms int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM archive_terms`).Scan(&terms); err != nil {
		t.Fatal(err)
	}
	if terms != docs {
		t.Errorf("archive_terms holds %d rows for %d documents", terms, docs)
	}
}

// Adding, merging (a title that changes the stems) and deleting keep
// archive_terms in step with the documents.
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

// An archive made before archive_terms (migration 1) gets its documents'
// rows when it is opened, and finds them by text and by title.
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
	titles, err := s.termDocs(ctx, []string{"bridg", "river"}, 10, true)
	if err != nil {
		t.Fatal(err)
	}
	if len(titles["bridg"]) != 1 || len(titles["river"]) != 0 {
		t.Errorf("title postings = %v; want bridg in one title, river in none", titles)
	}
}

// A writer that stores a key between copyNew's look-up and its COPY makes
// the COPY fail on the unique key: copyNew undoes it and put merges every
// row, so nothing is lost and nothing is stored twice.
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
	if _, err := tx.ExecContext(ctx, `INSERT INTO archive_terms (id, tsv) VALUES ($1, $2)`, id, termVector(r)); err != nil {
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

// An import leaves nothing in the GIN index's pending list, where every
// search would read it.
func TestPostgresImportFlushesPending(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "pages.jsonl")
	var lines []string
	for i := range 50 {
		lines = append(lines, fmt.Sprintf(`{"url":"https://d.example/%d","title":"Page %d","text":"words of page %d about rivers and bridges"}`, i, i, i))
	}
	if err := os.WriteFile(path, []byte(strings.Join(lines, "\n")), 0o644); err != nil {
		t.Fatal(err)
	}
	if res := s.Import(ctx, []string{path}, ImportOptions{}); res.Added != 50 || res.Failed != 0 {
		t.Fatalf("Import = %+v; want 50 added", res)
	}
	var pending int64
	if err := s.db.QueryRowContext(ctx, `SELECT gin_clean_pending_list('archive_terms_tsv'::regclass)`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending != 0 {
		t.Errorf("%d pages pending in the GIN index after an import; want 0", pending)
	}
	// The check can fail: adding without an import leaves pages pending.
	if err := s.Add(ctx, Doc{URL: "https://d.example/one", Title: "One more", Text: "left pending"}); err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(ctx, `SELECT gin_clean_pending_list('archive_terms_tsv'::regclass)`).Scan(&pending); err != nil {
		t.Fatal(err)
	}
	if pending == 0 {
		t.Error("no page pending after an Add; the check above cannot tell")
	}
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
	sub, err := fs.Sub(pgMigrations, "migrations/postgres")
	if err != nil {
		t.Fatal(err)
	}
	p, err := goose.NewProvider(goose.DialectPostgres, db, sub,
		goose.WithTableName("muse_archive_migrations"), goose.WithDisableGlobalRegistry(true))
	if err != nil {
		t.Fatal(err)
	}
	if _, err := p.UpTo(context.Background(), version); err != nil {
		t.Fatal(err)
	}
	return db
}
