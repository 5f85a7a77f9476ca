package eval

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/ratings"
)

// writeCalibration writes expert ratings in the released files' format:
// posts posts, each with four corrections (muse citing three pages that carry the fact,
// the high note two, GPT-4 one, the average note a page that is gone), two
// experts each.
func writeCalibration(t *testing.T, site string, posts int) string {
	dir := t.TempDir()
	rows := map[string][][]string{}
	for n := range posts {
		calibrationPost(t, site, fmt.Sprint(1624961860498776069+n), n, rows)
	}
	for name, r := range rows {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.WriteAll(r)
		f.Close()
	}
	return dir
}

func calibrationPost(t *testing.T, site, tweet string, n int, rows map[string][][]string) {
	page := func(i int) string { return fmt.Sprintf("%s/news/water-tests?p=%d&post=%d", site, i, n) }
	corr := map[string]string{
		"muse":        "This post is misleading. Tests found no contamination. " + page(1) + " " + page(2) + " " + page(3),
		"note_1_text": "Water tests found no contamination.\n" + page(4) + "\n" + page(5),
		"vanilla":     "This post is misleading: the river was tested. " + page(6),
		"note_2_text": fmt.Sprintf("The river is fine (%d).   %s/news/gone", n, site),
	}
	types := map[string]string{"muse": "correction_response (ours, high)", "note_1_text": "note_1_text", "vanilla": "correction_response (vanilla gpt-4)", "note_2_text": "note_2_text"}
	short := map[string]string{"muse": "muse", "note_1_text": "human-high", "vanilla": "gpt-4", "note_2_text": "human-avg"}
	experts := map[string][2]string{"muse": {"8", "9"}, "note_1_text": {"6", "5"}, "vanilla": {"4", "4"}, "note_2_text": {"2", "3"}}
	head := func(name string, h ...string) {
		if rows[name] == nil {
			rows[name] = [][]string{h}
		}
	}
	head("posts.csv", "created_at", "updated_at", "post_id", "post_tweet_id", "post_text", "response_text", "response_type", "annotated")
	head("Q9-overall_quality.csv", "id", "post_id", "response_id", "username", "label", "response_text", "response_type")
	head("Q8-reference_reachability.csv", "id", "post_id", "response_id", "response_url_id", "username", "label", "response_text", "response_type", "url")
	head("Q8.1-reference_credibility.csv", rows["Q8-reference_reachability.csv"][0]...)
	add := func(name string, r ...string) { rows[name] = append(rows[name], r) }
	for k, text := range corr {
		// The released texts carry stray spaces that the join ignores.
		add("posts.csv", "", "", "2", tweet, "The spill has poisoned the river that 5 million people drink.", text+"  ", short[k], "Y")
		for e, label := range experts[k] {
			user := fmt.Sprintf("group1_user%d", e+1)
			add("Q9-overall_quality.csv", "1", "2", "1", user, label, strings.ReplaceAll(text, "\n", " \n"), types[k])
			for _, u := range CitedURLs(text) {
				add("Q8-reference_reachability.csv", "1", "2", "1", "1", user, "Yes", text, types[k], u)
				add("Q8.1-reference_credibility.csv", "1", "2", "1", "1", user, "Very High", text, types[k], u)
			}
		}
	}
}

// countingJudge scores overall 2 + 2 × the cited pages whose text it is
// shown carries pageFact.
func countingJudge(t *testing.T) *llmtest.Server {
	return llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		prompt := llmtest.AllText(req)
		n := strings.Count(prompt, pageFact)
		var refs []string
		for i := 1; strings.Contains(prompt, fmt.Sprintf("<<<BEGIN REFERENCE %d>>>", i)); i++ {
			refs = append(refs, fmt.Sprintf(`{"n":%d,"reachability":"Yes","reference_relevance":"Yes","credibility":"High"}`, i))
		}
		return fmt.Sprintf(`{"explicitness":"Explicit","identification":"Exist without misidentification","comprehensiveness":"High","explanation_accuracy":"Half","informativeness":5,"relevance":5,"factuality":"Half Factual and Accurate","fluency":"No","coherence":"Coherent and Logical","toxicity":"No","overall":%d,"references":[%s]}`, 2+2*n, strings.Join(refs, ",")), nil
	})
}

