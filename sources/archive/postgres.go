package archive

import (
	"context"
	"embed"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/musecheck/muse/sources/pgdb"
)

// The archive on a newsroom's PostgreSQL: the same tables (named archive_*
// there, beside the other stores' tables), the same statements, and the
// same stems. A document's distinct stems, its title's marked apart, are
// one tsvector in a narrow side table, archive_terms, with a GIN index
// (see migration 2 and termVector); that index is what a term's postings
// are read from. The collection statistics are a row kept by every
// write, and each term's document count a row of archive_term_df
// (migration 4), as on SQLite. Imports go in through the COPY protocol
// (copyNew). The first stage and the rerank are the same Go code on both
// engines, reading the same counts, so they rank the same documents the
// same way.

//go:embed migrations
var pgMigrations embed.FS

// openPostgres opens the archive in the database at rawURL and brings its
// schema up to date.
func openPostgres(ctx context.Context, rawURL string) (*Store, error) {
	pool, db, err := pgdb.OpenMigrated(ctx, rawURL, "archive", pgMigrations, "migrations/postgres")
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	return &Store{db: db, pool: pool, postgres: true, path: pgdb.Redact(rawURL)}, nil
}

// pgTables finds the tables' SQLite names in a statement.
var pgTables = regexp.MustCompile(`\b(docs|docs_stats|pages|claims)\b`)

var pgNames = map[string]string{"docs": "archive_docs", "docs_stats": "archive_stats", "pages": "archive_pages", "claims": "archive_claims"}

// sql returns a statement written for SQLite as the engine wants it: on
// PostgreSQL the tables' archive_* names and $n placeholders. Statements
// name tables only as tables (no column is called docs, pages or claims)
// and hold no ? inside a string literal.
func (s *Store) sql(q string) string {
	if !s.postgres {
		return q
	}
	return pgdb.Rebind(pgTables.ReplaceAllStringFunc(q, func(t string) string { return pgNames[t] }))
}

// tsQuote makes a stem a tsquery operand: quoted, so that nothing in it
// reads as an operator.
func tsQuote(t string) string {
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + `'`
}

// tsOr matches documents holding any of the stems.
func tsOr(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = tsQuote(t)
	}
	return strings.Join(q, " | ")
}

// titleMark marks a title's stems in archive_terms (see migration 2): no
// stem holds it, since stems are letters, digits and marks.
const titleMark = "!"

// PostgreSQL's limits on a tsvector: a lexeme under 2 KiB, and the
// lexemes together under 1 MiB.
const (
	maxLexeme      = 2047
	maxVectorBytes = 1<<20 - 1
)

// termVector is a document's row in archive_terms: its distinct stems of
// every field, and its title's again under titleMark, without positions.
// It is built here and sent as a tsvector, so the server neither parses
// text nor computes anything: it stores the lexemes and indexes them. A
// stem too long for a lexeme is left out (as to_tsvector would), and so
// are the last lexemes of a document whose distinct stems pass a megabyte.
func termVector(r docRow) pgtype.TSVector {
	words := make([]string, 0, r.titleLen*2+r.textLen+4)
	for _, f := range []string{r.titleTerms, r.textTerms, r.pubTerms} {
		for t := range strings.SplitSeq(f, " ") {
			words = append(words, t)
		}
	}
	for t := range strings.SplitSeq(r.titleTerms, " ") {
		if t != "" {
			words = append(words, titleMark+t)
		}
	}
	// Sorted as the server sorts lexemes (bytewise, shorter first on a
	// common prefix), so it keeps them as they come.
	slices.Sort(words)
	words = slices.Compact(words)
	lex := make([]pgtype.TSVectorLexeme, 0, len(words))
	size := 0
	for _, w := range words {
		if w == "" || len(w) > maxLexeme {
			continue
		}
		// Each lexeme also costs a 4-byte entry in the tsvector's header.
		if size += len(w) + 4; size > maxVectorBytes {
			break
		}
		lex = append(lex, pgtype.TSVectorLexeme{Word: w})
	}
	return pgtype.TSVector{Lexemes: lex, Valid: true}
}

