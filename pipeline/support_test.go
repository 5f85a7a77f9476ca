package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"regexp"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// An edit that adds a figure no quote holds is warned of, by the figure;
// figures the quotes or the post hold, and the digits of a link, are not;
// a quote left out or on a dropped page holds nothing.
func TestUnheldFiguresWarned(t *testing.T) {
	c := &Check{
		Post: Post{Text: "Springfield banned bicycles on 3 streets!"},
		Sources: []Source{
			{URL: "https://www.reuters.com/a", Status: StatusUsed},
			{URL: "https://apnews.com/b", Status: StatusUsed, Dropped: true},
		},
		Evidence: []Evidence{
			{SourceURL: "https://www.reuters.com/a", Quote: "The council voted 7-2 to add lanes costing $1,200,000.", Kind: KindRefutes, Verified: true, Included: true},
			{SourceURL: "https://www.reuters.com/a", Quote: "About 40% of residents cycle.", Kind: KindContext, Verified: true, Included: false},
			{SourceURL: "https://apnews.com/b", Quote: "Work starts in 2025.", Kind: KindContext, Verified: true, Included: true},
		},
		Correction: Correction{Text: "The post's 3 streets were never banned: the council voted 7-2 for lanes costing $1200000. https://www.reuters.com/a/2024/03/01"},
	}
	warned := func() []string {
		var out []string
		for _, w := range c.CorrectionWarnings() {
			if strings.HasPrefix(w, "the figure ") {
				out = append(out, w)
			}
		}
		return out
	}
	if w := warned(); len(w) != 0 {
		t.Errorf("figures the quotes and the post hold are warned of: %q", w)
	}
	c.Correction.Text = "The council voted 7-2; 40% of residents cycle and work starts in 2025, at 12 sites. https://www.reuters.com/a"
	c.Correction.Edited = true
	want := []string{
		"the figure 40 is in no quote the correction rests on, nor in the post: check it against the pages",
		"the figure 2025 is in no quote the correction rests on, nor in the post: check it against the pages",
		"the figure 12 is in no quote the correction rests on, nor in the post: check it against the pages",
	}
	if w := warned(); !slices.Equal(w, want) {
		t.Errorf("warnings %q, want %q", w, want)
	}
}

// supportCheck is a check whose correction cites two pages: Reuters,
// whose quote gives the vote and the cost, and AP, whose quote gives the
// start of work.
func supportCheck() *Check {
	return &Check{
		Post: Post{Text: "Springfield banned bicycles on 3 streets!"},
		Sources: []Source{
			{URL: "https://www.reuters.com/a", Status: StatusUsed, Publisher: "Reuters"},
			{URL: "https://apnews.com/b", Status: StatusUsed, Publisher: "AP News"},
		},
		Evidence: []Evidence{
			{SourceURL: "https://www.reuters.com/a", Quote: "The council voted 7–2 on 4 March to add lanes costing 1.2 million dollars, Mayor Quimby said.", Kind: KindRefutes, Verified: true, Included: true},
			{SourceURL: "https://apnews.com/b", Quote: "Work on the lanes starts in 2025 and covers forty per cent of the city's roads, or ٤٠ per cent.", Kind: KindContext, Verified: true, Included: true},
		},
		Correction: Correction{Text: "This post is false. The council voted 7-2 on March 4 for lanes costing $1,200,000, Mayor Quimby said (https://www.reuters.com/a). " +
			"Work starts in 2025 on 40% of roads (https://apnews.com/b). Bicycles remain legal on every street."},
	}
}

func statuses(ss []SentenceSupport) []string {
	var out []string
	for _, s := range ss {
		out = append(out, s.Status)
	}
	return out
}

