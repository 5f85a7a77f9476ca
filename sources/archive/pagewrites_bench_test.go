package archive

import (
	"context"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// BenchmarkPageWrites measures a check's writes of the pages it read as
// the queue's workers make them: 4 writers (one a worker) on PostgreSQL,
// each storing one page a write (Add), half of them pages another
// writer stored before (a page every check of a story reads), into a
// fresh archive of 2,200 pages. It reports each write's p50 and p95.
func BenchmarkPageWrites(b *testing.B) {
	fc := loadFactChecks(b)
	sentences := realSentences(b, fc)
	ctx := context.Background()
	s, err := Open(ctx, pgdbtest.Fresh(b))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const writers, per, shared = 4, 10, 200
	docs := slices.Collect(syntheticDocs(sentences, 2000+shared+writers*per*b.N, 21))
	if err := s.AddAll(ctx, docs[:2000+shared]); err != nil {
		b.Fatal(err)
	}
	fresh := docs[2000+shared:]
	var mu sync.Mutex
	var lat []time.Duration
	b.ResetTimer()
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range per * b.N {
				d := fresh[w*per*b.N+i]
				if i%2 == 1 { // a page read before, read again
					d = docs[2000+(w*per*b.N+i)%shared]
				}
				t0 := time.Now()
				if err := s.Add(ctx, d); err != nil {
					b.Error(err)
					return
				}
				mu.Lock()
				lat = append(lat, time.Since(t0))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	slices.Sort(lat)
	ms := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(ms(0.50), "p50-ms")
	b.ReportMetric(ms(0.95), "p95-ms")
}
