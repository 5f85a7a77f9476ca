package eval

import (
	"context"
	"encoding/csv"
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
// one post, four corrections (muse citing three pages that carry the fact,
// the high note two, GPT-4 one, the average note a page that is gone), two
// experts each.
func writeCalibration(t *testing.T, site string) string {
	dir := t.TempDir()
	page := func(i int) string { return fmt.Sprintf("%s/news/water-tests?p=%d", site, i) }
	corr := map[string]string{
		"muse":        "This post is misleading. Tests found no contamination. " + page(1) + " " + page(2) + " " + page(3),
		"note_1_text": "Water tests found no contamination.\n" + page(4) + "\n" + page(5),
		"vanilla":     "This post is misleading: the river was tested. " + page(6),
		"note_2_text": "The river is fine.   " + site + "/news/gone",
	}
	types := map[string]string{"muse": "correction_response (ours, high)", "note_1_text": "note_1_text", "vanilla": "correction_response (vanilla gpt-4)", "note_2_text": "note_2_text"}
	short := map[string]string{"muse": "muse", "note_1_text": "human-high", "vanilla": "gpt-4", "note_2_text": "human-avg"}
	experts := map[string][2]string{"muse": {"8", "9"}, "note_1_text": {"6", "5"}, "vanilla": {"4", "4"}, "note_2_text": {"2", "3"}}
	write := func(name string, rows [][]string) {
		f, err := os.Create(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		w := csv.NewWriter(f)
		w.WriteAll(rows)
		f.Close()
	}
	posts := [][]string{{"created_at", "updated_at", "post_id", "post_tweet_id", "post_text", "response_text", "response_type", "annotated"}}
	q9 := [][]string{{"id", "post_id", "response_id", "username", "label", "response_text", "response_type"}}
	q8 := [][]string{{"id", "post_id", "response_id", "response_url_id", "username", "label", "response_text", "response_type", "url"}}
	q81 := [][]string{q8[0]}
	for k, text := range corr {
		// The released texts carry stray spaces that the join ignores.
		posts = append(posts, []string{"", "", "2", "1624961860498776069", "The spill has poisoned the river that 5 million people drink.", text + "  ", short[k], "Y"})
		for e, label := range experts[k] {
			user := fmt.Sprintf("group1_user%d", e+1)
			q9 = append(q9, []string{"1", "2", "1", user, label, strings.ReplaceAll(text, "\n", " \n"), types[k]})
			for _, u := range CitedURLs(text) {
				q8 = append(q8, []string{"1", "2", "1", "1", user, "Yes", text, types[k], u})
				q81 = append(q81, []string{"1", "2", "1", "1", user, "Very High", text, types[k], u})
			}
		}
	}
	write("posts.csv", posts)
	write("Q9-overall_quality.csv", q9)
	write("Q8-reference_reachability.csv", q8)
	write("Q8.1-reference_credibility.csv", q81)
	return dir
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
	dir := writeCalibration(t, site.URL)
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
	near(t, "kappa", a.Kappa, 0.962962962962963, 1e-9)
	near(t, "spearman", a.Spearman, 0.981761387347632, 1e-9)
	if a.Pairs != 8 || !a.OrderReproduced || a.ExpertKappa != 0.51 || a.Failed != 0 {
		t.Errorf("agreement: %+v", a)
	}
	// 14 expert reachability labels, all Yes; the average note's page is
	// gone now: 12 of 14 agree.
	if a.ReachabilityPairs != 14 || a.ReachabilityAgreement != 12.0/14 {
		t.Errorf("reachability: %d pairs, %.3f", a.ReachabilityPairs, a.ReachabilityAgreement)
	}
	// The judge says High (3) where the experts say Very High (4)
	// throughout: no variance to agree on, and no agreement.
	if a.CredibilityPairs != 14 {
		t.Errorf("credibility pairs %d", a.CredibilityPairs)
	}
	// Without the pages the judge cannot tell the systems apart.
	b := CalibrateJudge(context.Background(), rs, judge, nil, 2, nil)
	if b.OrderReproduced || b.JudgeMeans["muse"] != 2 {
		t.Errorf("a judge shown no pages reproduced the order: %+v", b)
	}
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
	near(t, "spearman", ta.Spearman, 0.8885233166386385, 1e-9)
}
