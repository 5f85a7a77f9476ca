package pipeline

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm"
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
	if s := c.SourceByURL("https://www.reuters.com/a"); s.Status != StatusNotJudged || !strings.Contains(s.Reason, "could not be used") {
		t.Errorf("reuters %s: %s", s.Status, s.Reason)
	}
	if statusOf(c, "https://apnews.com/b") != StatusUsed {
		t.Error("one bad answer stopped the others")
	}
}

// widerWorld is newWorld with three more pages about the post that quote
// nothing: eight eligible pages, so that one evidence call carries them
// all.
func widerWorld() *fakeWorld {
	w := newWorld()
	for i := range 3 {
		u := fmt.Sprintf("https://news%d.example/s", i+1)
		w.pages[u] = fakePage{title: "Springfield bicycles on Main Street", date: "2024-01-04",
			paras: []string{filler(fmt.Sprintf("bicycles on Main Street, part %d of the series,", i+1), 12)}}
		w.results[5] = append(w.results[5], u)
	}
	return w
}

// filtered is the error LLMModel returns for a call Azure's content filter
// refused.
func filtered() error {
	return fmt.Errorf("%w: %w", ErrBadAnswer, &llm.APIError{Op: "chat completion", Status: 400, Kind: llm.ErrContentFilter,
		Code: "content_filter", Provider: "Azure", Filtered: []string{"hate, medium"}, Message: "The response was filtered"})
}

// A page that trips the content filter costs that page, not its
// neighbours: the call is asked again in halves, down to one page a call,
// at most as many more calls as it had pages; the page is not judged, with
// the filter's reason, and the correction rests on the pages judged and
// says one was not.
func TestEvidenceLostAnswerSplits(t *testing.T) {
	const tripping = "https://www.bbc.co.uk/c"
	m := &batchModel{fakeModel: &fakeModel{}}
	m.answer = func(in EvidencePagesInput) ([]PageQuotes, error) {
		if slices.ContainsFunc(in.Pages, func(p EvidencePage) bool { return p.URL == tripping }) {
			return nil, filtered()
		}
		return keyedQuoting(in)
	}
	e := newTestEngine(t, widerWorld(), m, Options{RefutingPages: 10})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	calls := m.calls()
	first := len(calls[0])
	if first != 8 || !slices.Contains(calls[0], tripping) {
		t.Fatalf("first call %q, want the eight pages with the tripping one", calls[0])
	}
	if len(calls)-1 > first {
		t.Errorf("%d calls after the first, more than its %d pages: %q", len(calls)-1, first, calls)
	}
	if !slices.ContainsFunc(calls, func(b []string) bool { return slices.Equal(b, []string{tripping}) }) {
		t.Errorf("the tripping page was never asked about alone: %q", calls)
	}
	s := c.SourceByURL(tripping)
	if s.Status != StatusNotJudged || s.Reason != "the model server's content filter refused it (Azure: hate, medium)" {
		t.Errorf("tripping page %s: %s", s.Status, s.Reason)
	}
	judged := 0
	for _, s := range c.Sources {
		if s.URL != tripping && slices.ContainsFunc(calls[0], func(u string) bool { return u == s.URL }) {
			if s.Status != StatusUsed && (s.Status != StatusNotNeeded || !strings.HasPrefix(s.Reason, "read:")) {
				t.Errorf("neighbour %s not judged: %s %s", s.URL, s.Status, s.Reason)
			}
			judged++
		}
	}
	for _, u := range []string{"https://www.reuters.com/a", "https://apnews.com/b"} {
		if statusOf(c, u) != StatusUsed {
			t.Errorf("%s not used", u)
		}
	}
	refuting := slices.ContainsFunc(c.IncludedEvidence(), func(e Evidence) bool {
		return e.SourceURL == "https://www.reuters.com/a" && e.Kind == KindRefutes
	})
	if !refuting || m.corrections != 1 || len(c.Correction.URLs) == 0 {
		t.Errorf("the refuting quote did not reach the correction: %+v", c.Correction)
	}
	want := fmt.Sprintf("1 of %d pages was not judged: the model server's content filter refused it", judged+1)
	if !slices.ContainsFunc(c.Correction.Warnings, func(w string) bool { return strings.HasPrefix(w, want) }) {
		t.Errorf("correction warnings %q lack %q", c.Correction.Warnings, want)
	}
	if st := c.Stages[slices.IndexFunc(c.Stages, func(si StageInfo) bool { return si.Stage == StageEvidence })]; st.State != StatePartial || !strings.Contains(st.Error, want) {
		t.Errorf("evidence stage %+v, want partial saying %q", st, want)
	}
	if u := c.Usage.ByStage[string(StageEvidence)]; u.LLMCalls != len(calls) {
		t.Errorf("evidence usage counts %d calls, %d made", u.LLMCalls, len(calls))
	}
}

