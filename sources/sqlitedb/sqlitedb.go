// Package sqlitedb opens the SQLite files muse keeps under its data
// directory (the archive, cases, the response cache, the spend ledger) the
// one way they are all opened: WAL so readers run beside the writer, a busy
// timeout so several muse processes queue instead of failing, immediate
// write transactions so a reader never has to upgrade its lock mid-way,
// and connections that wait for a busy lock while they are set up too.
package sqlitedb

import (
	"cmp"
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"
)

// Options says how to open one database file.
type Options struct {
	Busy     time.Duration // how long a write waits for another process's lock
	MaxConns int           // open connections; zero means 4
	Pragmas  []string      // further pragmas, e.g. "foreign_keys(ON)"
	// ReadOnly opens an existing file for reading only, as immutable: for a
	// read-only data directory, where SQLite could not create the WAL's
	// shared-memory file. Nothing may write the file meanwhile.
	ReadOnly bool
}

// Open opens the database at path, creating its directory (private to the
// user: cases and pages are a newsroom's work) when needed. It does not
// touch the file: errors from a corrupt or unreadable file surface on the
// first statement, which the caller runs to create its schema.
func Open(path string, o Options) (*sql.DB, error) {
	if path == "" {
		return nil, errors.New("no database path given")
	}
	if o.ReadOnly {
		if _, err := os.Stat(path); err != nil {
			return nil, err
		}
		q := url.Values{"mode": {"ro"}, "immutable": {"1"}}
		q.Add("_pragma", "query_only(1)")
		return sql.Open("sqlite", "file:"+(&url.URL{Path: path}).EscapedPath()+"?"+q.Encode())
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return nil, fmt.Errorf("create directory: %w", err)
	}
	if err := createPrivate(path); err != nil {
		return nil, err
	}
	q := url.Values{}
	q.Add("_pragma", fmt.Sprintf("busy_timeout(%d)", o.Busy.Milliseconds()))
	q.Add("_pragma", "journal_mode(WAL)")
	// NORMAL in WAL mode loses nothing when the process dies (the WAL is in
	// the OS's hands once a commit returns); only a power cut may cost the
	// last transactions, which is the trade SQLite recommends for WAL.
	q.Add("_pragma", "synchronous(NORMAL)")
	for _, p := range o.Pragmas {
		q.Add("_pragma", p)
	}
	q.Set("_txlock", "immediate")
	base, err := sqlite.NewConnector("file:" + (&url.URL{Path: path}).EscapedPath() + "?" + q.Encode())
	if err != nil {
		return nil, err
	}
	db := sql.OpenDB(patientConnector{base, o.Busy})
	// A handful of connections lets readers run beside the one writer that
	// SQLite allows; more would only queue on the same lock.
	db.SetMaxOpenConns(cmp.Or(o.MaxConns, 4))
	db.SetConnMaxIdleTime(time.Minute)
	return db, nil
}

// createPrivate creates a new database file readable by its owner alone
// (0600), whatever the umask and the directory's mode: SQLite then creates
// the file's -wal and -shm with the same mode. An existing file is left as
// it is (`muse doctor` warns when others can read it).
func createPrivate(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if errors.Is(err, os.ErrExist) {
		return nil
	}
	if err != nil {
		return fmt.Errorf("create database: %w", err)
	}
	if err := f.Chmod(0o600); err != nil { // the umask may have taken bits, never added them
		f.Close()
		return err
	}
	return f.Close()
}

// patientConnector opens connections as the driver does, but waits out a
// lock held by another connection while the new one is set up, as
// busy_timeout makes every later statement wait. busy_timeout (set first)
// cannot cover the set-up itself: on a file not yet in WAL mode (a new
// one), PRAGMA journal_mode=WAL reads the header and then upgrades to a
// write lock to rewrite it, and SQLite answers an upgrade from a read
// transaction that finds the lock taken with SQLITE_BUSY at once, without
// calling the busy handler (waiting could deadlock two such upgraders).
// Two muse processes opening a new database together hit exactly that, so
// the loser tries again, for up to busy; by then the winner has switched
// the file to WAL, and the switch is nothing more than a read.
type patientConnector struct {
	driver.Connector
	busy time.Duration
}

func (c patientConnector) Connect(ctx context.Context) (driver.Conn, error) {
	deadline := time.Now().Add(c.busy)
	for wait := time.Millisecond; ; wait = min(2*wait, 50*time.Millisecond) {
		conn, err := c.Connector.Connect(ctx)
		if !isBusy(err) || time.Now().Add(wait).After(deadline) {
			return conn, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, err
		case <-t.C:
		}
	}
}

// isBusy reports whether err is SQLITE_BUSY (in any of its extended forms).
func isBusy(err error) bool {
	var se *sqlite.Error
	return errors.As(err, &se) && se.Code()&0xff == sqlite3.SQLITE_BUSY
}
