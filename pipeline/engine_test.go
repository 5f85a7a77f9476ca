package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/search"
)

// These tests drive the engine through in-process fakes of its
// collaborators; e2e_test.go runs the same stages against loopback servers
// and the real clients.

type fakePage struct {
	title, date string // date "" = undated
	paras       []string
	err         error
}

type fakeWorld struct {
	mu      sync.Mutex
	pages   map[string]fakePage // by URL
	results map[int][]string    // hits per pass size (Count) → URLs
	ratings map[string]Rating   // by domain
	counts  []int               // Count of each search query
	fetched []string            // URLs fetched
	saved   []string            // URLs archived
	onFetch func(ctx context.Context, u string)
}

func (w *fakeWorld) Name() string { return "fake" }

func (w *fakeWorld) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.counts = append(w.counts, q.Count)
	var out []search.Hit
	for i, u := range w.results[q.Count] {
		out = append(out, search.Hit{URL: u, Title: "t", Provider: "fake", Query: q.Text, Rank: i + 1})
	}
	return out, nil
}

func (w *fakeWorld) Fetch(ctx context.Context, u string) ([]byte, string, error) {
	if w.onFetch != nil {
		w.onFetch(ctx, u)
	}
	w.mu.Lock()
	w.fetched = append(w.fetched, u)
	p, ok := w.pages[u]
	w.mu.Unlock()
	if err := ctx.Err(); err != nil {
		return nil, "", err
	}
	if !ok {
		return nil, "", fmt.Errorf("fetch %s: HTTP 404", u)
	}
	if p.err != nil {
		return nil, "", p.err
	}
	return []byte(u), u, nil
}

func (w *fakeWorld) extract(body []byte, u string) (*extract.Article, error) {
	w.mu.Lock()
	p := w.pages[u]
	w.mu.Unlock()
	a := &extract.Article{Title: p.title, Paragraphs: p.paras, Text: strings.Join(p.paras, "\n\n")}
	a.Words = len(strings.Fields(a.Text))
	if p.date != "" {
		a.Published, _ = time.Parse(time.DateOnly, p.date)
	}
	return a, nil
}

func (w *fakeWorld) Rate(u string) Rating {
	d := sources.HostOf(u)
	if r, ok := w.ratings[d]; ok {
		r.Domain = d
		return r
	}
	return Rating{Domain: d, Tier: TierUnrated}
}

func (w *fakeWorld) Save(ctx context.Context, p ArchivedPage) error {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.saved = append(w.saved, p.URL)
	return nil
}

// fakeModel answers from functions; nil functions give sensible defaults.
type fakeModel struct {
	mu          sync.Mutex
	queries     func(QueriesInput) ([]string, bool, error)
	evidence    func(context.Context, EvidenceInput) ([]string, []string, error)
	correction  func(CorrectionInput) (string, error)
	evidenceFor []string
	corrections int
}

func (m *fakeModel) Queries(ctx context.Context, in QueriesInput) ([]string, bool, CallUsage, error) {
	if m.queries == nil {
		return []string{"q1", "q2", "q3"}, true, CallUsage{LLMCalls: 1, PromptTokens: 100}, nil
	}
	q, ok, err := m.queries(in)
	return q, ok, CallUsage{LLMCalls: 1, PromptTokens: 100}, err
}

func (m *fakeModel) Evidence(ctx context.Context, in EvidenceInput) ([]string, []string, CallUsage, error) {
	m.mu.Lock()
	m.evidenceFor = append(m.evidenceFor, in.URL)
	m.mu.Unlock()
	r, c, err := m.evidence(ctx, in)
	return r, c, CallUsage{LLMCalls: 1, PromptTokens: 300}, err
}

func (m *fakeModel) Correction(ctx context.Context, in CorrectionInput, onDelta func(string)) (string, CallUsage, error) {
	m.mu.Lock()
	m.corrections++
	m.mu.Unlock()
	text := "This post is false: " + in.Evidence[0].URL
	var err error
	if m.correction != nil {
		text, err = m.correction(in)
	}
	for _, w := range strings.SplitAfter(text, " ") {
		onDelta(w)
	}
	return text, CallUsage{LLMCalls: 1, PromptTokens: 400}, err
}

