package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"
)

// batchModel is a fakeModel that reads several pages per evidence call.
type batchModel struct {
	*fakeModel
	mu      sync.Mutex
	batches [][]string // the URLs of each call, in the order calls came
	answer  func(in EvidencePagesInput) ([]PageQuotes, error)
}

func (m *batchModel) EvidencePages(ctx context.Context, in EvidencePagesInput) ([]PageQuotes, CallUsage, error) {
	var urls []string
	for _, p := range in.Pages {
		urls = append(urls, p.URL)
	}
	m.mu.Lock()
	m.batches = append(m.batches, urls)
	m.mu.Unlock()
	pqs, err := m.answer(in)
	return pqs, CallUsage{LLMCalls: 1, PromptTokens: 500}, err
}

// keyedQuoting answers each page of a call with the quotes really on it,
// keyed by the page's number.
func keyedQuoting(in EvidencePagesInput) ([]PageQuotes, error) {
	var out []PageQuotes
	for i, p := range in.Pages {
		ref, ctxq, _ := quoting(context.Background(), EvidenceInput{Paragraphs: p.Paragraphs})
		if len(ref)+len(ctxq) > 0 {
			out = append(out, PageQuotes{Page: i + 1, Refutes: ref, Context: ctxq})
		}
	}
	return out, nil
}

func (m *batchModel) calls() [][]string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return slices.Clone(m.batches)
}

func TestEvidenceOneCallForAWave(t *testing.T) {
	m := &batchModel{fakeModel: &fakeModel{}, answer: keyedQuoting}
	e := newTestEngine(t, newWorld(), m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	calls := m.calls()
	if len(calls) != 1 || len(calls[0]) < 3 || calls[0][0] != "https://www.reuters.com/a" && calls[0][0] != "https://apnews.com/b" {
		t.Fatalf("evidence calls %q, want one with every eligible page, best first", calls)
	}
	for u, want := range map[string]Status{"https://www.reuters.com/a": StatusUsed, "https://apnews.com/b": StatusUsed, "https://www.bbc.co.uk/c": StatusUsed} {
		if got := statusOf(c, u); got != want {
			t.Errorf("%s: %s, want %s", u, got, want)
		}
	}
	if n := len(c.IncludedEvidence()); n != 3 {
		t.Errorf("%d quotes included, want 3: %+v", n, c.Evidence)
	}
	if u := c.Usage.ByStage[string(StageEvidence)]; u.LLMCalls != 1 {
		t.Errorf("evidence usage %+v", u)
	}
}

// With two pages read at a time, the two high-tier pages refute in the
// first call and no page ranked lower is sent.
func TestEvidenceBatchesStopEarly(t *testing.T) {
	m := &batchModel{fakeModel: &fakeModel{}, answer: keyedQuoting}
	e := newTestEngine(t, newWorld(), m, Options{EvidenceParallel: 2, EvidenceBatch: 2})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	calls := m.calls()
	if len(calls) != 1 || len(calls[0]) != 2 || !slices.Contains(calls[0], "https://www.reuters.com/a") || !slices.Contains(calls[0], "https://apnews.com/b") {
		t.Fatalf("evidence calls %q, want one with the two high-tier pages", calls)
	}
	if st := statusOf(c, "https://www.bbc.co.uk/c"); st != StatusNotNeeded {
		t.Errorf("bbc: %s", st)
	}

	// Smaller calls, more of them at once: the same pages in flight.
	m = &batchModel{fakeModel: &fakeModel{}, answer: keyedQuoting}
	e = newTestEngine(t, newWorld(), m, Options{EvidenceParallel: 4, EvidenceBatch: 1})
	c = e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	for _, b := range m.calls() {
		if len(b) != 1 {
			t.Fatalf("calls %q, want one page each", m.calls())
		}
	}
}

func TestEvidenceAttribution(t *testing.T) {
	const invented = "The mayor admitted the bicycle ban was a prank."
	shared := filler("bicycles on Main Street", 1) // on every page
	m := &batchModel{fakeModel: &fakeModel{}, answer: func(in EvidencePagesInput) ([]PageQuotes, error) {
		at := func(host string) int {
			for i, p := range in.Pages {
				if strings.Contains(p.URL, host) {
					return i + 1
				}
			}
			return -1
		}
		return []PageQuotes{
			{Page: at("apnews.com"), Refutes: []string{refuteA}},               // Reuters' quote, given for AP
			{Page: 0, Refutes: []string{refuteB}, Context: []string{context1}}, // unkeyed, each on one page
			{Page: 0, Refutes: []string{invented, shared}},                     // on no page; on every page
			{Page: 42, Context: []string{context1 + " "}},                      // out of range: placed by its text
		}, nil
	}}
	e := newTestEngine(t, newWorld(), m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, ev := range c.Evidence {
		got = append(got, fmt.Sprintf("%s|%s|%s|%v", ev.SourceURL, ev.Kind, clip(ev.Quote, 20), ev.Verified))
	}
	want := []string{
		"https://apnews.com/b|refutes|" + clip(refuteA, 20) + "|false",
		"https://apnews.com/b|refutes|" + clip(refuteB, 20) + "|true",
		"https://www.bbc.co.uk/c|context|" + clip(context1, 20) + "|true",
	}
	slices.Sort(got)
	if !slices.Equal(got, want) {
		t.Fatalf("evidence\n got %q\nwant %q", got, want)
	}
	if st := statusOf(c, "https://www.reuters.com/a"); st != StatusNotNeeded {
		t.Errorf("reuters quoted through another page's number: %s", st)
	}
	w := Warnings(c)
	for _, s := range []string{"not found on https://apnews.com/b", "found on none of the pages", "found on more than one page"} {
		if !strings.Contains(w, s) {
			t.Errorf("warnings lack %q:\n%s", s, w)
		}
	}
}

// An unusable answer costs the pages of its call, not the others.
func TestEvidenceBatchFails(t *testing.T) {
	m := &batchModel{fakeModel: &fakeModel{}}
	m.answer = func(in EvidencePagesInput) ([]PageQuotes, error) {
		if strings.Contains(in.Pages[0].URL, "reuters") {
			return nil, fmt.Errorf("parse evidence: not JSON: %w", ErrBadAnswer)
		}
		return keyedQuoting(in)
	}
	e := newTestEngine(t, newWorld(), m, Options{EvidenceParallel: 4, EvidenceBatch: 1})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if s := c.SourceByURL("https://www.reuters.com/a"); s.Status != StatusNotNeeded || !strings.Contains(s.Reason, "could not be used") {
		t.Errorf("reuters %s: %s", s.Status, s.Reason)
	}
	if statusOf(c, "https://apnews.com/b") != StatusUsed {
		t.Error("one bad answer stopped the others")
	}
}
