package eval

import (
	"bytes"
	"encoding/json"
	"strings"
	"testing"

	"golang.org/x/net/html"

	"github.com/musecheck/muse/prompts"
)

// results of two systems on five posts, judged and measured.
func sampleResults() []Result {
	var rs []Result
	for i, o := range []float64{8, 9, 7, 8, 9} {
		id := string(rune('a' + i))
		reach := i != 2
		rs = append(rs,
			Result{PostID: id, System: "muse", Kind: KindMuse, Status: StatusDone, CostUSD: 0.01, Seconds: 20,
				Judge:    &prompts.Judgement{Scores: map[string]float64{"overall": o, "fluency": 2}, References: []map[string]float64{{"credibility": 4}}},
				Measures: &Measures{NoteLength: 200, WithinLimit: true, Links: []Link{{URL: "https://apnews.com/a", ValidByX: true, Tier: "high", Page: &Page{Reachable: reach}}}}},
			Result{PostID: id, System: "notes", Kind: KindFile, Status: StatusDone,
				Judge:    &prompts.Judgement{Scores: map[string]float64{"overall": o - 3, "fluency": 2}},
				Measures: &Measures{NoteLength: 300}})
	}
	return append(rs, Result{PostID: "f", System: "notes", Kind: KindFile, Status: StatusFailed, Error: "no correction"})
}

func TestSummarise(t *testing.T) {
	s := Summarise(sampleResults())
	if len(s.Systems) != 2 {
		t.Fatalf("%d systems", len(s.Systems))
	}
	m, n := s.Systems[0], s.Systems[1]
	if m.Metrics["overall"].Mean != 8.2 || n.Metrics["overall"].Mean != 5.2 || m.Metrics["credibility"].Mean != 4 {
		t.Errorf("means: %+v / %+v", m.Metrics, n.Metrics)
	}
	if m.Metrics["m_reachable"].Mean != 0.8 || n.Failed != 1 || n.Posts != 6 || m.CostPerPost != 0.01 {
		t.Errorf("measures: %+v / %+v", m, n)
	}
	var overall *Comparison
	for i, c := range s.Comparisons {
		if c.Metric == "overall" {
			overall = &s.Comparisons[i]
		}
	}
	// Every post 3 points apart: Wilcoxon over 5 paired posts, all one
	// sign, tied (every difference 3): the approximation, T = 0; the
	// Mann-Whitney U of two separated samples of 5 is 25.
	if overall == nil || overall.PairedPosts != 5 || overall.Wilcoxon.Statistic != 0 || overall.MannWhitney.Statistic != 25 {
		t.Fatalf("comparison: %+v", overall)
	}
	if c := findComparison(s, "fluency"); c == nil || c.Wilcoxon != nil {
		t.Errorf("identical scores have no Wilcoxon test: %+v", c)
	}
	if _, err := json.Marshal(s); err != nil {
		t.Fatal(err)
	}
	var txt bytes.Buffer
	WriteText(&txt, s)
	for _, want := range []string{"overall quality (0–10)", "muse", "████████", "Mann-Whitney U=25.0", "cited links reachable now"} {
		if !strings.Contains(txt.String(), want) {
			t.Errorf("text report lacks %q:\n%s", want, txt.String())
		}
	}
}

func findComparison(s Summary, metric string) *Comparison {
	for i := range s.Comparisons {
		if s.Comparisons[i].Metric == metric {
			return &s.Comparisons[i]
		}
	}
	return nil
}

// TestHTMLReport: one page, nothing loaded from the network, and a figure
// with an SVG chart for every metric, a bar (with its interval) per system
// that has the metric.
func TestHTMLReport(t *testing.T) {
	s := Summarise(sampleResults())
	var b bytes.Buffer
	if err := WriteHTML(&b, s); err != nil {
		t.Fatal(err)
	}
	doc, err := html.Parse(bytes.NewReader(b.Bytes()))
	if err != nil {
		t.Fatal(err)
	}
	figures := map[string]int{} // metric → bars
	var walk func(n *html.Node, metric string)
	walk = func(n *html.Node, metric string) {
		if n.Type == html.ElementNode {
			for _, a := range n.Attr {
				if (a.Key == "src" || a.Key == "href") && a.Val != "" {
					t.Errorf("<%s %s=%q>: the page must load nothing", n.Data, a.Key, a.Val)
				}
				if n.Data == "figure" && a.Key == "data-metric" {
					metric = a.Val
					figures[metric] += 0
				}
			}
			if n.Data == "rect" && metric != "" {
				figures[metric]++
			}
			if n.Data == "script" || n.Data == "link" || n.Data == "img" || n.Data == "iframe" {
				t.Errorf("<%s> in a self-contained report", n.Data)
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c, metric)
		}
	}
	walk(doc, "")
	if len(figures) != len(s.Metrics) {
		t.Errorf("%d figures for %d metrics", len(figures), len(s.Metrics))
	}
	for _, m := range s.Metrics {
		want := 0
		for _, ss := range s.Systems {
			if _, ok := ss.Metrics[m.Key]; ok {
				want++
			}
		}
		if figures[m.Key] != want || want == 0 {
			t.Errorf("%s: %d bars, want %d", m.Key, figures[m.Key], want)
		}
	}
	if !strings.Contains(b.String(), "<svg") || strings.Contains(b.String(), "@import") {
		t.Error("no inline SVG, or an import")
	}
}