func (m *fakeModel) Describe(ctx context.Context, p Post, im Image) (string, CallUsage, error) {
	return im.AltText, CallUsage{}, nil
}

func (m *fakeModel) ModelName(string) string { return "fake-model" }

const (
	refuteA  = "Officials at the Springfield city council said no ban on bicycles on Main Street was ever approved."
	refuteB  = "The claim that Springfield banned bicycles on Main Street is false, the mayor's office said."
	context1 = "Main Street in Springfield has had a protected bicycle lane since 2019, the council said."
)

func filler(topic string, n int) string {
	return strings.TrimSpace(strings.Repeat("Springfield residents discussed "+topic+" at length during the meeting of the council. ", n))
}

func newWorld() *fakeWorld {
	page := func(title, date string, paras ...string) fakePage {
		return fakePage{title: title, date: date, paras: append(paras, filler("bicycles on Main Street", 12))}
	}
	// The BBC's story is about the lane, and says less of Main Street's
	// bicycles: its context paragraph, not the reporting around it, is
	// the passage most about the post, within the evidence budget.
	lane := fakePage{title: "Springfield's bicycle lane", date: "2024-01-02", paras: []string{context1, filler("the new lane", 12)}}
	return &fakeWorld{
		pages: map[string]fakePage{
			"https://www.reuters.com/a":          page("Springfield did not ban bicycles", "2024-01-05", refuteA),
			"https://apnews.com/b":               page("Fact check: no bicycle ban in Springfield", "2024-01-06", refuteB),
			"https://www.bbc.co.uk/c":            lane,
			"https://lowsite.example/d":          page("Springfield bans bikes!", "2024-01-03", "They banned bicycles on Main Street."),
			"https://late.example/e":             page("Springfield bicycles", "2024-03-01", "Springfield bicycles on Main Street later."),
			"https://undated.example/f":          page("Springfield bicycles", "", "Springfield bicycles on Main Street."),
			"https://short.example/g":            {title: "short", date: "2024-01-01", paras: []string{"Springfield bicycles."}},
			"https://reuters.com/a?utm_source=x": page("dup", "2024-01-05", refuteA),
			"https://broken.example/h":           {err: errors.New("fetch https://broken.example/h: timeout after 20s")},
			"https://weather.example/i":          {title: "Weather", date: "2024-01-01", paras: []string{strings.Repeat("Sunny skies expected over the weekend with mild temperatures. ", 20)}},
		},
		results: map[int][]string{5: {
			"https://www.reuters.com/a", "https://apnews.com/b", "https://www.bbc.co.uk/c", "https://lowsite.example/d",
			"https://late.example/e", "https://undated.example/f", "https://short.example/g",
			"https://broken.example/h", "https://weather.example/i",
		}},
		ratings: map[string]Rating{
			"reuters.com":     {Publisher: "Reuters", Tier: TierHigh, Factuality: "very high", Bias: "least biased"},
			"apnews.com":      {Publisher: "Associated Press", Tier: TierHigh, Factuality: "very high", Bias: "least biased"},
			"bbc.co.uk":       {Publisher: "BBC", Tier: TierMedium, Factuality: "high", Bias: "left-center"},
			"lowsite.example": {Publisher: "Low Site", Tier: TierExcluded, Factuality: "low", Bias: "right"},
		},
	}
}

// quoting answers each page with the quotes that really are on it.
func quoting(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
	text := strings.Join(in.Paragraphs, "\n")
	var ref, ctxq []string
	for _, q := range []string{refuteA, refuteB} {
		if strings.Contains(text, q) {
			ref = append(ref, q)
		}
	}
	if strings.Contains(text, context1) {
		ctxq = append(ctxq, context1)
	}
	return ref, ctxq, nil
}

func newTestEngine(t *testing.T, w *fakeWorld, m Model, opts Options) *Engine {
	t.Helper()
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w, Archive: w}, opts)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

const post = "BREAKING: Springfield just banned bicycles on Main Street!! The mayor signed it today."

