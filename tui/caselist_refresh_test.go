package tui

import (
	"bytes"
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline/cases"
)

// countingStore counts the store's whole reads of the list.
type countingStore struct {
	*cases.Store
	mu    sync.Mutex
	lists int
}

func (s *countingStore) List(ctx context.Context, o cases.ListOptions) ([]cases.Summary, error) {
	s.mu.Lock()
	s.lists++
	s.mu.Unlock()
	return s.Store.List(ctx, o)
}

func (s *countingStore) count() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.lists
}

// TestCaseListRefreshes: the list shown looks at the store again: while
// nothing changed it reads only the stamp; a revision accepted in another
// terminal and a case made there show up, the cursor stays on its case and
// the filter stays; a case deleted there goes, the cursor on the row in its
// place; a look for a list closed since does nothing.
func TestCaseListRefreshes(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.db")
	ctx := context.Background()
	store, err := cases.OpenOptions(ctx, cases.Options{Path: path, User: "alice"})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { store.Close() })
	elsewhere, err := cases.OpenOptions(ctx, cases.Options{Path: path, User: "bob"}) // another terminal
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { elsewhere.Close() })
	day := time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC)
	changed := changedCase(t, store, newChangingWeb(t), day)
	divers := plainCase(t, store, "The bridge was blown up by divers", day.Add(time.Hour))
	tunnels := plainCase(t, store, "Tunnels under the harbour are closed for good", day.Add(2*time.Hour))

	cs := &countingStore{Store: store}
	opts := testOptions(newRunner(t))
	opts.Cases, opts.CaseList = store, cs
	m := New(ctx, opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+o", "down")
	if sm := m.selectedSummary(); sm == nil || sm.ID != tunnels.ID {
		t.Fatalf("down on the list selects %+v", sm)
	}
	look := func() {
		t.Helper()
		_, cmd := m.Update(caseListTickMsg{m.caseList.seq})
		if cmd == nil {
			t.Fatal("the list shown does not look again")
		}
		drive(t, m, cmd)
	}
	ids := func() []string {
		var out []string
		for _, sm := range m.shownCases() {
			out = append(out, sm.ID)
		}
		return out
	}

	reads := cs.count()
	look()
	if cs.count() != reads {
		t.Errorf("nothing changed, yet the list was read again (%d reads)", cs.count()-reads)
	}

	if err := elsewhere.AcceptRevision(ctx, changed.ID, ""); err != nil {
		t.Fatal(err)
	}
	look()
	if got := ids(); len(got) != 3 || got[0] != tunnels.ID || got[2] != changed.ID {
		t.Errorf("after the revision accepted elsewhere the list is %v", got)
	}
	if sm := m.selectedSummary(); sm == nil || sm.ID != tunnels.ID || m.caseList.cursor != 0 {
		t.Errorf("the cursor left its case: %+v at row %d", sm, m.caseList.cursor)
	}
	if strings.Contains(m.View(), "CHANGED") {
		t.Errorf("the accepted case is still marked:\n%s", m.View())
	}

	press(t, m, "/", "b", "r", "i", "d", "g", "e", "enter", "down")
	if got := ids(); len(got) != 2 || m.selectedSummary().ID != changed.ID {
		t.Fatalf("the filter “bridge” keeps %v, selected %+v", got, m.selectedSummary())
	}
	newer := plainCase(t, elsewhere, "The bridge will reopen next week, a post claims", day.Add(3*time.Hour))
	plainCase(t, elsewhere, "Ferries are free this month", day.Add(4*time.Hour))
	look()
	if got := ids(); len(got) != 3 || got[0] != newer.ID || m.caseList.filter.Value() != "bridge" {
		t.Errorf("after a case made elsewhere, the filtered list is %v (filter %q)", got, m.caseList.filter.Value())
	}
	if sm := m.selectedSummary(); sm == nil || sm.ID != changed.ID {
		t.Errorf("the cursor left its case: %+v", sm)
	}

	if err := elsewhere.Delete(ctx, changed.ID); err != nil {
		t.Fatal(err)
	}
	look()
	if got := ids(); len(got) != 2 || m.selectedSummary() == nil || m.selectedSummary().ID != divers.ID {
		t.Errorf("after the selected case was deleted elsewhere: %v, selected %+v", got, m.selectedSummary())
	}

	// Closed, the list looks no more; a look scheduled before is dropped.
	seq := m.caseList.seq
	press(t, m, "esc")
	reads = cs.count()
	if _, cmd := m.Update(caseListTickMsg{seq}); cmd != nil {
		drive(t, m, cmd)
	}
	press(t, m, "ctrl+o", "esc")
	if _, cmd := m.Update(caseListTickMsg{seq}); cmd != nil {
		t.Error("a look for an earlier opening of the list is not dropped")
	}
	if cs.count() != reads+1 {
		t.Errorf("%d reads of the list after it was closed, want only the reopening's", cs.count()-reads)
	}
}

// swappingReader is a fixed store whose rows the test replaces, with the
// stamp moving as they do.
type swappingReader struct {
	caseListReader
	mu    *sync.Mutex
	rows  *[]cases.Summary
	stamp *int
}

