package archive

import (
	"context"
	"embed"
	"fmt"
	"regexp"
	"strings"

	"github.com/musecheck/muse/sources/pgdb"
)

// The archive on a newsroom's PostgreSQL: the same tables (named archive_*
// there, beside the other stores' tables), the same statements, and the
// same stems. Each field's stems go into one tsvector through the 'simple'
// configuration, weighted A (title), B (text) and C (publisher), with a GIN
// index; the index is what a term's postings are read from, and the
// collection statistics are a row kept by every write, as on SQLite. The
// first stage and the rerank are the same Go code on both engines, so they
// rank the same documents the same way.

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
