package cli

import (
	"bufio"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"unicode"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/pipeline/watch"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// publicMatters are words naming a public matter, for worthinessRule.
var publicMatters = map[string]bool{"president": true, "governor": true, "senate": true, "senator": true, "congress": true,
	"tax": true, "taxes": true, "budget": true, "election": true, "economy": true, "vaccine": true, "health": true,
	"government": true, "federal": true, "state": true, "law": true, "obama": true, "trump": true, "clinton": true,
	"immigration": true, "jobs": true, "unemployment": true, "medicare": true, "deficit": true, "debt": true, "wages": true}

// worthinessRule is the fake model's check-worthiness of a post: 0.9 with
// a figure, 0.75 naming a public matter, 0.4 naming someone or somewhere
// (a capitalised word within a sentence), else 0.15.
func worthinessRule(text string) float64 {
	if strings.ContainsAny(text, "0123456789") {
		return 0.9
	}
	score := 0.15
	words := strings.Fields(text)
	for i, w := range words {
		bare := strings.TrimSuffix(strings.Trim(w, ".,!?;:'\"()"), "'s")
		if publicMatters[strings.ToLower(bare)] {
			return 0.75
		}
		if i > 0 && bare != "" && bare != "I" && unicode.IsUpper([]rune(bare)[0]) && !strings.ContainsAny(words[i-1], ".!?") {
			score = 0.4
		}
	}
	return score
}

var postRe = regexp.MustCompile(`(?s)<<<BEGIN POST (\d+)>>>\n(.*?)\n<<<END POST \d+>>>`)

// worthinessServer is an OpenAI-compatible model answering muse's
// worthiness prompt by worthinessRule, as real models do: its reasoning
// first, then prose and the JSON in a fence. It records how many posts
// each call held.
func worthinessServer(t *testing.T, sizes *[]int) *llmtest.Server {
	return llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		if llmtest.SchemaName(req) != "worthiness" {
			return "", fmt.Errorf("not a worthiness call: %q", llmtest.SchemaName(req))
		}
		var items []map[string]any
		for _, m := range postRe.FindAllStringSubmatch(llmtest.LastUser(req), -1) {
			var n int
			fmt.Sscan(m[1], &n)
			items = append(items, map[string]any{"n": n, "score": worthinessRule(m[2]), "reason": "by the rule"})
		}
		*sizes = append(*sizes, len(items))
		b, _ := json.MarshalIndent(map[string]any{"posts": items}, "", "  ")
		return "<think>Scoring each post.</think>Here are the scores:\n```json\n" + string(b) + "\n```", nil
	})
}

// calibrateEnv configures the model at srv (the response cache off, so
// every score reaches it).
func calibrateEnv(t *testing.T, srv *llmtest.Server) {
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL)
	t.Setenv("OPENAI_API_KEY", "sk-test-key")
	t.Setenv("MUSE_MODEL", "test-model")
	t.Setenv("MUSE_NO_CACHE", "1")
}

// writeLabelled writes posts as the JSON Lines calibrate reads.
func writeLabelled(t *testing.T, worthy, ordinary []string) string {
	t.Helper()
	var b strings.Builder
	for _, s := range worthy {
		l, _ := json.Marshal(map[string]any{"text": s, "worthy": true})
		b.Write(append(l, '\n'))
	}
	for _, s := range ordinary {
		l, _ := json.Marshal(map[string]any{"text": s, "worthy": false})
		b.Write(append(l, '\n'))
	}
	p := filepath.Join(t.TempDir(), "posts.jsonl")
	if err := os.WriteFile(p, []byte(b.String()), 0o600); err != nil {
		t.Fatal(err)
	}
	return p
}

