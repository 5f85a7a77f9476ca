package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
)

// labelledFile is JSON Lines of w check-worthy and o ordinary posts.
func labelledFile(w, o int) string {
	var b strings.Builder
	for i := range w {
		fmt.Fprintf(&b, "{\"text\": \"The deficit grew by %d billion dollars\", \"worthy\": true}\n", i+1)
	}
	for i := range o {
		fmt.Fprintf(&b, "{\"text\": \"Good morning, %s of the holidays\", \"worthy\": false}\n\n", strings.Repeat("and again ", i+1))
	}
	return b.String()
}

func TestReadLabelled(t *testing.T) {
	ps, err := ReadLabelled(strings.NewReader(labelledFile(10, 12)))
	if err != nil {
		t.Fatal(err)
	}
	if len(ps) != 22 || !ps[0].Worthy || ps[0].Line != 1 || ps[10].Worthy || ps[10].Line != 11 || ps[11].Line != 13 {
		t.Fatalf("read %d posts: first %+v, 11th %+v, 12th %+v", len(ps), ps[0], ps[10], ps[11])
	}
	for _, tc := range []struct{ file, want string }{
		{labelledFile(10, 10) + "{\"text\": \"hello\", \"worthy\": \"yes\"}\n", "line 31"},
		{"{\"text\": \"hello\", \"worthy\": true}\nnot json\n" + labelledFile(10, 10), "line 2: not a JSON object"},
		{"{\"text\": \"hello\"}\n" + labelledFile(10, 10), "line 1: no \"worthy\""},
		{"{\"worthy\": false}\n" + labelledFile(10, 10), "line 1: no \"text\""},
		{"{\"text\": \"hello\", \"worthy\": true, \"label\": 1}\n" + labelledFile(10, 10), "line 1: not a JSON object"},
		{"{\"text\": \"a\", \"worthy\": true} {\"text\": \"b\", \"worthy\": true}\n" + labelledFile(10, 10), "line 1: more than one"},
		{labelledFile(9, 30), "9 check-worthy and 30 ordinary posts: at least 10 of each"},
		{labelledFile(30, 3), "30 check-worthy and 3 ordinary posts: at least 10 of each"},
		{"", "0 check-worthy and 0 ordinary"},
	} {
		if _, err := ReadLabelled(strings.NewReader(tc.file)); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%.60q…: error %v, want %q", tc.file, err, tc.want)
		}
	}
}

// posts makes labelled posts with the scores given, worthy first.
func scored(worthy, ordinary []float64) ([]Labelled, []float64) {
	var ps []Labelled
	var scores []float64
	for i, s := range worthy {
		ps, scores = append(ps, Labelled{Text: fmt.Sprint("w", i), Worthy: true}), append(scores, s)
	}
	for i, s := range ordinary {
		ps, scores = append(ps, Labelled{Text: fmt.Sprint("o", i)}), append(scores, s)
	}
	return ps, scores
}

func all(n int) []int {
	idx := make([]int, n)
	for i := range idx {
		idx[i] = i
	}
	return idx
}

// TestMeasureByHand: 3 worthy and 4 ordinary posts; at 0.6, the worthy at
// 0.9 and 0.6 and the ordinary at 0.7 are flagged.
func TestMeasureByHand(t *testing.T) {
	ps, scores := scored([]float64{0.9, 0.6, 0.2}, []float64{0.7, 0.5, 0.1, 0.59})
	f := Measure(ps, scores, all(len(ps)), 0.6)
	want := Figures{Threshold: 0.6, Posts: 7, TP: 2, FP: 1, FN: 1, TN: 3, Precision: 2.0 / 3, Recall: 2.0 / 3, F1: 2.0 / 3}
	if math.Abs(f.F1-want.F1) > 1e-12 {
		t.Errorf("F1 %v, want %v", f.F1, want.F1)
	}
	f.F1 = want.F1
	if f != want {
		t.Errorf("%+v, want %+v", f, want)
	}
	if f := Measure(ps, scores, all(len(ps)), 0.95); f.TP != 0 || f.Precision != 0 || f.Recall != 0 || f.F1 != 0 || f.TN != 4 || f.FN != 3 {
		t.Errorf("nothing flagged: %+v", f)
	}
}

// TestChooseTiesToHigher: worthy {0.9, 0.5}, ordinary {0.6, 0.55}: 0.9
// (P 1, R 1/2) and 0.5 (P 1/2, R 1) both have F1 2/3, above 0.6's and
// 0.55's (1/2 and 2/5); the higher wins.
func TestChooseTiesToHigher(t *testing.T) {
	ps, scores := scored([]float64{0.9, 0.5}, []float64{0.6, 0.55})
	if f := Choose(ps, scores, all(4)); f.Threshold != 0.9 || math.Abs(f.F1-2.0/3) > 1e-12 {
		t.Errorf("chose %+v, want 0.9 with F1 2/3", f)
	}
	// Without the tie, the best F1 wins even though it is lower: the worthy
	// at 0.5 becomes 0.56, so 0.56 (P 2/3, R 1, F1 0.8) beats 0.9.
	scores[1] = 0.56
	if f := Choose(ps, scores, all(4)); f.Threshold != 0.56 || math.Abs(f.F1-0.8) > 1e-12 {
		t.Errorf("chose %+v, want 0.56 with F1 0.8", f)
	}
}

