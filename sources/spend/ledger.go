// Package spend keeps the ledger behind muse's per-day spend cap: one row
// per paid model call (time, task, model, US dollars) in a small SQLite file
// under the data directory ($XDG_DATA_HOME/muse/spend.db).
//
// A ledger of its own, rather than a sum over the saved cases, because what
// was spent stays spent: a case deleted with `muse cases rm`, a check run
// with --no-save, a TUI session and a `muse batch` running side by side all
// count. Several processes may share the file (WAL, busy timeout, IMMEDIATE
// writes). Calls in flight in this process hold their estimate until they
// settle; calls in flight in another process are seen once they settle.
package spend

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"sync"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/sqlitedb"
)

// DefaultPath is the ledger under muse's data directory.
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "spend.db") }

// Ledger is an open spend ledger. It is safe for concurrent use.
type Ledger struct {
	db  *sql.DB
	now func() time.Time

	mu       sync.Mutex
	reserved float64 // estimates of this process's calls in flight
}

// Open opens (creating when needed) the ledger at path.
func Open(ctx context.Context, path string) (*Ledger, error) {
	if path == "" {
		return nil, errors.New("open spend ledger: no path given")
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{Busy: 10 * time.Second, MaxConns: 2})
	if err != nil {
		return nil, fmt.Errorf("open spend ledger %s: %w", path, err)
	}
	if _, err := db.ExecContext(ctx, `CREATE TABLE IF NOT EXISTS spend (
		at    INTEGER NOT NULL, -- unix milliseconds
		task  TEXT NOT NULL,
		model TEXT NOT NULL,
		usd   REAL NOT NULL
	);
	CREATE INDEX IF NOT EXISTS spend_at ON spend(at);`); err != nil {
		db.Close()
		return nil, fmt.Errorf("open spend ledger %s: %w", path, err)
	}
	return &Ledger{db: db, now: time.Now}, nil
}

// Close closes the database.
func (l *Ledger) Close() error { return l.db.Close() }

// Add records a paid call. Calls that cost nothing are not recorded.
func (l *Ledger) Add(ctx context.Context, task, model string, usd float64) error {
	if usd <= 0 {
		return nil
	}
	_, err := l.db.ExecContext(ctx, `INSERT INTO spend(at, task, model, usd) VALUES (?, ?, ?, ?)`,
		l.now().UnixMilli(), task, model, usd)
	if err != nil {
		return fmt.Errorf("record spend: %w", err)
	}
	return nil
}

// Today is what was spent since local midnight.
func (l *Ledger) Today(ctx context.Context) (float64, error) {
	now := l.now()
	midnight := time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
	var sum sql.NullFloat64
	if err := l.db.QueryRowContext(ctx, `SELECT SUM(usd) FROM spend WHERE at >= ?`, midnight.UnixMilli()).Scan(&sum); err != nil {
		return 0, fmt.Errorf("read today's spend: %w", err)
	}
	return sum.Float64, nil
}

// DayGuard is an llm.SpendGuard for a cap of capUSD per local day: it
// refuses a call whose estimate, added to today's spend and the estimates
// of calls in flight, would pass the cap, and records each call's real
// cost when it settles. A ledger that cannot be read refuses the call
// (failing open would make the cap a suggestion).
func (l *Ledger) DayGuard(capUSD float64) llm.SpendGuard {
	return func(ctx context.Context, call llm.Call) (func(float64), error) {
		l.mu.Lock()
		defer l.mu.Unlock()
		spent, err := l.Today(ctx)
		if err != nil {
			return nil, fmt.Errorf("check the per-day spend cap: %w", err)
		}
		if spent+l.reserved+call.EstUSD > capUSD {
			return nil, &llm.SpendCapError{Scope: "day", CapUSD: capUSD, SpentUSD: spent + l.reserved, EstUSD: call.EstUSD,
				Task: call.Task, Setting: "spend_cap_day_usd or MUSE_SPEND_CAP_DAY_USD"}
		}
		l.reserved += call.EstUSD
		return func(actual float64) {
			// Recorded even when the caller has gone: the money is spent.
			_ = l.Add(context.WithoutCancel(ctx), call.Task, call.Model, actual)
			l.mu.Lock()
			l.reserved -= call.EstUSD
			l.mu.Unlock()
		}, nil
	}
}
