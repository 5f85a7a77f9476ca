package sqlitedb

import (
	"database/sql"
	"os"
	"path/filepath"
	"syscall"
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

// TestOpenWaitsForTheFirstWriter: a new file's first connection switches
// it to WAL, which SQLite does as a read upgraded to a write: with another
// connection in the middle of its first write (another muse process
// switching the same new file to WAL, or creating its schema), the
// upgrade is refused with SQLITE_BUSY at once, whatever busy_timeout says.
// Open's connections wait for the lock as every statement does.
func TestOpenWaitsForTheFirstWriter(t *testing.T) {
	for round := range 5 {
		path := filepath.Join(t.TempDir(), "new.db")
		first, err := sql.Open("sqlite", "file:"+path) // rollback journal, as every new file starts
		if err != nil {
			t.Fatal(err)
		}
		tx, err := first.Begin()
		if err != nil {
			t.Fatal(err)
		}
		if _, err := tx.Exec("CREATE TABLE a(x)"); err != nil { // the write lock, held
			t.Fatal(err)
		}
		const held = 200 * time.Millisecond
		committed := make(chan error, 1)
		go func() { time.Sleep(held); committed <- tx.Commit() }()
		db, err := Open(path, Options{Busy: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		t0 := time.Now()
		var mode string
		err = db.QueryRow("PRAGMA journal_mode").Scan(&mode)
		waited := time.Since(t0)
		if err := <-committed; err != nil {
			t.Fatal(err)
		}
		if err != nil || mode != "wal" {
			t.Fatalf("round %d: the first statement after %v: %v (journal_mode %q); want it to wait for the writer, then WAL", round, waited, err, mode)
		}
		if waited < held/2 {
			t.Errorf("round %d: answered after %v with the lock held for %v", round, waited, held)
		}
		db.Close()
		first.Close()
	}
}

// A new database, its WAL and its shared-memory file are the owner's
// alone, in a directory others may read and under a permissive umask.
func TestNewFilesArePrivate(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dir := t.TempDir()
	os.Chmod(dir, 0o755)
	path := filepath.Join(dir, "cases.db")
	db, err := Open(path, Options{Busy: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if _, err := db.Exec(`CREATE TABLE t (x); INSERT INTO t VALUES (1)`); err != nil {
		t.Fatal(err)
	}
	for _, p := range []string{path, path + "-wal", path + "-shm"} {
		st, err := os.Stat(p)
		if err != nil {
			t.Fatal(err)
		}
		if m := st.Mode().Perm(); m != 0o600 {
			t.Errorf("%s is %o, want 600", filepath.Base(p), m)
		}
	}
}
