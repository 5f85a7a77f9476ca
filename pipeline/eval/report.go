package eval

import (
	"fmt"
	"html/template"
	"io"
	"math"
	"slices"
	"strings"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/ratings"
)

// Metric is one figure the report compares: a judged criterion or a
// deterministic measure, on its scale.
type Metric struct {
	Key   string  `json:"key"`
	Name  string  `json:"name"`
	Top   float64 `json:"top"`   // the best value (10, 1 for a share…)
	Judge bool    `json:"judge"` // from the LLM judge
}

// Metrics in report order: overall quality first, then the criteria, then
// the deterministic measures (shares from 0 to 1 unless said).
func Metrics() []Metric {
	var ms []Metric
	o, _ := prompts.CriterionByKey(prompts.Overall)
	ms = append(ms, Metric{Key: o.Key, Name: o.Name, Top: o.Top(), Judge: true})
	for _, c := range prompts.Criteria {
		if c.Key != prompts.Overall {
			ms = append(ms, Metric{Key: c.Key, Name: c.Name, Top: c.Top(), Judge: true})
		}
	}
	return append(ms,
		Metric{Key: "m_reachable", Name: "cited links reachable now", Top: 1},
		Metric{Key: "m_valid_x", Name: "cited links valid by X's pattern", Top: 1},
		Metric{Key: "m_credible", Name: "cited links from high- or medium-tier publishers", Top: 1},
		Metric{Key: "m_evidence", Name: "cited links that are evidence pages", Top: 1},
		Metric{Key: "m_links", Name: "links cited", Top: 0},
		Metric{Key: "m_within_limit", Name: "fits a note (≤280, each link 1)", Top: 1},
		Metric{Key: "m_length", Name: "note length (Community Notes count)", Top: 0},
		Metric{Key: "m_language", Name: "written in the language asked", Top: 1},
		Metric{Key: "m_quotes", Name: "quotes found on a cited page", Top: 1},
		Metric{Key: "m_gold_url", Name: "gold evidence URL among pages (AVeriTeC)", Top: 1},
		Metric{Key: "m_gold_domain", Name: "gold evidence domain among pages (AVeriTeC)", Top: 1},
		Metric{Key: "m_gold_label", Name: "verdict read in the correction is the gold label (AVeriTeC, judge)", Top: 1},
	)
}

// Values are one result's figure per metric key (absent: not measured).
func Values(r Result) map[string]float64 {
	v := map[string]float64{}
	if r.Judge != nil {
		for k, s := range r.Judge.Scores {
			v[k] = s
		}
		for _, c := range prompts.Criteria {
			if !c.PerReference {
				continue
			}
			var xs []float64
			for _, ref := range r.Judge.References {
				if s, ok := ref[c.Key]; ok {
					xs = append(xs, s)
				}
			}
			if len(xs) > 0 {
				v[c.Key] = mean(xs)
			}
		}
	}
	if m := r.Measures; m != nil {
		v["m_length"] = float64(m.NoteLength)
		v["m_within_limit"] = b01(m.WithinLimit)
		v["m_links"] = float64(len(m.Links))
		var reach, fetched, valid, cred, ev []float64
		for _, l := range m.Links {
			valid = append(valid, b01(l.ValidByX))
			cred = append(cred, b01(l.Tier == string(ratings.TierHigh) || l.Tier == string(ratings.TierMedium)))
			if l.Page != nil {
				fetched = append(fetched, 1)
				reach = append(reach, b01(l.Page.Reachable))
				ev = append(ev, b01(l.EvidencePage))
			}
		}
		if len(m.Links) > 0 {
			v["m_valid_x"], v["m_credible"] = mean(valid), mean(cred)
		}
		if len(fetched) > 0 {
			v["m_reachable"], v["m_evidence"] = mean(reach), mean(ev)
		}
		if m.LanguageOK != nil {
			v["m_language"] = b01(*m.LanguageOK)
		}
		if m.Quotes > 0 && m.QuotesChecked {
			v["m_quotes"] = float64(m.QuotesVerified) / float64(m.Quotes)
		}
	}
	if r.Gold != nil {
		v["m_gold_url"], v["m_gold_domain"] = b01(r.Gold.URLHit), b01(r.Gold.DomainHit)
		if r.Gold.LabelCorrect != nil {
			v["m_gold_label"] = b01(*r.Gold.LabelCorrect)
		}
	}
	return v
}

