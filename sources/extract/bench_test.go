package extract

import (
	"errors"
	"path/filepath"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources/fetch"
)

// BenchmarkExtract measures whole-page extraction (parse, main text,
// metadata, extensive date search, JSON-LD) one page at a time, so pages/s
// is per core. pages/s is wall-clock; pages/cpu-s divides by the CPU time
// the process used, which stays meaningful on a busy shared machine. Run:
// go test -run '^$' -bench 'BenchmarkExtract$' -cpu 1 -benchtime 400x ./sources/extract/
// (without the $ the pattern also runs BenchmarkExtractHugePage, whose
// unbounded case takes seconds per page).
func BenchmarkExtract(b *testing.B) {
	for _, set := range []struct{ name, dir, glob string }{
		{"articles", "article-extraction-benchmark", "html/*.html.gz"},
		{"htmldate-eval", "htmldate-eval", "html/*.gz"},
	} {
		b.Run(set.name, func(b *testing.B) {
			dir := testkit.SharedData(b, set.dir)
			pages, files := loadPages(b, filepath.Join(dir, set.glob))
			urls := benchPageURLs(b, dir)
			for _, f := range files {
				if urls[f] == "" {
					b.Fatalf("%s: no URL in the gold file", f)
				}
			}
			opts := Options{Now: benchNow}
			var bytes int64
			cpu0, cpuOK := testkit.ProcessCPU()
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				p := pages[i%len(pages)]
				bytes += int64(len(p))
				// Each page with its own URL, as muse reads it. A page
				// refused as not HTML or too large (one of the date set's
				// has 472 KiB of text) is what muse does with it too.
				if _, err := opts.Extract(p, urls[files[i%len(files)]]); err != nil && !errors.Is(err, ErrNotHTML) && !errors.Is(err, ErrTooLarge) {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pages/s")
			if cpu1, ok := testkit.ProcessCPU(); ok && cpuOK && cpu1 > cpu0 {
				b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "pages/cpu-s")
			}
			b.ReportMetric(float64(bytes)/float64(b.N)/1024, "KiB/page")
		})
	}
}

// loadPages reads the gzipped pages that match glob as UTF-8, as the
// fetcher would, and returns them with their file names (no folder).
func loadPages(b testing.TB, glob string) (pages [][]byte, names []string) {
	b.Helper()
	files, err := filepath.Glob(glob)
	if err != nil || len(files) == 0 {
		b.Skipf("no pages match %s", glob)
	}
	for _, f := range files {
		names = append(names, filepath.Base(f))
		raw, err := readGz(f)
		if err != nil {
			b.Fatal(err)
		}
		p, _, err := fetch.ToUTF8(raw, "")
		if err != nil {
			b.Fatal(err)
		}
		pages = append(pages, p)
	}
	return pages, names
}

// benchPageURLs maps each page file of a data set (the article benchmark
// or htmldate-eval) to the URL it was read from, as its gold file gives it.
func benchPageURLs(b testing.TB, dir string) map[string]string {
	b.Helper()
	out := map[string]string{}
	if ids, err := benchURLs(dir); err == nil {
		for id, u := range ids {
			out[id+".html.gz"] = u
		}
		return out
	}
	gold, err := loadDateGold(filepath.Join(dir, "eval_default.json"))
	if err != nil {
		b.Fatalf("no page URLs in %s: %v", dir, err)
	}
	for u, g := range gold {
		out[g.File+".gz"] = u
	}
	return out
}

// BenchmarkPublishedDate measures the date search alone on the date set,
// with go-dateparser trying every locale (go-htmldate's way) and the
// page's declared language and English (muse's). Run: go test -run '^$'
// -bench PublishedDate -cpu 1 -benchtime 800x ./sources/extract/
func BenchmarkPublishedDate(b *testing.B) {
	pages, _ := loadPages(b, filepath.Join(testkit.SharedData(b, "htmldate-eval"), "html/*.gz"))
	for _, lang := range []bool{false, true} {
		r := chosenRules
		r.dateLanguage = lang
		b.Run(map[bool]string{false: "every-locale", true: "page-language"}[lang], func(b *testing.B) {
			opts := Options{Now: benchNow, ruleSet: &r}
			cpu0, cpuOK := testkit.ProcessCPU()
			for i := 0; i < b.N; i++ {
				opts.dateOnly(pages[i%len(pages)], "")
			}
			if cpu1, ok := testkit.ProcessCPU(); ok && cpuOK && cpu1 > cpu0 {
				b.ReportMetric(float64(b.N)/(cpu1-cpu0).Seconds(), "pages/cpu-s")
			}
		})
	}
}
