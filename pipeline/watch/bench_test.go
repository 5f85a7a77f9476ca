package watch

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"runtime"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/feeds/feedtest"
)

// BenchmarkTriage measures triage before the model: real post and claim
// texts from ../shared/data replayed as Jetstream events by a loopback
// Jetstream, read over its WebSocket, each post's language detected, its
// cluster found, kept in the SQLite store with the feed's cursor, and (in
// /factchecks) every new cluster matched against the PolitiFact
// fact-checks imported into a real archive. Each iteration replays the
// whole set once into an empty store (every post new: the costliest
// case), twice over (so half the posts are copies that join a cluster).
// It reports posts/s and allocations per post; run it on one core:
//
//	go test -run '^$' -bench BenchmarkTriage -cpu 1 -benchtime 3x ./pipeline/watch
func BenchmarkTriage(b *testing.B) {
	texts := realPostTexts(b)
	var ev [][]byte
	for pass := range 2 {
		for i, s := range texts {
			ev = append(ev, feedtest.PostEvent(did, fmt.Sprintf("p%d-%05d", pass, i), 1725911162000000+int64(pass*len(texts)+i)*1000, s))
		}
	}
	srv := feedtest.NewJetstream(b, ev)
	b.Run("no-archive", func(b *testing.B) { benchTriage(b, srv, len(ev), nil) })
	b.Run("factchecks", func(b *testing.B) {
		arch, err := archive.Open(context.Background(), filepath.Join(b.TempDir(), "archive.db"))
		if err != nil {
			b.Fatal(err)
		}
		defer arch.Close()
		if err := arch.AddClaimReviews(context.Background(), politifactReviews(b), "en"); err != nil {
			b.Fatal(err)
		}
		benchTriage(b, srv, len(ev), pipeline.ArchiveOf(arch).(pipeline.ClaimMatcher))
	})
}

func benchTriage(b *testing.B, srv *feedtest.Jetstream, n int, m Matcher) {
	ctx := context.Background()
	var ms0, ms1 runtime.MemStats
	var elapsed, cpu time.Duration
	var allocs uint64
	posts := 0
	peak := testkit.SampleMemory(100 * time.Millisecond)
	for i := 0; i < b.N; i++ {
		b.StopTimer()
		st, err := Open(ctx, filepath.Join(b.TempDir(), fmt.Sprintf("watch%d.db", i)))
		if err != nil {
			b.Fatal(err)
		}
		tr, err := New(ctx, Options{Store: st, Matcher: m, BatchWait: time.Hour})
		if err != nil {
			b.Fatal(err)
		}
		f := &feeds.Jetstream{URL: srv.URL()}
		got := 0
		stop := errors.New("replayed")
		runtime.ReadMemStats(&ms0)
		cpu0, _ := testkit.ProcessCPU()
		start := time.Now()
		b.StartTimer()
		err = f.Run(ctx, "", func(p feeds.Post) error {
			if _, err := tr.Handle(ctx, f.Name(), p); err != nil {
				return err
			}
			if got++; got == n {
				return stop
			}
			return nil
		})
		if ferr := tr.Flush(ctx); ferr != nil {
			b.Fatal(ferr)
		}
		b.StopTimer()
		elapsed += time.Since(start)
		cpu1, _ := testkit.ProcessCPU()
		cpu += cpu1 - cpu0
		runtime.ReadMemStats(&ms1)
		allocs += ms1.Mallocs - ms0.Mallocs
		if !errors.Is(err, stop) {
			b.Fatalf("replay: %v after %d posts", err, got)
		}
		if seen, _ := st.PostsSeen(ctx); seen != n {
			b.Fatalf("%d posts kept of %d", seen, n)
		}
		posts += n
		st.Close()
		b.StartTimer()
	}
	pk := peak.Stop()
	b.ReportMetric(float64(posts)/elapsed.Seconds(), "posts/s")
	if cpu > 0 {
		// The process's CPU time (the loopback Jetstream's included): what
		// one core does when no other process shares it.
		b.ReportMetric(float64(posts)/cpu.Seconds(), "posts/cpu-s")
	}
	b.ReportMetric(float64(allocs)/float64(posts), "allocs/post")
	b.ReportMetric(float64(pk.Heap)/(1<<20), "peak-heap-MiB")
	b.ReportMetric(float64(pk.AnonRSS)/(1<<20), "peak-anon-RSS-MiB")
}
