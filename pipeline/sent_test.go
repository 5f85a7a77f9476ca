package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/search"
)

// sentModel is a batchModel that keeps the pages of each call as sent.
type sentModel struct {
	*batchModel
	mu    sync.Mutex
	pages map[string][]string
}

func newSentModel(answer func(EvidencePagesInput) ([]PageQuotes, error)) *sentModel {
	m := &sentModel{pages: map[string][]string{}}
	m.batchModel = &batchModel{fakeModel: &fakeModel{}, answer: func(in EvidencePagesInput) ([]PageQuotes, error) {
		m.mu.Lock()
		for _, p := range in.Pages {
			m.pages[p.URL] = slices.Clone(p.Paragraphs)
		}
		m.mu.Unlock()
		return answer(in)
	}}
	return m
}

// Pages under the cap go to the model whole, and the check says so of
// each; the plan of the step is recorded and said before the calls.
func TestEvidenceSendsWholePages(t *testing.T) {
	m := newSentModel(keyedQuoting)
	e := newTestEngine(t, newWorld(), m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	evs, err := runCheck(t, e, c)
	if err != nil {
		t.Fatal(err)
	}
	if len(m.pages) < 3 {
		t.Fatalf("%d pages sent", len(m.pages))
	}
	for u, sent := range m.pages {
		s := c.SourceByURL(u)
		if !slices.Equal(sent, s.Paragraphs) {
			t.Errorf("%s: sent %d of %d paragraphs", u, len(sent), len(s.Paragraphs))
		}
		if s.Sent == nil || !s.Sent.Whole || s.Sent.Tokens != s.Sent.PageTokens || s.Sent.Tokens != llm.CountTokens(strings.Join(s.Paragraphs, "\n")) {
			t.Errorf("%s: record %+v", u, s.Sent)
		}
		if !strings.HasPrefix(s.Sent.Line(), "the whole page: all ") {
			t.Errorf("%s: %q", u, s.Sent.Line())
		}
	}
	p := c.EvidencePlan
	if p == nil || p.Pages < len(m.pages) || p.PageTokens != DefaultPageTokens || p.Calls != 1 || p.Tokens <= 0 || p.Cut != 0 {
		t.Fatalf("plan %+v", p)
	}
	if !slices.ContainsFunc(evs, func(ev Event) bool { return ev.Kind == EventProgress && ev.Message == p.Line() }) {
		t.Errorf("no progress event says the plan %q", p.Line())
	}
	if line := c.EvidenceLine(); !strings.Contains(line, fmt.Sprintf("from %d pages (%d whole)", len(m.pages), len(m.pages))) {
		t.Errorf("evidence line %q", line)
	}
}

// longWorld has one page far longer than a small cap, its refutation in
// the middle of talk about other things.
func longWorld() *fakeWorld {
	w := newWorld()
	var paras []string
	for i := range 30 {
		paras = append(paras, fmt.Sprintf("Paragraph %d of the council's weekly notes covers the library roof, the summer fair and the parking fees in detail again.", i))
	}
	paras = slices.Insert(paras, 15, refuteA)
	w.pages["https://www.reuters.com/a"] = fakePage{title: "Springfield council notes", date: "2024-01-05", paras: paras}
	return w
}

// A page longer than the cap is cut to its passages; the record says
// which and why, and a page on which the model quoted nothing says that
// it was the part sent that it read.
func TestEvidenceCutPageSaysSo(t *testing.T) {
	m := newSentModel(func(EvidencePagesInput) ([]PageQuotes, error) { return nil, nil })
	e := newTestEngine(t, longWorld(), m, Options{EvidenceTokens: 300})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Logf("run: %v", err)
	}
	const u = "https://www.reuters.com/a"
	s := c.SourceByURL(u)
	if s == nil || s.Sent == nil {
		t.Fatalf("no record of what was sent of %s", u)
	}
	sent := m.pages[u]
	if s.Sent.Whole || s.Sent.Tokens > 300 || s.Sent.Tokens == 0 || s.Sent.PageTokens <= 300 || s.Sent.ChosenBy != chosenByWords {
		t.Fatalf("record %+v", s.Sent)
	}
	if !slices.Contains(sent, refuteA) {
		t.Errorf("the refutation sharing the post's words was not sent: %q", sent)
	}
	text := strings.Join(s.Paragraphs, "\n")
	if len(s.Sent.Passages) != len(sent) {
		t.Fatalf("%d passages recorded, %d sent", len(s.Sent.Passages), len(sent))
	}
	for i, p := range s.Sent.Passages {
		if text[p.Offset:p.Offset+p.Bytes] != sent[i] || p.Rank < 1 {
			t.Errorf("passage %d recorded at %d+%d (rank %d), sent %q", i, p.Offset, p.Bytes, p.Rank, sent[i])
		}
	}
	want := fmt.Sprintf("read: in the part sent (%d of %d tokens), the model quoted no paragraph", s.Sent.Tokens, s.Sent.PageTokens)
	if !strings.HasPrefix(s.Reason, want) {
		t.Errorf("reason %q, want it to open %q", s.Reason, want)
	}
	if line := s.Sent.Line(); !strings.Contains(line, "longer than the cap of 300 tokens") || !strings.Contains(line, "BM25") {
		t.Errorf("line %q", line)
	}
	if sum := c.Account().Summary; !strings.Contains(sum, "in the part sent to the model") && !strings.Contains(sum, "in the part of it sent to the model") {
		t.Errorf("the summary does not say a page was read in part: %q", sum)
	}
	// A whole page the model found nothing on is not said to be in part.
	b := c.SourceByURL("https://apnews.com/b")
	if b.Sent == nil || !b.Sent.Whole || strings.Contains(b.Reason, "part sent") {
		t.Errorf("apnews: %+v %q", b.Sent, b.Reason)
	}
}