func runCheck(t *testing.T, e *Engine, c *Check) ([]Event, error) {
	t.Helper()
	ch := make(chan Event)
	var evs []Event
	done := make(chan struct{})
	go func() {
		for ev := range ch {
			evs = append(evs, ev)
		}
		close(done)
	}()
	err := e.Run(context.Background(), c, StageImages, ch)
	close(ch)
	<-done
	return evs, err
}

func statusOf(c *Check, u string) Status {
	if s := c.SourceByURL(u); s != nil {
		return s.Status
	}
	return "(missing)"
}

func TestRunWholeCheck(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: quoting}
	e := newTestEngine(t, w, m, Options{})
	// The paper's protocol (AsOfPost): the world's late and undated pages are kept out by the cutoff.
	posted := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	c := e.NewCheck(Post{Text: post, PostedAt: posted}, posted)
	evs, err := runCheck(t, e, c)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]Status{
		"https://www.reuters.com/a": StatusUsed, "https://apnews.com/b": StatusUsed,
		"https://lowsite.example/d": StatusExcludedRating, "https://late.example/e": StatusExcludedCutoff,
		"https://undated.example/f": StatusUndated, "https://short.example/g": StatusTooShort,
		"https://broken.example/h": StatusFetchFailed, "https://weather.example/i": StatusIrrelevant,
	}
	for u, st := range want {
		if got := statusOf(c, u); got != st {
			t.Errorf("%s: status %s (%s), want %s", u, got, c.SourceByURL(u).Reason, st)
		}
	}
	if slices := w.fetched; strings.Contains(strings.Join(slices, " "), "lowsite") {
		t.Errorf("an excluded publisher's page was fetched: %v", slices)
	}
	if c.Sources[0].Tier != TierHigh || c.Sources[1].Tier != TierHigh {
		t.Errorf("ranking: first sources %s %s", c.Sources[0].URL, c.Sources[1].URL)
	}
	if len(c.IncludedEvidence()) < 2 {
		t.Fatalf("evidence %+v", c.Evidence)
	}
	if !strings.HasPrefix(c.Correction.Text, "This post is false") || len(c.Correction.URLs) != 1 || len(c.Correction.Warnings) != 0 {
		t.Errorf("correction %+v", c.Correction)
	}
	if c.Usage.LLMCalls < 4 || c.Usage.ByStage["evidence"].LLMCalls < 2 {
		t.Errorf("usage %+v", c.Usage)
	}
	if len(w.saved) == 0 {
		t.Error("no page was archived")
	}
	var started, finished, deltas int
	for _, ev := range evs {
		switch ev.Kind {
		case EventStageStarted:
			started++
			if ev.State != StateRunning {
				t.Errorf("%s started event carries state %q", ev.Stage, ev.State)
			}
		case EventStageFinished:
			finished++
			if want := map[bool]string{true: StateSkipped, false: StateDone}[ev.Stage == StageImages]; ev.State != want {
				t.Errorf("%s finished event carries state %q, want %q", ev.Stage, ev.State, want)
			}
		case EventTokenDelta:
			deltas++
		}
	}
	if started != 6 || finished != 6 || deltas == 0 || evs[len(evs)-1].Kind != EventDone {
		t.Errorf("events: %d started, %d finished, %d deltas, last %s", started, finished, deltas, evs[len(evs)-1].Kind)
	}
	for _, st := range c.Stages {
		if st.Stage == StageImages && st.State != StateSkipped {
			t.Errorf("images stage %s without images", st.State)
		}
	}
}

func TestEarlyStopping(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: quoting}
	// One call at a time makes the order observable: the two high-tier pages
	// refute, so the medium-tier page is never asked about.
	e := newTestEngine(t, w, m, Options{EvidenceParallel: 1})
	c := e.NewCheck(Post{Text: post}, time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC))
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if len(m.evidenceFor) != 2 {
		t.Fatalf("evidence asked for %v, want only the two refuting high-tier pages", m.evidenceFor)
	}
	if got := statusOf(c, "https://www.bbc.co.uk/c"); got != StatusNotNeeded {
		t.Errorf("bbc status %s", got)
	}
	for _, n := range w.counts {
		if n != 5 {
			t.Errorf("a wider search ran although pages refuted: counts %v", w.counts)
		}
	}
}

