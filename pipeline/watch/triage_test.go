package watch

import (
	"context"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/feeds/feedtest"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
	"github.com/musecheck/muse/sources/posts"
)

// claimMatcher matches the one claim it holds, as the archive would: a
// text that holds its words.
type claimMatcher struct {
	calls  int
	posted []time.Time // the post times it was given
	mu     sync.Mutex
}

func (m *claimMatcher) MatchFactChecks(_ context.Context, text, lang string, posted time.Time) ([]pipeline.FactCheck, error) {
	m.mu.Lock()
	m.calls++
	m.posted = append(m.posted, posted)
	m.mu.Unlock()
	if !strings.Contains(strings.ToLower(text), "5g") || !strings.Contains(strings.ToLower(text), "coronavirus") {
		return nil, nil
	}
	return []pipeline.FactCheck{{Claim: "5G networks spread the coronavirus", Rating: "False", Reviewer: "PolitiFact",
		URL: "https://www.politifact.com/factchecks/2020/apr/06/facebook-posts/5g-coronavirus/", ReviewDate: time.Date(2020, 4, 6, 0, 0, 0, 0, time.UTC),
		ReviewerVerified: true, Score: 0.9}}, nil
}

// lengthScorer scores by a rule a test can predict: a text that holds a
// number is worthy (0.9), another is not (0.1). It counts its calls.
type lengthScorer struct {
	mu    sync.Mutex
	calls [][]string
	fail  error
}

func (s *lengthScorer) Worthiness(_ context.Context, texts []string) ([]prompts.WorthinessScore, pipeline.CallUsage, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, texts)
	if s.fail != nil {
		return nil, pipeline.CallUsage{}, s.fail
	}
	out := make([]prompts.WorthinessScore, len(texts))
	for i, t := range texts {
		out[i] = prompts.WorthinessScore{Score: 0.1, Reason: "no figure", OK: true}
		if strings.ContainsAny(t, "0123456789") {
			out[i] = prompts.WorthinessScore{Score: 0.9, Reason: "a figure", OK: true}
		}
	}
	return out, pipeline.CallUsage{}, nil
}

