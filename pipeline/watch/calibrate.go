package watch

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"slices"
	"strconv"
	"strings"
)

// MinPerLabel is the fewest posts of each label Calibrate takes: with
// fewer, each half holds too few to choose a threshold on or to report.
const MinPerLabel = 10

// Labelled is one post of a calibration file: its text, whether the
// newsroom deems it check-worthy, and its line in the file.
type Labelled struct {
	Text   string
	Worthy bool
	Line   int
}

// ReadLabelled reads JSON Lines {"text": "…", "worthy": true|false}; blank
// lines are skipped. A line that is not such an object is an error naming
// the line, and so is a file with fewer than MinPerLabel posts of either
// label.
func ReadLabelled(r io.Reader) ([]Labelled, error) {
	var out []Labelled
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 64*1024), 4<<20)
	n := 0
	for sc.Scan() {
		n++
		line := bytes.TrimSpace(sc.Bytes())
		if len(line) == 0 {
			continue
		}
		var row struct {
			Text   *string `json:"text"`
			Worthy *bool   `json:"worthy"`
		}
		dec := json.NewDecoder(bytes.NewReader(line))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&row); err != nil {
			return nil, fmt.Errorf("line %d: not a JSON object {\"text\": \"…\", \"worthy\": true|false}: %v", n, err)
		}
		switch {
		case dec.More():
			return nil, fmt.Errorf("line %d: more than one JSON value on the line", n)
		case row.Text == nil || strings.TrimSpace(*row.Text) == "":
			return nil, fmt.Errorf("line %d: no \"text\"", n)
		case row.Worthy == nil:
			return nil, fmt.Errorf("line %d: no \"worthy\" (true or false)", n)
		}
		out = append(out, Labelled{Text: *row.Text, Worthy: *row.Worthy, Line: n})
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", n+1, err)
	}
	worthy := 0
	for _, p := range out {
		if p.Worthy {
			worthy++
		}
	}
	if worthy < MinPerLabel || len(out)-worthy < MinPerLabel {
		return nil, fmt.Errorf("%d check-worthy and %d ordinary posts: at least %d of each are needed, half to choose the threshold on and half to report it on",
			worthy, len(out)-worthy, MinPerLabel)
	}
	return out, nil
}

// ScoreAll scores every post's check-worthiness with s, batch posts a
// call, as muse watch does. A failed call, or an answer that leaves a
// post out, is an error naming the batch's lines: no post is dropped.
func ScoreAll(ctx context.Context, s Scorer, ps []Labelled, batch int) ([]float64, error) {
	if batch <= 0 {
		batch = 20
	}
	out := make([]float64, 0, len(ps))
	for i := 0; i < len(ps); i += batch {
		part := ps[i:min(i+batch, len(ps))]
		texts := make([]string, len(part))
		for k, p := range part {
			texts[k] = p.Text
		}
		name := fmt.Sprintf("batch %d (lines %d–%d)", i/batch+1, part[0].Line, part[len(part)-1].Line)
		ws, _, err := s.Worthiness(ctx, texts)
		if err != nil {
			return nil, fmt.Errorf("score %s: %w", name, err)
		}
		if len(ws) != len(part) {
			return nil, fmt.Errorf("score %s: %d scores for %d posts", name, len(ws), len(part))
		}
		for k, w := range ws {
			if !w.OK {
				return nil, fmt.Errorf("score %s: the model's answer left out the post of line %d", name, part[k].Line)
			}
			out = append(out, w.Score)
		}
	}
	return out, nil
}

// Halves splits the posts in two, stratified by label: within each label
// the posts are ordered by a hash of their text and dealt alternately to
// the first half and the second, so each half holds half of each label
// (one more at most) and a rerun, or the same posts in another order,
// splits them the same way. It returns the posts' indices.
func Halves(ps []Labelled) (first, second []int) {
	for _, worthy := range []bool{true, false} {
		var idx []int
		for i, p := range ps {
			if p.Worthy == worthy {
				idx = append(idx, i)
			}
		}
		key := map[int]uint64{}
		for _, i := range idx {
			h := fnv.New64a()
			h.Write([]byte(ps[i].Text))
			key[i] = h.Sum64()
		}
		slices.SortFunc(idx, func(a, b int) int {
			return cmp.Or(cmp.Compare(key[a], key[b]), strings.Compare(ps[a].Text, ps[b].Text))
		})
		for k, i := range idx {
			if k%2 == 0 {
				first = append(first, i)
			} else {
				second = append(second, i)
			}
		}
	}
	slices.Sort(first)
	slices.Sort(second)
	return first, second
}

