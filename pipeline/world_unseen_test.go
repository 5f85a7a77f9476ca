package pipeline_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// The unseen world: a noisy post about a real event (the East Palestine
// derailment) and wire-service pages that report the event in their own
// words, without repeating the post's. Nothing in muse was tuned on it.
const unseenPost = "While we're distracted by pronouns, UFOs & Woke Jesus, a train full of poison blew up in a small town " +
	"and NOBODY in the media will say a word. They don't want you to know. #EastPalestine"

var unseenCutoff = time.Date(2023, 2, 20, 0, 0, 0, 0, time.UTC)

func unseenPages() map[string]testworld.Page {
	filler := func(site string) []string {
		return []string{
			site + " spoke with residents who returned to their homes after the evacuation order was lifted, some of whom described a lingering odour and headaches in the days that followed.",
			"State officials said air monitoring in the village had not detected harmful levels of the chemicals, and that water samples from the municipal wells were being tested daily.",
			"The National Transportation Safety Board said its preliminary report would examine an overheated wheel bearing that a trackside detector flagged moments before the cars left the track.",
			"Norfolk Southern said it had set up a family assistance centre and would reimburse residents for the costs of the evacuation, including hotel stays and lost wages.",
			"Governor Mike DeWine urged the railroad to pay for the cleanup and said the state would hold the company responsible for any damage to the local creeks.",
			"Environmental scientists interviewed said the long-term effects on soil and groundwater would depend on how quickly the contaminated earth along the track was removed.",
		}
	}
	return map[string]testworld.Page{
		"www.reuters.com": {Path: "/world/us/ohio-derailment-vinyl-chloride-2023-02-06/", Title: "Ohio crews burn toxic chemical from derailed rail cars",
			Site: "Reuters", Date: "2023-02-06", Paras: append([]string{
				"Crews in East Palestine, Ohio, on Monday carried out a controlled release and burn of vinyl chloride from five derailed Norfolk Southern tank cars, sending a black plume over the village near the Pennsylvania border.",
			}, filler("Reuters")...)},
		"apnews.com": {Path: "/article/ohio-train-derailment-evacuation", Title: "Evacuation ordered after freight train derails in Ohio village",
			Site: "AP News", Date: "2023-02-05", Paras: append([]string{
				"About 50 cars of a Norfolk Southern freight train derailed on Friday night in East Palestine, Ohio, and officials ordered residents within a mile of the wreck to leave their homes.",
			}, filler("The AP")...)},
		"www.npr.org": {Path: "/2023/02/16/east-palestine-ohio-derailment-what-we-know", Title: "What we know about the East Palestine derailment",
			Site: "NPR", Date: "2023-02-16", Paras: append([]string{
				"Nearly two weeks after the Feb. 3 derailment in East Palestine, Ohio, residents are still asking whether their air and water are safe, NPR reports.",
			}, filler("NPR")...)},
		"www.bbc.co.uk": {Path: "/news/world-us-canada-64650301", Title: "Ohio derailment: Residents demand answers at town hall",
			Site: "BBC News", Date: "2023-02-16", Paras: append([]string{
				"Hundreds of people packed a school gymnasium in East Palestine on Wednesday to question officials about the derailment of a train carrying hazardous materials, the BBC reported.",
			}, filler("The BBC")...)},
		"www.latenews.example": {Path: "/east-palestine-one-year-on", Title: "East Palestine, one year after the derailment",
			Site: "Late News", Date: "2024-02-03", Paras: filler("Late News")},
		"www.weather.example": {Path: "/weekend-forecast", Title: "Weekend forecast", Site: "Weather Desk", Date: "2023-02-10",
			Paras: []string{strings.Repeat("Sunny skies are expected across the region over the weekend, with mild temperatures and a light breeze from the west. ", 12)}},
	}
}

// unseenModel answers like a faithful model, quoting the first sentence of
// each article in the form models write ("According to the article,", the
// first letter lower-cased, a trailing period).
func unseenModel(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
	switch llmtest.SchemaName(req) {
	case "queries":
		return llmtest.Reply{Text: `{"queries":["East Palestine Ohio train derailment","Norfolk Southern derailment vinyl chloride burn","East Palestine derailment residents evacuation"]}`}, nil
	case "evidence":
		arts := testworld.Articles(llmtest.LastUser(req))
		return llmtest.Reply{Text: testworld.EvidenceAnswer(arts, func(art string) (ref, ctx []string) {
			for _, line := range strings.Split(art, "\n") {
				if i := strings.Index(line, "East Palestine"); i >= 0 && strings.Contains(line, "derail") && len(line) > 80 {
					s := strings.TrimSpace(line)
					ref = append(ref, "According to the article, "+strings.ToLower(s[:1])+s[1:])
					break
				}
			}
			return ref, nil
		})}, nil
	}
	return llmtest.Reply{Text: "This post is false. Reuters, AP, NPR and the BBC all reported the East Palestine derailment within days " +
		strings.Join(testworld.PromptSources(llmtest.LastUser(req)), "") + "."}, nil
}