// With an Embedder, the passages of a cut page are ranked by meaning:
// the passage whose vector is nearest the post's is sent even when it
// shares no word with the post.
func TestEvidenceCutPageByMeaning(t *testing.T) {
	w := longWorld()
	const meant = "The town's two-wheeler rules were left untouched by the mayor this week."
	w.pages["https://www.reuters.com/a"] = fakePage{title: "notes", date: "2024-01-05",
		paras: slices.Insert(slices.Clone(w.pages["https://www.reuters.com/a"].paras[:15]), 3, meant)}
	m := newSentModel(func(EvidencePagesInput) ([]PageQuotes, error) { return nil, nil })
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w, Archive: w,
		Embedder: meaningEmbedder{meant: meant}}, Options{EvidenceTokens: 260})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post}, time.Time{})
	runCheck(t, e, c)
	s := c.SourceByURL("https://www.reuters.com/a")
	if s == nil || s.Sent == nil || s.Sent.Whole {
		t.Fatalf("record %+v", s)
	}
	if s.Sent.ChosenBy != chosenByMeaning || !slices.Contains(m.pages[s.URL], meant) {
		t.Errorf("chosen by %q, sent %q", s.Sent.ChosenBy, m.pages[s.URL])
	}
	if !strings.Contains(s.Sent.Line(), "meaning") {
		t.Errorf("line %q", s.Sent.Line())
	}
}

// meaningEmbedder puts the post and one passage on one axis, every other
// text on another.
type meaningEmbedder struct{ meant string }

func (e meaningEmbedder) Embed(_ context.Context, texts []string) ([][]float32, CallUsage, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		switch {
		case strings.Contains(t, e.meant), strings.Contains(t, "banned bicycles"):
			out[i] = []float32{1, 0}
		default:
			out[i] = []float32{0, 1}
		}
	}
	return out, CallUsage{}, nil
}

func TestPackPages(t *testing.T) {
	urls := []string{"a", "b", "c", "d", "e"}
	cost := func(u string) int { return map[string]int{"a": 3000, "b": 3000, "c": 9000, "d": 100, "e": 100}[u] }
	for _, tc := range []struct {
		size, window int
		want         [][]string
	}{
		{8, 0, [][]string{{"a", "b", "c", "d", "e"}}},
		{2, 0, [][]string{{"a", "b"}, {"c", "d"}, {"e"}}},
		// 1,500 of overhead and 1,200 of answer for one page, 600 more a page.
		{8, 10000, [][]string{{"a", "b"}, {"c"}, {"d", "e"}}},
		{8, 4000, [][]string{{"a"}, {"b"}, {"c"}, {"d", "e"}}},
		{8, 3400, [][]string{{"a"}, {"b"}, {"c"}, {"d"}, {"e"}}},
	} {
		if got := packPages(urls, tc.size, tc.window, 1500, cost); !slices.EqualFunc(got, tc.want, slices.Equal) {
			t.Errorf("size %d window %d: %q, want %q", tc.size, tc.window, got, tc.want)
		}
	}
}

// With a spend cap that cannot pay for every page at the cap set, the cap
// is lowered, the check warns, and each page cut names the spend cap.
func TestSpendCapLowersPageCap(t *testing.T) {
	client, err := llm.New(llm.Config{BaseURL: "http://127.0.0.1:9/v1", Model: "gpt-4o"})
	if err != nil {
		t.Fatal(err)
	}
	long := strings.Repeat("The council met again and talked about the library roof and the fair. ", 400) // about 6,000 tokens
	c := &Check{Post: Post{Text: post}}
	var urls []string
	for i := range 8 {
		u := fmt.Sprintf("https://p%d.example/", i)
		urls = append(urls, u)
		c.Sources = append(c.Sources, Source{URL: u, Paragraphs: []string{long}})
	}
	e := &Engine{deps: Deps{Model: &LLMModel{Client: client}}, opts: Options{SpendCapCheckUSD: 0.08}.withDefaults()}
	r := &run{e: e, c: c}
	full := r.estimateEvidence(urls, DefaultPageTokens)
	if full.CostUSD <= 0.08 {
		t.Fatalf("the pages at the default cap cost $%.4f: the test needs more", full.CostUSD)
	}
	pages := r.evidencePages(context.Background(), urls)
	if c.EvidencePlan == nil || c.EvidencePlan.PageTokens >= DefaultPageTokens || c.EvidencePlan.CostUSD > 0.08 {
		t.Fatalf("plan %+v", c.EvidencePlan)
	}
	if !HasEvent(c, EventWarning, "spend cap") {
		t.Errorf("no warning of the spend cap: %v", c.Events)
	}
	for _, u := range urls {
		ps := *r.sentRecord(u)
		if ps.Whole || ps.Tokens > c.EvidencePlan.PageTokens || len(pages[u].Paragraphs) == 0 {
			t.Errorf("%s: %+v", u, ps)
		}
		if !strings.Contains(ps.Why, "spend cap ($0.08 per check)") {
			t.Errorf("%s: why %q", u, ps.Why)
		}
	}
}
