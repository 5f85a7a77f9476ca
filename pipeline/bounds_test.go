package pipeline_test

import (
	"context"
	"fmt"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/llm/llmtest"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
)

// BenchmarkBounds200Pages runs one check over 200 candidate pages (every
// one read, rated, extracted and sent for evidence: no page refutes, so
// nothing stops early) and reports what it costs the process:
//
//	peak_heap_MB        highest live heap sampled every 5 ms during the run
//	peak_rss_MB         the process's peak resident set (VmHWM) after the run
//	peak_goroutines     highest goroutine count sampled during the run,
//	                    loopback servers included
//	leaked_goroutines   goroutines left 2 s after the run over the count
//	                    before it, idle HTTP keep-alive connections aside
//	                    (must be 0)
//	idle_conn_goroutines goroutines of idle keep-alive connections (client
//	                    and loopback server sides) left after close (must
//	                    be no more than before the run: close drops the
//	                    idle connections of every client it built)
//	pages_read          sources read
//
// It fails when goroutines leak or the heap passes 512 MiB.
func BenchmarkBounds200Pages(b *testing.B) {
	w := newBoundsWorld(b)
	var r boundsResult
	for range b.N {
		r = w.run(b)
	}
	b.ReportMetric(r.peakHeapMB, "peak_heap_MB")
	b.ReportMetric(testkit.PeakRSS()/1024, "peak_rss_MB")
	b.ReportMetric(float64(r.peakGoroutines), "peak_goroutines")
	b.ReportMetric(float64(r.leaked), "leaked_goroutines")
	b.ReportMetric(float64(r.idle), "idle_conn_goroutines")
	b.ReportMetric(float64(r.read), "pages_read")
}

// TestBounds200Pages is the same check as a test, so that .ci/run holds
// the bounds (no leaked goroutine, heap under 512 MiB) on every change.
func TestBounds200Pages(t *testing.T) {
	if testing.Short() {
		t.Skip("reads 200 pages")
	}
	r := newBoundsWorld(t).run(t)
	t.Logf("200 pages: peak heap %.0f MiB, peak RSS %.0f MiB, peak goroutines %d, %d left on idle connections, %d leaked",
		r.peakHeapMB, testkit.PeakRSS()/1024, r.peakGoroutines, r.idle, r.leaked)
}

type boundsWorld struct {
	env  *testworld.Env
	o    pipeline.Options
	urls []string
}

type boundsResult struct {
	peakHeapMB                         float64
	peakGoroutines, leaked, idle, read int
}

func newBoundsWorld(b testing.TB, llmOpts ...llmtest.Option) *boundsWorld {
	const n = 200
	env := testworld.New(b, nil, llmOpts...)
	pages := map[string]testworld.Page{}
	var urls []string
	for i := range n {
		host := fmt.Sprintf("www.site%03d.example", i)
		p := testworld.Page{Path: "/springfield/main-street-bicycles", Title: fmt.Sprintf("Springfield bicycles on Main Street, part %d", i),
			Site: fmt.Sprintf("Site %d", i), Date: "2024-01-10", Paras: testworld.Background(fmt.Sprintf("Site %d", i), 14)}
		if i%10 == 0 {
			p.Paras = append([]string{testworld.QuoteC1}, p.Paras...)
		}
		pages[host] = p
		urls = append(urls, testworld.PageURL(host, p))
	}
	env.Proxy = testworld.NewsProxy(b, pages)
	env.Cfg.SearXNGURL = testworld.SearXNG(b, func(string) []string { return urls }).URL
	o := env.Options()
	o.FirstPassHits, o.MaxPages = n, n

	return &boundsWorld{env: env, o: o, urls: urls}
}

func (w *boundsWorld) run(b testing.TB) boundsResult {
	const n = 200
	env, o, urls := w.env, w.o, w.urls
	var res boundsResult
	runtime.GC()
	before, idleBefore := goroutines()
	sampler := testkit.SampleMemory(5 * time.Millisecond)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, o)
	if err != nil {
		b.Fatal(err)
	}
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		b.Fatal(err)
	}
	closeFn()
	peak := sampler.Stop()
	heap, gs := peak.Heap, peak.Goroutines
	for _, s := range c.Sources {
		if !s.FetchedAt.IsZero() {
			res.read++
		}
	}
	if r := c.SourceByURL(urls[n-1]); r == nil || r.FetchedAt.IsZero() {
		b.Fatalf("the 200th page was not read: %+v", r)
	}
	// close drops the idle keep-alive connections of the fetcher and of
	// the model and search clients (two goroutines each side, until the
	// server side sees the close), so within the deadline none is left
	// beyond those open before. Anything else still running after the
	// check is a leak.
	deadline := time.Now().Add(2 * time.Second)
	after, idle := goroutines()
	for (after > before || idle > idleBefore) && time.Now().Before(deadline) {
		time.Sleep(50 * time.Millisecond)
		after, idle = goroutines()
	}
	res.leaked = max(0, after-before)
	res.idle = idle
	res.peakHeapMB = float64(heap) / (1 << 20)
	res.peakGoroutines = gs
	if heap > 512<<20 {
		b.Errorf("peak heap %d MiB", heap>>20)
	}
	if idle > idleBefore {
		b.Errorf("%d goroutines of idle connections after close, %d before: a client's idle connections were not closed",
			idle, idleBefore)
	}
	if after > before {
		buf := make([]byte, 1<<20)
		b.Errorf("%d goroutines before the check, %d after (besides %d of idle connections):\n%s", before, after, idle,
			buf[:runtime.Stack(buf, true)])
	}
	return res
}

// goroutines counts running goroutines, apart from those serving idle HTTP
// keep-alive connections (client read/write loops, server conn loops),
// which it returns separately.
func goroutines() (other, idle int) {
	buf := make([]byte, 4<<20)
	for _, g := range strings.Split(string(buf[:runtime.Stack(buf, true)]), "\n\n") {
		switch {
		case strings.TrimSpace(g) == "":
		case strings.Contains(g, "net/http.(*persistConn)"), strings.Contains(g, "net/http.(*conn).serve"):
			idle++
		default:
			other++
		}
	}
	return other, idle
}

// BenchmarkEvidence200NoRefutation: 200 candidate pages, none of which
// refutes the post, with a model that answers each call after 1 s. The
// evidence stage's wall time in seconds is its number of model round trips
// (the goal: 10 or fewer; one call at a time took 25).
func BenchmarkEvidence200NoRefutation(b *testing.B) {
	const latency = time.Second
	w := newBoundsWorld(b, llmtest.WithDelay(latency))
	var secs float64
	var calls int
	for range b.N {
		e, closeFn, err := setup.NewFromConfig(context.Background(), w.env.Cfg, w.o)
		if err != nil {
			b.Fatal(err)
		}
		c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
		before := w.env.Model.EvidenceCalls
		_ = e.Run(context.Background(), c, pipeline.StageImages, nil)
		closeFn()
		for _, st := range c.Stages {
			if st.Stage == pipeline.StageEvidence {
				secs = st.Seconds
			}
		}
		calls = w.env.Model.EvidenceCalls - before
	}
	b.ReportMetric(secs/latency.Seconds(), "evidence_round_trips")
	b.ReportMetric(float64(calls), "evidence_calls")
}
