package spend

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm"
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
