package eval

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"

	"golang.org/x/sync/errgroup"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/ratings"
)

// Figure is a statistic that may not be computable (too few pairs, no
// variance): NaN then, written as JSON null.
type Figure float64

// MarshalJSON writes NaN as null.
func (f Figure) MarshalJSON() ([]byte, error) {
	if math.IsNaN(float64(f)) || math.IsInf(float64(f), 0) {
		return []byte("null"), nil
	}
	return json.Marshal(float64(f))
}

// ExpertKappa is the experts' own agreement on overall quality (quadratic
// weighted kappa, the paper).
const ExpertKappa = 0.51

// Calibration systems, in the paper's order of overall quality.
var CalibrationOrder = []string{"muse", "note-high", "gpt-4", "note-average"}

// calibrationSystem names a released response_type.
func calibrationSystem(responseType string) string {
	switch t := strings.ToLower(responseType); {
	case t == "note_1_text" || t == "human-high":
		return "note-high"
	case t == "note_2_text" || t == "human-avg":
		return "note-average"
	case strings.Contains(t, "vanilla gpt-4") || t == "gpt-4":
		return "gpt-4"
	case strings.Contains(t, "ours") || t == "muse":
		return "muse"
	}
	return ""
}

// Rated is one released correction with its experts' labels.
type Rated struct {
	Post       Post
	System     string
	Correction string
	URLs       []string
	Overall    []int               // one per expert
	Credible   map[string][]string // URL → experts' credibility labels
	Reachable  map[string][]string // URL → experts' Yes/No
}

func normSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

func readCSVFile(path string) ([]map[string]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(rows) == 0 {
		return nil, fmt.Errorf("%s: empty", path)
	}
	var out []map[string]string
	for _, r := range rows[1:] {
		m := map[string]string{}
		for i, h := range rows[0] {
			if i < len(r) {
				m[h] = r[i]
			}
		}
		out = append(out, m)
	}
	return out, nil
}

// ReadCalibration reads the released expert ratings in dir
// (Q9-overall_quality.csv, Q8-reference_reachability.csv,
// Q8.1-reference_credibility.csv and posts.csv, joined by the
// whitespace-normalised correction text).
func ReadCalibration(dir string) ([]*Rated, error) {
	posts, err := readCSVFile(filepath.Join(dir, "posts.csv"))
	if err != nil {
		return nil, err
	}
	postOf := map[string]Post{}
	for _, p := range posts {
		postOf[normSpace(p["response_text"])] = Post{ID: p["post_tweet_id"], Post: postText(p["post_text"])}
	}
	q9, err := readCSVFile(filepath.Join(dir, "Q9-overall_quality.csv"))
	if err != nil {
		return nil, err
	}
	by := map[string]*Rated{}
	var order []*Rated
	for _, r := range q9 {
		key := normSpace(r["response_text"])
		rt := by[key]
		if rt == nil {
			p, ok := postOf[key]
			sys := calibrationSystem(r["response_type"])
			if !ok || sys == "" {
				continue
			}
			rt = &Rated{Post: p, System: sys, Correction: strings.TrimSpace(r["response_text"]), URLs: CitedURLs(r["response_text"]),
				Credible: map[string][]string{}, Reachable: map[string][]string{}}
			by[key] = rt
			order = append(order, rt)
		}
		n, err := strconv.Atoi(strings.TrimSpace(r["label"]))
		if err == nil && n >= 0 && n <= 10 {
			rt.Overall = append(rt.Overall, n)
		}
	}
	for file, put := range map[string]func(*Rated) map[string][]string{
		"Q8.1-reference_credibility.csv": func(r *Rated) map[string][]string { return r.Credible },
		"Q8-reference_reachability.csv":  func(r *Rated) map[string][]string { return r.Reachable },
	} {
		rows, err := readCSVFile(filepath.Join(dir, file))
		if err != nil {
			return nil, err
		}
		for _, row := range rows {
			if rt := by[normSpace(row["response_text"])]; rt != nil {
				u := strings.TrimSpace(row["url"])
				put(rt)[u] = append(put(rt)[u], strings.TrimSpace(row["label"]))
			}
		}
	}
	return order, nil
}

func postText(s string) pipeline.Post { return pipeline.Post{Text: strings.TrimSpace(s)} }

// TierAgreement is the publisher tiers of the cited URLs against the
// experts' credibility labels: no model, nothing fitted.
type TierAgreement struct {
	// Table counts (tier, expert label) pairs, one per expert rating.
	Table map[string]map[string]int `json:"table"`
	// Spearman between the tier (high 3, medium 2, low 1, excluded 0) and
	// the expert's label on its scale, over the rated publishers (tier
	// unrated and "Cant Determine" left out).
	Spearman Figure `json:"spearman"`
	N        int    `json:"n"`
	// HighShare is, per tier, the share of expert labels High or Very High.
	HighShare map[string]float64 `json:"high_share"`
	Unrated   int                `json:"unrated"`
}

