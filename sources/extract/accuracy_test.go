package extract

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources/fetch"
)

func benchDir(tb testing.TB) string {
	tb.Helper()
	return testkit.SharedData(tb, "article-extraction-benchmark")
}

// benchNow pins "today" for date checks so that results do not drift as the
// calendar moves on; it is after every gold date in both data sets.
var benchNow = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// loadBench reads the article-extraction-benchmark: its folder, and each
// item's gold body and page URL.
func loadBench(t *testing.T) (dir string, gold, urls map[string]string) {
	t.Helper()
	dir = benchDir(t)
	gold, err := benchGold(dir)
	if err != nil {
		t.Fatal(err)
	}
	if urls, err = benchURLs(dir); err != nil {
		t.Fatal(err)
	}
	return dir, gold, urls
}

// TestArticleBodyF1 scores main-text extraction on the
// article-extraction-benchmark pages with its shingle F1, in sample: the
// rules were chosen on these pages (TestRulesCrossValidated gives the
// out-of-fold figure).
func TestArticleBodyF1(t *testing.T) {
	dir, gold, urls := loadBench(t)
	opts := Options{Now: benchNow}
	pred := make(map[string]string, len(gold))
	start := time.Now()
	for id := range gold {
		page, err := readGz(filepath.Join(dir, "html", id+".html.gz"))
		if err != nil {
			t.Fatal(err)
		}
		a, err := opts.Extract(page, urls[id])
		if err != nil {
			t.Errorf("%s: %v", id, err)
			continue
		}
		pred[id] = a.Text
	}
	m := shingleF1(gold, pred)
	t.Logf("article body: P=%.3f R=%.3f F1=%.3f on %d pages in %s", m.P, m.R, m.F, len(gold), time.Since(start).Round(time.Millisecond))
	if os.Getenv("EXTRACT_DEBUG") != "" {
		logWorst(t, gold, pred, urls)
	}
	if m.F < 0.96 {
		t.Errorf("article body F1 %.3f, want ≥ 0.96", m.F)
	}
}

func logWorst(t *testing.T, gold, pred, urls map[string]string) {
	type row struct {
		id       string
		p, r, f1 float64
	}
	var rows []row
	for id, g := range gold {
		tp, fp, fn := shingleScore(g, pred[id])
		p, r := ratio(tp, fp, fn, fp), ratio(tp, fp, fn, fn)
		f := 0.0
		if p+r > 0 {
			f = 2 * p * r / (p + r)
		}
		rows = append(rows, row{id, p, r, f})
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i].f1 < rows[j].f1 })
	for _, r := range rows[:min(25, len(rows))] {
		t.Logf("  P=%.2f R=%.2f %s %s", r.p, r.r, r.id[:12], urls[r.id])
	}
}

type dateGold struct {
	File string  `json:"file"`
	Date *string `json:"date"`
}

// loadDateGold reads an htmldate-eval gold file; the bare NaN tokens
// upstream writes for "no date" become null first.
func loadDateGold(path string) (map[string]dateGold, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	b = bytes.ReplaceAll(b, []byte(": NaN"), []byte(": null"))
	var m map[string]dateGold
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	return m, nil
}

// loadDateEval reads htmldate-eval: its folder, the gold dates by page URL
// and the URLs in order.
func loadDateEval(t *testing.T) (dir string, gold map[string]dateGold, urls []string) {
	t.Helper()
	dir = testkit.SharedData(t, "htmldate-eval")
	gold, err := loadDateGold(filepath.Join(dir, "eval_default.json"))
	if err != nil {
		t.Fatal(err)
	}
	for k := range gold {
		urls = append(urls, k)
	}
	sort.Strings(urls)
	return dir, gold, urls
}

// readDatePage reads one htmldate-eval page as UTF-8, as the fetcher would.
func readDatePage(dir, file string) ([]byte, error) {
	raw, err := readGz(filepath.Join(dir, "html", file+".gz"))
	if err != nil {
		return nil, err
	}
	page, _, err := fetch.ToUTF8(raw, "")
	return page, err
}

// TestPublishDateF scores original-publication-date extraction on
// htmldate-eval with its day-precision F-score.
func TestPublishDateF(t *testing.T) {
	dir, gold, keys := loadDateEval(t)
	opts := Options{Now: benchNow}
	var tp, fp, fn, tn int
	var misses []string
	start := time.Now()
	for _, pageURL := range keys {
		g := gold[pageURL]
		got := ""
		if page, err := readDatePage(dir, g.File); err == nil {
			got = opts.dateOnly(page, pageURL)
		}
		want := ""
		if g.Date != nil {
			want = *g.Date
		}
		switch {
		case got == "" && want == "":
			tn++
		case got == "":
			fn++
			misses = append(misses, fmt.Sprintf("none want %s %s", want, pageURL))
		case got == want:
			tp++
		default:
			fp++
			misses = append(misses, fmt.Sprintf("got %s want %s %s", got, want, pageURL))
		}
	}
	p := float64(tp) / float64(max(1, tp+fp))
	r := float64(tp) / float64(max(1, tp+fn))
	f := 2 * float64(tp) / float64(max(1, 2*tp+fp+fn))
	acc := float64(tp+tn) / float64(max(1, tp+tn+fp+fn))
	t.Logf("publish date: P=%.3f R=%.3f Acc=%.3f F=%.3f (TP %d FP %d FN %d TN %d) on %d pages in %s",
		p, r, acc, f, tp, fp, fn, tn, len(gold), time.Since(start).Round(time.Millisecond))
	if os.Getenv("EXTRACT_DEBUG") != "" {
		t.Log("misses:\n" + strings.Join(misses, "\n"))
	}
	if f < 0.95 {
		t.Errorf("publish date F %.3f, want ≥ 0.95", f)
	}
}