// TestHalvesStratifiedAndStable: each label is split evenly (one more at
// most), the halves do not depend on the order of the file, and every
// post is in exactly one half.
func TestHalvesStratifiedAndStable(t *testing.T) {
	var ps []Labelled
	for i := range 23 {
		ps = append(ps, Labelled{Text: fmt.Sprintf("Claim %d about the budget", i), Worthy: true})
	}
	for i := range 15 {
		ps = append(ps, Labelled{Text: fmt.Sprintf("Post %d about lunch", i)})
	}
	texts := func(ps []Labelled, idx []int) []string {
		var out []string
		for _, i := range idx {
			out = append(out, ps[i].Text)
		}
		slices.Sort(out)
		return out
	}
	a, b := Halves(ps)
	if len(a)+len(b) != len(ps) {
		t.Fatalf("halves of %d and %d posts from %d", len(a), len(b), len(ps))
	}
	seen := map[int]bool{}
	for _, i := range append(append([]int(nil), a...), b...) {
		if seen[i] {
			t.Fatalf("post %d in both halves", i)
		}
		seen[i] = true
	}
	count := func(idx []int, worthy bool) int {
		n := 0
		for _, i := range idx {
			if ps[i].Worthy == worthy {
				n++
			}
		}
		return n
	}
	for _, w := range []bool{true, false} {
		if d := count(a, w) - count(b, w); d < 0 || d > 1 {
			t.Errorf("worthy=%v: %d and %d posts in the halves", w, count(a, w), count(b, w))
		}
	}
	// The split is not the file's order: neither the first posts of each
	// label nor every other one.
	if slices.Equal(a[:12], all(12)) || slices.Equal(a[:12], []int{0, 2, 4, 6, 8, 10, 12, 14, 16, 18, 20, 22}) {
		t.Errorf("the first half follows the file's order: %v", a)
	}
	wantA, wantB := texts(ps, a), texts(ps, b)
	for range 5 {
		sh := slices.Clone(ps)
		rand.Shuffle(len(sh), func(i, j int) { sh[i], sh[j] = sh[j], sh[i] })
		a, b := Halves(sh)
		if !slices.Equal(texts(sh, a), wantA) || !slices.Equal(texts(sh, b), wantB) {
			t.Fatal("the same posts in another order are split another way")
		}
	}
}

// batchScorer scores a post 0.9 when it holds a figure, else 0.1, and
// records the size of each call; failAt makes that call (1-based) fail,
// leaveOut makes every answer leave out that post of the batch.
type batchScorer struct {
	sizes    []int
	failAt   int
	leaveOut int
}

func (s *batchScorer) Worthiness(_ context.Context, texts []string) ([]prompts.WorthinessScore, pipeline.CallUsage, error) {
	s.sizes = append(s.sizes, len(texts))
	if len(s.sizes) == s.failAt {
		return nil, pipeline.CallUsage{}, errors.New("the model's server answered 500")
	}
	out := make([]prompts.WorthinessScore, len(texts))
	for i, t := range texts {
		out[i] = prompts.WorthinessScore{Score: 0.1, OK: true}
		if strings.ContainsAny(t, "0123456789") {
			out[i].Score = 0.9
		}
	}
	if s.leaveOut > 0 {
		out[s.leaveOut-1].OK = false
	}
	return out, pipeline.CallUsage{}, nil
}

func TestScoreAll(t *testing.T) {
	ps, err := ReadLabelled(strings.NewReader(labelledFile(25, 20)))
	if err != nil {
		t.Fatal(err)
	}
	s := &batchScorer{}
	scores, err := ScoreAll(context.Background(), s, ps, 20)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(s.sizes, []int{20, 20, 5}) || len(scores) != 45 || scores[0] != 0.9 || scores[44] != 0.1 {
		t.Errorf("calls of %v posts, scores %v", s.sizes, scores)
	}
	// The ordinary posts are on every other line from line 26.
	if _, err := ScoreAll(context.Background(), &batchScorer{failAt: 2}, ps, 20); err == nil ||
		!strings.Contains(err.Error(), "batch 2 (lines 21–54)") || !strings.Contains(err.Error(), "500") {
		t.Errorf("a failed call: %v", err)
	}
	if _, err := ScoreAll(context.Background(), &batchScorer{leaveOut: 3}, ps, 20); err == nil ||
		!strings.Contains(err.Error(), "batch 1 (lines 1–20)") || !strings.Contains(err.Error(), "left out the post of line 3") {
		t.Errorf("a post left out: %v", err)
	}
}

// TestCalibrateFolds: each fold's threshold is chosen on one half and
// measured on the other, with the default beside it.
func TestCalibrateFolds(t *testing.T) {
	ps, err := ReadLabelled(strings.NewReader(labelledFile(10, 10)))
	if err != nil {
		t.Fatal(err)
	}
	scores, err := ScoreAll(context.Background(), &batchScorer{}, ps, 20)
	if err != nil {
		t.Fatal(err)
	}
	c, err := Calibrate(ps, scores)
	if err != nil {
		t.Fatal(err)
	}
	if c.Posts != 20 || c.Worthy != 10 || c.Ordinary != 10 || len(c.Folds) != 2 || c.Suggested != "--threshold 0.9" {
		t.Fatalf("%+v", c)
	}
	for _, f := range c.Folds {
		if f.Tuning.Threshold != 0.9 || f.HeldOut.Posts != 10 || f.HeldOut.TP != 5 || f.HeldOut.TN != 5 || f.HeldOut.F1 != 1 ||
			f.Default.Threshold != DefaultThreshold || f.Default.F1 != 1 || f.Tuning.Posts != 10 {
			t.Errorf("fold %+v", f)
		}
	}
	if c.Folds[0].ChosenOn != "first half" || c.Folds[1].ChosenOn != "second half" || c.Folds[1].Reported != "first half" {
		t.Errorf("folds %+v", c.Folds)
	}
	if _, err := Calibrate(ps, scores[1:]); err == nil {
		t.Error("scores missing: no error")
	}
}
