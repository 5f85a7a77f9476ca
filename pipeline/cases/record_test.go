package cases

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

type snapCall struct {
	url, final, text string
	raw              []byte
	header           http.Header
}

// memSnaps records SaveSnapshot calls; fail makes the next call fail.
type memSnaps struct {
	mu    sync.Mutex
	calls []snapCall
	fail  bool
}

func (m *memSnaps) SaveSnapshot(ctx context.Context, id, u, final string, at time.Time, text string, raw []byte) error {
	return m.SaveSnapshotHeaders(ctx, id, u, final, at, text, raw, nil)
}

func (m *memSnaps) SaveSnapshotHeaders(_ context.Context, id, u, final string, _ time.Time, text string, raw []byte, header http.Header) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		m.fail = false
		return errors.New("disk full")
	}
	m.calls = append(m.calls, snapCall{u, final, text, raw, header})
	return nil
}

// TestSnapshotterSavesUsedPagesOnce: quoted, used and boosted sources are
// stored, others not; a second Save stores nothing new; a page read again
// (a new FetchedAt) is stored again; a failed write is tried again.
func TestSnapshotterSavesUsedPagesOnce(t *testing.T) {
	t0 := time.Date(2024, 3, 4, 0, 0, 0, 0, time.UTC)
	c := &pipeline.Check{ID: "case1", Sources: []pipeline.Source{
		{URL: "https://a.example/1", FinalURL: "https://a.example/one", Status: pipeline.StatusUsed, Paragraphs: []string{"p1", "p2"}, FetchedAt: t0},
		{URL: "https://b.example/2", Status: pipeline.StatusBoosted, Paragraphs: []string{"b"}, FetchedAt: t0},
		{URL: "https://c.example/3", Status: pipeline.StatusNotNeeded, Paragraphs: []string{"c"}, FetchedAt: t0},
		{URL: "https://d.example/4", Status: pipeline.StatusExcludedRating, FetchedAt: t0},
	}, Evidence: []pipeline.Evidence{{SourceURL: "https://a.example/one", Quote: "p1"}}}
	st := &memSnaps{fail: true}
	s := &Snapshotter{Store: st, Pages: func(u string) ([]byte, bool) {
		if u == "https://a.example/one" {
			return []byte("<p>p1</p>"), true
		}
		return nil, false
	}, Headers: func(u string) (http.Header, bool) {
		if u == "https://a.example/one" {
			return http.Header{"Content-Type": {"text/html"}, "Etag": {`"v1"`}}, true
		}
		return nil, false
	}}
	ctx := context.Background()
	if err := s.Save(ctx, c); err == nil {
		t.Fatal("a failed write was not reported")
	}
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if len(st.calls) != 2 {
		t.Fatalf("stored %d pages, want the used and the boosted one: %+v", len(st.calls), st.calls)
	}
	got := map[string]snapCall{}
	for _, call := range st.calls {
		got[call.url] = call
	}
	a := got["https://a.example/1"]
	if a.final != "https://a.example/one" || a.text != "p1\n\np2" || string(a.raw) != "<p>p1</p>" || a.header.Get("ETag") != `"v1"` {
		t.Errorf("used page stored as %+v", a)
	}
	if _, ok := got["https://b.example/2"]; !ok {
		t.Errorf("boosted page not stored: %+v", st.calls)
	}
	if err := s.Save(ctx, c); err != nil || len(st.calls) != 2 {
		t.Errorf("a second Save stored again (%d calls, %v)", len(st.calls), err)
	}
	c.Sources[0].FetchedAt = t0.Add(time.Hour)
	if err := s.Save(ctx, c); err != nil || len(st.calls) != 3 || st.calls[2].url != "https://a.example/1" {
		t.Errorf("a page read again was not stored again: %+v, %v", st.calls, err)
	}
}

// memCases records the correction text of every Save.
type memCases struct {
	memSnaps
	saves []string
}

