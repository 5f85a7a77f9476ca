package ratings

import (
	"path/filepath"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
)

func BenchmarkLoadMBFC(b *testing.B) {
	combined := filepath.Join(testkit.SharedData(b, "mbfc-ratings"), "combined.json")
	for b.Loop() {
		if _, err := Load(Options{File: combined}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkRate(b *testing.B) {
	combined := filepath.Join(testkit.SharedData(b, "mbfc-ratings"), "combined.json")
	r, err := Load(Options{File: combined})
	if err != nil {
		b.Fatal(err)
	}
	urls := []string{"https://www.bbc.co.uk/news/world-1", "https://edition.cnn.com/2020/10/x", "al.com/birmingham/news",
		"https://sd11.senate.ca.gov/news", "https://twitter.com/a/status/1", "https://unknown-site.example/x",
		"https://web.archive.org/web/20201031/https://www.cdc.gov/coronavirus/2019-ncov/index.html"}
	for b.Loop() {
		for _, u := range urls {
			r.Rate(u)
		}
	}
}