func TestSecondPass(t *testing.T) {
	w := newWorld()
	// The first pass finds only the context page; the wider pass finds AP.
	w.results[5] = []string{"https://www.bbc.co.uk/c"}
	w.results[10] = []string{"https://www.bbc.co.uk/c", "https://apnews.com/b"}
	m := &fakeModel{evidence: quoting}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if statusOf(c, "https://apnews.com/b") != StatusUsed {
		t.Fatalf("second pass page not used: %+v", c.Sources)
	}
	pass2 := 0
	for _, h := range c.Hits {
		if h.Pass == 2 {
			pass2++
		}
	}
	if pass2 != 1 || len(m.evidenceFor) != 2 {
		t.Fatalf("pass-2 hits %d, evidence calls %v", pass2, m.evidenceFor)
	}
}

func TestInventedQuoteAndURL(t *testing.T) {
	w := newWorld()
	m := &fakeModel{
		evidence: func(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
			ref, ctxq, _ := quoting(ctx, in)
			return append(ref, "The mayor admitted the bicycle ban was a hoax invented by bloggers."), ctxq, nil
		},
		correction: func(in CorrectionInput) (string, error) {
			return "This post is false. See " + in.Evidence[0].URL + " and https://made-up.example/story.", nil
		},
	}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	invented := 0
	for _, ev := range c.Evidence {
		if strings.Contains(ev.Quote, "hoax") {
			invented++
			if ev.Verified || ev.Included {
				t.Errorf("invented quote kept: %+v", ev)
			}
		}
	}
	if invented == 0 {
		t.Fatal("the invented quote was not recorded as unverified")
	}
	if strings.Contains(c.Correction.Text, "made-up.example") || len(c.Correction.Warnings) != 1 ||
		!strings.Contains(c.Correction.Warnings[0], "hxxps://made-up[.]example/story") { // named defanged
		t.Fatalf("correction %+v", c.Correction)
	}
}

func TestNoEvidenceCitesNothing(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: func(context.Context, EvidenceInput) ([]string, []string, error) { return nil, nil, nil }}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	// Not "no credible source": pages were not read, and the correction
	// says which (the accounting's sentence).
	want := "5 pages were read and none addresses the post; 1 more shared too few of the post's words to be judged; " +
		"1 more could not be fetched (timed out); 1 more was too short to read; " +
		"1 page was left out because its publisher is not rated a credible reference, so muse cannot write a sourced correction. " +
		"Nothing here says whether the post is true or false."
	if c.Correction.Text != want || len(c.Correction.URLs) != 0 || m.corrections != 0 || !c.Correction.Unsourced() {
		t.Fatalf("correction %+v after %d calls, want %q", c.Correction, m.corrections, want)
	}
	if a := c.Account(); a.Conclusion != ConclusionNothingFound || a.Counts[FateNothing] != 5 || a.Counts[FateOffTopic] != 1 || a.Genuine() {
		t.Errorf("accounting %s %v %+v", a.Conclusion, a.Counts, a.Pages)
	}
}

func TestEverythingFails(t *testing.T) {
	w := newWorld()
	for u, p := range w.pages {
		p.err = fmt.Errorf("fetch %s: connection refused", u)
		w.pages[u] = p
	}
	m := &fakeModel{evidence: quoting}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); !errors.Is(err, ErrNoEvidence) || !strings.Contains(err.Error(), "every page failed to be read") {
		t.Fatalf("every page failed: err %v, want ErrNoEvidence naming the pages", err)
	}
	if want := "8 pages could not be fetched; 1 page was left out because its publisher is not rated a credible reference, so muse cannot write"; !strings.HasPrefix(c.Correction.Text, want) || len(c.Evidence) != 0 {
		t.Fatalf("correction %+v, want it to begin %q", c.Correction, want)
	}
	if a := c.Account(); a.Conclusion != ConclusionNotChecked || a.Counts[FateFetchFailed] != 8 {
		t.Errorf("accounting %+v", a)
	}
	// Nothing found at all is a genuine "no credible source": no error.
	w.results = map[int][]string{}
	c = e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil || c.Correction.Text != NoSourceText {
		t.Fatalf("empty search: %v %+v", err, c.Correction)
	}
}