var tierPoints = map[string]float64{"high": 3, "medium": 2, "low": 1, "excluded": 0}

// Tiers compares rater's tiers with the experts' credibility labels.
func Tiers(rs []*Rated, rater *ratings.Rater) TierAgreement {
	cred, _ := prompts.CriterionByKey("credibility")
	ta := TierAgreement{Table: map[string]map[string]int{}, HighShare: map[string]float64{}}
	var xs, ys []float64
	highs, all := map[string]int{}, map[string]int{}
	for _, r := range rs {
		for u, labels := range r.Credible {
			tier := string(rater.Rate(u).Tier)
			for _, l := range labels {
				if ta.Table[tier] == nil {
					ta.Table[tier] = map[string]int{}
				}
				ta.Table[tier][l]++
				y, ok := cred.Points(l)
				if !ok {
					continue
				}
				all[tier]++
				if l == "High" || l == "Very High" {
					highs[tier]++
				}
				x, rated := tierPoints[tier]
				if !rated {
					ta.Unrated++
					continue
				}
				xs, ys = append(xs, x), append(ys, y)
			}
		}
	}
	for t, n := range all {
		ta.HighShare[t] = float64(highs[t]) / float64(n)
	}
	ta.N = len(xs)
	ta.Spearman = Figure(Spearman(xs, ys))
	return ta
}

// JudgeAgreement is the judge against the experts on overall quality.
type JudgeAgreement struct {
	Model       string `json:"model,omitempty"`
	Corrections int    `json:"corrections"`
	// Kappa is the quadratic weighted kappa between the judge's score and
	// each expert's (one pair per expert rating), Spearman the same pairs'
	// rank correlation.
	Kappa       Figure             `json:"weighted_kappa"`
	Spearman    Figure             `json:"spearman"`
	Pairs       int                `json:"pairs"`
	ExpertKappa float64            `json:"expert_kappa"`
	JudgeMeans  map[string]float64 `json:"judge_means"`
	ExpertMeans map[string]float64 `json:"expert_means"`
	// OrderReproduced: the judge's means order the systems as the
	// paper's experts did (muse > note-high > gpt-4 > note-average).
	OrderReproduced bool `json:"order_reproduced"`
	// Credibility is the judge's per-reference credibility against the
	// experts' (weighted kappa on the five scored labels).
	CredibilityKappa Figure `json:"credibility_kappa"`
	CredibilityPairs int    `json:"credibility_pairs"`
	// Reachability is the fetcher's reachability now against the
	// experts' then (share agreeing), when links were fetched.
	ReachabilityAgreement float64 `json:"reachability_agreement"`
	ReachabilityPairs     int     `json:"reachability_pairs"`
	Failed                int     `json:"failed"`
}

// Judged is the judge's answer for each released correction, by its
// place in the corrections, with the cited pages as read.
type Judged struct {
	Judgements []*prompts.Judgement
	Pages      []map[string]*Page
}

// CalibrateJudge scores every released correction with the judge (pages
// read through reader, nil: none) and compares with the experts.
func CalibrateJudge(ctx context.Context, rs []*Rated, judge *Judge, reader *Reader, parallel int, progress io.Writer) JudgeAgreement {
	return Agree(rs, ScoreReleased(ctx, rs, judge, reader, parallel, progress), nil)
}

// ScoreReleased asks the judge about every released correction.
func ScoreReleased(ctx context.Context, rs []*Rated, judge *Judge, reader *Reader, parallel int, progress io.Writer) Judged {
	out := Judged{Judgements: make([]*prompts.Judgement, len(rs)), Pages: make([]map[string]*Page, len(rs))}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(max(parallel, 1))
	var mu sync.Mutex
	done := 0
	for i, r := range rs {
		g.Go(func() error {
			o := Output{Text: r.Correction, URLs: r.URLs}
			m, texts := Measure(gctx, o, nil, reader)
			pages := map[string]*Page{}
			for _, l := range m.Links {
				pages[l.URL] = l.Page
			}
			jd, _, err := judge.Score(gctx, r.Post, r.Correction, r.URLs, texts, pages)
			mu.Lock()
			defer mu.Unlock()
			out.Pages[i] = pages
			if err == nil {
				out.Judgements[i] = &jd
			}
			done++
			if progress != nil {
				fmt.Fprintf(progress, "calibrate: %d/%d judged (%s)\n", done, len(rs), judge.Model())
			}
			return nil
		})
	}
	_ = g.Wait()
	return out
}

// InSplit reports whether a released correction is in the split a choice
// among judges is made on: half the posts, by a hash of the post's ID, so
// all four corrections of a post fall on the same side.
func InSplit(r *Rated) bool {
	h := fnv.New32a()
	h.Write([]byte(r.Post.ID))
	return h.Sum32()%2 == 0
}

