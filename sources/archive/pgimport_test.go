package archive

import (
	"context"
	"testing"
)

// An import's transactions commit without waiting for the WAL flush, and
// the setting ends with each of them: the pool's connections, which the
// rest of muse shares, keep the server's default.
func TestPostgresImportCommitsAsynchronously(t *testing.T) {
	s := openPostgresTemp(t)
	ctx := context.Background()
	s.db.SetMaxOpenConns(1) // the next statement gets the import's connection
	var inside, after string
	err := s.write(ctx, termBatch{}, func(w *docWriter) error {
		if err := w.importing(ctx); err != nil {
			return err
		}
		return w.tx.QueryRowContext(ctx, `SHOW synchronous_commit`).Scan(&inside)
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.db.QueryRowContext(ctx, `SHOW synchronous_commit`).Scan(&after); err != nil {
		t.Fatal(err)
	}
	if inside != "off" || after != "on" {
		t.Errorf("synchronous_commit = %q in an import's transaction, %q after it; want off, then on", inside, after)
	}
}