func openStore(t *testing.T, path string) *Store {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

const did = "did:plc:ewvi7nxzyoun6zhxrhs64oiz"

// watchUntil runs a triage over f until the store holds want posts.
func watchUntil(t *testing.T, tr *Triage, st *Store, f feeds.Feed, want int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- tr.Watch(ctx, f) }()
	for {
		n, err := st.PostsSeen(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if n >= want {
			break
		}
		select {
		case err := <-done:
			t.Fatalf("the watch ended with %d of %d posts: %v", n, want, err)
		case <-time.After(5 * time.Millisecond):
		}
	}
	cancel()
	if err := <-done; !errors.Is(err, context.Canceled) {
		t.Errorf("Watch: %v", err)
	}
}

func TestTriageClustersMatchesAndQueues(t *testing.T) {
	texts := []string{
		"BREAKING: 5G towers are spreading the coronavirus, the government knows it https://t.co/abc123",
		"RT @healthwatch: BREAKING: 5G towers are spreading the coronavirus, the government knows it https://t.co/zzz999",
		"breaking 5g towers are spreading the coronavirus, the government knows it!!",
		"Unemployment fell to 3.9% in April, the lowest since 2001, the Bureau of Labor Statistics said.",
		"Lovely walk by the river this morning with the dog and a coffee.",
		"Good morning",
	}
	var ev [][]byte
	for i, s := range texts {
		ev = append(ev, feedtest.PostEvent(did, fmt.Sprintf("3l3qo2vut%03d", i), 1725911162000000+int64(i)*1000, s))
	}
	srv := feedtest.NewJetstream(t, ev)
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	m, sc := &claimMatcher{}, &lengthScorer{}
	var queued [][]Cluster
	tr, err := New(context.Background(), Options{Store: st, Matcher: m, Scorer: sc, BatchSize: 3, BatchWait: 20 * time.Millisecond,
		Rule: Rule{Threshold: 0.7, PerHour: 5},
		Enqueue: func(_ context.Context, cs []Cluster) (string, error) {
			queued = append(queued, cs)
			return fmt.Sprintf("b-%d", len(queued)), nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	watchUntil(t, tr, st, &feeds.Jetstream{URL: srv.URL()}, len(texts))
	// Let the last batch be scored: the watch was stopped, so it is
	// scored on the next start.
	cs, err := st.Ranked(context.Background(), 0)
	if err != nil {
		t.Fatal(err)
	}
	if len(cs) != 4 {
		t.Fatalf("%d clusters, want 4 (the three copies of the 5G claim in one): %+v", len(cs), cs)
	}
	top := cs[0]
	if top.Size != 3 || !strings.Contains(top.Post.Text, "5G towers") || top.Lang != "en" {
		t.Errorf("first cluster: size %d, %q, %q", top.Size, top.Post.Text, top.Lang)
	}
	if a := top.Alert(); a != "repeat of a claim PolitiFact rated False on 2020-04-06" {
		t.Errorf("alert %q", a)
	}
	if m.calls != 4 {
		t.Errorf("the matcher was asked %d times, want once per cluster (4)", m.calls)
	}
	// Triage gives the post's time, so that only fact-checks out by then
	// are repeats.
	for _, p := range m.posted {
		if p.Before(time.UnixMicro(1725911162000000)) || p.After(time.UnixMicro(1725911162000000+int64(len(texts))*1000)) {
			t.Errorf("the matcher was given the post time %v, not the post's", p)
		}
	}
	for _, c := range cs[1:] {
		if len(c.FactChecks) > 0 {
			t.Errorf("cluster %q matched %+v", c.Post.Text, c.FactChecks)
		}
	}
}

func TestTriageScoresInBatchesAndAppliesTheRule(t *testing.T) {
	eachEngine(t, testScoresInBatches)
}

// eachEngine runs test on a new SQLite store's location and on a new
// PostgreSQL database (skipped, saying so, without MUSE_TEST_DATABASE_URL).
func eachEngine(t *testing.T, test func(t *testing.T, location string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "watch.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgdbtest.Fresh(t)) })
}

func testScoresInBatches(t *testing.T, location string) {
	st := openStore(t, location)
	sc := &lengthScorer{}
	var queued []Cluster
	spent := 0.0
	tr, err := New(context.Background(), Options{Store: st, Scorer: sc, BatchSize: 4, BatchWait: time.Hour,
		Rule: Rule{Threshold: 0.7, PerHour: 2, SpendCapUSD: 5, Spent: func(context.Context) (float64, error) { return spent, nil }},
		Enqueue: func(_ context.Context, cs []Cluster) (string, error) {
			queued = append(queued, cs...)
			return "b-20261206-120000-0123abcd", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	posts := []string{"Inflation hit 9.1% in June", "What a lovely day it is today", "The bill cuts 40,000 jobs in the NHS",
		"Crime rose 20% in London last year", "A quiet evening with friends and games", "Turnout was 67% in the 2019 election",
		"The moon landing took place in 1969 in July", "Another ordinary walk in the park today"}
	fs := &listFeed{name: "test", texts: posts}
	ctx := context.Background()
	if err := tr.Watch(ctx, fs); err != nil {
		t.Fatal(err)
	}
	if len(sc.calls) != 2 || len(sc.calls[0]) != 4 || len(sc.calls[1]) != 4 {
		t.Errorf("scoring calls %d (sizes %v), want 2 of 4 posts", len(sc.calls), sc.calls)
	}
	if len(queued) != 2 {
		t.Fatalf("%d queued, want 2 (the budget of an hour)", len(queued))
	}
	cs, _ := st.Ranked(ctx, 0)
	states := map[string]int{}
	for _, c := range cs {
		states[c.State]++
		if c.Score == nil {
			t.Errorf("%q not scored: %s", c.Post.Text, c.ScoreNote)
		}
		if c.State == StateHeld && !strings.Contains(c.StateNote, "budget of 2 posts an hour") {
			t.Errorf("held for %q", c.StateNote)
		}
		if c.State == StateQueued && c.BatchID != "b-20261206-120000-0123abcd" {
			t.Errorf("queued cluster without its batch: %+v", c)
		}
	}
	if states[StateQueued] != 2 || states[StateHeld] != 3 || states[StateNew] != 3 {
		t.Errorf("states %v, want 2 queued, 3 held (worthy past the budget), 3 new (not worthy)", states)
	}
	// The day's spend cap reached: nothing more is queued.
	spent = 5.5
	fs2 := &listFeed{name: "test2", texts: []string{"GDP grew 2.5% in 2023 says the ONS", "Exports fell 12% in May"}}
	if err := tr.Watch(ctx, fs2); err != nil {
		t.Fatal(err)
	}
	cs, _ = st.Ranked(ctx, 0)
	for _, c := range cs {
		if strings.Contains(c.Post.Text, "GDP") && (c.State != StateHeld || !strings.Contains(c.StateNote, "spend cap is reached ($5.50 of $5.00)")) {
			t.Errorf("past the spend cap: %s %q", c.State, c.StateNote)
		}
	}
}

func TestTriageWithoutAModelSaysSo(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	tr, err := New(context.Background(), Options{Store: st, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watch(context.Background(), &listFeed{name: "x", texts: []string{"Inflation hit 9.1% in June"}}); err != nil {
		t.Fatal(err)
	}
	cs, _ := st.Ranked(context.Background(), 0)
	if len(cs) != 1 || cs[0].Score != nil || cs[0].ScoreNote != "not scored: no model configured" || cs[0].State != StateNew {
		t.Errorf("without a model: %+v", cs)
	}
}

func TestTriageRestartLosesAndRepeatsNothing(t *testing.T) {
	eachEngine(t, testRestart)
}

func testRestart(t *testing.T, path string) {
	var ev [][]byte
	const n = 60
	for i := range n {
		ev = append(ev, feedtest.PostEvent(did, fmt.Sprintf("r%03d", i), 1725911162000000+int64(i)*1000,
			fmt.Sprintf("Claim number %d: the council spent %d million on consultants in %d", i, i*7, 2000+i%20)))
	}
	srv := feedtest.NewJetstream(t, ev)
	sc := &lengthScorer{}
	ctx := context.Background()

	// A first process is stopped (Ctrl-C) after 25 posts.
	st := openStore(t, path)
	tr, err := New(ctx, Options{Store: st, Scorer: sc, BatchSize: 7, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	wctx, stop := context.WithCancel(ctx)
	if err := tr.Watch(wctx, &stopAfter{Feed: &feeds.Jetstream{URL: srv.URL()}, n: 25, stop: stop}); !errors.Is(err, context.Canceled) {
		t.Fatalf("first watch: %v", err)
	}
	kept, _ := st.PostsSeen(ctx)
	if kept < 25 {
		t.Fatalf("%d posts kept after a stop at 25", kept)
	}
	st.Close()

	// A second one dies outright halfway through its transaction: what it
	// had not committed is read again by the next.
	st = openStore(t, path)
	tr, err = New(ctx, Options{Store: st, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	f := &feeds.Jetstream{URL: srv.URL()}
	cursor, _ := st.Cursor(ctx, f.Name())
	handled := 0
	errStop := errors.New("killed")
	f.Run(ctx, cursor, func(p feeds.Post) error {
		if _, err := tr.Handle(ctx, f.Name(), p); err != nil {
			t.Fatal(err)
		}
		if handled++; handled == 10 {
			return errStop
		}
		return nil
	})
	tr.rollback() // as a crash leaves it
	st.Close()

	// A third one reads the rest.
	st = openStore(t, path)
	tr, err = New(ctx, Options{Store: st, Scorer: sc, BatchSize: 7, BatchWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	watchUntil(t, tr, st, &feeds.Jetstream{URL: srv.URL()}, n)
	if got, _ := st.PostsSeen(ctx); got != n {
		t.Errorf("%d posts kept, want %d: lost or repeated", got, n)
	}
	cs, _ := st.Recent(ctx, 1000)
	sizes := 0
	for _, c := range cs {
		sizes += c.Size
	}
	if sizes != n {
		t.Errorf("cluster sizes add up to %d, want %d: a post counted twice", sizes, n)
	}
	qs := srv.Queries()
	if len(qs) != 3 || strings.Contains(qs[0], "cursor=") || !strings.Contains(qs[1], "cursor=") || !strings.Contains(qs[2], "cursor=") {
		t.Errorf("subscriptions %q: want the second and third from the kept cursor", qs)
	}
	// Every cluster read before a stop but not scored then is scored by
	// the next process, first.
	for deadline := time.Now().Add(10 * time.Second); time.Now().Before(deadline); time.Sleep(5 * time.Millisecond) {
		if left, err := st.unscored(ctx, false); err != nil || len(left) == 0 {
			break
		}
		wctx, cancel := context.WithCancel(ctx)
		done := make(chan error, 1)
		go func() { done <- tr.Watch(wctx, &feeds.Jetstream{URL: srv.URL()}) }()
		time.Sleep(50 * time.Millisecond)
		cancel()
		<-done
	}
	cs, _ = st.Recent(ctx, 1000)
	for _, c := range cs {
		if c.Score == nil && c.ScoreNote == "" {
			t.Errorf("cluster %d (%q) never scored", c.ID, c.Post.Text)
		}
	}
}

// stopAfter cancels the watch once n posts were delivered.
type stopAfter struct {
	feeds.Feed
	n    int
	stop func()
}

func (s *stopAfter) Run(ctx context.Context, cursor string, emit func(feeds.Post) error) error {
	seen := 0
	return s.Feed.Run(ctx, cursor, func(p feeds.Post) error {
		if err := emit(p); err != nil {
			return err
		}
		if p.Post != nil {
			if seen++; seen == s.n {
				s.stop()
			}
		}
		return nil
	})
}

// listFeed delivers its texts as posts, then ends.
type listFeed struct {
	name  string
	texts []string
}

func (l *listFeed) Name() string { return l.name }

func (l *listFeed) Run(ctx context.Context, cursor string, emit func(feeds.Post) error) error {
	for i, s := range l.texts {
		if err := emit(feeds.Post{ID: fmt.Sprintf("%s/%d", l.name, i), Cursor: fmt.Sprint(i), Post: postOf(s)}); err != nil {
			return err
		}
	}
	return nil
}

func postOf(text string) *posts.Post { return &posts.Post{Text: text, Platform: "Bluesky"} }

func TestTriageReadsPostsGivenByURL(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	read := map[string]int{}
	tr, err := New(context.Background(), Options{Store: st, BatchWait: time.Hour,
		Read: func(_ context.Context, u string) (*posts.Post, error) {
			read[u]++
			if strings.Contains(u, "gone") {
				return nil, errors.New("404 Not Found")
			}
			return &posts.Post{URL: u, Text: "The council spent 40 million pounds on consultants last year", Platform: "Mastodon"}, nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	var warned []string
	tr.o.Warn = func(s string) { warned = append(warned, s) }
	urls := []string{"https://mastodon.example/@a/1", "https://mastodon.example/@b/2", "https://mastodon.example/@c/gone"}
	f := &urlFeed{urls: urls}
	if err := tr.Watch(context.Background(), f); err != nil {
		t.Fatal(err)
	}
	cs, _ := st.Ranked(context.Background(), 0)
	if len(cs) != 1 || cs[0].Size != 2 || cs[0].Post.Text == "" || read[urls[0]] != 1 {
		t.Errorf("clusters %+v, reads %v: want the two readable posts read once each, one cluster of 2", cs, read)
	}
	if len(warned) != 1 || !strings.Contains(warned[0], "gone: 404 Not Found (skipped)") {
		t.Errorf("warnings %q", warned)
	}
	if c, _ := st.Cursor(context.Background(), "urls"); c != "3" {
		t.Errorf("cursor %q after three lines, want 3 (the unreadable one passed too)", c)
	}
}

type urlFeed struct{ urls []string }

func (u *urlFeed) Name() string { return "urls" }

func (u *urlFeed) Run(ctx context.Context, cursor string, emit func(feeds.Post) error) error {
	for i, s := range u.urls {
		if err := emit(feeds.Post{ID: s, Cursor: fmt.Sprint(i + 1), Post: &posts.Post{URL: s}}); err != nil {
			return err
		}
	}
	return nil
}

// The same image (the same blob CID on Bluesky) under other words joins
// the cluster of the first post that showed it.
func TestTriageClustersByImage(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	tr, err := New(context.Background(), Options{Store: st, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	cid := "bafkreibjfgx2gprinfvicegelk5kosd6y2frmqpqzwqkg7usac74l3t2v4"
	for i, p := range []feeds.Post{
		{ID: "a", Post: postOf("Look at this chart of measles cases by year in the United States"), ImageKeys: []string{cid}},
		{ID: "b", Post: postOf("wow!!"), ImageKeys: []string{cid}},
		{ID: "c", Post: postOf("A completely different post about the weather in Leeds today")},
	} {
		p.Cursor = fmt.Sprint(i)
		if _, err := tr.Handle(ctx, "f", p); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	cs, _ := st.Ranked(ctx, 0)
	if len(cs) != 2 {
		t.Fatalf("%d clusters, want 2: %+v", len(cs), cs)
	}
	for _, c := range cs {
		if strings.Contains(c.Post.Text, "measles") && c.Size != 2 {
			t.Errorf("the post with the same image did not join: size %d", c.Size)
		}
	}
}

// flakyScorer fails its first calls (a model server down or restarting),
// then scores as lengthScorer does.
type flakyScorer struct {
	lengthScorer
	failing int
}

func (s *flakyScorer) Worthiness(ctx context.Context, texts []string) ([]prompts.WorthinessScore, pipeline.CallUsage, error) {
	s.mu.Lock()
	if s.failing > 0 {
		s.failing--
		s.calls = append(s.calls, texts)
		s.mu.Unlock()
		return nil, pipeline.CallUsage{}, errors.New("llm chat completion: server unreachable")
	}
	s.mu.Unlock()
	return s.lengthScorer.Worthiness(ctx, texts)
}

// waitFeed delivers its texts, then waits for the end of the watch: a
// stream.
type waitFeed struct{ listFeed }

func (w *waitFeed) Run(ctx context.Context, cursor string, emit func(feeds.Post) error) error {
	if err := w.listFeed.Run(ctx, cursor, emit); err != nil {
		return err
	}
	<-ctx.Done()
	return ctx.Err()
}

// A model server that fails for a while does not leave the posts of that
// while unscored for good: the watch tries them again, and a later start
// scores those it could not, as it does those read with no model.
func TestTriageScoresAgainAfterTheModelFailed(t *testing.T) {
	dir := t.TempDir()
	st := openStore(t, filepath.Join(dir, "watch.db"))
	sc := &flakyScorer{failing: 2}
	tr, err := New(context.Background(), Options{Store: st, Scorer: sc, BatchSize: 2, BatchWait: 10 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	done := make(chan error, 1)
	go func() {
		done <- tr.Watch(ctx, &waitFeed{listFeed{name: "live", texts: []string{"Inflation hit 9.1% in June", "Nice sunset tonight over the bay"}}})
	}()
	for {
		cs, _ := st.Ranked(ctx, 0)
		if len(cs) == 2 && cs[0].Score != nil && cs[1].Score != nil {
			if *cs[0].Score != 0.9 || cs[0].ScoreNote != "a figure" {
				t.Errorf("scored again: %+v", cs[0])
			}
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the posts the failing model server left were never scored again: %+v", cs)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if len(sc.calls) < 3 {
		t.Errorf("%d calls, want the two failures then a success", len(sc.calls))
	}

	// Read with no model (or while the server failed, then stopped):
	// scored by the next start that has one.
	st2 := openStore(t, filepath.Join(dir, "later.db"))
	tr, err = New(context.Background(), Options{Store: st2, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watch(context.Background(), &listFeed{name: "x", texts: []string{"Inflation hit 9.1% in June"}}); err != nil {
		t.Fatal(err)
	}
	tr, err = New(context.Background(), Options{Store: st2, Scorer: &lengthScorer{}, BatchWait: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watch(context.Background(), &listFeed{name: "x"}); err != nil {
		t.Fatal(err)
	}
	cs, _ := st2.Ranked(context.Background(), 0)
	if len(cs) != 1 || cs[0].Score == nil || *cs[0].Score != 0.9 {
		t.Errorf("a post read with no model, after a start with one: %+v", cs)
	}
}

// A feed that cannot connect is said in the watch's warnings, by name
// (the terminal's status line, stderr with --json): never retried in
// silence.
func TestTriageSaysADeadFeed(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	var mu sync.Mutex
	var said []string
	tr, err := New(context.Background(), Options{Store: st, BatchWait: time.Hour, Warn: func(s string) {
		mu.Lock()
		said = append(said, s)
		mu.Unlock()
	}})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	done := make(chan error, 1)
	m := &feeds.Mastodon{Instance: dead.URL, Timeline: "hashtag", Tag: "5G", Backoff: feeds.Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	go func() { done <- tr.Watch(ctx, m) }()
	for {
		mu.Lock()
		got := strings.Join(said, "\n")
		mu.Unlock()
		if strings.Contains(got, m.Name()+": mastodon: ") && strings.Contains(got, "connecting again in") {
			break
		}
		if ctx.Err() != nil {
			t.Fatalf("the dead feed was not said: %q", got)
		}
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
}

// A threshold of 0 queues every post scored, as `muse watch --threshold 0`
// says, rather than falling back to the default; one that is not a score
// is refused.
func TestTriageThresholdZeroQueuesEveryScoredPost(t *testing.T) {
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	var queued []Cluster
	tr, err := New(context.Background(), Options{Store: st, Scorer: &lengthScorer{}, BatchWait: time.Hour, Rule: Rule{Threshold: 0},
		Enqueue: func(_ context.Context, cs []Cluster) (string, error) {
			queued = append(queued, cs...)
			return "b-1", nil
		}})
	if err != nil {
		t.Fatal(err)
	}
	if err := tr.Watch(context.Background(), &listFeed{name: "x", texts: []string{"Lovely walk by the river this morning", "Inflation hit 9.1% in June"}}); err != nil {
		t.Fatal(err)
	}
	if len(queued) != 2 {
		t.Errorf("threshold 0 queued %d posts, want both (scored 0.1 and 0.9)", len(queued))
	}
	for _, bad := range []float64{-0.1, 1.5, math.NaN()} {
		if _, err := New(context.Background(), Options{Store: st, Rule: Rule{Threshold: bad}}); err == nil {
			t.Errorf("threshold %v accepted", bad)
		}
	}
}