func TestBadModelAnswers(t *testing.T) {
	w := newWorld()
	m := &fakeModel{
		queries: func(QueriesInput) ([]string, bool, error) {
			return nil, false, fmt.Errorf("parse queries: unexpected end of JSON input: %w", ErrBadAnswer)
		},
		evidence: func(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
			if strings.Contains(in.URL, "reuters") {
				return nil, nil, fmt.Errorf("parse evidence: not JSON: %w", ErrBadAnswer)
			}
			return quoting(ctx, in)
		},
		correction: func(CorrectionInput) (string, error) { return "I'm sorry, but I can't help with that.", nil },
	}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	_, err := runCheck(t, e, c)
	if err == nil || !errors.Is(err, ErrBadAnswer) || !strings.Contains(err.Error(), "declined") {
		t.Fatalf("refusal: err %v", err)
	}
	if len(c.Queries) != 1 || c.Queries[0].Origin != OriginFallback || !strings.Contains(c.Queries[0].Text, "Springfield") {
		t.Fatalf("queries %+v", c.Queries)
	}
	if statusOf(c, "https://apnews.com/b") != StatusUsed {
		t.Fatal("one bad evidence answer stopped the others")
	}
	// Empty answer, and a stream cut mid-way.
	m.correction = func(CorrectionInput) (string, error) { return "", nil }
	if err := e.Run(context.Background(), c, StageCorrection, nil); err == nil || !errors.Is(err, ErrBadAnswer) {
		t.Fatalf("empty correction: %v", err)
	}
	m.correction = func(in CorrectionInput) (string, error) {
		return "This post is false, as " + in.Evidence[0].URL + " rep", errors.New("stream cut before the end")
	}
	err = e.Run(context.Background(), c, StageCorrection, nil)
	if err == nil || !strings.HasSuffix(c.Correction.Text, "rep") || len(c.Correction.Warnings) == 0 {
		t.Fatalf("cut stream: %v %+v", err, c.Correction)
	}
}

func TestBadPosts(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: quoting, queries: func(in QueriesInput) ([]string, bool, error) { return nil, false, nil }}
	e := newTestEngine(t, w, m, Options{})
	for _, text := range []string{"", "   \n\t "} {
		if _, err := runCheck(t, e, e.NewCheck(Post{Text: text}, time.Time{})); !errors.Is(err, ErrEmptyPost) {
			t.Errorf("post %q: err %v", text, err)
		}
	}
	// Only emoji and URLs: nothing to search, so nothing was checked (not
	// "no credible source was found").
	c := e.NewCheck(Post{Text: "🔥🔥 https://t.co/abc 😱"}, time.Time{})
	if _, err := runCheck(t, e, c); !errors.Is(err, ErrNoEvidence) || len(c.Queries) != 0 ||
		c.Correction.Text == NoSourceText || !strings.Contains(c.Correction.Text, "no query was made of the post") {
		t.Errorf("emoji post: %v %+v %+v", err, c.Queries, c.Correction)
	}
	// 50,000 characters: the fallback query is cut, nothing breaks.
	long := strings.Repeat("Springfield banned bicycles on Main Street. ", 1200)
	c = e.NewCheck(Post{Text: long[:50000]}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil || len(strings.Fields(c.Queries[0].Text)) > 32 {
		t.Errorf("long post: %v %+v", err, c.Queries)
	}
}

