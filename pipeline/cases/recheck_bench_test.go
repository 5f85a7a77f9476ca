package cases

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
)

// BenchmarkRecheck rechecks 10,000 saved cases (MUSE_RECHECK_BENCH_CASES
// sets another number) through a loopback web of 50 hosts, at most 2
// requests a host at once (the fetcher's limit, checked at the server).
// Each case cites its own article and one of 20 pages many cases cite;
// the archive kept every page's ETag when the cases were made. Between
// the cases' making and the recheck, 1 article in 20 has its quoted
// passage edited and 1 in 100 is gone. One iteration is a recheck of
// every case; pages_per_s counts distinct pages requested, not_modified
// those answered 304.
func BenchmarkRecheck(b *testing.B) {
	n := 10000
	if v, err := strconv.Atoi(os.Getenv("MUSE_RECHECK_BENCH_CASES")); err == nil && v > 0 {
		n = v
	}
	ctx := context.Background()
	dir := b.TempDir()
	st, err := Open(ctx, filepath.Join(dir, "cases.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	arch, err := archive.Open(ctx, filepath.Join(dir, "archive.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer arch.Close()
	w := newWeb(b)
	f := w.fetcher(arch)
	defer f.CloseIdleConnections()
	host := func(i int) string { return fmt.Sprintf("news%02d.test", i%50) }
	for i := range 20 {
		w.set(host(i), fmt.Sprintf("/shared/%d", i), article(fmt.Sprintf("Council budget explained, part %d", i), "2024-02-20", councilParas...))
	}
	quote := councilParas[1]
	var ids []string
	for i := range n {
		path := fmt.Sprintf("/story/%d", i)
		w.set(host(i), path, article(fmt.Sprintf("Council approves cycle lanes (%d)", i), "2024-03-01", councilParas...))
		own, shared := w.url(host(i), path), w.url(host(i%20), fmt.Sprintf("/shared/%d", i%20))
		c := &pipeline.Check{CreatedAt: time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC).Add(time.Duration(i) * time.Second),
			Post: pipeline.Post{Text: "The council banned bicycles"},
			Evidence: []pipeline.Evidence{{SourceURL: own, Quote: quote, Verified: true, Included: true},
				{SourceURL: shared, Quote: councilParas[2], Verified: true, Included: true}},
			Correction: pipeline.Correction{Text: "False: the council approved cycle lanes.", URLs: []string{own, shared}}}
		if err := st.Save(ctx, c); err != nil {
			b.Fatal(err)
		}
		for _, u := range []string{own, shared} {
			p, err := f.Fetch(ctx, u) // the page as the check read it, archived with its ETag
			if err != nil {
				b.Fatal(err)
			}
			if err := st.SaveSnapshot(ctx, c.ID, u, p.FinalURL, p.FetchedAt, councilParas[1]+"\n\n"+councilParas[2], p.Raw); err != nil {
				b.Fatal(err)
			}
		}
		ids = append(ids, c.ID)
	}
	edited := append([]string(nil), councilParas...)
	edited[1] = "Council member Dana Hill said the plan would restrict riding on some streets."
	for i := 0; i < n; i += 20 {
		w.set(host(i), fmt.Sprintf("/story/%d", i), article(fmt.Sprintf("Council approves cycle lanes (%d)", i), "2024-03-01", edited...))
	}
	for i := 7; i < n; i += 100 {
		w.setGone(host(i), fmt.Sprintf("/story/%d", i), http.StatusNotFound)
	}
	var pages, notMod, changed int
	b.ResetTimer()
	start := time.Now()
	for b.Loop() {
		_, stats, err := st.Recheck(ctx, ids, RecheckOptions{Fetcher: f})
		if err != nil {
			b.Fatal(err)
		}
		pages += stats.Pages
		notMod += stats.NotModified
		changed = stats.Changed
	}
	elapsed := time.Since(start)
	b.StopTimer()
	b.ReportMetric(float64(pages)/elapsed.Seconds(), "pages_per_s")
	b.ReportMetric(float64(notMod)/float64(b.N), "not_modified")
	b.ReportMetric(float64(changed), "cases_changed")
	most := 0
	for _, m := range w.maxHost {
		most = max(most, m)
	}
	b.ReportMetric(float64(most), "max_per_host")
	if most > 2 {
		b.Errorf("%d requests at once to one host", most)
	}
	if want := (n+19)/20 + (n-7+99)/100; changed != want {
		b.Errorf("%d cases changed, want %d", changed, want)
	}
}
