package cases

import (
	"context"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// BenchmarkSaveAfterEvent measures one Save of a check the size of a full
// run (12 read pages of ~20,000 characters, 200 events), changed by one
// event each time, as the engine's event loop would call it.
func BenchmarkSaveAfterEvent(b *testing.B) {
	ctx := context.Background()
	s, err := Open(ctx, filepath.Join(b.TempDir(), "cases.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	c := sampleCheck()
	c.ID = pipeline.NewID()
	para := strings.Repeat("The council approved new cycle lanes after a long debate. ", 30)
	for i := range 12 {
		src := c.Sources[0]
		src.URL = fmt.Sprintf("https://www.reuters.com/%d", i)
		src.Paragraphs = make([]string, 12)
		for j := range src.Paragraphs {
			src.Paragraphs[j] = para
		}
		c.Sources = append(c.Sources, src)
	}
	for i := range 200 {
		c.Events = append(c.Events, pipeline.Event{Kind: pipeline.EventItem, Message: fmt.Sprintf("event %d", i)})
	}
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		c.Usage.LLMCalls = i
		if err := s.Save(ctx, c); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkCheckersSaving has 50 simulated checkers save an edit at once,
// each through its own Store (its own connections, as 50 muse processes
// would have) on one database: SQLite's cases.db, and PostgreSQL when
// MUSE_TEST_DATABASE_URL is set. Each checker edits its own case (a 3 KB
// Check, so that the figure is the store's — transaction, version check,
// audit — rather than JSON encoding on this machine's two cores); one
// iteration is one round of 50 saves. p50_ms and p95_ms are over every
// save of every round.
func BenchmarkCheckersSaving(b *testing.B) {
	b.Run("sqlite", func(b *testing.B) { benchCheckers(b, filepath.Join(b.TempDir(), "cases.db")) })
	b.Run("postgres", func(b *testing.B) { benchCheckers(b, pgdbtest.Fresh(b)) })
}

func benchCheckers(b *testing.B, loc string) {
	const checkers = 50
	ctx := context.Background()
	stores := make([]*Store, checkers)
	checks := make([]*pipeline.Check, checkers)
	for i := range stores {
		s, err := OpenOptions(ctx, Options{Path: loc, User: fmt.Sprintf("checker%02d", i)})
		if err != nil {
			b.Fatal(err)
		}
		defer s.Close()
		stores[i], checks[i] = s, sampleCheck()
		if err := s.Save(ctx, checks[i]); err != nil {
			b.Fatal(err)
		}
	}
	var lat []time.Duration
	var mu sync.Mutex
	round := 0
	for b.Loop() {
		round++
		start := make(chan struct{})
		var wg sync.WaitGroup
		for i, s := range stores {
			c := checks[i]
			c.Correction.Text = fmt.Sprintf("This post is false: edit %d of checker %d.", round, i)
			wg.Go(func() {
				<-start
				t0 := time.Now()
				if err := s.Save(ctx, c); err != nil {
					b.Error(err)
				}
				d := time.Since(t0)
				mu.Lock()
				lat = append(lat, d)
				mu.Unlock()
			})
		}
		close(start)
		wg.Wait()
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return float64(lat[int(p*float64(len(lat)-1))].Microseconds()) / 1000 }
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.95), "p95_ms")
}