func TestCancelKeepsPartialResults(t *testing.T) {
	w := newWorld()
	ctx, cancel := context.WithCancel(context.Background())
	m := &fakeModel{evidence: func(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
		cancel() // the person presses Esc while quotes are being read
		<-ctx.Done()
		return nil, nil, ctx.Err()
	}}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	events := make(chan Event, 1024)
	err := e.Run(ctx, c, StageImages, events)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v", err)
	}
	close(events)
	failed := 0
	for ev := range events {
		if ev.Kind == EventStageFailed {
			failed++
			if ev.State != StateFailed || ev.Stage != StageEvidence {
				t.Errorf("failed event for %s carries state %q", ev.Stage, ev.State)
			}
		}
	}
	if failed != 1 {
		t.Errorf("%d stage_failed events, want 1", failed)
	}
	if len(c.Queries) != 3 || len(c.Hits) == 0 || statusOf(c, "https://www.reuters.com/a") != StatusNotNeeded {
		t.Fatalf("partial results lost: %d queries %d hits %+v", len(c.Queries), len(c.Hits), c.Sources)
	}
	for _, st := range c.Stages {
		if st.Stage == StageEvidence && st.State != StateFailed {
			t.Errorf("evidence stage %s after cancel", st.State)
		}
	}
}

func TestRerunKeepsPersonsChoices(t *testing.T) {
	w := newWorld()
	m := &fakeModel{evidence: quoting}
	e := newTestEngine(t, w, m, Options{})
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	// Drop Reuters, untick AP's quote, add a query of one's own.
	c.SourceByURL("https://www.reuters.com/a").Dropped = true
	for i := range c.Evidence {
		if c.Evidence[i].SourceURL == "https://apnews.com/b" {
			c.Evidence[i].Included = false
		}
	}
	if err := e.Run(context.Background(), c, StageEvidence, nil); err != nil {
		t.Fatal(err)
	}
	if statusOf(c, "https://www.reuters.com/a") != StatusDropped {
		t.Error("dropped source used again")
	}
	for _, ev := range c.Evidence {
		if ev.SourceURL == "https://www.reuters.com/a" {
			t.Error("quote from a dropped source")
		}
		if ev.SourceURL == "https://apnews.com/b" && ev.Included {
			t.Error("unticked quote ticked again")
		}
	}
	c.Queries = append(c.Queries, Query{Text: "springfield bicycle lane", Origin: OriginUser, Enabled: true})
	fetchedBefore := len(w.fetched)
	if err := e.Run(context.Background(), c, StageSearch, nil); err != nil {
		t.Fatal(err)
	}
	if !c.SourceByURL("https://www.reuters.com/a").Dropped {
		t.Error("drop forgotten after a new search")
	}
	if len(w.fetched) != fetchedBefore+1 { // only the page that failed is fetched again
		t.Errorf("pages fetched again: %v", w.fetched[fetchedBefore:])
	}
}