func (m *memCases) Save(_ context.Context, c *pipeline.Check) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.saves = append(m.saves, c.Correction.Text)
	return nil
}

func (m *memCases) SaveDraft(context.Context, string, string, bool) error { return nil }

func (m *memCases) Audit(context.Context, string, string, string) error { return nil }

func (m *memCases) texts() []string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return append([]string(nil), m.saves...)
}

// TestStreamedCorrectionIsSaved: the correction is saved as it streams, at
// most a second behind (so kill -9 loses at most a second of it), and not
// once per token.
func TestStreamedCorrectionIsSaved(t *testing.T) {
	st := &memCases{}
	at := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	var clock sync.Mutex
	now := func() time.Time { clock.Lock(); defer clock.Unlock(); return at }
	advance := func(d time.Duration) { clock.Lock(); at = at.Add(d); clock.Unlock() }
	r := &recording{o: RecordOptions{Store: st}, id: "c1", now: now}
	ctx := context.Background()
	snap := &pipeline.Check{ID: "c1"}
	r.event(ctx, pipeline.Event{Kind: pipeline.EventStageStarted, Stage: pipeline.StageCorrection, Check: snap})
	r.event(ctx, pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: "This post "})
	for i := 0; i < 50; i++ { // fifty tokens within the same second: no save each
		r.event(ctx, pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: "."})
	}
	got := st.texts()
	if len(got) != 2 || got[1] != "This post " {
		t.Fatalf("saves after the first second's tokens: %q; want the start, then the first token at once", got)
	}
	advance(1100 * time.Millisecond)
	r.event(ctx, pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: "is false"})
	got = st.texts()
	if last := got[len(got)-1]; last != "This post "+strings.Repeat(".", 50)+"is false" {
		t.Errorf("after a second the whole text so far is saved; got %q", last)
	}
	// Tokens that arrive and then stop are saved by the timer within a second.
	r.event(ctx, pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: " and"})
	deadline := time.Now().Add(3 * time.Second)
	for !strings.HasSuffix(st.texts()[len(st.texts())-1], " and") {
		if time.Now().After(deadline) {
			t.Fatalf("the last tokens were never saved: %q", st.texts())
		}
		time.Sleep(20 * time.Millisecond)
	}
	// The finished correction comes as an item; the stream stops there.
	done := &pipeline.Check{ID: "c1", Correction: pipeline.Correction{Text: "This post is false."}}
	r.event(ctx, pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageCorrection, Item: done.Correction, Check: done})
	n := len(st.texts())
	r.event(ctx, pipeline.Event{Kind: pipeline.EventTokenDelta, Stage: pipeline.StageCorrection, Delta: "late"})
	advance(2 * time.Second)
	r.stopStream()
	if got := st.texts(); len(got) != n || got[n-1] != "This post is false." {
		t.Errorf("after the correction item: %q", got)
	}
}

// slowCases is memCases whose saves wait for a word on gate, and whose
// snapshots wait for one on snapGate (when set).
type slowCases struct {
	memCases
	gate, snapGate chan struct{}
	// order is what was written, in order: "save TEXT" or "snapshot URL".
	omu   sync.Mutex
	order []string
	// inSave counts the saves under way, most the most at once; inSnap
	// the snapshots.
	inSave, most, inSnap int
}

func (m *slowCases) note(s string) {
	m.omu.Lock()
	m.order = append(m.order, s)
	m.omu.Unlock()
}

func (m *slowCases) written() []string {
	m.omu.Lock()
	defer m.omu.Unlock()
	return append([]string(nil), m.order...)
}

func (m *slowCases) Save(ctx context.Context, c *pipeline.Check) error {
	m.omu.Lock()
	m.inSave++
	m.most = max(m.most, m.inSave)
	m.omu.Unlock()
	<-m.gate
	m.omu.Lock()
	m.inSave--
	m.omu.Unlock()
	m.note("save " + c.Correction.Text)
	return m.memCases.Save(ctx, c)
}