func (r swappingReader) List(context.Context, cases.ListOptions) ([]cases.Summary, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]cases.Summary(nil), *r.rows...), nil
}

func (r swappingReader) ListStamp(context.Context) (string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return strings.Repeat("x", *r.stamp), nil
}

func (r swappingReader) set(rows []cases.Summary) {
	r.mu.Lock()
	defer r.mu.Unlock()
	*r.rows = rows
	*r.stamp++
}

// TestCaseListRefreshView: the running app's list, left open, shows a
// recheck made meanwhile (the case moves to the top, marked CHANGED) on
// its own with the cursor on the case it was on; the view after is the
// golden.
func TestCaseListRefreshView(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	sum := func(id, post, corr string, day int) cases.Summary {
		return cases.Summary{ID: id, CreatedAt: time.Date(2024, 3, day, 10, 15, 0, 0, time.UTC), PostExcerpt: post, CorrectionLine: corr, CreatedBy: "alice"}
	}
	tunnels := sum("20240331-101500-ef34ab", "Tunnels under the harbour are closed for good, says a viral post with a map", "", 31)
	divers := sum("20240329-101500-cd56ef", "The bridge was blown up by divers before dawn", "False: a ship struck the bridge.", 29)
	bridge := sum("20240327-101500-ab12cd", "BREAKING: the Baltimore bridge just collapsed, watch the video!!", "Misleading: a ship struck the bridge.", 27)
	rows, stamp := []cases.Summary{tunnels, divers, bridge}, 1
	r := swappingReader{mu: &sync.Mutex{}, rows: &rows, stamp: &stamp}
	opts := testOptions(newRunner(t))
	opts.CaseList = r
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(80, 24))
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlO})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("3 cases")) },
		teatest.WithDuration(5*time.Second))
	tm.Send(tea.KeyMsg{Type: tea.KeyDown})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("case 20240329-101500-cd56ef")) },
		teatest.WithDuration(5*time.Second))

	// A recheck elsewhere finds the oldest case's cited pages changed.
	bridge.EvidenceChanged, bridge.RecheckedAt = 2, time.Date(2024, 4, 2, 6, 0, 0, 0, time.UTC)
	r.set([]cases.Summary{bridge, tunnels, divers})
	teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte("1 with cited pages changed")) },
		teatest.WithDuration(3*caseListEvery), teatest.WithCheckInterval(100*time.Millisecond))
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	m := tm.FinalModel(t, teatest.WithFinalTimeout(5*time.Second)).(*Model)
	if sm := m.selectedSummary(); sm == nil || sm.ID != divers.ID {
		t.Errorf("the cursor left its case: %+v", sm)
	}
	m.status = ""
	golden.RequireEqual(t, m.View())
}

// failingLooks is a store whose stamp can no longer be read (a busy or
// vanished database) once the list is shown.
type failingLooks struct {
	swappingReader
	fail *bool
}

func (r failingLooks) ListStamp(ctx context.Context) (string, error) {
	if *r.fail {
		return "", errors.New("database is locked")
	}
	return r.swappingReader.ListStamp(ctx)
}

// TestCaseListRefreshFailure: a look that fails keeps the rows shown and
// says why once, not at every look; the next look that works reads on;
// an unmoved stamp spares the read, but only caseListFull times running.
func TestCaseListRefreshFailure(t *testing.T) {
	rows := []cases.Summary{{ID: "20240327-101500-ab12cd", PostExcerpt: "The bridge was blown up by divers"}}
	stamp, fail := 1, false
	r := failingLooks{swappingReader{mu: &sync.Mutex{}, rows: &rows, stamp: &stamp}, &fail}
	opts := testOptions(newRunner(t))
	opts.CaseList = r
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+o")
	look := func() tea.Cmd {
		_, cmd := m.Update(caseListTickMsg{m.caseList.seq})
		msg := cmd()
		_, next := m.Update(msg)
		return next
	}
	fail = true
	look()
	if len(m.shownCases()) != 1 || !strings.Contains(m.status, "refreshing the case list failed: database is locked") {
		t.Fatalf("a failed look: %d rows, status %q", len(m.shownCases()), m.status)
	}
	m.status = ""
	if look(); m.status != "" {
		t.Errorf("the same failure said again: %q", m.status)
	}
	fail = false
	r.set(append(rows, cases.Summary{ID: "20240328-101500-cd34ef", PostExcerpt: "Tunnels are closed"}))
	if next := look(); len(m.shownCases()) != 2 || next == nil {
		t.Errorf("the look after the failure: %d rows, next look scheduled %v", len(m.shownCases()), next != nil)
	}

	// While the stamp stays, the list is not read, but whole after
	// caseListFull looks: a change the stamp cannot see shows up.
	r.mu.Lock()
	*r.rows = append(*r.rows, cases.Summary{ID: "20240329-101500-ef56ab", PostExcerpt: "Ferries are free"})
	r.mu.Unlock()
	for range caseListFull {
		look()
	}
	if len(m.shownCases()) != 2 {
		t.Fatalf("the list was read though the stamp stayed: %d rows", len(m.shownCases()))
	}
	look()
	if len(m.shownCases()) != 3 {
		t.Errorf("the list was not read whole after %d looks: %d rows", caseListFull, len(m.shownCases()))
	}
}
