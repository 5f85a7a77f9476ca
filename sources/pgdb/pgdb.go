// Package pgdb is how muse opens a PostgreSQL database when a newsroom sets
// MUSE_DATABASE_URL: one pgx connection pool, and versioned schema
// migrations (pressly/goose) that each store applies by itself on first use.
// Every store keeps its own version table, so a store's schema moves on
// without touching the others', and a session-level advisory lock lets many
// muse processes start at once against one database.
package pgdb

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"hash/fnv"
	"io/fs"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/pressly/goose/v3"
)

// IsURL reports whether s names a PostgreSQL database (postgres:// or
// postgresql://), as opposed to the SQLite files muse uses by default.
func IsURL(s string) bool {
	u, err := url.Parse(strings.TrimSpace(s))
	return err == nil && (u.Scheme == "postgres" || u.Scheme == "postgresql")
}

// Redact returns the URL with its password masked, for messages.
func Redact(s string) string {
	u, err := url.Parse(s)
	if err != nil {
		return "(unparsable database URL)"
	}
	return u.Redacted()
}

// Open connects to the database at rawURL and checks that it answers
// within the context's deadline (10 s when it has none).
func Open(ctx context.Context, rawURL string) (*pgxpool.Pool, error) {
	if !IsURL(rawURL) {
		return nil, fmt.Errorf("open database %s: not a postgres:// URL", Redact(rawURL))
	}
	cfg, err := pgxpool.ParseConfig(rawURL)
	if err != nil {
		// pgx's parse errors may quote the URL; say only what was wrong.
		return nil, fmt.Errorf("open database %s: the URL does not parse", Redact(rawURL))
	}
	if _, set := cfg.ConnConfig.RuntimeParams["jit"]; !set && !strings.Contains(cfg.ConnConfig.RuntimeParams["options"], "jit") {
		cfg.AfterConnect = jitOff
	}
	pool, err := pgxpool.NewWithConfig(ctx, cfg)
	if err != nil {
		return nil, fmt.Errorf("open database %s: %w", Redact(rawURL), err)
	}
	if _, ok := ctx.Deadline(); !ok {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
	}
	if err := pool.Ping(ctx); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open database %s: %w", Redact(rawURL), err)
	}
	return pool, nil
}

// jitOff turns JIT compilation off for a new connection, unless the URL
// sets jit itself (?jit=on, or options=-c jit=on). muse's statements are
// short look-ups whose plans the server over-costs (a statement a term of
// a JSON array, a hundred terms assumed), so JIT compiled each archive
// search's postings read, about 7 ms of server CPU each time: at 1M pages
// the server spent 41.4–42.8 ms a search with it, 27.6–30.8 ms without
// (docs/benchmarks.md). It is set after connecting rather than as a startup
// parameter, which PgBouncer refuses; a server without JIT (before
// PostgreSQL 11) has no such setting, and that is fine.
func jitOff(ctx context.Context, c *pgx.Conn) error {
	_, err := c.Exec(ctx, "SET jit = off")
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == "42704" { // undefined_object
		return nil
	}
	return err
}

var componentName = regexp.MustCompile(`^[a-z][a-z0-9_]{0,40}$`)

// Migrate applies the migrations in fsys (goose SQL files, 00001_name.sql
// with -- +goose Up / Down sections) that component has not applied yet,
// recording them in its own table muse_<component>_migrations. Concurrent
// callers, in this process or others, wait for each other on an advisory
// lock keyed by the component, so each migration runs once; a caller that
// finds nothing to apply takes no lock.
func Migrate(ctx context.Context, pool *pgxpool.Pool, component string, fsys fs.FS) error {
	if !componentName.MatchString(component) {
		return fmt.Errorf("migrate: bad component name %q", component)
	}
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := provider(db, component, fsys)
	if err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	// Every start of a muse process after the first finds nothing to
	// apply: it says so without taking the lock, so that processes
	// starting together do not queue behind each other for nothing. An
	// error here (the version table being created by another process at
	// that moment) leaves it to Up, under the lock, on a provider of its
	// own (a provider checks for its version table once).
	pending, err := p.HasPending(ctx)
	if err == nil && !pending {
		return nil
	}
	if err != nil {
		if p, err = provider(db, component, fsys); err != nil {
			return fmt.Errorf("migrate %s: %w", component, err)
		}
	}
	if _, err := p.Up(ctx); err != nil {
		return fmt.Errorf("migrate %s: %w", component, err)
	}
	return nil
}

// OpenMigrated is Open followed by Migrate of the goose files in dir of
// migrations, the way every muse store opens its PostgreSQL side: it
// returns the pool and a database/sql handle on it (close both), or an
// error with nothing left open.
func OpenMigrated(ctx context.Context, rawURL, component string, migrations fs.FS, dir string) (*pgxpool.Pool, *sql.DB, error) {
	pool, err := Open(ctx, rawURL)
	if err != nil {
		return nil, nil, err
	}
	sub, err := fs.Sub(migrations, dir)
	if err == nil {
		err = Migrate(ctx, pool, component, sub)
	}
	if err != nil {
		pool.Close()
		return nil, nil, err
	}
	return pool, stdlib.OpenDBFromPool(pool), nil
}

// Version returns the newest migration version component has applied (0
// for none).
func Version(ctx context.Context, pool *pgxpool.Pool, component string, fsys fs.FS) (int64, error) {
	db := stdlib.OpenDBFromPool(pool)
	defer db.Close()
	p, err := provider(db, component, fsys)
	if err != nil {
		return 0, err
	}
	v, err := p.GetDBVersion(ctx)
	if errors.Is(err, goose.ErrNoMigrations) {
		return 0, nil
	}
	return v, err
}

func provider(db *sql.DB, component string, fsys fs.FS) (*goose.Provider, error) {
	h := fnv.New64a()
	h.Write([]byte("muse/" + component))
	return goose.NewProvider(goose.DialectPostgres, db, fsys,
		goose.WithTableName("muse_"+component+"_migrations"),
		goose.WithSessionLocker(advisoryLock(int64(h.Sum64()>>1))),
		goose.WithDisableGlobalRegistry(true))
}

// advisoryLock is a session-level advisory lock on one key that a caller
// waits for as long as it is held (goose's own locker polls for it, every
// 5 s by default and every second at the least, so that processes
// starting together queued behind each other by whole seconds). The key
// is the one goose's locker took, so older muse processes and these wait
// for each other.
type advisoryLock int64

func (k advisoryLock) SessionLock(ctx context.Context, conn *sql.Conn) error {
	if _, err := conn.ExecContext(ctx, "SELECT pg_advisory_lock($1)", int64(k)); err != nil {
		return fmt.Errorf("take the migration lock: %w", err)
	}
	return nil
}

func (k advisoryLock) SessionUnlock(ctx context.Context, conn *sql.Conn) error {
	var held bool
	if err := conn.QueryRowContext(ctx, "SELECT pg_advisory_unlock($1)", int64(k)).Scan(&held); err != nil {
		return fmt.Errorf("release the migration lock: %w", err)
	}
	if !held {
		return errors.New("release the migration lock: it was not held")
	}
	return nil
}

// Rebind writes a statement's ? placeholders as PostgreSQL's $1, $2…, so
// a store keeps one text of each statement for both engines. The
// statements it is given hold no ? inside string literals.
func Rebind(query string) string {
	var b strings.Builder
	n := 0
	for _, r := range query {
		if r == '?' {
			n++
			fmt.Fprintf(&b, "$%d", n)
			continue
		}
		b.WriteRune(r)
	}
	return b.String()
}