func (m *slowCases) SaveSnapshotHeaders(ctx context.Context, id, u, final string, at time.Time, text string, raw []byte, header http.Header) error {
	m.omu.Lock()
	m.inSnap++
	m.omu.Unlock()
	if m.snapGate != nil {
		<-m.snapGate
	}
	m.note("snapshot " + u)
	return m.memCases.SaveSnapshotHeaders(ctx, id, u, final, at, text, raw, header)
}

// TestItemsSavedInTheBackground: with nobody shown the events, what a
// stage does as it goes (its start, items, warnings) does not wait for
// the store: the events that come during a save are saved together, the
// newest Check. A stage's end waits for the save under way and saves its
// own Check, newer than the one left waiting (which is not saved), so
// that what came before the next model call is kept; the saves are one at
// a time.
func TestItemsSavedInTheBackground(t *testing.T) {
	st := &slowCases{gate: make(chan struct{})}
	r := &recording{o: RecordOptions{Store: st}, id: "c1", now: time.Now, background: true}
	ctx := context.Background()
	check := func(text string) *pipeline.Check {
		return &pipeline.Check{ID: "c1", Correction: pipeline.Correction{Text: text}}
	}
	returned := make(chan struct{})
	go func() {
		r.event(ctx, pipeline.Event{Kind: pipeline.EventStageStarted, Stage: pipeline.StageSearch, Check: check("search started")})
		for _, text := range []string{"hit 1", "hit 2", "hit 3"} {
			r.event(ctx, pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSearch, Item: pipeline.Hit{URL: "https://a.example/"}, Check: check(text)})
		}
		r.event(ctx, pipeline.Event{Kind: pipeline.EventWarning, Stage: pipeline.StageSearch, Message: "one provider failed", Check: check("warned")})
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("a stage's start, item or warning waited for the store")
	}
	// One of those saves is under way (waiting at the gate) when the
	// stage ends.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		st.omu.Lock()
		n := st.inSave
		st.omu.Unlock()
		if n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no save under way in the background")
		}
	}
	finished := make(chan struct{})
	go func() {
		r.event(ctx, pipeline.Event{Kind: pipeline.EventStageFinished, Stage: pipeline.StageSearch, Check: check("search done")})
		close(finished)
	}()
	select {
	case <-finished:
		t.Fatal("the stage's end did not wait for the save under way")
	case <-time.After(100 * time.Millisecond):
	}
	// Let the saves through: the one under way, then the stage's.
	for open := true; open; {
		select {
		case st.gate <- struct{}{}:
		case <-finished:
			open = false
		case <-time.After(10 * time.Second):
			t.Fatalf("the stage's end never saved: %q", st.texts())
		}
	}
	if got := st.texts(); len(got) != 2 || !slices.Contains([]string{"search started", "hit 1", "hit 2", "hit 3", "warned"}, got[0]) || got[1] != "search done" {
		t.Errorf("saves %q, want one of the stage's as it went (under way when the rest came), then the stage's end", got)
	}
	if st.most != 1 {
		t.Errorf("%d saves at once, want one at a time", st.most)
	}
}

