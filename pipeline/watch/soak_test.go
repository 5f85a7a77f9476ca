package watch

import (
	"context"
	"database/sql"
	"fmt"
	"hash/fnv"
	"os"
	"path/filepath"
	"runtime"
	"runtime/metrics"
	"runtime/pprof"
	"strconv"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/feeds/feedtest"
)

// soakRate is the pace of the long replay, in posts a second: several
// times what Bluesky's whole firehose carries in posts (tens a second),
// and far above a hashtag's or a keyword's share of it, yet a tenth or so
// of what triage does on one core, so a 30-minute replay does not hold a
// shared core. At this pace the clusters outgrow the index's cap
// (100,000) within the first 15 minutes, and the store keeps growing.
const soakRate = 200

// TestTriageSoak replays real post texts through a loopback Jetstream at
// soakRate posts a second for MUSE_WATCH_SOAK (a duration: 30m; skipped
// when unset), through Watch as `muse watch` runs it, with the PolitiFact
// fact-checks imported into a real archive and the clusters forgotten
// after a third of the replay, and samples the live heap and
// the anonymous resident memory every minute. It reports the peak, the
// memory at 5 minutes and at the end, the slope after the index is full,
// and the store's size on disk; it fails when memory still grows in the
// replay's second half, or the store holds what it should have forgotten. MUSE_WATCH_SOAK_RATE sets another pace, and
// MUSE_WATCH_SOAK_HEAPPROFILE a file for the heap's profile at the end.
//
//	MUSE_WATCH_SOAK=30m nice -n 10 go test ./pipeline/watch -run TestTriageSoak -v -timeout 40m
func TestTriageSoak(t *testing.T) {
	d, err := time.ParseDuration(os.Getenv("MUSE_WATCH_SOAK"))
	if err != nil || d <= 0 {
		t.Skip("set MUSE_WATCH_SOAK to a duration (30m) to replay real texts for that long")
	}
	rate := float64(soakRate)
	if r, err := strconv.ParseFloat(os.Getenv("MUSE_WATCH_SOAK_RATE"), 64); err == nil && r > 0 {
		rate = r
	}
	ctx := context.Background()
	dir := t.TempDir()
	arch, err := archive.Open(ctx, filepath.Join(dir, "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	if err := arch.AddClaimReviews(ctx, politifactReviews(t), "en"); err != nil {
		t.Fatal(err)
	}
	st, err := Open(ctx, filepath.Join(dir, "watch.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	var changed atomic.Int64
	// Clusters are forgotten after a third of the replay (muse's default
	// is 7 days), so that the store's bound is seen too.
	tr, err := New(ctx, Options{Store: st, Matcher: pipeline.ArchiveOf(arch).(pipeline.ClaimMatcher), Retain: d / 3,
		Changed: func(Cluster) { changed.Add(1) }, Warn: func(s string) { t.Log("warning:", s) }})
	if err != nil {
		t.Fatal(err)
	}
	gen := newReplay(realPostTexts(t))
	srv := feedtest.NewPaced(t, rate, gen.event)

	runtime.GC()
	peak := testkit.SampleMemory(time.Second)
	every := min(time.Minute, d/10)
	type sample struct {
		at               time.Duration
		heap, rss, store uint64
		posts            int
	}
	var samples []sample
	heap := []metrics.Sample{{Name: "/gc/heap/live:bytes"}} // as of the last collection
	take := func(at time.Duration) {
		metrics.Read(heap)
		n, _ := st.PostsSeen(ctx)
		indexed, kept := tr.indexed()
		s := sample{at: at, heap: heap[0].Value.Uint64(), rss: testkit.AnonRSS(), store: storeSize(t, dir), posts: kept}
		samples = append(samples, s)
		t.Logf("%6s  heap %6.1f MiB  anon RSS %6.1f MiB  posts sent %7d, kept %7d, in the store %7d  clusters in the index %6d  store %6.1f MiB (log %.1f MiB)",
			at.Round(time.Second), mib(s.heap), mib(s.rss), srv.Sent(), kept, n, indexed, mib(s.store), mib(fileSize(filepath.Join(dir, "watch.db-wal"))))
	}
	wctx, stop := context.WithTimeout(ctx, d)
	defer stop()
	done := make(chan error, 1)
	start := time.Now()
	go func() { done <- tr.Watch(wctx, &feeds.Jetstream{URL: srv.URL()}) }()
	take(0)
	tick := time.NewTicker(every)
	for running := true; running; {
		select {
		case err := <-done:
			if err != nil && wctx.Err() == nil {
				t.Fatal(err)
			}
			running = false
		case <-tick.C:
			take(time.Since(start))
		}
	}
	tick.Stop()
	take(time.Since(start))
	pk := peak.Stop()
	if path := os.Getenv("MUSE_WATCH_SOAK_HEAPPROFILE"); path != "" {
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		runtime.GC()
		pprof.WriteHeapProfile(f)
		f.Close()
		runtime.KeepAlive(tr)
	}

	last := samples[len(samples)-1]
	var maxStore uint64
	for _, s := range samples {
		maxStore = max(maxStore, s.store)
	}
	at5 := samples[0]
	for _, s := range samples {
		if s.at <= d/6+every/2 { // 5 minutes of 30
			at5 = s
		}
	}
	// The slope over the second half: by then the index holds its cap.
	var half []sample
	for _, s := range samples {
		if s.at >= d/2 {
			half = append(half, s)
		}
	}
	xs, rss, hp, sz := make([]float64, len(half)), make([]float64, len(half)), make([]float64, len(half)), make([]float64, len(half))
	for i, s := range half {
		xs[i], rss[i], hp[i], sz[i] = s.at.Minutes(), mib(s.rss), mib(s.heap), mib(s.store)
	}
	rssSlope, heapSlope, storeSlope := slope(xs, rss), slope(xs, hp), slope(xs, sz)
	t.Logf("replayed %d posts in %s (%.0f/s asked, %.0f/s kept), %d clusters changed; peak heap %.1f MiB, peak anon RSS %.1f MiB; "+
		"anon RSS at %s %.1f MiB, at %s %.1f MiB; second half's slope: RSS %+.2f MiB/min, heap %+.2f MiB/min, store %+.2f MiB/min; store on disk %.1f MiB at the end, at most %.1f MiB",
		last.posts, d, rate, float64(last.posts)/d.Seconds(), changed.Load(), mib(pk.Heap), mib(pk.AnonRSS),
		at5.at.Round(time.Second), mib(at5.rss), last.at.Round(time.Second), mib(last.rss), rssSlope, heapSlope, storeSlope, mib(last.store), mib(maxStore))
	if last.posts < int(d.Seconds()*rate/2) {
		t.Errorf("%d posts kept in %s at %.0f/s: the triage fell behind the feed", last.posts, d, rate)
	}
	// Flat: what the second half adds, projected over the whole replay,
	// is small beside the memory held.
	if len(half) >= 3 && rssSlope*d.Minutes() > 0.2*mib(last.rss) {
		t.Errorf("anonymous RSS grows %.2f MiB a minute in the second half (%.1f MiB at the end): not flat", rssSlope, mib(last.rss))
	}
	// The store holds what the retention keeps and no more: its size
	// follows the rate of new clusters, which rises as the replay's later
	// passes pair texts (fewer join a cluster), so it is bounded by age.
	var oldestCluster, oldestPost sql.NullInt64
	if err := st.db.QueryRowContext(ctx, `SELECT (SELECT min(last_us) FROM watch_cluster), (SELECT min(seen_us) FROM watch_post)`).
		Scan(&oldestCluster, &oldestPost); err != nil {
		t.Fatal(err)
	}
	limit := time.Now().Add(-d/3 - pruneEvery(d/3) - time.Minute).UnixMicro()
	if oldestCluster.Int64 < limit || oldestPost.Int64 < limit {
		t.Errorf("the store holds a cluster last seen %s ago, a post seen %s ago, with clusters forgotten after %s",
			time.Since(time.UnixMicro(oldestCluster.Int64)).Round(time.Second), time.Since(time.UnixMicro(oldestPost.Int64)).Round(time.Second), d/3)
	}
	if len(half) >= 3 && heapSlope*d.Minutes() > 0.2*mib(last.heap) {
		t.Errorf("the live heap grows %.2f MiB a minute in the second half (%.1f MiB at the end): not flat", heapSlope, mib(last.heap))
	}
}

func mib(b uint64) float64 { return float64(b) / (1 << 20) }

// slope is the least-squares slope of ys over xs.
func slope(xs, ys []float64) float64 {
	n := float64(len(xs))
	if n < 2 {
		return 0
	}
	var sx, sy, sxx, sxy float64
	for i := range xs {
		sx, sy, sxx, sxy = sx+xs[i], sy+ys[i], sxx+xs[i]*xs[i], sxy+xs[i]*ys[i]
	}
	if den := n*sxx - sx*sx; den != 0 {
		return (n*sxy - sx*sy) / den
	}
	return 0
}

// storeSize is the watch store's size on disk, its write-ahead log
// included.
func storeSize(t *testing.T, dir string) uint64 {
	var n uint64
	for _, f := range []string{"watch.db", "watch.db-wal", "watch.db-shm"} {
		n += fileSize(filepath.Join(dir, f))
	}
	return n
}

func fileSize(path string) uint64 {
	if fi, err := os.Stat(path); err == nil {
		return uint64(fi.Size())
	}
	return 0
}

// indexed is how many clusters the index holds, and kept how many posts
// this Watch has kept (some since forgotten).
func (t *Triage) indexed() (indexed, kept int) {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.ix.cur.n + t.ix.old.n, t.kept
}

// replay makes an endless stream of posts from real texts: of every four
// posts three are new and one repeats a post of the last 20,000 (a
// retweet: "RT @handle: " and its text), so clusters grow in size. The
// new posts go through the texts in passes: the first pass posts each
// text as it is, each later pass pairs each text with another (a post
// that states two claims, as threads and quote posts do), a different
// one each pass, so every pass brings new clusters as a live feed does.
type replay struct{ texts []string }

func newReplay(texts []string) *replay { return &replay{texts: texts} }

const replayWindow = 20_000

func (r *replay) text(i int64) string {
	prefix := ""
	for i%4 == 3 {
		h := fnv.New64a()
		fmt.Fprint(h, i)
		back := int64(h.Sum64()%replayWindow) + 1
		prefix = "RT @" + handleOf(i) + ": "
		i = max(0, i-back)
	}
	o := i/4*3 + i%4 // the new post's number
	n := int64(len(r.texts))
	pass, k := o/n, o%n
	s := r.texts[k]
	if pass > 0 {
		s += "\n\n" + r.texts[(k+pass)%n]
	}
	return prefix + s
}

func handleOf(i int64) string { return fmt.Sprintf("user%04d.bsky.social", i%5003) }

func (r *replay) event(i, timeUS int64) []byte {
	author := fmt.Sprintf("did:plc:soak%020d", i%5003)
	return feedtest.PostEvent(author, "3l"+strconv.FormatInt(timeUS, 32), timeUS, r.text(i))
}
