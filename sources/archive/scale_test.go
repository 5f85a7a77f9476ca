package archive

import (
	"bufio"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// Archives of 10k, 100k and 1M synthetic pages, each page a random run of
// real article sentences (the extraction benchmark's gold bodies, the
// PolitiFact fact-checks, LIAR-PLUS justifications) under a real sentence
// as title, plus the 467 fact-checks themselves, so the benchmark tweets
// still have their answers among the noise. The archives are built by the
// benchmark, never committed; MUSE_ARCHIVE_BENCH_DIR keeps them between
// runs. The 1M archive is built only when MUSE_ARCHIVE_BENCH_1M=1.

var sentenceEnd = regexp.MustCompile(`([.!?])\s+`)

// realSentences returns the sentences of the shared data's article texts.
func realSentences(tb testing.TB, fc factChecks) []string {
	tb.Helper()
	var texts []string
	var gold map[string]struct {
		Body string `json:"articleBody"`
	}
	readJSON(tb, filepath.Join(testkit.SharedData(tb, "article-extraction-benchmark"), "ground-truth.json"), &gold)
	for _, g := range gold {
		texts = append(texts, g.Body)
	}
	for _, d := range fc.docs {
		texts = append(texts, d.Text)
	}
	for _, name := range []string{"val2.tsv", "test2.tsv"} {
		f, err := os.Open(filepath.Join(testkit.SharedData(tb, "liar-plus"), name))
		if err != nil {
			tb.Fatal(err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(nil, 1<<20)
		for sc.Scan() {
			cols := strings.Split(sc.Text(), "\t")
			texts = append(texts, cols[len(cols)-1])
		}
		f.Close()
	}
	slices.Sort(texts) // map order must not change the corpus
	var out []string
	for _, t := range texts {
		for _, s := range strings.Split(sentenceEnd.ReplaceAllString(t, "$1\n"), "\n") {
			if s = strings.TrimSpace(s); len(strings.Fields(s)) >= 5 {
				out = append(out, s)
			}
		}
	}
	return out
}

// syntheticDocs makes n pages from sentences, the same n pages every time.
func syntheticDocs(sentences []string, n int, seed uint64) func(yield func(Doc) bool) {
	return func(yield func(Doc) bool) {
		rng := rand.New(rand.NewPCG(seed, 0x5eed))
		pubs := []string{"Reuters", "AP", "BBC News", "The Guardian", "NPR", "Local Courier", "Daily Ledger"}
		day := time.Date(2014, 1, 1, 0, 0, 0, 0, time.UTC)
		for i := range n {
			k := 8 + rng.IntN(18)
			parts := make([]string, k)
			for j := range parts {
				parts[j] = sentences[rng.IntN(len(sentences))]
			}
			d := Doc{
				URL:       fmt.Sprintf("https://news%d.example/%d/story-%d", i%97, i/1000, i),
				Title:     sentences[rng.IntN(len(sentences))],
				Text:      strings.Join(parts, " "),
				Publisher: pubs[rng.IntN(len(pubs))],
				Published: day.Add(time.Duration(rng.IntN(5*365*24)) * time.Hour),
			}
			if !yield(d) {
				return
			}
		}
	}
}

// scaleArchive returns an archive of n synthetic pages plus the
// fact-checks, on SQLite or (engine "postgres") on the test cluster:
// MUSE_ARCHIVE_BENCH_PG names a database to keep it in between runs (one
// size at a time), else a fresh one is built.
func scaleArchive(b *testing.B, fc factChecks, engine string, n int) *Store {
	b.Helper()
	ctx := context.Background()
	var s *Store
	where := ""
	if engine == "postgres" {
		url := os.Getenv("MUSE_ARCHIVE_BENCH_PG")
		if url == "" {
			url = pgdbtest.Fresh(b)
		}
		var err error
		if s, err = Open(ctx, url); err != nil {
			b.Fatal(err)
		}
		where = s.Path()
	} else {
		dir := os.Getenv("MUSE_ARCHIVE_BENCH_DIR")
		if dir == "" {
			dir = b.TempDir()
		}
		where = filepath.Join(dir, fmt.Sprintf("archive-%d.db", n))
		var err error
		if s, err = Open(ctx, where); err != nil {
			b.Fatal(err)
		}
	}
	b.Cleanup(func() { s.Close() })
	if got, _ := s.Count(ctx); got == n+len(fc.docs) {
		return s
	}
	if got, _ := s.Count(ctx); got != 0 {
		b.Fatalf("%s holds %d documents; remove it", where, got)
	}
	start := time.Now()
	if err := s.AddAll(ctx, fc.docs); err != nil {
		b.Fatal(err)
	}
	// MUSE_ARCHIVE_BENCH_WRITE pages a write: by default an import's
	// batch; 20 is an archive written as checks write it.
	per := batchSize
	if v := os.Getenv("MUSE_ARCHIVE_BENCH_WRITE"); v != "" {
		var err error
		if per, err = strconv.Atoi(v); err != nil || per < 1 {
			b.Fatalf("MUSE_ARCHIVE_BENCH_WRITE=%q: want a number of pages", v)
		}
	}
	batch := make([]Doc, 0, per)
	for d := range syntheticDocs(realSentences(b, fc), n, uint64(n)) {
		if batch = append(batch, d); len(batch) == per {
			if err := s.AddAll(ctx, batch); err != nil {
				b.Fatal(err)
			}
			batch = batch[:0]
		}
	}
	if err := s.AddAll(ctx, batch); err != nil {
		b.Fatal(err)
	}
	if s.postgres && per >= appendDocs {
		// What Import does after writing batches of its own.
		t0 := time.Now()
		res, err := s.MergePostings(ctx, nil, nil)
		if err != nil {
			b.Fatal(err)
		}
		b.Logf("merged the postings rows of %d terms: %d rows into %d, in %v", res.Terms, res.Before, res.After, time.Since(t0).Round(time.Second))
	}
	if s.postgres {
		// What autovacuum would do in its own time: the planner's
		// statistics and the visibility map.
		if _, err := s.db.ExecContext(ctx, `VACUUM ANALYZE archive_docs, archive_postings`); err != nil {
			b.Fatal(err)
		}
	}
	b.Logf("built %s: %d pages, %d a write, in %v", where, n, per, time.Since(start).Round(time.Second))
	return s
}

// BenchmarkSearchScale measures archive search latency (default ranker,
// the benchmark tweets with their images' text as queries, each a
// different query) at 10k, 100k and, on demand, 1M pages, on SQLite and on
// PostgreSQL (skipped without MUSE_TEST_DATABASE_URL), and reports the
// 50th and 95th percentile.
func BenchmarkSearchScale(b *testing.B) {
	fc := loadFactChecks(b)
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, n := range []int{10_000, 100_000, 1_000_000} {
			b.Run(fmt.Sprintf("engine=%s/pages=%d", engine, n), func(b *testing.B) {
				if n >= 1_000_000 && os.Getenv("MUSE_ARCHIVE_BENCH_1M") != "1" {
					b.Skip("set MUSE_ARCHIVE_BENCH_1M=1 to build and search a 1M-page archive")
				}
				if engine == "postgres" {
					pgdbtest.URL(b)
				}
				benchSearch(b, fc, scaleArchive(b, fc, engine, n))
			})
		}
	}
}

func benchSearch(b *testing.B, fc factChecks, s *Store) {
	ctx := context.Background()
	lat := make([]time.Duration, 0, b.N)
	cpu := make([]time.Duration, 0, b.N)
	var mrr float64
	var server0 time.Duration
	if s.postgres {
		server0 = serverCPU(b, s)
	}
	b.ResetTimer()
	for i := range b.N {
		q := i % len(fc.queries)
		t0, c0 := time.Now(), cpuNow()
		hits, err := s.Search(ctx, fc.queries[q], SearchOptions{})
		if err != nil {
			b.Fatal(err)
		}
		lat = append(lat, time.Since(t0))
		cpu = append(cpu, cpuNow()-c0)
		mrr += reciprocalRank(hits, fc.relevant[q])
	}
	b.StopTimer()
	if s.postgres {
		// The server backends' CPU, a mean: /proc counts it in 10 ms
		// ticks, too coarse for one search.
		b.ReportMetric(float64(serverCPU(b, s)-server0)/float64(time.Millisecond)/float64(b.N), "server-cpu-ms/op")
	}
	// The fact-checks are among the pages, so the benchmark also says what
	// the first stage's budget costs in quality (MRR@10).
	b.ReportMetric(mrr/float64(b.N), "MRR@10")
	pct := func(ds []time.Duration, p float64) float64 {
		slices.Sort(ds)
		return float64(ds[min(len(ds)-1, int(p*float64(len(ds))))]) / float64(time.Millisecond)
	}
	b.ReportMetric(pct(lat, 0.50), "p50-ms")
	b.ReportMetric(pct(lat, 0.95), "p95-ms")
	// CPU time per search (this process's, so GC included; on PostgreSQL
	// the server's work is not in it): what the search costs when it has a
	// core to itself.
	b.ReportMetric(pct(cpu, 0.50), "cpu-p50-ms")
	b.ReportMetric(pct(cpu, 0.95), "cpu-p95-ms")
}

func reciprocalRank(hits []Hit, relevant map[string]bool) float64 {
	for i, h := range hits {
		if key, _ := sources.Canonical(h.URL); relevant[key] {
			return 1 / float64(i+1)
		}
	}
	return 0
}

// BenchmarkImportJSONL measures muse archive add of a JSONL file of 10,000
// synthetic pages into a new archive.
func BenchmarkImportJSONL(b *testing.B) {
	fc := loadFactChecks(b)
	const n = 10_000
	path := filepath.Join(b.TempDir(), "pages.jsonl")
	f, err := os.Create(path)
	if err != nil {
		b.Fatal(err)
	}
	w := bufio.NewWriter(f)
	enc := json.NewEncoder(w)
	for d := range syntheticDocs(realSentences(b, fc), n, 7) {
		enc.Encode(record{URL: d.URL, Title: d.Title, Text: d.Text, Publisher: d.Publisher, Published: d.Published.Format(time.RFC3339)})
	}
	if err := w.Flush(); err != nil {
		b.Fatal(err)
	}
	f.Close()
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run("engine="+engine, func(b *testing.B) {
			open := func() *Store {
				s, err := Open(context.Background(), filepath.Join(b.TempDir(), "archive.db"))
				if err != nil {
					b.Fatal(err)
				}
				return s
			}
			if engine == "postgres" {
				pgdbtest.URL(b)
				open = func() *Store { return openPostgresTemp(b) }
			}
			var total, cpu, server time.Duration
			for range b.N {
				b.StopTimer()
				s := open()
				var s0 time.Duration
				if s.postgres {
					s0 = serverCPU(b, s)
				}
				b.StartTimer()
				t0, c0 := time.Now(), cpuNow()
				res := s.Import(context.Background(), []string{path}, ImportOptions{})
				total += time.Since(t0)
				cpu += cpuNow() - c0
				if res.Added != n || res.Failed != 0 {
					b.Fatalf("import = %+v; want %d added", res, n)
				}
				b.StopTimer()
				if s.postgres {
					server += serverCPU(b, s) - s0
				}
				s.Close()
			}
			b.ReportMetric(float64(n*b.N)/total.Seconds(), "pages/s")
			if cpu > 0 {
				// Reading and writing overlap on two cores, so a CPU-second is
				// less than a wall second of a machine to itself. On
				// PostgreSQL the server's work is not in it.
				b.ReportMetric(float64(n*b.N)/cpu.Seconds(), "pages/cpu-s")
			}
			if server > 0 {
				// The server backends' CPU for every 10k pages (its
				// background processes are not in it).
				b.ReportMetric(server.Seconds()/float64(b.N)*10_000/n, "server-cpu-s/10k")
			}
		})
	}
}

// BenchmarkCheckWrites measures what a check's archiving costs: writes of
// 20 new synthetic pages (one AddAll each, as a check stores the pages it
// read) into the 10k or 100k archive of BenchmarkSearchScale, on SQLite
// and on PostgreSQL. It reports each write's p50 and p95, then deletes
// what it wrote (not timed), so the archive is the benchmark's again.
func BenchmarkCheckWrites(b *testing.B) {
	fc := loadFactChecks(b)
	sentences := realSentences(b, fc)
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, n := range []int{10_000, 100_000} {
			b.Run(fmt.Sprintf("engine=%s/pages=%d", engine, n), func(b *testing.B) {
				if engine == "postgres" {
					pgdbtest.URL(b)
				}
				s := scaleArchive(b, fc, engine, n)
				ctx := context.Background()
				const per = 20
				docs := slices.Collect(syntheticDocs(sentences, per*b.N, 20))
				run := time.Now().UnixNano() // new pages, whatever an earlier run left
				for i := range docs {
					docs[i].URL = fmt.Sprintf("https://checks.example/%d/%d", run, i)
				}
				// What it wrote goes again (not timed), even when the
				// benchmark stops early, so a kept archive stays the
				// search benchmark's.
				b.Cleanup(func() {
					for _, d := range docs {
						if _, err := s.Delete(ctx, d.URL); err != nil {
							b.Error(err)
							return
						}
					}
				})
				lat := make([]time.Duration, 0, b.N)
				b.ResetTimer()
				for i := range b.N {
					t0 := time.Now()
					if err := s.AddAll(ctx, docs[i*per:(i+1)*per]); err != nil {
						b.Fatal(err)
					}
					lat = append(lat, time.Since(t0))
				}
				b.StopTimer()
				slices.Sort(lat)
				ms := func(p float64) float64 {
					return float64(lat[min(len(lat)-1, int(p*float64(len(lat))))]) / float64(time.Millisecond)
				}
				b.ReportMetric(ms(0.50), "p50-ms")
				b.ReportMetric(ms(0.95), "p95-ms")
			})
		}
	}
}