// Agree compares the judge's answers with the experts' labels over the
// corrections keep accepts (nil: all).
func Agree(rs []*Rated, jd Judged, keep func(*Rated) bool) JudgeAgreement {
	a := JudgeAgreement{ExpertKappa: ExpertKappa, JudgeMeans: map[string]float64{}, ExpertMeans: map[string]float64{}}
	cred, _ := prompts.CriterionByKey("credibility")
	var ja, ea []int
	var jf, ef []float64
	var ca, cb []int
	js, es := map[string][]float64{}, map[string][]float64{}
	agree, pairs := 0, 0
	for i, r := range rs {
		if keep != nil && !keep(r) {
			continue
		}
		a.Corrections++
		for _, e := range r.Overall {
			es[r.System] = append(es[r.System], float64(e))
		}
		for u, labels := range r.Reachable {
			if pg := jd.Pages[i][u]; pg != nil {
				for _, l := range labels {
					pairs++
					if (l == "Yes") == pg.Reachable {
						agree++
					}
				}
			}
		}
		if jd.Judgements[i] == nil {
			a.Failed++
			continue
		}
		jo, ok := jd.Judgements[i].Scores[prompts.Overall]
		if !ok {
			a.Failed++
			continue
		}
		js[r.System] = append(js[r.System], jo)
		for _, e := range r.Overall {
			ja, ea = append(ja, int(math.Round(jo))), append(ea, e)
			jf, ef = append(jf, jo), append(ef, float64(e))
		}
		for k, u := range r.URLs {
			jc, ok := jd.Judgements[i].References[k]["credibility"]
			if !ok {
				continue
			}
			for _, l := range r.Credible[u] {
				if y, ok := cred.Points(l); ok {
					ca, cb = append(ca, int(jc)), append(cb, int(y))
				}
			}
		}
	}
	a.Kappa, a.Spearman, a.Pairs = Figure(WeightedKappa(ja, ea, 0, 10)), Figure(Spearman(jf, ef)), len(ja)
	a.CredibilityKappa, a.CredibilityPairs = Figure(WeightedKappa(ca, cb, 0, 4)), len(ca)
	if pairs > 0 {
		a.ReachabilityAgreement, a.ReachabilityPairs = float64(agree)/float64(pairs), pairs
	}
	for s, xs := range js {
		a.JudgeMeans[s] = mean(xs)
	}
	for s, xs := range es {
		a.ExpertMeans[s] = mean(xs)
	}
	a.OrderReproduced = ordered(a.JudgeMeans)
	return a
}

// ordered reports whether means rank the calibration systems in the
// paper's order, strictly.
func ordered(means map[string]float64) bool {
	var got []string
	for s := range means {
		got = append(got, s)
	}
	if len(got) != len(CalibrationOrder) {
		return false
	}
	sort.SliceStable(got, func(i, j int) bool { return means[got[i]] > means[got[j]] })
	for i := range got {
		if got[i] != CalibrationOrder[i] || (i > 0 && means[got[i]] == means[got[i-1]]) {
			return false
		}
	}
	return true
}

// Choice is a judge chosen among several: each candidate's agreement on the
// split the choice is made on (InSplit), the one with the highest weighted
// kappa there, and its agreement on the other split, which the choice did
// not see: the figure to report.
type Choice struct {
	Candidates []JudgeAgreement `json:"candidates"`
	Chosen     string           `json:"chosen"`
	HeldOut    JudgeAgreement   `json:"held_out"`
}

// Choose picks among the judges' answers (by model, in the order given).
func Choose(rs []*Rated, models []string, judged map[string]Judged) Choice {
	var c Choice
	best := math.Inf(-1)
	for _, m := range models {
		a := Agree(rs, judged[m], InSplit)
		a.Model = m
		c.Candidates = append(c.Candidates, a)
		if k := float64(a.Kappa); !math.IsNaN(k) && k > best {
			best, c.Chosen = k, m
		}
	}
	if c.Chosen == "" && len(models) > 0 {
		c.Chosen = models[0]
	}
	c.HeldOut = Agree(rs, judged[c.Chosen], func(r *Rated) bool { return !InSplit(r) })
	c.HeldOut.Model = c.Chosen
	return c
}

// MeasureReleased is the deterministic measures of the released
// corrections, by system (the links fetched through reader; nil: not
// fetched), summarised as a run's results are.
func MeasureReleased(ctx context.Context, rs []*Rated, rater *ratings.Rater, reader *Reader) Summary {
	var results []Result
	for _, r := range rs {
		o := Output{Text: r.Correction, URLs: r.URLs}
		if d := lang.Detect(r.Post.Post.Text); d.Reliable {
			o.Language = d.Code
		}
		m, _ := Measure(ctx, o, rater, reader)
		results = append(results, Result{PostID: r.Post.ID + "/" + r.System, System: r.System, Kind: KindFile, Status: StatusDone, Measures: &m})
	}
	// In the paper's order.
	sort.SliceStable(results, func(i, j int) bool {
		return slices.Index(CalibrationOrder, results[i].System) < slices.Index(CalibrationOrder, results[j].System)
	})
	return Summarise(results)
}
