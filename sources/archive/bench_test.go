package archive

import (
	"context"
	"path/filepath"
	"testing"
)

// BenchmarkIndex measures adding the 467 PolitiFact fact-checks in one
// transaction to a new archive.
func BenchmarkIndex(b *testing.B) {
	fc := loadFactChecks(b)
	eachNewArchive(b, func(s *Store) {
		if err := s.AddAll(context.Background(), fc.docs); err != nil {
			b.Fatal(err)
		}
	})
	b.ReportMetric(float64(len(fc.docs)), "docs/op")
}

// eachNewArchive runs fill b.N times, timed, each time on a new archive.
func eachNewArchive(b *testing.B, fill func(*Store)) {
	b.ResetTimer()
	for range b.N {
		b.StopTimer()
		s, err := Open(context.Background(), filepath.Join(b.TempDir(), "archive.db"))
		if err != nil {
			b.Fatal(err)
		}
		b.StartTimer()
		fill(s)
		b.StopTimer()
		s.Close()
	}
}

// BenchmarkSearch measures one tweet-plus-OCR query against the 467
// fact-checks, with the default ranker and with plain BM25.
func BenchmarkSearch(b *testing.B) {
	fc := loadFactChecks(b)
	s := indexFactChecks(b, fc.docs)
	for _, bc := range []struct {
		name string
		r    ranker
	}{{"default", defaultRanker}, {"plainBM25", plainBM25}} {
		b.Run(bc.name, func(b *testing.B) {
			for i := range b.N {
				if _, err := s.search(context.Background(), fc.queries[i%len(fc.queries)], SearchOptions{}, bc.r); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