// The lexical check folds typographic forms (an en dash, a month name
// and its number order, "1.2 million" and "$1,200,000", Arabic-Indic
// digits and "per cent") and names what a sentence states that no quote
// it cites holds: a number added by an edit, a name, a figure whose
// citation moved to a page that does not hold it. Without a model the
// cited sentences are not judged, never supported.
func TestSupportMapLexical(t *testing.T) {
	c := supportCheck()
	c.NoLLM = true
	sm := c.SupportMap()
	if len(sm) != 4 {
		t.Fatalf("sentences %d, want 4: %+v", len(sm), sm)
	}
	for _, s := range sm {
		if len(s.Unheld) > 0 {
			t.Errorf("sentence %d %q: unheld %q, want none", s.N, s.Text, s.Unheld)
		}
	}
	if got, want := statuses(sm), []string{SupportUncited, SupportNotJudged, SupportNotJudged, SupportUncited}; !slices.Equal(got, want) {
		t.Errorf("statuses %q, want %q", got, want)
	}
	if !slices.Equal(sm[1].Cites, []string{"https://www.reuters.com/a"}) {
		t.Errorf("sentence 2 cites %q", sm[1].Cites)
	}
	if !strings.Contains(sm[1].Reason, "without a language model") {
		t.Errorf("not judged reason %q", sm[1].Reason)
	}

	// An edit adds a number and a name no quote holds; the work's start
	// is cited to Reuters, whose quote does not hold it.
	c.Correction.Text = "This post is false. The council voted 7-2 for 14 lanes, Governor Burns said (https://www.reuters.com/a). " +
		"Work starts in 2025 (https://www.reuters.com/a)."
	c.Correction.Edited = true
	c.NoLLM = false
	sm = c.SupportMap()
	if got := sm[1].Unheld; !slices.Equal(got, []string{"14", "Governor", "Burns"}) {
		t.Errorf("edited sentence 2: unheld %q", got)
	}
	if got := sm[2].Unheld; !slices.Equal(got, []string{"2025"}) {
		t.Errorf("moved citation: unheld %q, want 2025", got)
	}
	warns := strings.Join(c.CorrectionWarnings(), "\n")
	for _, w := range []string{
		"the figure 14 is in no quote the correction rests on",
		"sentence 2 states Governor, Burns, which no quote it cites holds (it cites https://www.reuters.com/a)",
		"sentence 3 states 2025, which no quote it cites holds (it cites https://www.reuters.com/a)",
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	if strings.Contains(warns, "sentence 2 states 14") {
		t.Errorf("a figure no quote at all holds is warned of twice:\n%s", warns)
	}
}

// supportServer is a loopback OpenAI-compatible server that answers the
// support prompt with answer(sentences asked), and counts its calls.
func supportServer(t *testing.T, answer func(asked []int) string) (*LLMModel, *atomic.Int32) {
	var calls atomic.Int32
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		if llmtest.SchemaName(req) != "support" {
			return "", errors.New("not the support prompt")
		}
		calls.Add(1)
		var asked []int
		for _, m := range regexp.MustCompile(`<<<BEGIN SENTENCE (\d+)>>>`).FindAllStringSubmatch(llmtest.LastUser(req), -1) {
			n := 0
			_ = json.Unmarshal([]byte(m[1]), &n)
			asked = append(asked, n)
		}
		return answer(asked), nil
	})
	client, err := llm.New(llm.Config{BaseURL: srv.BaseURL, Model: "test-model"})
	if err != nil {
		t.Fatal(err)
	}
	return &LLMModel{Client: client}, &calls
}