// BenchmarkMigratePostings measures migration 8 on the scale benchmark's
// archive (10k, 100k and, on demand, 1M pages) as version 7 left it, its
// postings in FTS5: the time to open it (the migration builds
// docs_postings from the stems the documents hold), and the highest live
// heap and anonymous resident memory (the SQLite driver's cache included,
// the database file's mapped pages not) sampled every 10 ms meanwhile. Run:
// MUSE_ARCHIVE_BENCH_DIR=/tmp/ab go test ./sources/archive -run '^$'
// -bench MigratePostings -benchtime 1x
func BenchmarkMigratePostings(b *testing.B) {
	fc := loadFactChecks(b)
	ctx := context.Background()
	for _, n := range []int{10_000, 100_000, 1_000_000} {
		b.Run(fmt.Sprintf("pages=%d", n), func(b *testing.B) {
			if n >= 1_000_000 && os.Getenv("MUSE_ARCHIVE_BENCH_1M") != "1" {
				b.Skip("set MUSE_ARCHIVE_BENCH_1M=1 to build and migrate a 1M-page archive")
			}
			src := scaleArchive(b, fc, "sqlite", n)
			b.ResetTimer() // building the archive is not the migration
			var peak, before testkit.MemPeak
			for range b.N {
				b.StopTimer()
				path := filepath.Join(b.TempDir(), "version7.db")
				if _, err := src.db.ExecContext(ctx, `VACUUM INTO ?`, path); err != nil {
					b.Fatal(err)
				}
				s, err := Open(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				toVersion7(b, s)
				s.Close()
				runtime.GC()
				before = testkit.SampleMemory(time.Hour).Stop() // one sample
				sampler := testkit.SampleMemory(10 * time.Millisecond)
				b.StartTimer()
				s, err = Open(ctx, path)
				b.StopTimer()
				p := sampler.Stop()
				peak.Heap, peak.AnonRSS = max(peak.Heap, p.Heap), max(peak.AnonRSS, p.AnonRSS)
				if err != nil {
					b.Fatal(err)
				}
				var v, blocks int
				s.db.QueryRowContext(ctx, `PRAGMA user_version`).Scan(&v)
				s.db.QueryRowContext(ctx, `SELECT count(*) FROM docs_postings`).Scan(&blocks)
				if v != len(migrations) || blocks == 0 {
					b.Fatalf("after the migration: user_version %d, %d postings blocks", v, blocks)
				}
				b.ReportMetric(float64(blocks), "blocks")
				s.Close()
			}
			b.ReportMetric(float64(peak.Heap)/(1<<20), "peak-heap-MB")
			b.ReportMetric(float64(peak.AnonRSS)/(1<<20), "peak-anon-rss-MB")
			// The benchmark's own, before the migration.
			b.ReportMetric(float64(before.Heap)/(1<<20), "heap-before-MB")
			b.ReportMetric(float64(before.AnonRSS)/(1<<20), "anon-rss-before-MB")
		})
	}
}
