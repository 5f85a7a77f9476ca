package pgdb

import (
	"context"
	"io/fs"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

func migrations(t *testing.T, dir string) fs.FS {
	t.Helper()
	sub, err := fs.Sub(os.DirFS("testdata/migrations"), dir)
	if err != nil {
		t.Fatal(err)
	}
	return sub
}

func TestIsURLAndRedact(t *testing.T) {
	for s, want := range map[string]bool{
		"postgres://u:p@127.0.0.1:5432/muse": true, "postgresql://localhost/muse": true,
		"/home/me/.local/share/muse": false, "sqlite:///x.db": false, "": false,
	} {
		if IsURL(s) != want {
			t.Errorf("IsURL(%q) = %v", s, !want)
		}
	}
	if r := Redact("postgres://muse:s3cret@db.example:5432/muse"); strings.Contains(r, "s3cret") || !strings.Contains(r, "db.example") {
		t.Errorf("Redact kept the password or lost the host: %s", r)
	}
}

func TestOpenRefusesWithoutLeakingThePassword(t *testing.T) {
	_, err := Open(context.Background(), "/not/a/url")
	if err == nil || !strings.Contains(err.Error(), "not a postgres:// URL") {
		t.Errorf("a path: %v", err)
	}
	// Nothing listens on port 1; the error must not carry the password.
	_, err = Open(context.Background(), "postgres://muse:s3cret@127.0.0.1:1/muse?connect_timeout=2")
	if err == nil || strings.Contains(err.Error(), "s3cret") {
		t.Errorf("unreachable server: %v", err)
	}
}

// Connections muse opens run without JIT, which compiled its short
// look-ups for longer than they run; a URL that sets jit keeps its
// choice.
func TestOpenTurnsJITOff(t *testing.T) {
	ctx := context.Background()
	url := pgdbtest.Fresh(t)
	for _, c := range []struct{ url, want string }{{url, "off"}, {url + "&jit=on", "on"}, {url + "&options=-c%20jit%3Don", "on"}} {
		pool, err := Open(ctx, c.url)
		if err != nil {
			t.Fatal(err)
		}
		// Every connection of the pool, not only the first.
		var conns []*pgxpool.Conn
		for range 3 {
			conn, err := pool.Acquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			conns = append(conns, conn)
			var got string
			if err := conn.QueryRow(ctx, "SHOW jit").Scan(&got); err != nil || got != c.want {
				t.Errorf("%s: jit = %q, %v; want %q", Redact(c.url), got, err, c.want)
			}
		}
		for _, conn := range conns {
			conn.Release()
		}
		pool.Close()
	}
}

func TestMigrate(t *testing.T) {
	ctx := context.Background()
	pool, err := Open(ctx, pgdbtest.Fresh(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pool.Close()
	a, b := migrations(t, "a"), migrations(t, "b")

	// Many processes starting at once: each migration runs once.
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() { errs <- Migrate(ctx, pool, "alpha", a) })
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if v, err := Version(ctx, pool, "alpha", a); err != nil || v != 2 {
		t.Fatalf("alpha at version %d (%v), want 2", v, err)
	}
	if _, err := pool.Exec(ctx, "INSERT INTO notes (body, author) VALUES ('x', 'jo')"); err != nil {
		t.Fatalf("the migrated table: %v", err)
	}
	// A second component keeps its own versions.
	if v, _ := Version(ctx, pool, "beta", b); v != 0 {
		t.Fatalf("beta at version %d before migrating", v)
	}
	if err := Migrate(ctx, pool, "beta", b); err != nil {
		t.Fatal(err)
	}
	if v, _ := Version(ctx, pool, "beta", b); v != 1 {
		t.Fatalf("beta at version %d, want 1", v)
	}
	// Running again is a no-op and keeps the data.
	if err := Migrate(ctx, pool, "alpha", a); err != nil {
		t.Fatal(err)
	}
	var n int
	if err := pool.QueryRow(ctx, "SELECT count(*) FROM notes").Scan(&n); err != nil || n != 1 {
		t.Fatalf("rows after a second migrate: %d (%v)", n, err)
	}
	if err := Migrate(ctx, pool, "Bad Name;", a); err == nil {
		t.Error("a component name that is not an identifier was accepted")
	}
}

func TestRebind(t *testing.T) {
	if got := Rebind("INSERT INTO t (a, b) VALUES (?, ?) ON CONFLICT (a) DO UPDATE SET b = ?"); got != "INSERT INTO t (a, b) VALUES ($1, $2) ON CONFLICT (a) DO UPDATE SET b = $3" {
		t.Errorf("Rebind: %s", got)
	}
}