// The tiny file: 10 check-worthy posts, 8 with a figure (0.9) and 2 naming
// a public matter (0.75); 10 ordinary ones, 2 with a figure, 4 naming a
// public matter, 4 neither (0.15).
var (
	tinyWorthy = []string{
		"Unemployment fell to 3.9% in April",
		"The city spent 4 million dollars on the new stadium, officials said.",
		"Crime rose 12 percent last year in Chicago, officials said.",
		"Over 40,000 people died in road accidents in 2021",
		"Texas executed 13 prisoners in 2022.",
		"The minimum wage has not risen since 2009, officials said.",
		"Half of Americans, 50 percent, have no savings.",
		"The new bill cuts 2 billion from school budgets, officials said.",
		"The governor cut funding for every rural hospital, officials said.",
		"The senate voted to end the child credit for families",
	}
	tinyOrdinary = []string{
		"Ran 5 km this morning before work!",
		"Only 3 more sleeps until my holiday.",
		"I think the president looks tired lately :)",
		"Election ads are so annoying, switch the channel.",
		"Tax season makes me want to hide under a blanket :)",
		"Who else thinks the economy talk on TV is boring? :)",
		"Good morning everyone, have a lovely day.",
		"Just made pancakes for the kids :)",
		"Happy birthday to my best friend!!",
		"This coffee is too strong.",
	}
)

// TestWatchCalibrateByHand: on the tiny file, each half holds 4 worthy
// posts at 0.9 and 1 at 0.75, 1 ordinary at 0.9, 2 at 0.75 and 2 at 0.15
// (checked first). On a half: 0.9 flags 4 worthy and 1 ordinary (P 4/5,
// R 4/5, F1 0.8); 0.75 flags 5 and 3 (P 5/8, R 1, F1 10/13); 0.15 flags all
// (P 1/2, F1 2/3). So 0.9 is chosen on either half, with P, R and F1 0.8 on
// the other, and the default 0.7 flags as 0.75 does there: P 0.625, R 1.
func TestWatchCalibrateByHand(t *testing.T) {
	isolate(t)
	var sizes []int
	srv := worthinessServer(t, &sizes)
	calibrateEnv(t, srv)
	file := writeLabelled(t, tinyWorthy, tinyOrdinary)

	f, _ := os.Open(file)
	ps, err := watch.ReadLabelled(f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	a, b := watch.Halves(ps)
	for _, half := range [][]int{a, b} {
		n := map[string]int{}
		for _, i := range half {
			n[fmt.Sprint(ps[i].Worthy, worthinessRule(ps[i].Text))]++
		}
		if want := map[string]int{"true 0.9": 4, "true 0.75": 1, "false 0.9": 1, "false 0.75": 2, "false 0.15": 2}; fmt.Sprint(n) != fmt.Sprint(want) {
			t.Fatalf("the fixture is no longer split as the hand count says: a half holds %v", n)
		}
	}

	out, errOut, code := run(t, "watch", "calibrate", file, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c watch.Calibration
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v: %s", err, out)
	}
	if len(sizes) != 1 || sizes[0] != 20 {
		t.Errorf("model calls of %v posts, want one of 20", sizes)
	}
	near := func(x, y float64) bool { return math.Abs(x-y) < 1e-9 }
	if c.Posts != 20 || c.Worthy != 10 || c.Ordinary != 10 || len(c.Folds) != 2 || c.Suggested != "--threshold 0.9" {
		t.Fatalf("report %s", out)
	}
	for _, fd := range c.Folds {
		h, d := fd.HeldOut, fd.Default
		if fd.Tuning.Threshold != 0.9 || !near(fd.Tuning.F1, 0.8) || h.Threshold != 0.9 || h.Posts != 10 ||
			h.TP != 4 || h.FP != 1 || h.FN != 1 || h.TN != 4 || !near(h.Precision, 0.8) || !near(h.Recall, 0.8) || !near(h.F1, 0.8) {
			t.Errorf("chosen on the %s: %+v", fd.ChosenOn, fd)
		}
		if d.Threshold != 0.7 || d.TP != 5 || d.FP != 3 || d.FN != 0 || d.TN != 2 || !near(d.Precision, 0.625) || !near(d.Recall, 1) || !near(d.F1, 10.0/13) {
			t.Errorf("the default on the %s: %+v", fd.Reported, d)
		}
	}
	// The text report says the same; a rerun in smaller batches, the posts
	// in another order, gives the same report.
	sizes = nil
	file = writeLabelled(t, backwards(tinyWorthy), backwards(tinyOrdinary))
	out, errOut, code = run(t, "watch", "calibrate", file, "--batch-size", "7")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if fmt.Sprint(sizes) != "[7 7 6]" {
		t.Errorf("model calls of %v posts, want 7, 7, 6", sizes)
	}
	for _, want := range []string{
		"20 posts scored by test-model: 10 check-worthy, 10 ordinary",
		"Chosen on the first half (10 posts, F1 0.80 there), reported on the second half (10 posts):",
		"--threshold 0.9              precision 0.80 (4/5)  recall 0.80 (4/5)  F1 0.80",
		"--threshold 0.7 (default)    precision 0.62 (5/8)  recall 1.00 (5/5)  F1 0.77",
		"Chosen on the second half (10 posts, F1 0.80 there), reported on the first half (10 posts):",
		"Suggested: muse watch --enqueue --threshold 0.9",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text report lacks %q:\n%s", want, out)
		}
	}
}