func b01(b bool) float64 {
	if b {
		return 1
	}
	return 0
}

func mean(xs []float64) float64 {
	s := 0.0
	for _, x := range xs {
		s += x
	}
	return s / float64(len(xs))
}

// SystemSummary is one system's figures.
type SystemSummary struct {
	Name           string              `json:"name"`
	Kind           string              `json:"kind"`
	Posts          int                 `json:"posts"`
	Failed         int                 `json:"failed"`
	Judged         int                 `json:"judged"`
	Metrics        map[string]Interval `json:"metrics"`
	CostPerPost    float64             `json:"cost_per_post_usd"`
	SecondsPerPost float64             `json:"seconds_per_post"`
}

// Comparison is two systems compared on one metric: Mann-Whitney U over
// all their values (as the paper) and Wilcoxon signed-rank over the posts
// both were scored on.
type Comparison struct {
	A           string      `json:"a"`
	B           string      `json:"b"`
	Metric      string      `json:"metric"`
	MeanA       float64     `json:"mean_a"`
	MeanB       float64     `json:"mean_b"`
	MannWhitney *TestResult `json:"mann_whitney_u,omitempty"` // nil: not computable
	Wilcoxon    *TestResult `json:"wilcoxon,omitempty"`
	PairedPosts int         `json:"paired_posts"`
}

// Summary is a run's report.
type Summary struct {
	Metrics     []Metric        `json:"metrics"`
	Systems     []SystemSummary `json:"systems"`
	Comparisons []Comparison    `json:"comparisons"`
}

// Summarise turns results (the latest per post and system) into per-system
// means with 95% bootstrap intervals (2,000 resamples, fixed seed) and the
// pairwise tests of every metric both systems have.
func Summarise(rs []Result) Summary {
	rs = Latest(rs)
	var names []string
	by := map[string][]Result{}
	for _, r := range rs {
		if _, ok := by[r.System]; !ok {
			names = append(names, r.System)
		}
		by[r.System] = append(by[r.System], r)
	}
	s := Summary{}
	present := map[string]bool{}
	vals := map[string]map[string]map[string]float64{} // system → post → metric → value
	for _, n := range names {
		ss := SystemSummary{Name: n, Metrics: map[string]Interval{}}
		vals[n] = map[string]map[string]float64{}
		cols := map[string][]float64{}
		cost, secs := 0.0, 0.0
		for _, r := range by[n] {
			ss.Kind = r.Kind
			ss.Posts++
			cost += r.CostUSD + r.JudgeUSD
			secs += r.Seconds
			if r.Status != StatusDone {
				ss.Failed++
				continue
			}
			if r.Judge != nil {
				ss.Judged++
			}
			v := Values(r)
			vals[n][r.PostID] = v
			for k, x := range v {
				cols[k] = append(cols[k], x)
			}
		}
		for k, xs := range cols {
			ss.Metrics[k] = BootstrapMean(xs, 0.95, 2000, 1)
			present[k] = true
		}
		if ss.Posts > 0 {
			ss.CostPerPost, ss.SecondsPerPost = cost/float64(ss.Posts), secs/float64(ss.Posts)
		}
		s.Systems = append(s.Systems, ss)
	}
	for _, m := range Metrics() {
		if present[m.Key] {
			s.Metrics = append(s.Metrics, m)
		}
	}
	for i, a := range names {
		for _, b := range names[i+1:] {
			for _, m := range s.Metrics {
				var xa, xb, pa, pb []float64
				for post, v := range vals[a] {
					if x, ok := v[m.Key]; ok {
						xa = append(xa, x)
						if y, ok := vals[b][post][m.Key]; ok {
							pa, pb = append(pa, x), append(pb, y)
						}
					}
				}
				for _, v := range vals[b] {
					if x, ok := v[m.Key]; ok {
						xb = append(xb, x)
					}
				}
				if len(xa) == 0 || len(xb) == 0 {
					continue
				}
				slices.Sort(xa) // map order must not change the figures
				slices.Sort(xb)
				s.Comparisons = append(s.Comparisons, Comparison{A: a, B: b, Metric: m.Key, MeanA: mean(xa), MeanB: mean(xb),
					MannWhitney: finite(MannWhitneyU(xa, xb)), Wilcoxon: finite(Wilcoxon(pa, pb)), PairedPosts: len(pa)})
			}
		}
	}
	return s
}

