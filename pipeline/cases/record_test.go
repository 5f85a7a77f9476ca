package cases

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

type snapCall struct {
	url, final, text string
	raw              []byte
}

// memSnaps records SaveSnapshot calls; fail makes the next call fail.
type memSnaps struct {
	mu    sync.Mutex
	calls []snapCall
	fail  bool
}

func (m *memSnaps) SaveSnapshot(_ context.Context, id, u, final string, _ time.Time, text string, raw []byte) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail {
		m.fail = false
		return errors.New("disk full")
	}
	m.calls = append(m.calls, snapCall{u, final, text, raw})
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
	if a.final != "https://a.example/one" || a.text != "p1\n\np2" || string(a.raw) != "<p>p1</p>" {
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
