package cases

import (
	"context"
	"errors"
	"net/http"
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

// slowCases is memCases whose saves wait for a word on gate.
type slowCases struct {
	memCases
	gate chan struct{}
}

func (m *slowCases) Save(ctx context.Context, c *pipeline.Check) error {
	<-m.gate
	return m.memCases.Save(ctx, c)
}

// TestItemsSavedInTheBackground: with nobody shown the events, an item
// does not wait for the store (the items that come during a save are
// saved together, the newest Check); a stage's start or end waits for
// every save before it, so that what came before a model call is kept.
func TestItemsSavedInTheBackground(t *testing.T) {
	st := &slowCases{gate: make(chan struct{})}
	r := &recording{o: RecordOptions{Store: st}, id: "c1", now: time.Now, background: true}
	ctx := context.Background()
	check := func(text string) *pipeline.Check {
		return &pipeline.Check{ID: "c1", Correction: pipeline.Correction{Text: text}}
	}
	returned := make(chan struct{})
	go func() {
		for _, text := range []string{"hit 1", "hit 2", "hit 3"} {
			r.event(ctx, pipeline.Event{Kind: pipeline.EventItem, Stage: pipeline.StageSearch, Item: pipeline.Hit{URL: "https://a.example/"}, Check: check(text)})
		}
		close(returned)
	}()
	select {
	case <-returned:
	case <-time.After(5 * time.Second):
		t.Fatal("an item waited for the store")
	}
	finished := make(chan struct{})
	go func() {
		r.event(ctx, pipeline.Event{Kind: pipeline.EventStageFinished, Stage: pipeline.StageSearch, Check: check("search done")})
		close(finished)
	}()
	select {
	case <-finished:
		t.Fatal("the stage's end did not wait for the items' saves")
	case <-time.After(100 * time.Millisecond):
	}
	// Let the saves through: the one under way, the newest item's, the
	// stage's.
	for open := true; open; {
		select {
		case st.gate <- struct{}{}:
		case <-finished:
			open = false
		case <-time.After(10 * time.Second):
			t.Fatalf("the stage's end never saved: %q", st.texts())
		}
	}
	got := st.texts()
	if n := len(got); n < 2 || n > 3 || got[n-2] != "hit 3" || got[n-1] != "search done" {
		t.Errorf("saves %q, want at most one item's before the newest item's, then the stage's end", got)
	}
}