// worldConfig is the configuration of a loopback world: the model and
// SearXNG at these addresses, the test world's publisher ratings, data in a
// temporary directory.
func worldConfig(t *testing.T, modelURL, searxngURL string) *setup.Config {
	t.Helper()
	dir := t.TempDir()
	ratings := filepath.Join(dir, "ratings.csv")
	if err := os.WriteFile(ratings, testworld.RatingsCSV, 0o644); err != nil {
		t.Fatal(err)
	}
	return &setup.Config{OpenAIBaseURL: modelURL, OpenAIAPIKey: "sk-test", Model: "test-model",
		SearXNGURL: searxngURL, AllowPrivateAddresses: true, IgnoreRobots: true, RatingsFile: ratings, DataDir: dir,
		OverridesFile: filepath.Join(dir, "overrides.toml"), ConfigDir: dir}
}

func TestUnseenWorldReachesEvidence(t *testing.T) {
	pages := unseenPages()
	srv := llmtest.NewReplyServer(t, unseenModel)
	sx := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		type result struct {
			URL       string  `json:"url"`
			Title     string  `json:"title"`
			Content   string  `json:"content"`
			Engine    string  `json:"engine"`
			Published *string `json:"publishedDate"`
		}
		var res []result
		for _, host := range slices.Sorted(func(yield func(string) bool) {
			for h := range pages {
				if !yield(h) {
					return
				}
			}
		}) {
			p := pages[host]
			d := p.Date + "T08:00:00"
			res = append(res, result{URL: testworld.PageURL(host, p), Title: p.Title, Content: p.Title, Engine: "bing", Published: &d})
		}
		w.Header().Set("Content-Type", "application/json")
		_ = json.NewEncoder(w).Encode(map[string]any{"query": r.URL.Query().Get("q"), "results": res})
	}))
	t.Cleanup(sx.Close)
	e, closeFn, err := setup.NewFromConfig(context.Background(), worldConfig(t, srv.BaseURL, sx.URL),
		pipeline.Options{PageProxy: testworld.NewsProxy(t, pages), LLMRetryDelay: 10 * time.Millisecond, RefutingPages: 4, FirstPassHits: 10})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: unseenPost, Handle: "@patriot_truths", PostedAt: unseenCutoff}, unseenCutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		t.Fatalf("run: %v", err)
	}
	news := []string{"www.reuters.com", "apnews.com", "www.npr.org", "www.bbc.co.uk"}
	for _, host := range news {
		u := testworld.PageURL(host, pages[host])
		s := c.SourceByURL(u)
		if s == nil || s.Status != pipeline.StatusUsed {
			t.Errorf("%s did not reach evidence: %+v", host, s)
			continue
		}
		if !slices.Contains(c.Correction.URLs, u) {
			t.Errorf("the correction does not cite %s: %q", u, c.Correction.Text)
		}
	}
	for _, ev := range c.Evidence {
		if ev.Verified && (strings.HasPrefix(ev.Quote, "According to") || ev.ModelQuote == "") {
			t.Errorf("kept quote is not the page's own wording beside the model's: %+v", ev)
		}
	}
	late := c.SourceByURL(testworld.PageURL("www.latenews.example", pages["www.latenews.example"]))
	if late == nil || late.Status != pipeline.StatusExcludedCutoff || !regexp.MustCompile(`searxng dates it 2024-02-03, after the cutoff 2023-02-20`).MatchString(late.Reason) || !late.FetchedAt.IsZero() {
		t.Errorf("late hit: %+v", late)
	}
	if w := c.SourceByURL(testworld.PageURL("www.weather.example", pages["www.weather.example"])); w == nil || w.Status != pipeline.StatusIrrelevant {
		for _, s := range c.Sources {
			t.Logf("%s %s %s", s.URL, s.Status, s.Reason)
		}
		t.Errorf("a page sharing nothing with the post or its queries was not kept out: %+v", w)
	}
}