// pgTermDocs is termDocs' statement on PostgreSQL: for each tsquery
// operand of the JSON array (a quoted stem, see pgTermOperand), the ids of
// at most limit documents holding it, from archive_terms' GIN index. A
// bitmap scan visits the heap in block order, which for an archive that
// mostly grows is id order; termDocs sorts them all the same.
const pgTermDocs = `SELECT j.k - 1, (SELECT coalesce(string_agg(id::text, ','), '') FROM
	(SELECT id FROM archive_terms WHERE tsv @@ j.q::tsquery LIMIT $1) m) FROM json_array_elements_text($2::json) WITH ORDINALITY AS j(q, k)`

// pgTermOperand is the tsquery that matches the documents holding stem t,
// or (title) holding it in their title.
func pgTermOperand(t string, title bool) string {
	if title {
		t = titleMark + t
	}
	return tsQuote(t)
}

// uniqueViolation is PostgreSQL's SQLSTATE for a duplicate key.
const uniqueViolation = "23505"

// docColumns are the columns copyNew fills, in the order of copyRow.
var docColumns = []string{"id", "url", "orig_url", "title", "text", "publisher", "published", "added_at", "updated_at",
	"title_len", "text_len", "lang", "title_terms", "text_terms", "publisher_terms"}

func copyRow(id int64, r docRow) []any {
	var pub any
	if r.published.Valid {
		pub = r.published.Int64
	}
	return []any{id, r.key, r.url, r.title, r.text, r.publisher, pub, r.at, r.at,
		int32(r.titleLen), int32(r.textLen), r.lang, r.titleTerms, r.textTerms, r.pubTerms}
}

// copyNew stores through the COPY protocol the rows whose key no stored
// document (nor an earlier row) holds, with their archive_terms rows, and
// says which it stored; the others are for put to merge. Ids come from
// the documents' sequence first, so both tables are copied in one pass
// each. Should another writer store one of the keys between the look-up
// and the copy, the copy is undone (a savepoint) and every row is left to
// put, which is what a row at a time would have met.
func (w *docWriter) copyNew(ctx context.Context, rows []docRow) ([]bool, error) {
	inserted := make([]bool, len(rows))
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	err := w.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		// pgx returns a failed Query's error in its Rows too, where
		// CollectRows reports it.
		res, _ := c.Query(ctx, `SELECT url FROM archive_docs WHERE url = ANY($1)`, keys)
		have, err := pgx.CollectRows(res, pgx.RowTo[string])
		if err != nil {
			return err
		}
		stored := make(map[string]bool, len(rows))
		for _, k := range have {
			stored[k] = true
		}
		var fresh []int // first rows of keys not stored
		for i, r := range rows {
			if !stored[r.key] {
				stored[r.key] = true
				fresh = append(fresh, i)
			}
		}
		if len(fresh) == 0 {
			return nil
		}
		res, _ = c.Query(ctx, `SELECT nextval(pg_get_serial_sequence('archive_docs', 'id')) FROM generate_series(1, $1)`, len(fresh))
		ids, err := pgx.CollectRows(res, pgx.RowTo[int64])
		if err != nil {
			return err
		}
		if len(ids) != len(fresh) {
			return fmt.Errorf("%d ids for %d documents", len(ids), len(fresh))
		}
		slices.Sort(ids) // a new document gets a larger id than an older one, as on SQLite
		if _, err := c.Exec(ctx, `SAVEPOINT archive_copy`); err != nil {
			return err
		}
		_, err = c.CopyFrom(ctx, pgx.Identifier{"archive_docs"}, docColumns, pgx.CopyFromSlice(len(fresh), func(i int) ([]any, error) {
			return copyRow(ids[i], rows[fresh[i]]), nil
		}))
		if err == nil {
			_, err = c.CopyFrom(ctx, pgx.Identifier{"archive_terms"}, []string{"id", "tsv"}, pgx.CopyFromSlice(len(fresh), func(i int) ([]any, error) {
				r := rows[fresh[i]]
				if !r.terms.Valid {
					r.terms = termVector(r)
				}
				return []any{ids[i], r.terms}, nil
			}))
		}
		if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == uniqueViolation {
			_, err = c.Exec(ctx, `ROLLBACK TO SAVEPOINT archive_copy`)
			return err
		}
		if err != nil {
			return err
		}
		if _, err := c.Exec(ctx, `RELEASE SAVEPOINT archive_copy`); err != nil {
			return err
		}
		for _, i := range fresh {
			inserted[i] = true
			w.count(ctx, 1, docRow{}, rows[i], nil)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("archive %d documents: %w", len(rows), err)
	}
	return inserted, nil
}