func TestNoLLMDigest(t *testing.T) {
	w := newWorld()
	e, err := New(Deps{Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{NoLLM: true})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	if !c.NoLLM || !strings.HasPrefix(c.Correction.Text, DigestHeading) || len(c.Correction.URLs) < 2 {
		t.Fatalf("digest %+v", c.Correction)
	}
	for _, ev := range c.Evidence {
		if ev.Kind != KindContext || !VerifyQuote(ev.Quote, strings.Join(c.SourceByURL(ev.SourceURL).Paragraphs, "\n")) {
			t.Errorf("digest evidence %+v", ev)
		}
	}
	for _, q := range c.Queries {
		if q.Origin != OriginFallback {
			t.Errorf("query %+v", q)
		}
	}
	if c.Usage.LLMCalls != 0 {
		t.Error("model called in --no-llm mode")
	}
	// No model judged the pages the digest left out: none is said to have
	// been passed over because others refuted the post.
	for _, s := range c.Sources {
		if strings.Contains(s.Reason, "refuted") {
			t.Errorf("source %s: %q in --no-llm mode", s.URL, s.Reason)
		}
	}
	// A digest of one page leaves the other eligible pages unread, and says why.
	e1, err := New(Deps{Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{NoLLM: true, DigestPages: 1})
	if err != nil {
		t.Fatal(err)
	}
	c1 := e1.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e1, c1); err != nil {
		t.Fatal(err)
	}
	var unread int
	for _, s := range c1.Sources {
		if s.Status == StatusNotNeeded && strings.Contains(s.Reason, "1 best-ranked") {
			unread++
		}
	}
	if unread == 0 {
		t.Errorf("a one-page digest left no page marked as left out of the digest: %+v", c1.Sources)
	}
	if _, err := New(Deps{Fetcher: w, Extract: w.extract, Rater: w}, Options{}); !errors.Is(err, ErrNoModel) {
		t.Errorf("no model: %v", err)
	}
}

// TestNoLLMDigestLeavesOutLooseMatches: a page that shares a word or two
// with the post passes the gate (a model would judge it), but no model
// judges the digest, so it is not listed there, and says why; a query the
// checker writes can bring it in.
func TestNoLLMDigestLeavesOutLooseMatches(t *testing.T) {
	w := newWorld()
	const loose = "https://loose.example/j"
	w.pages[loose] = fakePage{title: "Shelbyville library", date: "2024-01-04", paras: []string{
		strings.Repeat("The mayor of Shelbyville opened the new library today after years of delays. ", 12)}}
	w.results[5] = append(w.results[5], loose)
	e, err := New(Deps{Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{NoLLM: true, DigestPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	s := c.SourceByURL(loose)
	if s == nil || s.Relevance < e.opts.LexicalThreshold {
		t.Fatalf("the loose page should pass the gate for a model to judge: %+v", s)
	}
	if s.Status != StatusIrrelevant || !strings.Contains(s.Reason, "without a model") {
		t.Errorf("loose page in the digest: %s %q", s.Status, s.Reason)
	}
	if !strings.HasPrefix(c.Correction.Text, DigestHeading) || strings.Contains(c.Correction.Text, loose) {
		t.Errorf("digest %q", c.Correction.Text)
	}
	c.Queries = append(c.Queries, Query{Text: "Shelbyville library mayor", Origin: OriginUser, Enabled: true})
	if err := e.Run(context.Background(), c, StageSearch, nil); err != nil {
		t.Fatal(err)
	}
	if s := c.SourceByURL(loose); s.Status != StatusUsed || !strings.Contains(c.Correction.Text, loose) {
		t.Errorf("the checker's query did not bring the page in: %s %q", s.Status, s.Reason)
	}
}

// TestBoostBringsBackAPageOffTheSubject: the relevance gate is a count of
// shared words, and the checker may know better. A page it kept out comes
// back when the checker boosts it and the pages are read again, with a
// model judging it and in the --no-llm digest alike.
func TestBoostBringsBackAPageOffTheSubject(t *testing.T) {
	const loose = "https://loose.example/j"
	for _, noLLM := range []bool{false, true} {
		w := newWorld()
		w.pages[loose] = fakePage{title: "Shelbyville library", date: "2024-01-04", paras: []string{
			strings.Repeat("The mayor of Shelbyville opened the new library today after years of delays. ", 12)}}
		w.results[5] = append(w.results[5], loose)
		var e *Engine
		if noLLM {
			var err error
			if e, err = New(Deps{Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{NoLLM: true, DigestPages: 10}); err != nil {
				t.Fatal(err)
			}
		} else {
			e = newTestEngine(t, w, &fakeModel{evidence: quoting}, Options{LexicalThreshold: 0.9})
		}
		c := e.NewCheck(Post{Text: post}, time.Time{})
		if _, err := runCheck(t, e, c); err != nil {
			t.Fatal(err)
		}
		if s := c.SourceByURL(loose); s == nil || s.Status != StatusIrrelevant {
			t.Fatalf("no-llm %v: the page should be kept out first: %+v", noLLM, s)
		}
		c.SourceByURL(loose).Boosted = true
		if err := e.Run(context.Background(), c, StageSearch, nil); err != nil {
			t.Fatal(err)
		}
		s := c.SourceByURL(loose)
		if s.Status == StatusIrrelevant || !s.Boosted {
			t.Errorf("no-llm %v: boosted page still kept out: %s %q", noLLM, s.Status, s.Reason)
		}
		if noLLM && !strings.Contains(c.Correction.Text, loose) {
			t.Errorf("the boosted page is not in the digest: %q", c.Correction.Text)
		}
		if !noLLM && s.Status != StatusUsed && s.Status != StatusNotNeeded {
			t.Errorf("the boosted page was not read for evidence: %s %q", s.Status, s.Reason)
		}
	}
}
