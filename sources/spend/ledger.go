// Package spend keeps the ledger behind muse's per-day spend cap: one row
// per paid model call (time, task, model, US dollars), in a small SQLite
// file under the data directory ($XDG_DATA_HOME/muse/spend.db) or, for a
// newsroom, in its PostgreSQL database (MUSE_DATABASE_URL).
//
// A ledger of its own, rather than a sum over the saved cases, because what
// was spent stays spent: a case deleted with `muse cases rm`, a check run
// with --no-save, a TUI session and a `muse batch` running side by side all
// count. Every process sharing the ledger sees every other's calls: a call
// reserves its estimate in the ledger before it is made, inside a
// transaction that checks the cap (an IMMEDIATE transaction on SQLite, an
// advisory lock on PostgreSQL), and settles to its real cost after — so
// ten workers cannot pass the cap together. A reservation whose process
// died stops counting after ReservationTTL.
package spend

import (
	"context"
	"database/sql"
	"embed"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sqlitedb"
)

//go:embed migrations
var migrations embed.FS

// ReservationTTL is how long an unsettled reservation counts: longer than
// any model call muse makes.
const ReservationTTL = 15 * time.Minute

// DefaultPath is the ledger under muse's data directory.
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "spend.db") }

// Ledger is an open spend ledger. It is safe for concurrent use.
type Ledger struct {
	db       *sql.DB
	postgres bool
	pool     *pgxpool.Pool
	now      func() time.Time
}

// Open opens (creating when needed) the ledger: the SQLite file at
// location, or the PostgreSQL database when location is a postgres:// URL.
func Open(ctx context.Context, location string) (*Ledger, error) {
	if location == "" {
		return nil, errors.New("open spend ledger: no path given")
	}
	if pgdb.IsURL(location) {
		return openPostgres(ctx, location)
	}
	db, err := sqlitedb.Open(location, sqlitedb.Options{Busy: 10 * time.Second, MaxConns: 2})
	if err != nil {
		return nil, fmt.Errorf("open spend ledger %s: %w", location, err)
	}
	sub, _ := fs.Sub(migrations, "migrations/sqlite")
	if err := sqlitedb.Migrate(ctx, db, "spend", sub); err != nil {
		db.Close()
		return nil, fmt.Errorf("open spend ledger %s: %w", location, err)
	}
	return &Ledger{db: db, now: time.Now}, nil
}

func openPostgres(ctx context.Context, url string) (*Ledger, error) {
	pool, db, err := pgdb.OpenMigrated(ctx, url, "spend", migrations, "migrations/postgres")
	if err != nil {
		return nil, fmt.Errorf("open spend ledger: %w", err)
	}
	return &Ledger{db: db, postgres: true, pool: pool, now: time.Now}, nil
}

// Close closes the database.
func (l *Ledger) Close() error {
	err := l.db.Close()
	if l.pool != nil {
		l.pool.Close()
	}
	return err
}

// q writes a statement's ? placeholders as $1, $2… on PostgreSQL.
func (l *Ledger) q(s string) string {
	if l.postgres {
		return pgdb.Rebind(s)
	}
	return s
}

// Add records a paid call. Calls that cost nothing are not recorded.
func (l *Ledger) Add(ctx context.Context, task, model string, usd float64) error {
	if usd <= 0 {
		return nil
	}
	_, err := l.db.ExecContext(ctx, l.q(`INSERT INTO spend(at, task, model, usd) VALUES (?, ?, ?, ?)`),
		l.now().UnixMilli(), task, model, usd)
	if err != nil {
		return fmt.Errorf("record spend: %w", err)
	}
	return nil
}

// midnight is the start of the local day.
func (l *Ledger) midnight() time.Time {
	now := l.now()
	return time.Date(now.Year(), now.Month(), now.Day(), 0, 0, 0, 0, now.Location())
}

type queryer interface {
	QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row
}