// flushPostings merges the GIN index's pending list into the index proper.
// An import leaves up to gin_pending_list_limit (4 MB by default) of new
// entries there, which every search then reads in full, and with which
// the planner turns a term's postings into a sequential scan of
// archive_terms (measured at 10k pages with 1,000 pages pending: 57 ms
// instead of 3 ms for a 250-posting term). The merge costs the same now as
// at a later insert or vacuum; a smaller pending list costs more (4 MB:
// 2.7 s of server CPU per 10k pages, 1 MB: 3.7 s, 256 kB: 6.1 s). A
// failure is let pass: the postings are right without the merge, only
// slower to read until autovacuum makes it.
func (s *Store) flushPostings(ctx context.Context) {
	s.db.ExecContext(ctx, `SELECT gin_clean_pending_list('archive_terms_tsv'::regclass)`)
}

// vectorStems are the lexemes of an archive_terms row whose documents
// archive_term_df counts: all but the title's marked copies, which sort
// first (titleMark is below every letter and digit).
func vectorStems(v pgtype.TSVector) []string {
	lex := v.Lexemes
	for len(lex) > 0 && strings.HasPrefix(lex[0].Word, titleMark) {
		lex = lex[1:]
	}
	out := make([]string, len(lex))
	for i, l := range lex {
		out[i] = l.Word
	}
	return out
}

// flushTermCounts is flushDFs on PostgreSQL: the transaction's changes to
// archive_term_df in one statement, in term order, so that writers
// sharing terms take their rows' locks in one order (see migration 4).
// A term no document holds any more is deleted.
func (w *docWriter) flushTermCounts(ctx context.Context) error {
	terms := make([]string, 0, len(w.dfs))
	for t, d := range w.dfs {
		if d != 0 {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	dfs := make([]int64, len(terms))
	var gone []string
	for i, t := range terms {
		if dfs[i] = int64(w.dfs[t]); dfs[i] < 0 {
			gone = append(gone, t)
		}
	}
	if len(terms) == 0 {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `INSERT INTO archive_term_df AS d (term, df)
SELECT t, n FROM unnest($1::text[], $2::bigint[]) WITH ORDINALITY AS u(t, n, k) ORDER BY k
ON CONFLICT (term) DO UPDATE SET df = d.df + excluded.df`, terms, dfs); err != nil {
		return fmt.Errorf("archive: document counts: %w", err)
	}
	if len(gone) > 0 {
		if _, err := w.tx.ExecContext(ctx, `DELETE FROM archive_term_df WHERE term = ANY($1) AND df <= 0`, gone); err != nil {
			return fmt.Errorf("archive: document counts: %w", err)
		}
	}
	return nil
}

// pgTermCounts is termCounts' statement on PostgreSQL: the document count
// of each term of the JSON array, 0 for a term no document holds.
const pgTermCounts = `SELECT j.k - 1, coalesce(t.df, 0) FROM json_array_elements_text($1::json) WITH ORDINALITY AS j(q, k)
	LEFT JOIN archive_term_df t ON t.term = j.q`

// importing tells PostgreSQL that the transaction is a batch of an
// import: its commit does not wait for the server to flush its WAL to
// disk (synchronous_commit off, for this transaction only). Nothing is
// given up to a crash of muse; a crash of the server (or its machine)
// right after a commit may lose the last batches committed, up to three
// times wal_writer_delay (600 ms by default), while the archive stays
// consistent: those batches' documents, counts and postings are lost
// together, and adding the file again stores them. On SQLite it does
// nothing.
func (w *docWriter) importing(ctx context.Context) error {
	if !w.s.postgres {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		return fmt.Errorf("archive: import settings: %w", err)
	}
	return nil
}