// Figures are how a threshold sorts some posts: a post is flagged when its
// score is at least the threshold; the counts against the labels, and
// precision, recall and F1 of "worthy" (0 where the division is by zero).
type Figures struct {
	Threshold float64 `json:"threshold"`
	Posts     int     `json:"posts"`
	TP        int     `json:"true_positives"`
	FP        int     `json:"false_positives"`
	FN        int     `json:"false_negatives"`
	TN        int     `json:"true_negatives"`
	Precision float64 `json:"precision"`
	Recall    float64 `json:"recall"`
	F1        float64 `json:"f1"`
}

// Measure is the figures of threshold t over the posts idx names.
func Measure(ps []Labelled, scores []float64, idx []int, t float64) Figures {
	f := Figures{Threshold: t, Posts: len(idx)}
	for _, i := range idx {
		flagged := scores[i] >= t
		switch {
		case flagged && ps[i].Worthy:
			f.TP++
		case flagged:
			f.FP++
		case ps[i].Worthy:
			f.FN++
		default:
			f.TN++
		}
	}
	if f.TP+f.FP > 0 {
		f.Precision = float64(f.TP) / float64(f.TP+f.FP)
	}
	if f.TP+f.FN > 0 {
		f.Recall = float64(f.TP) / float64(f.TP+f.FN)
	}
	if f.Precision+f.Recall > 0 {
		f.F1 = 2 * f.Precision * f.Recall / (f.Precision + f.Recall)
	}
	return f
}

// Choose is the threshold, among the scores of the posts idx names, with
// the highest F1 of "worthy" over those posts; of thresholds with equal
// F1, the highest (fewer posts queued for the same F1).
func Choose(ps []Labelled, scores []float64, idx []int) Figures {
	var best Figures
	found := false
	for _, i := range idx {
		f := Measure(ps, scores, idx, scores[i])
		if !found || f.F1 > best.F1 || (f.F1 == best.F1 && f.Threshold > best.Threshold) {
			best, found = f, true
		}
	}
	return best
}

// Fold is a threshold chosen on one half and reported on the other.
type Fold struct {
	ChosenOn string  `json:"chosen_on"`   // "first half" or "second half"
	Tuning   Figures `json:"tuning"`      // on the half it was chosen on
	HeldOut  Figures `json:"held_out"`    // the same threshold on the other half
	Default  Figures `json:"default"`     // DefaultThreshold on the other half
	Flag     string  `json:"flag"`        // "--threshold 0.62"
	Reported string  `json:"reported_on"` // the other half
}

// Calibration is Calibrate's report.
type Calibration struct {
	Posts    int    `json:"posts"`
	Worthy   int    `json:"worthy"`
	Ordinary int    `json:"ordinary"`
	Folds    []Fold `json:"folds"` // chosen on the first half, then on the second
	// Suggested is the first fold's flag: chosen on the first half, with
	// its figure out of sample on the second; the second fold shows how
	// much the choice and its figure move with the split.
	Suggested string `json:"suggested"`
}

// Calibrate chooses muse watch's --threshold on the posts' scores: on each
// half of Halves, reported on the other.
func Calibrate(ps []Labelled, scores []float64) (Calibration, error) {
	if len(scores) != len(ps) {
		return Calibration{}, errors.New("a score for every post is needed")
	}
	c := Calibration{Posts: len(ps)}
	for _, p := range ps {
		if p.Worthy {
			c.Worthy++
		}
	}
	c.Ordinary = c.Posts - c.Worthy
	a, b := Halves(ps)
	for _, h := range [][2][]int{{a, b}, {b, a}} {
		tune := Choose(ps, scores, h[0])
		f := Fold{Tuning: tune, HeldOut: Measure(ps, scores, h[1], tune.Threshold),
			Default: Measure(ps, scores, h[1], DefaultThreshold), Flag: ThresholdFlag(tune.Threshold)}
		f.ChosenOn, f.Reported = "first half", "second half"
		if len(c.Folds) == 1 {
			f.ChosenOn, f.Reported = f.Reported, f.ChosenOn
		}
		c.Folds = append(c.Folds, f)
	}
	c.Suggested = c.Folds[0].Flag
	return c, nil
}

// ThresholdFlag is muse watch's flag for threshold t.
func ThresholdFlag(t float64) string {
	return "--threshold " + strconv.FormatFloat(t, 'f', -1, 64)
}
