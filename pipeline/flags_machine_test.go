package pipeline

import (
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources/search"
)

// TestMachineTextFlag: a page holding a chatbot's reply left in its text
// is flagged with the words found; a story quoting such words, and
// ordinary reporting, are not.
func TestMachineTextFlag(t *testing.T) {
	farm := Source{URL: "https://springfield-news-today.example/bike-ban", Paragraphs: []string{
		"Springfield Bans Bicycles: Everything You Need to Know in 2024",
		"As an AI language model, I do not have access to real-time news, but here is an overview of the Springfield bicycle ban.",
		"1. The ban covers Main Street. 2. It starts on Monday. 3. Cyclists face fines.",
	}}
	refusal := Source{URL: "https://dailytrendz.example/x", Paragraphs: []string{"I'm sorry, but I cannot fulfill this request as it goes against OpenAI's use policy."}}
	about := Source{URL: "https://www.theverge.example/ai-spam", Paragraphs: []string{
		`Hundreds of product listings on the marketplace carry the phrase "As an AI language model", a sign the text was generated and never read.`,
		"Researchers found listings titled ‘I cannot fulfill this request’ on several storefronts.",
	}}
	news := Source{URL: "https://www.sfgate.example/ap", Paragraphs: []string{wireStory, localStory}}
	if f, ok := machineTextFlag(farm); !ok || f.Kind != FlagMachineText || !strings.Contains(f.Reason, `"As an AI language model"`) {
		t.Errorf("content farm: %+v %v", f, ok)
	}
	if f, ok := machineTextFlag(refusal); !ok || !strings.Contains(f.Reason, "I cannot fulfill this request") {
		t.Errorf("refusal: %+v %v", f, ok)
	}
	for _, s := range []Source{about, news} {
		if f, ok := machineTextFlag(s); ok {
			t.Errorf("%s flagged: %s", s.URL, f.Reason)
		}
	}
}

// TestMachineTextOnRealPages: none of the 131 real news pages of the
// extraction benchmark (their gold text) holds a chatbot's words; the
// marks were chosen before these pages were read.
func TestMachineTextOnRealPages(t *testing.T) {
	dir := testkit.SharedData(t, "article-extraction-benchmark")
	var gt map[string]struct {
		Body string `json:"articleBody"`
		URL  string `json:"url"`
	}
	readJSON(t, filepath.Join(dir, "ground-truth.json"), &gt)
	flagged := 0
	for _, p := range gt {
		if f, ok := machineTextFlag(Source{URL: p.URL, Paragraphs: strings.Split(p.Body, "\n")}); ok {
			flagged++
			t.Errorf("%s flagged: %s", p.URL, f.Reason)
		}
	}
	t.Logf("%d of %d real news pages flagged as holding a chatbot's words", flagged, len(gt))
}

// TestMachineTextPageFlaggedInCheck: a page of generated text the search
// finds is flagged in the check, its reason in the JSON, and its quote
// counts for no stop rule or verdict (claimQuotes leaves flagged pages out
// of the credible count).
func TestMachineTextPageFlaggedInCheck(t *testing.T) {
	w := flagWorld()
	const u = "https://www.springfield-today.example/ban"
	w.pages[u] = fakePage{title: "Springfield bicycle ban explained", date: "2024-01-06", paras: []string{
		"As an AI language model, I cannot browse the internet, but " + refuteA,
		filler("bicycles on Main Street", 6),
	}}
	w.results[5] = append(w.results[5], u)
	w.ratings["springfield-today.example"] = Rating{Tier: TierHigh, Publisher: "Springfield Today"}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{RefutingPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	s := c.SourceByURL(u)
	if s == nil || len(s.Flags) != 1 || s.Flags[0].Kind != FlagMachineText {
		t.Fatalf("generated page: %+v", s)
	}
	b, err := json.Marshal(c.ForOutput())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"kind":"machine_text","reason":"its text holds \"As an AI language model\", a chatbot's words left in the page"`) {
		t.Error("the JSON does not carry the flag")
	}
	quoted := false
	for _, e := range c.IncludedEvidence() {
		quoted = quoted || e.SourceURL == u
	}
	if !quoted {
		t.Fatal("the generated page's quote was not kept: nothing to count")
	}
	_, cred := c.claimQuotes()
	for _, st := range cred {
		for kind, pages := range st {
			if pages[independenceKey(*s)] {
				t.Errorf("the flagged page counts as credible %s", kind)
			}
		}
	}
}
