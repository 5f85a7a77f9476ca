package archive

import (
	"context"
	"testing"

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