func TestCalibrate(t *testing.T) {
	site := newsSite(t)
	dir := writeCalibration(t, site.URL, 1)
	rs, err := ReadCalibration(dir)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 4 {
		t.Fatalf("%d corrections joined, want 4", len(rs))
	}
	judge := &Judge{Client: client(t, countingJudge(t), "judge-model", nil)}
	a := CalibrateJudge(context.Background(), rs, judge, loopbackReader(), 2, nil)
	// Judge 8, 6, 4, 2 against experts (8, 9), (6, 5), (4, 4), (2, 3):
	// sklearn's quadratic kappa and scipy's Spearman of those 8 pairs,
	// by hand.
	near(t, "kappa", float64(a.Kappa), 0.962962962962963, 1e-9)
	near(t, "spearman", float64(a.Spearman), 0.981761387347632, 1e-9)
	if a.Pairs != 8 || !a.OrderReproduced || a.ExpertKappa != 0.51 || a.Failed != 0 {
		t.Errorf("agreement: %+v", a)
	}
	// 14 expert reachability labels, all Yes; the average note's page is
	// gone now: 12 of 14 agree.
	if a.ReachabilityPairs != 14 || a.ReachabilityAgreement != 12.0/14 {
		t.Errorf("reachability: %d pairs, %.3f", a.ReachabilityPairs, a.ReachabilityAgreement)
	}
	// The judge says High (3) where the experts say Very High (4)
	// throughout: no agreement beyond chance (sklearn: 0).
	if a.CredibilityPairs != 14 || a.CredibilityKappa != 0 {
		t.Errorf("credibility: %d pairs, kappa %v", a.CredibilityPairs, a.CredibilityKappa)
	}
	// A figure that cannot be computed is null in JSON, not an error.
	if b, err := json.Marshal(Tiers(nil, nil)); err != nil || !strings.Contains(string(b), `"spearman":null`) {
		t.Errorf("JSON: %v %s", err, b)
	}
	// Without the pages the judge cannot tell the systems apart.
	b := CalibrateJudge(context.Background(), rs, judge, nil, 2, nil)
	if b.OrderReproduced || b.JudgeMeans["muse"] != 2 {
		t.Errorf("a judge shown no pages reproduced the order: %+v", b)
	}
}

// TestChooseJudgeOnOneHalf: among two judges, the one that agrees with
// the experts is chosen on one half of the posts, and its figures are
// those of the other half.
func TestChooseJudgeOnOneHalf(t *testing.T) {
	site := newsSite(t)
	rs, err := ReadCalibration(writeCalibration(t, site.URL, 8))
	if err != nil {
		t.Fatal(err)
	}
	in := 0
	for _, r := range rs {
		if InSplit(r) {
			in++
		}
	}
	if len(rs) != 32 || in == 0 || in == 32 || in%4 != 0 {
		t.Fatalf("%d corrections, %d in the choosing half (a post's four on one side)", len(rs), in)
	}
	flat := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		return `{"overall":5,"references":[]}`, nil
	})
	judged := map[string]Judged{
		"flat":     ScoreReleased(context.Background(), rs, &Judge{Client: client(t, flat, "flat", nil)}, loopbackReader(), 2, nil),
		"counting": ScoreReleased(context.Background(), rs, &Judge{Client: client(t, countingJudge(t), "counting", nil)}, loopbackReader(), 2, nil),
	}
	c := Choose(rs, []string{"flat", "counting"}, judged)
	if c.Chosen != "counting" || c.HeldOut.Model != "counting" || c.HeldOut.Corrections != 32-in || c.Candidates[1].Corrections != in {
		t.Fatalf("choice: %+v", c)
	}
	near(t, "held-out kappa", float64(c.HeldOut.Kappa), 0.962962962962963, 1e-9)
}

func TestTiersAgainstExperts(t *testing.T) {
	rater, err := ratings.Load(ratings.Options{DataDir: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	rs := []*Rated{{Credible: map[string][]string{
		"https://www.reuters.com/x":      {"Very High", "High"},
		"https://apnews.com/y":           {"Very High"},
		"https://www.infowars.com/z":     {"Low Not Informed", "Cant Determine"},
		"https://rt.com/w":               {"Low Informed"},
		"https://unrated-blog.example/q": {"Medium"},
	}}}
	ta := Tiers(rs, rater)
	if ta.N != 5 || ta.Unrated != 1 || ta.HighShare["high"] != 1 || ta.HighShare["excluded"] != 0 || ta.Table["excluded"]["Cant Determine"] != 1 {
		t.Errorf("tiers: %+v", ta)
	}
	// high (3) ×3 with 4, 3, 4; excluded (0) ×2 with 0, 1: by hand.
	near(t, "spearman", float64(ta.Spearman), 0.8885233166386385, 1e-9)
}
