package extract

import (
	"compress/gzip"
	"encoding/json"
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// wordRe mirrors Python's Unicode `\w+`: letters, numbers and underscore.
var wordRe = regexp.MustCompile(`[\p{L}\p{N}_]+`)

// shingleCounts counts the 4-token shingles of a text the way the
// article-extraction-benchmark does: a text shorter than four tokens yields
// one shorter shingle, an empty text none.
func shingleCounts(text string) map[string]int {
	toks := wordRe.FindAllString(text, -1)
	const n = 4
	out := map[string]int{}
	last := len(toks) - n + 1
	if last < 1 {
		last = 1
	}
	for i := 0; i < last; i++ {
		end := min(i+n, len(toks))
		if i >= end {
			break
		}
		out[strings.Join(toks[i:end], "\x00")]++
	}
	return out
}

// shingleScore returns one document's TP, FP and FN, normalised to sum to 1
// so that long documents do not dominate the means.
func shingleScore(gold, pred string) (tp, fp, fn float64) {
	g, p := shingleCounts(gold), shingleCounts(pred)
	for k, gc := range g {
		pc := p[k]
		tp += float64(min(gc, pc))
		fn += float64(max(0, gc-pc))
	}
	for k, pc := range p {
		fp += float64(max(0, pc-g[k]))
	}
	if s := tp + fp + fn; s > 0 {
		tp, fp, fn = tp/s, fp/s, fn/s
	}
	return tp, fp, fn
}

// prf is the benchmark's aggregate: mean per-document precision (over
// documents with TP+FP > 0) and recall (over TP+FN > 0), F1 from the means.
type prf struct{ P, R, F float64 }

func shingleF1(gold, pred map[string]string) prf {
	var sp, sr float64
	var np, nr int
	for id, g := range gold {
		tp, fp, fn := shingleScore(g, pred[id])
		if tp+fp > 0 {
			np++
			sp += ratio(tp, fp, fn, fp)
		}
		if tp+fn > 0 {
			nr++
			sr += ratio(tp, fp, fn, fn)
		}
	}
	var m prf
	if np > 0 {
		m.P = sp / float64(np)
	}
	if nr > 0 {
		m.R = sr / float64(nr)
	}
	if m.P+m.R > 0 {
		m.F = 2 * m.P * m.R / (m.P + m.R)
	}
	return m
}

// ratio is TP/(TP+miss), scoring 1 for a document with nothing wrong.
func ratio(tp, fp, fn, miss float64) float64 {
	if fp == 0 && fn == 0 {
		return 1
	}
	if tp == 0 && miss == 0 {
		return 0
	}
	return tp / (tp + miss)
}

// benchGold reads ground-truth.json: item id → gold article body.
func benchGold(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		return nil, err
	}
	var raw map[string]struct {
		ArticleBody string `json:"articleBody"`
		URL         string `json:"url"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("decode ground truth: %w", err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = v.ArticleBody
	}
	return out, nil
}

// benchURLs reads the page URL of each item from ground-truth.json.
func benchURLs(dir string) (map[string]string, error) {
	b, err := os.ReadFile(filepath.Join(dir, "ground-truth.json"))
	if err != nil {
		return nil, err
	}
	var raw map[string]struct {
		URL string `json:"url"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return nil, fmt.Errorf("decode ground truth: %w", err)
	}
	out := make(map[string]string, len(raw))
	for k, v := range raw {
		out[k] = v.URL
	}
	return out, nil
}

// benchOutput reads a stored system's predictions, wrapped or not.
func benchOutput(path string) (map[string]string, error) {
	b, err := readGz(path)
	if err != nil {
		return nil, err
	}
	type item struct {
		ArticleBody string `json:"articleBody"`
	}
	var wrapped struct {
		Output map[string]item `json:"output"`
	}
	var plain map[string]item
	m := map[string]item{}
	if err := json.Unmarshal(b, &wrapped); err == nil && wrapped.Output != nil {
		m = wrapped.Output
	} else if err := json.Unmarshal(b, &plain); err == nil {
		m = plain
	} else {
		return nil, fmt.Errorf("decode %s: %w", path, err)
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v.ArticleBody
	}
	return out, nil
}

func readGz(path string) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	zr, err := gzip.NewReader(f)
	if err != nil {
		return nil, fmt.Errorf("gunzip %s: %w", path, err)
	}
	defer zr.Close()
	return io.ReadAll(zr)
}

func TestShingleMetricSmall(t *testing.T) {
	tp, fp, fn := shingleScore("a b c d e", "a b c d e")
	if tp != 1 || fp != 0 || fn != 0 {
		t.Fatalf("identical: got %v %v %v", tp, fp, fn)
	}
	// gold shingles: abcd bcde; pred: abcd bcdx → 1 TP, 1 FP, 1 FN.
	tp, fp, fn = shingleScore("a b c d e", "a b c d x")
	if tp != 1.0/3 || fp != 1.0/3 || fn != 1.0/3 {
		t.Fatalf("one word off: got %v %v %v", tp, fp, fn)
	}
	// Short texts form a single shorter shingle; Unicode words count.
	if got := shingleCounts("Zürich, 2019"); len(got) != 1 || got["Zürich\x002019"] != 1 {
		t.Fatalf("short text shingles: %v", got)
	}
	if got := shingleCounts(""); len(got) != 0 {
		t.Fatalf("empty text shingles: %v", got)
	}
}

// TestShingleMetricReproducesStored checks the metric against the stored
// outputs of other systems before it is trusted to score ours.
func TestShingleMetricReproducesStored(t *testing.T) {
	dir := benchDir(t)
	gold, err := benchGold(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Expected F1 on this 131-page copy, from a line-by-line Python run of
	// the upstream evaluate.py logic on the same files.
	for sys, want := range map[string]float64{"go_trafilatura": 0.9624, "news_please": 0.9472, "html-text": 0.6769} {
		pred, err := benchOutput(filepath.Join(dir, "output", sys+".json.gz"))
		if err != nil {
			t.Fatal(err)
		}
		m := shingleF1(gold, pred)
		t.Logf("%-16s P=%.4f R=%.4f F1=%.4f (%d pages)", sys, m.P, m.R, m.F, len(gold))
		if math.Abs(m.F-want) > 0.0006 {
			t.Errorf("%s: F1 %.4f, the reference implementation gives %.4f", sys, m.F, want)
		}
	}
}