// today sums the day's settled calls and the reservations still counting.
func (l *Ledger) today(ctx context.Context, db queryer) (float64, error) {
	var sum sql.NullFloat64
	err := db.QueryRowContext(ctx, l.q(`SELECT SUM(usd) FROM spend WHERE at >= ? AND (settled OR expires > ?)`),
		l.midnight().UnixMilli(), l.now().UnixMilli()).Scan(&sum)
	if err != nil {
		return 0, fmt.Errorf("read today's spend: %w", err)
	}
	return sum.Float64, nil
}

// Today is what was spent since local midnight, with the estimates of the
// calls in flight in every process sharing the ledger.
func (l *Ledger) Today(ctx context.Context) (float64, error) { return l.today(ctx, l.db) }

// reserve checks the cap and holds est for a call, atomically across every
// process sharing the ledger, returning the reservation's row.
func (l *Ledger) reserve(ctx context.Context, capUSD float64, call llm.Call) (int64, float64, error) {
	tx, err := l.db.BeginTx(ctx, nil) // IMMEDIATE on SQLite (sqlitedb), so checks queue
	if err != nil {
		return 0, 0, fmt.Errorf("check the per-day spend cap: %w", err)
	}
	defer tx.Rollback()
	if l.postgres {
		if _, err := tx.ExecContext(ctx, `SELECT pg_advisory_xact_lock(hashtext('muse/spend'))`); err != nil {
			return 0, 0, fmt.Errorf("check the per-day spend cap: %w", err)
		}
	}
	spent, err := l.today(ctx, tx)
	if err != nil {
		return 0, 0, fmt.Errorf("check the per-day spend cap: %w", err)
	}
	if spent+call.EstUSD > capUSD {
		return 0, spent, &llm.SpendCapError{Scope: "day", CapUSD: capUSD, SpentUSD: spent, EstUSD: call.EstUSD,
			Task: call.Task, Setting: "spend_cap_day_usd or MUSE_SPEND_CAP_DAY_USD"}
	}
	now := l.now()
	var id int64
	ins := `INSERT INTO spend(at, task, model, usd, settled, expires) VALUES (?, ?, ?, ?, false, ?) RETURNING ` + l.rowID()
	if err := tx.QueryRowContext(ctx, l.q(ins), now.UnixMilli(), call.Task, call.Model, call.EstUSD,
		now.Add(ReservationTTL).UnixMilli()).Scan(&id); err != nil {
		return 0, 0, fmt.Errorf("reserve spend: %w", err)
	}
	return id, spent, tx.Commit()
}

func (l *Ledger) rowID() string {
	if l.postgres {
		return "id"
	}
	return "rowid"
}

// settle turns a reservation into the call's real cost (or removes it when
// the call cost nothing).
func (l *Ledger) settle(ctx context.Context, id int64, usd float64) error {
	var err error
	if usd <= 0 {
		_, err = l.db.ExecContext(ctx, l.q(`DELETE FROM spend WHERE `+l.rowID()+` = ?`), id)
	} else {
		_, err = l.db.ExecContext(ctx, l.q(`UPDATE spend SET usd = ?, settled = true, expires = 0 WHERE `+l.rowID()+` = ?`), usd, id)
	}
	if err != nil {
		return fmt.Errorf("settle spend: %w", err)
	}
	return nil
}

// DayGuard is an llm.SpendGuard for a cap of capUSD per local day: it
// refuses a call whose estimate, added to today's spend and the estimates
// of calls in flight in any process, would pass the cap, and records each
// call's real cost when it settles. A ledger that cannot be read refuses
// the call (failing open would make the cap a suggestion).
func (l *Ledger) DayGuard(capUSD float64) llm.SpendGuard {
	return func(ctx context.Context, call llm.Call) (func(float64), error) {
		id, _, err := l.reserve(ctx, capUSD, call)
		if err != nil {
			return nil, err
		}
		return func(actual float64) {
			// Recorded even when the caller has gone: the money is spent.
			_ = l.settle(context.WithoutCancel(ctx), id, actual)
		}, nil
	}
}