// The model's judgements, asked in one call and answered as real models
// answer (thinking, a preamble, a fenced block, paraphrased keys): a
// sentence the answer leaves out is not judged, never supported; a cited
// page the model says does not say the sentence is named; an unchanged
// sentence is not asked about again, an edited one is.
func TestJudgeSupportLoopback(t *testing.T) {
	m, calls := supportServer(t, func(asked []int) string {
		var items []string
		for _, n := range asked {
			switch n {
			case 2:
				items = append(items, `{"sentence": 2, "verdict": "Supported", "explanation": "The quote gives the vote and the cost."}`)
			case 3:
				items = append(items, `{"sentence": "3", "verdict": "not supported", "explanation": "The AP quote gives 2025 but not the share of roads.", "miscited": ["page 2"]}`)
			}
			// Any other sentence is left out of the answer.
		}
		return "<think>Let me check each sentence.</think>Here is my assessment:\n```json\n{\"results\": [" + strings.Join(items, ",") + "]}\n```"
	})
	c := supportCheck()
	c.Correction.Text += " The vote was 7-2 (https://www.reuters.com/a)."
	req := c.SupportRequest()
	if got := len(req.Sentences); got != 3 {
		t.Fatalf("asked about %d sentences, want the 3 cited", got)
	}
	res, err := JudgeSupport(context.Background(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	if res.Left != 1 {
		t.Errorf("left out %d, want 1 (sentence 5)", res.Left)
	}
	c.AddSupport(res)
	sm := c.SupportMap()
	if got, want := statuses(sm), []string{SupportUncited, SupportSupported, SupportUnsupported, SupportUncited, SupportNotJudged}; !slices.Equal(got, want) {
		t.Errorf("statuses %q, want %q", got, want)
	}
	if !slices.Equal(sm[2].NotSaying, []string{"https://apnews.com/b"}) {
		t.Errorf("sentence 3 not said by %q, want the AP page", sm[2].NotSaying)
	}
	if sm[1].Model != "test-model" || sm[1].Reason == "" {
		t.Errorf("sentence 2 judgement %+v", sm[1])
	}
	warns := strings.Join(c.CorrectionWarnings(), "\n")
	for _, w := range []string{
		"sentence 3 is not supported by the quotes it cites: The AP quote gives 2025 but not the share of roads",
		"sentence 3 cites https://apnews.com/b, but https://apnews.com/b does not say it",
	} {
		if !strings.Contains(warns, w) {
			t.Errorf("warnings lack %q:\n%s", w, warns)
		}
	}
	if c.Usage.ByStage[stageSupport].LLMCalls != 1 {
		t.Errorf("usage %+v, want the support call counted", c.Usage.ByStage)
	}

	// Only the sentence not judged is asked about again.
	if req := c.SupportRequest(); len(req.Sentences) != 1 || req.Sentences[0].N != 5 {
		t.Errorf("asked again about %+v, want sentence 5 only", req.Sentences)
	}
	// An edit to sentence 2 (its judgement no longer holds) and a
	// citation moved in sentence 3: both are asked about again.
	c.Correction.Text = strings.Replace(c.Correction.Text, "Mayor Quimby said", "the mayor said", 1)
	c.Correction.Text = strings.Replace(c.Correction.Text, "roads (https://apnews.com/b)", "roads (https://www.reuters.com/a)", 1)
	req = c.SupportRequest()
	var ns []int
	for _, s := range req.Sentences {
		ns = append(ns, s.N)
	}
	if !slices.Equal(ns, []int{2, 3, 5}) {
		t.Errorf("asked about %v after the edit, want 2, 3, 5", ns)
	}
	if sm := c.SupportMap(); sm[1].Status != SupportNotJudged || sm[2].Status != SupportNotJudged {
		t.Errorf("edited sentences keep an old judgement: %q", statuses(sm))
	}
	before := calls.Load()
	res, err = JudgeSupport(context.Background(), m, req)
	if err != nil {
		t.Fatal(err)
	}
	c.AddSupport(res)
	if calls.Load() != before+1 {
		t.Errorf("%d calls for one batch", calls.Load()-before)
	}
	if len(c.SupportJudgements) != 2 {
		t.Errorf("judgements kept %d, want those of sentences 2 and 3 as they are now (5 is still left out; the old ones are dropped)", len(c.SupportJudgements))
	}
}

// An answer that judges nothing is an error, and every sentence asked
// about stays not judged.
func TestJudgeSupportUnreadable(t *testing.T) {
	m, _ := supportServer(t, func([]int) string { return "I think these all look fine to me." })
	c := supportCheck()
	res, err := JudgeSupport(context.Background(), m, c.SupportRequest())
	if !errors.Is(err, ErrBadAnswer) {
		t.Errorf("err %v, want ErrBadAnswer", err)
	}
	c.AddSupport(res)
	for _, s := range c.SupportMap() {
		if s.Status == SupportSupported {
			t.Errorf("sentence %d supported by an unreadable answer", s.N)
		}
	}
}

// Links that open a sentence cite the sentence before.
func TestGluedCitations(t *testing.T) {
	got := gluedCitations([]string{"It was filmed in Genoa.", "<https://www.reuters.com/a> <https://apnews.com/b> Edited by the desk.", "(https://x.y/c)"})
	want := []string{"It was filmed in Genoa. <https://www.reuters.com/a> <https://apnews.com/b>", "Edited by the desk. (https://x.y/c)"}
	if !slices.Equal(got, want) {
		t.Errorf("got %q\nwant %q", got, want)
	}
}

// Digits of other scripts fold to ASCII, the mathematical digits' runs
// of ten back to back too.
func TestFoldDigits(t *testing.T) {
	for in, want := range map[string]string{"٤٠": "40", "४२": "42", "𝟘𝟙": "01", "𝟬𝟵": "09", "12\u2009345": "12345", "12\u00a0345": "12345", "1,234,567": "1234567", "1.2 million": "1200000", "40 per cent": "40%", "7–2": "7-2"} {
		if got := foldText(in); got != want {
			t.Errorf("foldText(%q) = %q, want %q", in, got, want)
		}
	}
}
