package spend

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
	"github.com/musecheck/muse/sources/sqlitedb"
)

func TestDayGuard(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "spend.db")
	l, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	now := time.Date(2025, 3, 4, 23, 0, 0, 0, time.Local)
	l.now = func() time.Time { return now }
	g := l.DayGuard(1.00)

	settle, err := g(ctx, llm.Call{Task: "evidence", Model: "gpt-4o", EstUSD: 0.60})
	if err != nil {
		t.Fatal(err)
	}
	// While the first call is in flight its estimate is held.
	if _, err := g(ctx, llm.Call{Task: "evidence", EstUSD: 0.50}); !errors.Is(err, llm.ErrSpendCap) {
		t.Fatalf("second call in flight: err %v, want the cap", err)
	}
	settle(0.30)
	if got, _ := l.Today(ctx); got != 0.30 {
		t.Errorf("today %v, want 0.30 recorded", got)
	}
	// Another process sees the ledger.
	other, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	other.now = l.now
	_, err = other.DayGuard(1.00)(ctx, llm.Call{Task: "correction", EstUSD: 0.75})
	if !errors.Is(err, llm.ErrSpendCap) || !strings.Contains(err.Error(), "spend cap of $1.00 per day reached") {
		t.Fatalf("err %v", err)
	}
	// A new day starts from zero.
	now = now.Add(2 * time.Hour)
	other.now = l.now
	if s, err := other.DayGuard(1.00)(ctx, llm.Call{Task: "correction", EstUSD: 0.75}); err != nil {
		t.Fatalf("next day: %v", err)
	} else {
		s(0)
	}
}

// ledgers opens n handles on one ledger, as n processes would, on SQLite and
// (when a test cluster is configured) PostgreSQL.
func ledgers(t *testing.T, test func(t *testing.T, open func() *Ledger)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "spend.db")
		test(t, func() *Ledger { return mustOpen(t, path) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgdbtest.Fresh(t)
		test(t, func() *Ledger { return mustOpen(t, url) })
	})
}

func mustOpen(t *testing.T, loc string) *Ledger {
	t.Helper()
	l, err := Open(context.Background(), loc)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { l.Close() })
	return l
}

// Four workers calling at once never pass the cap together, and a call
// that settles below its estimate frees the difference.
func TestDayCapHeldAcrossProcesses(t *testing.T) {
	ledgers(t, func(t *testing.T, open func() *Ledger) {
		ctx := context.Background()
		const capUSD, est, calls = 1.00, 0.07, 20
		var wg sync.WaitGroup
		var mu sync.Mutex
		allowed, refused := 0, 0
		for w := range 4 {
			l := open()
			g := l.DayGuard(capUSD)
			wg.Go(func() {
				for range calls {
					settle, err := g(ctx, llm.Call{Task: "evidence", Model: fmt.Sprintf("worker-%d", w), EstUSD: est})
					mu.Lock()
					if err != nil {
						if !errors.Is(err, llm.ErrSpendCap) {
							t.Error(err)
						}
						refused++
						mu.Unlock()
						continue
					}
					allowed++
					mu.Unlock()
					time.Sleep(2 * time.Millisecond) // the call
					settle(est)
				}
			})
		}
		wg.Wait()
		spent, err := open().Today(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if spent > capUSD+1e-9 {
			t.Fatalf("spent $%.2f with a $%.2f cap (%d calls allowed)", spent, capUSD, allowed)
		}
		if want := 14; allowed != want { // floor($1.00 / $0.07)
			t.Errorf("%d calls allowed, want %d (the cap fits %d)", allowed, want, want)
		}
		if refused != 4*calls-allowed {
			t.Errorf("%d refused", refused)
		}
	})
}

// A process that died holding a reservation does not block the cap
// forever; a call that settles at no cost leaves nothing behind.
func TestReservations(t *testing.T) {
	ledgers(t, func(t *testing.T, open func() *Ledger) {
		ctx := context.Background()
		dead, live := open(), open()
		now := time.Now()
		dead.now = func() time.Time { return now }
		live.now = dead.now
		if _, err := dead.DayGuard(1)(ctx, llm.Call{Task: "correction", EstUSD: 0.9}); err != nil {
			t.Fatal(err) // never settled: its process is gone
		}
		if _, err := live.DayGuard(1)(ctx, llm.Call{Task: "evidence", EstUSD: 0.2}); !errors.Is(err, llm.ErrSpendCap) {
			t.Fatalf("the reservation in flight is not counted: %v", err)
		}
		now = now.Add(ReservationTTL + time.Minute)
		s, err := live.DayGuard(1)(ctx, llm.Call{Task: "evidence", EstUSD: 0.2})
		if err != nil {
			t.Fatalf("an expired reservation still counts: %v", err)
		}
		s(0)
		if got, _ := live.Today(ctx); got != 0 {
			t.Errorf("today $%v after a free call and an expired reservation", got)
		}
	})
}

// A ledger written before migrations were versioned opens and keeps its rows.
func TestOldLedgerUpgraded(t *testing.T) {
	path := filepath.Join(t.TempDir(), "spend.db")
	db, err := sqlitedb.Open(path, sqlitedb.Options{Busy: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`CREATE TABLE spend (at INTEGER NOT NULL, task TEXT NOT NULL, model TEXT NOT NULL, usd REAL NOT NULL);
		CREATE INDEX spend_at ON spend(at);`); err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(`INSERT INTO spend VALUES (?, 'queries', 'gpt-4o', 0.25)`, time.Now().UnixMilli()); err != nil {
		t.Fatal(err)
	}
	db.Close()
	l := mustOpen(t, path)
	if got, err := l.Today(context.Background()); err != nil || got != 0.25 {
		t.Fatalf("today $%v (%v) after the upgrade, want the old row's $0.25", got, err)
	}
}