// When every page trips the filter, none is judged: the retries stay
// within their bound, the model is never asked to write a correction, the
// correction says the pages were not judged and why (never that no
// credible source was found), both stages are partial, and the check ends
// with ErrNoEvidence.
func TestEvidenceEveryAnswerLost(t *testing.T) {
	m := &batchModel{fakeModel: &fakeModel{}, answer: func(EvidencePagesInput) ([]PageQuotes, error) { return nil, filtered() }}
	e := newTestEngine(t, widerWorld(), m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	_, err := runCheck(t, e, c)
	if !errors.Is(err, ErrNoEvidence) || !strings.Contains(err.Error(), "the model server's content filter refused them") {
		t.Fatalf("err %v, want ErrNoEvidence saying the filter refused the pages", err)
	}
	calls := m.calls()
	sent := map[string]bool{}
	for _, b := range calls {
		for _, u := range b {
			sent[u] = true
		}
	}
	// One call of the eight pages (the wider search finds no new page),
	// and at most as many more as it had pages.
	if len(calls[0]) != 8 || len(calls) > 1+len(calls[0]) {
		t.Errorf("%d calls for %d pages: %q", len(calls), len(calls[0]), calls)
	}
	for u := range sent {
		if s := c.SourceByURL(u); s.Status != StatusNotJudged || !strings.HasPrefix(s.Reason, "the model server's content filter refused it") {
			t.Errorf("%s: %s %s", u, s.Status, s.Reason)
		}
	}
	if m.corrections != 0 {
		t.Error("the model was asked to write a correction from no facts while pages were not judged")
	}
	want := fmt.Sprintf("No source could be checked: the model server's content filter refused all %d pages, so muse cannot write a sourced correction.", len(sent))
	if !strings.HasPrefix(c.Correction.Text, want) || c.Correction.Text == NoSourceText || !c.Correction.Unsourced() {
		t.Errorf("correction %q, want it to start %q", c.Correction.Text, want)
	}
	for _, st := range []Stage{StageEvidence, StageCorrection} {
		if si := c.Stages[slices.IndexFunc(c.Stages, func(si StageInfo) bool { return si.Stage == st })]; si.State != StatePartial {
			t.Errorf("%s stage %+v, want partial", st, si)
		}
	}
}

// Over random sets of pages whose answers are lost, each lost in a random
// one of the ways a server loses one: the calls stay within their bound,
// every page sent is judged or not judged with a reason, a single lost
// page costs no neighbour, and the correction says no credible source was
// found only when no page went unjudged — otherwise, with no evidence, it
// says which pages were not judged, without asking the model, and the
// check ends with ErrNoEvidence.
func TestEvidenceLostAnswersProperty(t *testing.T) {
	lost := []func() error{
		filtered,
		func() error {
			return fmt.Errorf("%w: %w", ErrBadAnswer, &llm.APIError{Kind: llm.ErrRefusal, Message: "I'm sorry, I can't help with that."})
		},
		func() error {
			return fmt.Errorf("%w: %w", ErrBadAnswer, &llm.APIError{Kind: llm.ErrInBand, Provider: "OpenRouter", Message: "Provider returned error"})
		},
		func() error { return fmt.Errorf("%w: parse evidence answer: %w", ErrBadAnswer, llm.ErrMalformed) },
		func() error { return fmt.Errorf("%w: %w", ErrBadAnswer, llm.ErrEmpty) },
	}
	rng := rand.New(rand.NewPCG(33, 1))
	var seen [3]int // runs with no page lost; with some, and evidence; with some, and none
	for run := range 60 {
		trips := map[string]func() error{}
		share := 1 + rng.IntN(3) // a page trips with a chance of share in 4
		for _, u := range widerWorld().results[5] {
			if rng.IntN(4) < share {
				trips[u] = lost[rng.IntN(len(lost))]
			}
		}
		m := &batchModel{fakeModel: &fakeModel{}}
		m.answer = func(in EvidencePagesInput) ([]PageQuotes, error) {
			for _, p := range in.Pages {
				if f := trips[p.URL]; f != nil {
					return nil, f()
				}
			}
			return keyedQuoting(in)
		}
		refuting := []int{2, 10}[rng.IntN(2)]
		e := newTestEngine(t, widerWorld(), m, Options{RefutingPages: refuting})
		c := e.NewCheck(Post{Text: post}, time.Time{})
		_, err := runCheck(t, e, c)
		calls := m.calls()
		where := fmt.Sprintf("run %d (%d tripping, RefutingPages %d)", run, len(trips), refuting)
		if len(calls) > 1+len(calls[0]) {
			t.Errorf("%s: %d calls for a call of %d pages", where, len(calls), len(calls[0]))
		}
		notJudged := 0
		for _, u := range calls[0] {
			s := c.SourceByURL(u)
			switch {
			case s.Status == StatusNotJudged && s.Reason != "":
				notJudged++
				if len(trips) == 1 && trips[u] == nil {
					t.Errorf("%s: %s lost with the one tripping page", where, u)
				}
			case s.Status == StatusUsed, strings.HasPrefix(s.Reason, "read: "):
			case s.Status == StatusNotNeeded && len(c.IncludedEvidence()) > 0:
				// not sent once enough pages had refuted
			default:
				t.Errorf("%s: %s neither judged nor not judged: %s %q", where, u, s.Status, s.Reason)
			}
		}
		switch {
		case c.Correction.Text == NoSourceText && notJudged > 0:
			t.Errorf("%s: no credible source said while %d pages were not judged", where, notJudged)
		case len(c.IncludedEvidence()) == 0 && notJudged > 0:
			if !strings.HasPrefix(c.Correction.Text, NotJudgedLead) || m.corrections != 0 || !errors.Is(err, ErrNoEvidence) {
				t.Errorf("%s: correction %q, %d asked of the model, err %v", where, c.Correction.Text, m.corrections, err)
			}
		case len(c.IncludedEvidence()) > 0 && m.corrections != 1:
			t.Errorf("%s: evidence, but no correction asked", where)
		}
		switch {
		case notJudged == 0:
			seen[0]++
		case len(c.IncludedEvidence()) > 0:
			seen[1]++
		default:
			seen[2]++
		}
	}
	if slices.Contains(seen[:], 0) {
		t.Errorf("runs with no page lost, with pages lost and evidence, with pages lost and none: %v; each kind should occur", seen)
	}
	t.Logf("runs with no page lost, with pages lost and evidence, with pages lost and none: %v", seen)
}
