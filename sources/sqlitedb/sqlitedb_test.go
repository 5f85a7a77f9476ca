package sqlitedb

import (
	"os"
	"path/filepath"
	"testing"
	"time"
)

func TestOpenSetsUpTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "new", "x.db")
	db, err := Open(path, Options{Busy: 1500 * time.Millisecond, Pragmas: []string{"foreign_keys(ON)"}})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	var mode string
	var busy, fk int
	if err := db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil {
		t.Fatal(err)
	}
	db.QueryRow("PRAGMA busy_timeout").Scan(&busy)
	db.QueryRow("PRAGMA foreign_keys").Scan(&fk)
	if mode != "wal" || busy != 1500 || fk != 1 {
		t.Errorf("journal_mode %q, busy_timeout %d, foreign_keys %d; want wal, 1500, 1", mode, busy, fk)
	}
	fi, err := os.Stat(filepath.Dir(path))
	if err != nil || fi.Mode().Perm() != 0o700 {
		t.Errorf("directory: %v, mode %v; want it created private (0700)", err, fi.Mode().Perm())
	}
}

func TestOpenRefusesNoPath(t *testing.T) {
	if _, err := Open("", Options{}); err == nil {
		t.Error("an empty path must be an error")
	}
}

func TestCorruptFileFailsOnFirstStatement(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.db")
	os.WriteFile(path, []byte("this is not a database, only some text that is long enough"), 0o600)
	db, err := Open(path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec("CREATE TABLE t(x)"); err == nil {
		t.Error("a corrupt file must fail on its first statement")
	}
}
