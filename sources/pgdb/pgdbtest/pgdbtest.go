// Package pgdbtest gives tests a throwaway PostgreSQL database on the
// cluster named by MUSE_TEST_DATABASE_URL (which .ci/run starts). Without
// that variable a test that asks for one is skipped, saying so.
package pgdbtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"net/url"
	"os"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
)

// Env names the cluster the PostgreSQL tests use: a URL whose user may
// create databases.
const Env = "MUSE_TEST_DATABASE_URL"

// URL returns MUSE_TEST_DATABASE_URL, or skips the test when it is unset.
func URL(tb testing.TB) string {
	tb.Helper()
	u := os.Getenv(Env)
	if u == "" {
		tb.Skipf("%s is not set: skipping the PostgreSQL test (bash .ci/run starts a cluster and sets it)", Env)
	}
	return u
}

// Fresh creates an empty database for this test on the test cluster and
// returns its URL; the database is dropped when the test ends.
func Fresh(tb testing.TB) string {
	tb.Helper()
	admin := URL(tb)
	var b [6]byte
	if _, err := rand.Read(b[:]); err != nil {
		tb.Fatal(err)
	}
	name := "muse_test_" + hex.EncodeToString(b[:])
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, admin)
	if err != nil {
		tb.Fatalf("connect to the test cluster: %v", err)
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, "CREATE DATABASE "+pgx.Identifier{name}.Sanitize()); err != nil {
		tb.Fatalf("create test database: %v", err)
	}
	tb.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, admin)
		if err != nil {
			tb.Logf("drop test database %s: %v", name, err)
			return
		}
		defer c.Close(ctx)
		if _, err := c.Exec(ctx, "DROP DATABASE IF EXISTS "+pgx.Identifier{name}.Sanitize()+" WITH (FORCE)"); err != nil {
			tb.Logf("drop test database %s: %v", name, err)
		}
	})
	u, err := url.Parse(admin)
	if err != nil {
		tb.Fatal(err)
	}
	u.Path = "/" + name
	return u.String()
}