// TestSnapshotsStoredBeside: with nobody shown the events, the snapshot of
// each page quoted is stored beside the check's saves, several at once:
// the quotes do not wait for them, the stage's end does (a kill after it
// loses no page).
func TestSnapshotsStoredBeside(t *testing.T) {
	st := &slowCases{gate: make(chan struct{}), snapGate: make(chan struct{})}
	close(st.gate) // the check's saves go through
	r := &recording{o: RecordOptions{Store: st}, id: "c1", now: time.Now, background: true}
	r.snaps = &Snapshotter{Store: st}
	ctx := context.Background()
	var urls []string
	c := &pipeline.Check{ID: "c1"}
	for i := range 3 {
		u := fmt.Sprintf("https://news%d.example/story", i)
		urls = append(urls, u)
		c.Sources = append(c.Sources, pipeline.Source{URL: u, FetchedAt: time.Unix(1, 0), Paragraphs: []string{"text"}})
	}
	returned := make(chan struct{})
	go func() {
		for _, u := range urls {
			r.event(ctx, pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageEvidence, Item: pipeline.Evidence{SourceURL: u, Quote: "text"}, Check: c})
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("a quote waited for its page's snapshot")
	}
	finished := make(chan struct{})
	go func() {
		end := *c
		end.Correction.Text = "evidence done"
		r.event(ctx, pipeline.Event{Kind: pipeline.EventStageFinished, Stage: pipeline.StageEvidence, Check: &end})
		close(finished)
	}()
	// The three snapshots are under way at once: each waits for a word,
	// given only once all three wait.
	deadline := time.After(10 * time.Second)
	for {
		st.omu.Lock()
		n := st.inSnap
		st.omu.Unlock()
		if n == len(urls) {
			break
		}
		select {
		case <-finished:
			t.Fatal("the stage's end did not wait for the snapshots")
		case <-deadline:
			t.Fatalf("%d snapshots under way at once, want %d", n, len(urls))
		case <-time.After(10 * time.Millisecond):
		}
	}
	for range urls {
		select {
		case <-finished:
			t.Fatal("the stage's end did not wait for the snapshots")
		case st.snapGate <- struct{}{}:
		case <-deadline:
			t.Fatalf("the snapshots were not all written: %q", st.written())
		}
	}
	select {
	case <-finished:
	case <-time.After(10 * time.Second):
		t.Fatalf("the stage's end never came: %q", st.written())
	}
	got := st.written()
	if n := len(got); n < 4 || got[n-1] != "save evidence done" {
		t.Fatalf("written %q, want the three snapshots, then the stage's end", got)
	}
	var snaps []string
	for _, w := range got {
		if u, ok := strings.CutPrefix(w, "snapshot "); ok {
			snaps = append(snaps, u)
		}
	}
	slices.Sort(snaps)
	if !slices.Equal(snaps, urls) {
		t.Errorf("snapshots %q, want %q", snaps, urls)
	}
}

// TestBackgroundSavesSpaced: with nobody shown the events, a background
// save is followed by a pause (gap) in which the events that come are
// kept for one save, the newest Check; a stage's end does not wait for
// the pause, drops the Check left waiting and saves its own.
func TestBackgroundSavesSpaced(t *testing.T) {
	st := &slowCases{gate: make(chan struct{})}
	close(st.gate)
	r := &recording{o: RecordOptions{Store: st}, id: "c1", now: time.Now, background: true, gap: time.Hour}
	ctx := context.Background()
	check := func(text string) *pipeline.Check {
		return &pipeline.Check{ID: "c1", Correction: pipeline.Correction{Text: text}}
	}
	r.event(ctx, pipeline.Event{Kind: pipeline.EventStageStarted, Stage: pipeline.StageSources, Check: check("sources started")})
	for deadline := time.Now().Add(5 * time.Second); len(st.written()) == 0; time.Sleep(5 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatal("the stage's start was never saved")
		}
	}
	for _, text := range []string{"page 1", "page 2", "page 3"} {
		r.event(ctx, pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSources, Item: pipeline.Hit{URL: "https://a.example/"}, Check: check(text)})
	}
	time.Sleep(100 * time.Millisecond)
	if got := st.written(); len(got) != 1 {
		t.Fatalf("saves %q within the pause; want only the first", got)
	}
	finished := make(chan struct{})
	go func() {
		r.event(ctx, pipeline.Event{Kind: pipeline.EventStageFinished, Stage: pipeline.StageSources, Check: check("sources done")})
		close(finished)
	}()
	select {
	case <-finished:
	case <-time.After(5 * time.Second):
		t.Fatal("the stage's end waited for the pause")
	}
	if got := st.written(); !slices.Equal(got, []string{"save sources started", "save sources done"}) {
		t.Errorf("saves %q; want the stage's start, then its end (the pages' Check, older, dropped)", got)
	}
}