// finite is t, or nil when it could not be computed (no values, or every
// paired difference zero).
func finite(t TestResult) *TestResult {
	if math.IsNaN(t.P) || math.IsNaN(t.Statistic) {
		return nil
	}
	return &t
}

// bar draws x of top as a bar of width cells.
func bar(x, top float64, width int) string {
	if top <= 0 || math.IsNaN(x) {
		return strings.Repeat(" ", width)
	}
	n := int(math.Round(math.Max(0, math.Min(1, x/top)) * float64(width)))
	return strings.Repeat("█", n) + strings.Repeat("░", width-n)
}

// WriteText writes the terminal report: per metric, a bar per system with
// its mean and 95% interval; then cost and time per post and the tests on
// overall quality.
func WriteText(w io.Writer, s Summary) error {
	var b strings.Builder
	for _, ss := range s.Systems {
		fmt.Fprintf(&b, "%s (%s): %d posts, %d failed, %d judged; $%.4f and %.1f s per post\n", ss.Name, ss.Kind, ss.Posts, ss.Failed, ss.Judged, ss.CostPerPost, ss.SecondsPerPost)
	}
	width := 0
	for _, ss := range s.Systems {
		width = max(width, len([]rune(ss.Name)))
	}
	for _, m := range s.Metrics {
		top := m.Top
		if top == 0 {
			for _, ss := range s.Systems {
				if iv, ok := ss.Metrics[m.Key]; ok {
					top = math.Max(top, iv.High)
				}
			}
		}
		scale := ""
		if m.Top > 0 {
			scale = fmt.Sprintf(" (0–%g)", m.Top)
		}
		fmt.Fprintf(&b, "\n%s%s\n", m.Name, scale)
		for _, ss := range s.Systems {
			iv, ok := ss.Metrics[m.Key]
			if !ok {
				continue
			}
			fmt.Fprintf(&b, "  %-*s %s %6.2f  [%.2f–%.2f] n=%d\n", width, ss.Name, bar(iv.Mean, top, 20), iv.Mean, iv.Low, iv.High, iv.N)
		}
	}
	tests := false
	for _, c := range s.Comparisons {
		if c.Metric != prompts.Overall {
			continue
		}
		if !tests {
			b.WriteString("\nOverall quality, two-sided tests:\n")
			tests = true
		}
		fmt.Fprintf(&b, "  %s %.2f vs %s %.2f: Mann-Whitney %s; Wilcoxon on %d paired posts %s\n",
			c.A, c.MeanA, c.B, c.MeanB, c.MannWhitney.text("U"), c.PairedPosts, c.Wilcoxon.text("T"))
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// text is the test's statistic and p-value, or "n/a".
func (t *TestResult) text(stat string) string {
	if t == nil {
		return "n/a"
	}
	return fmt.Sprintf("%s=%.1f p=%.3g", stat, t.Statistic, t.P)
}

// HTML is text for the page.
func (t *TestResult) HTML(stat string) string { return t.text(stat) }

// plot is one metric's chart in the HTML page.
type plot struct {
	Metric Metric
	Height int
	Bars   []plotBar
	Scale  string
}

type plotBar struct {
	Name                string
	Y, W, CILow, CIHigh float64
	Label               string
	Mean, Low, High     float64
}

var page = template.Must(template.New("report").Funcs(template.FuncMap{"add": func(a, b float64) float64 { return a + b }}).Parse(`<!DOCTYPE html>
<html lang="en"><head><meta charset="utf-8"><title>muse eval report</title>
<style>body{font:15px/1.4 system-ui,sans-serif;max-width:60em;margin:2em auto;color:#222}
figure{margin:1.5em 0}figcaption{font-weight:600}table{border-collapse:collapse}td,th{padding:.2em .6em;border-bottom:1px solid #ddd;text-align:left}
svg text{font:12px system-ui,sans-serif}</style></head><body>
<h1>Corrections compared</h1>
<table><tr><th>system</th><th>kind</th><th>posts</th><th>failed</th><th>judged</th><th>cost per post</th><th>seconds per post</th></tr>
{{range .S.Systems}}<tr><td>{{.Name}}</td><td>{{.Kind}}</td><td>{{.Posts}}</td><td>{{.Failed}}</td><td>{{.Judged}}</td><td>${{printf "%.4f" .CostPerPost}}</td><td>{{printf "%.1f" .SecondsPerPost}}</td></tr>
{{end}}</table>
{{range .Plots}}<figure class="plot" data-metric="{{.Metric.Key}}"><figcaption>{{.Metric.Name}}{{.Scale}}</figcaption>
<svg xmlns="http://www.w3.org/2000/svg" width="640" height="{{.Height}}" role="img" aria-label="{{.Metric.Name}}">
{{range .Bars}}<text x="0" y="{{printf "%.0f" (add .Y 14)}}">{{.Name}}</text>
<rect class="bar" x="160" y="{{printf "%.0f" .Y}}" width="{{printf "%.1f" .W}}" height="18" fill="#4a7ab7"><title>{{.Label}}</title></rect>
<line x1="{{printf "%.1f" .CILow}}" x2="{{printf "%.1f" .CIHigh}}" y1="{{printf "%.0f" (add .Y 9)}}" y2="{{printf "%.0f" (add .Y 9)}}" stroke="#222" stroke-width="2"/>
<text x="{{printf "%.1f" (add .CIHigh 6)}}" y="{{printf "%.0f" (add .Y 14)}}">{{printf "%.2f" .Mean}} [{{printf "%.2f" .Low}}–{{printf "%.2f" .High}}]</text>
{{end}}</svg></figure>
{{end}}
{{if .S.Comparisons}}<h2>Tests</h2><table><tr><th>metric</th><th>A</th><th>B</th><th>mean A</th><th>mean B</th><th>Mann-Whitney U, p</th><th>Wilcoxon T, p (paired posts)</th></tr>
{{range .S.Comparisons}}<tr><td>{{.Metric}}</td><td>{{.A}}</td><td>{{.B}}</td><td>{{printf "%.2f" .MeanA}}</td><td>{{printf "%.2f" .MeanB}}</td><td>{{.MannWhitney.HTML "U"}}</td><td>{{.Wilcoxon.HTML "T"}} ({{.PairedPosts}})</td></tr>
{{end}}</table>{{end}}
<p>Means with 95% bootstrap intervals. Made by muse eval.</p>
</body></html>
`))

// WriteHTML writes the report as one self-contained HTML page: a table of
// systems, an inline SVG bar chart with intervals per metric, and the
// tests. It loads nothing from the network.
func WriteHTML(w io.Writer, s Summary) error {
	var plots []plot
	const left, span = 160.0, 360.0
	for _, m := range s.Metrics {
		top := m.Top
		if top == 0 {
			for _, ss := range s.Systems {
				if iv, ok := ss.Metrics[m.Key]; ok {
					top = math.Max(top, iv.High)
				}
			}
		}
		if top <= 0 {
			top = 1
		}
		p := plot{Metric: m}
		if m.Top > 0 {
			p.Scale = fmt.Sprintf(" (0–%g)", m.Top)
		}
		x := func(v float64) float64 { return left + span*math.Max(0, math.Min(1, v/top)) }
		for _, ss := range s.Systems {
			iv, ok := ss.Metrics[m.Key]
			if !ok {
				continue
			}
			y := float64(len(p.Bars))*26 + 4
			p.Bars = append(p.Bars, plotBar{Name: ss.Name, Y: y, W: x(iv.Mean) - left, CILow: x(iv.Low), CIHigh: x(iv.High),
				Label: fmt.Sprintf("%s: %.2f (n=%d)", ss.Name, iv.Mean, iv.N), Mean: iv.Mean, Low: iv.Low, High: iv.High})
		}
		p.Height = len(p.Bars)*26 + 8
		plots = append(plots, p)
	}
	return page.Execute(w, struct {
		S     Summary
		Plots []plot
	}{s, plots})
}
