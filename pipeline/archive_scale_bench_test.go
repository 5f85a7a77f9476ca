package pipeline_test

import (
	"context"
	"io"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// BenchmarkCheckArchiveScale runs BenchmarkCheck's post (loopback model
// answering after 1 s, no response cache) with an empty archive and with
// the 100k-page archive of the archive package's scale benchmark, one
// after the other, and reports both wall times and their ratio (goal:
// within 1.10). The archive is taken from MUSE_ARCHIVE_BENCH_DIR, where
//
//	MUSE_ARCHIVE_BENCH_DIR=DIR go test ./sources/archive -run '^$' -bench 'SearchScale/engine=sqlite/pages=100000$' -benchtime 1x
//
// leaves it; without it the benchmark is skipped.
func BenchmarkCheckArchiveScale(b *testing.B) {
	src := filepath.Join(os.Getenv("MUSE_ARCHIVE_BENCH_DIR"), "archive-100000.db")
	if _, err := os.Stat(src); os.Getenv("MUSE_ARCHIVE_BENCH_DIR") == "" || err != nil {
		b.Skip("set MUSE_ARCHIVE_BENCH_DIR to the folder of archive-100000.db (built by the archive package's BenchmarkSearchScale)")
	}
	empty := testworld.New(b, nil, llmtest.WithDelay(time.Second))
	full := testworld.New(b, nil, llmtest.WithDelay(time.Second))
	for _, env := range []*testworld.Env{empty, full} {
		env.Cfg.NoCache = true
	}
	// The write-ahead log may hold committed pages not yet in the file.
	for _, suffix := range []string{"", "-wal"} {
		if _, err := os.Stat(src + suffix); suffix != "" && err != nil {
			continue
		}
		if err := copyFile(src+suffix, full.Cfg.ArchivePath()+suffix); err != nil {
			b.Fatal(err)
		}
	}
	check := func(env *testworld.Env) time.Duration {
		e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
		if err != nil {
			b.Fatal(err)
		}
		defer closeFn()
		c := e.NewCheck(pipeline.Post{Text: testworld.Post, Author: "City Rumours", Handle: "@cityrumours", PostedAt: testworld.Cutoff}, testworld.Cutoff)
		t0 := time.Now()
		if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
			b.Fatal(err)
		}
		d := time.Since(t0)
		for _, w := range c.Correction.Warnings {
			b.Logf("warning: %s", w)
		}
		return d
	}
	var tEmpty, tFull time.Duration
	b.ResetTimer()
	for range b.N {
		tEmpty += check(empty)
		tFull += check(full)
	}
	n := float64(b.N)
	b.ReportMetric(tEmpty.Seconds()/n, "empty_wall_s")
	b.ReportMetric(tFull.Seconds()/n, "100k_wall_s")
	b.ReportMetric(tFull.Seconds()/tEmpty.Seconds(), "ratio")
}

func copyFile(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	if err := os.MkdirAll(filepath.Dir(to), 0o700); err != nil {
		return err
	}
	out, err := os.Create(to)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	// On disk before the checks are timed: otherwise the first WAL
	// checkpoint of the check (its fsync of the database file) writes out
	// the whole copy still in the OS's cache, a second of the check's time
	// that no archive in use would cost.
	if err := out.Sync(); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}
