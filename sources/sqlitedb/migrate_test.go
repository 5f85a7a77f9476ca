package sqlitedb

import (
	"context"
	"path/filepath"
	"sync"
	"testing"
	"testing/fstest"
	"time"
)

var testMigrations = fstest.MapFS{
	"00001_notes.sql":  {Data: []byte("-- +goose Up\nCREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT NOT NULL);\n\n-- +goose Down\nDROP TABLE notes;\n")},
	"00002_author.sql": {Data: []byte("-- +goose Up\nALTER TABLE notes ADD COLUMN author TEXT NOT NULL DEFAULT '';\n\n-- +goose Down\nALTER TABLE notes DROP COLUMN author;\n")},
}

func TestMigrate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "m.db")
	// Several handles on one file, as several muse processes would have.
	var wg sync.WaitGroup
	errs := make(chan error, 4)
	for range 4 {
		wg.Go(func() {
			db, err := Open(path, Options{Busy: 5 * time.Second})
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			errs <- Migrate(context.Background(), db, "notes", testMigrations)
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	db, err := Open(path, Options{Busy: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("INSERT INTO notes (body, author) VALUES ('x', 'jo')"); err != nil {
		t.Fatalf("migrated table: %v", err)
	}
	var n int
	if err := db.QueryRow("SELECT count(*) FROM muse_notes_migrations WHERE version_id > 0").Scan(&n); err != nil || n != 2 {
		t.Fatalf("%d versions recorded (%v), want 2", n, err)
	}
	if err := Migrate(context.Background(), db, "notes", testMigrations); err != nil {
		t.Fatalf("second run: %v", err)
	}
	if err := Migrate(context.Background(), db, "no good", testMigrations); err == nil {
		t.Error("bad component name accepted")
	}
}