// backwards is a reversed copy of s.
func backwards(s []string) []string {
	s = slices.Clone(s)
	slices.Reverse(s)
	return s
}

// TestWatchCalibrateLiarPlus: 40 claims PolitiFact checked (LIAR-PLUS's
// test split) against the 40 ordinary posts of testdata, scored by the
// rule's model in batches of 20. The report's held-out counts are those of
// the rule over the other half: every worthy post of a half is a true
// positive or a false negative, each half holds 20 claims and 20 ordinary
// posts, and each fold's threshold is the rule's score with the best F1 on
// its half, which the test finds by counting.
func TestWatchCalibrateLiarPlus(t *testing.T) {
	isolate(t)
	f, err := os.Open(filepath.Join(testkit.SharedData(t, "liar-plus"), "test2.tsv"))
	if err != nil {
		t.Fatal(err)
	}
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	var claims []string
	for len(claims) < 40 {
		row, err := r.Read()
		if err != nil {
			t.Fatal(err)
		}
		if len(row) > 3 && strings.TrimSpace(row[3]) != "" {
			claims = append(claims, strings.TrimSpace(row[3]))
		}
	}
	f.Close()
	var ordinary []string
	of, err := os.Open(filepath.Join("testdata", "ordinary_posts.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	sc := bufio.NewScanner(of)
	for sc.Scan() {
		var p struct{ Text string }
		if err := json.Unmarshal(sc.Bytes(), &p); err != nil {
			t.Fatal(err)
		}
		ordinary = append(ordinary, p.Text)
	}
	of.Close()
	var sizes []int
	calibrateEnv(t, worthinessServer(t, &sizes))
	file := writeLabelled(t, claims, ordinary)
	out, errOut, code := run(t, "watch", "calibrate", file, "--json")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var c watch.Calibration
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if fmt.Sprint(sizes) != "[20 20 20 20]" {
		t.Errorf("model calls of %v posts", sizes)
	}
	// The best threshold of a half by counting, ties to the higher.
	ps := make([]watch.Labelled, 0, 100)
	for _, s := range claims {
		ps = append(ps, watch.Labelled{Text: s, Worthy: true})
	}
	for _, s := range ordinary {
		ps = append(ps, watch.Labelled{Text: s})
	}
	a, b := watch.Halves(ps)
	count := func(half []int, th float64) (tp, fp, fn int) {
		for _, i := range half {
			flagged := worthinessRule(ps[i].Text) >= th
			switch {
			case flagged && ps[i].Worthy:
				tp++
			case flagged:
				fp++
			case ps[i].Worthy:
				fn++
			}
		}
		return
	}
	best := func(half []int) float64 {
		bestT, bestF1 := -1.0, -1.0
		for _, th := range []float64{0.9, 0.75, 0.4, 0.15} { // from the highest: a tie keeps it
			tp, fp, fn := count(half, th)
			if f1 := 2 * float64(tp) / float64(2*tp+fp+fn); f1 > bestF1 {
				bestT, bestF1 = th, f1
			}
		}
		return bestT
	}
	for k, h := range [][2][]int{{a, b}, {b, a}} {
		fd := c.Folds[k]
		want := best(h[0])
		tp, fp, fn := count(h[1], want)
		if fd.Tuning.Threshold != want || fd.HeldOut.TP != tp || fd.HeldOut.FP != fp || fd.HeldOut.FN != fn ||
			fd.HeldOut.TP+fd.HeldOut.FN != 20 || fd.HeldOut.FP+fd.HeldOut.TN != 20 {
			t.Errorf("fold %d: %+v; by counting: threshold %v, held out TP %d FP %d FN %d", k, fd, want, tp, fp, fn)
		}
		t.Logf("chosen on the %s: %s; on the %s P %.2f R %.2f F1 %.2f (default 0.7: F1 %.2f)",
			fd.ChosenOn, fd.Flag, fd.Reported, fd.HeldOut.Precision, fd.HeldOut.Recall, fd.HeldOut.F1, fd.Default.F1)
	}
}

// TestWatchCalibrateErrors: a malformed line and too few posts of a label
// are usage errors before any model call; no model is the usual error; a
// model server answering 500 fails the run, naming the batch.
func TestWatchCalibrateErrors(t *testing.T) {
	isolate(t)
	var sizes []int
	srv := worthinessServer(t, &sizes)
	calibrateEnv(t, srv)
	good := writeLabelled(t, tinyWorthy, tinyOrdinary)
	body, _ := os.ReadFile(good)
	bad := filepath.Join(t.TempDir(), "bad.jsonl")
	lines := strings.SplitAfter(string(body), "\n")
	os.WriteFile(bad, []byte(strings.Join(lines[:2], "")+"{\"text\": \"half a line\n"+strings.Join(lines[2:], "")), 0o600)
	few := writeLabelled(t, tinyWorthy[:9], tinyOrdinary)
	for _, tc := range []struct {
		file, want string
	}{
		{bad, "line 3: not a JSON object"},
		{few, "9 check-worthy and 10 ordinary posts: at least 10 of each are needed"},
		{filepath.Join(t.TempDir(), "none.jsonl"), "no such file"},
	} {
		if _, errOut, code := run(t, "watch", "calibrate", tc.file); code != 2 || !strings.Contains(errOut, tc.want) {
			t.Errorf("%s: exit %d, %q; want 2 and %q", filepath.Base(tc.file), code, errOut, tc.want)
		}
	}
	if len(srv.ChatCalls()) != 0 {
		t.Errorf("%d model calls for files that could not be read", len(srv.ChatCalls()))
	}

	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("OPENAI_API_KEY", "")
	t.Setenv("MUSE_MODEL", "")
	t.Setenv("OLLAMA_HOST", "http://127.0.0.1:1")
	if out, errOut, code := run(t, "watch", "calibrate", good, "--json"); code != 2 || out != "" ||
		!strings.Contains(errOut, "no language model configured") || strings.Contains(errOut, "--no-llm") {
		t.Errorf("no model: exit %d, stdout %q, stderr %q", code, out, errOut)
	}

	down := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) {
		return "", &llmtest.Error{Status: 500, Message: "the model crashed"}
	})
	calibrateEnv(t, down)
	if out, errOut, code := run(t, "watch", "calibrate", good, "--batch-size", "8", "--json"); code != 1 || out != "" ||
		!strings.Contains(errOut, "batch 1 (lines 1–8)") {
		t.Errorf("a model answering 500: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
}
