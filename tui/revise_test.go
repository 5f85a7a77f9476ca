package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// typeText replaces the editor's text, its last character typed: that
// key goes through onEditorKey as a person's does.
func typeText(t *testing.T, m *Model, text string) {
	t.Helper()
	r := []rune(text)
	m.editor.SetValue(string(r[:len(r)-1]))
	k := string(r[len(r)-1])
	if k == " " {
		k = "space"
	}
	press(t, m, k)
}

// TestReviseRevisionInApp: in the versions of a case whose cited pages
// changed, e opens the editor on the recheck's draft as the checker's
// revision; what is typed survives a crash in the case's draft (not made
// the correction) and is offered back as a revision when the case opens
// again; ctrl+s accepts it through the store's AcceptRevision: the
// correction is the text, its links derived from it, the trail says it
// was the checker's, the marks go, and the draft is not offered again.
func TestReviseRevisionInApp(t *testing.T) {
	store := openStore(t)
	c := changedCase(t, store, newChangingWeb(t), time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC))
	before := c.Correction.Text
	draftDir := t.TempDir()
	open := func() *Model {
		got, err := store.Get(t.Context(), c.ID)
		if err != nil {
			t.Fatal(err)
		}
		opts := testOptions(newRunner(t))
		opts.Cases, opts.Case = store, got
		opts.DraftDir = draftDir
		m := New(context.Background(), opts)
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		drive(t, m, m.Init())
		return m
	}
	m := open()
	press(t, m, "v")
	if !m.revisionSelected() {
		t.Fatal("v does not select the revision draft")
	}
	draft := m.versions.list[m.versions.cursor].Text
	press(t, m, "e")
	if !m.editing || !m.revising || m.editor.Value() != draft {
		t.Fatalf("e: editing %v, revising %v, text %q", m.editing, m.revising, m.editor.Value())
	}
	if v := m.View(); !strings.Contains(v, "Δ your revision: ctrl+s accepts it · esc keeps it unaccepted") || !strings.Contains(v, "ctrl+s accept your revision") {
		t.Errorf("the editor does not say it holds a revision:\n%s", v)
	}
	own := "Misleading: a ship that lost power struck the bridge; see https://www.nhtsb.gov/baltimore"
	typeText(t, m, own)
	if m.editor.Value() != own {
		t.Fatalf("typed %q", m.editor.Value())
	}
	_, cmd := m.Update(draftTickMsg{m.draftSeq}) // typing paused: the draft is written
	drive(t, m, cmd)

	// The app dies here. The store's correction is still the old one.
	if saved, _ := store.Get(t.Context(), c.ID); saved.Correction.Text != before {
		t.Fatalf("the revision being typed became the correction: %q", saved.Correction.Text)
	}
	m = open()
	if v := m.View(); m.overlay != overlayRestore || !strings.Contains(v, "your revision of the") || !strings.Contains(v, "(its cited pages changed)") {
		t.Fatalf("the revision is not offered back: overlay %v\n%s", m.overlay, m.View())
	}
	press(t, m, "r")
	if !m.editing || !m.revising || m.editor.Value() != own {
		t.Fatalf("restored: editing %v, revising %v, text %q", m.editing, m.revising, m.editor.Value())
	}
	press(t, m, "ctrl+s")
	if m.editing || m.revising || m.check.Correction.Text != own {
		t.Fatalf("ctrl+s: editing %v, correction %q (status %q)", m.editing, m.check.Correction.Text, m.status)
	}
	saved, err := store.Get(t.Context(), c.ID)
	if err != nil || saved.Correction.Text != own || !saved.Correction.Edited || len(saved.Correction.URLs) != 1 || saved.Correction.URLs[0] != "https://www.nhtsb.gov/baltimore" {
		t.Errorf("the store's correction: %+v, %v", saved.Correction, err)
	}
	trail, _ := store.Trail(t.Context(), c.ID)
	if e := trail[len(trail)-1]; e.Action != cases.ActionRevised || !strings.HasPrefix(e.Detail, "the checker's revision") {
		t.Errorf("the trail's last entry: %+v", e)
	}
	if m.recheckBanner() != "" || m.revisionPending() {
		t.Errorf("the change is still marked: %+v", m.recheck)
	}
	if v := m.View(); !strings.Contains(v, "www.nhtsb.gov/baltimore") || !strings.Contains(m.status, "your revision is the correction now") {
		t.Errorf("the correction pane after accepting (status %q):\n%s", m.status, v)
	}
	_, cmd = m.Update(draftTickMsg{m.draftSeq})
	drive(t, m, cmd)
	if msg := findCaseDraft(draftDir, saved)(); msg != nil {
		t.Errorf("the accepted revision is offered again: %+v", msg)
	}
}

// TestReviseRevisionRefused: the store's guards hold for the checker's
// text: accepted elsewhere meanwhile, ctrl+s is refused and the text is
// back in the editor; esc then keeps it as the correction, not accepted;
// an empty revision is not accepted; a read-only store refuses e.
func TestReviseRevisionRefused(t *testing.T) {
	store := openStore(t)
	c := changedCase(t, store, newChangingWeb(t), time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC))
	got, err := store.Get(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(newRunner(t))
	opts.Cases, opts.Case = store, got
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	press(t, m, "v", "e")
	typeText(t, m, " ")
	press(t, m, "ctrl+s")
	if !m.editing || !strings.Contains(m.status, "empty revision") {
		t.Errorf("an empty revision: editing %v, status %q", m.editing, m.status)
	}
	own := "Misleading: the ship lost power."
	typeText(t, m, own)
	if err := store.AcceptRevision(t.Context(), c.ID, ""); err != nil { // elsewhere
		t.Fatal(err)
	}
	press(t, m, "ctrl+s")
	if !m.editing || !m.revising || m.editor.Value() != own || !strings.Contains(m.status, "no revision draft to accept") {
		t.Fatalf("refused: editing %v, revising %v, text %q, status %q", m.editing, m.revising, m.editor.Value(), m.status)
	}
	press(t, m, "esc")
	saved, _ := store.Get(t.Context(), c.ID)
	if m.editing || saved.Correction.Text != own || !strings.Contains(m.status, "not accepted") {
		t.Errorf("esc: editing %v, correction %q, status %q", m.editing, saved.Correction.Text, m.status)
	}
	if trail, _ := store.Trail(t.Context(), c.ID); trail[len(trail)-1].Action != cases.ActionEdited {
		t.Errorf("esc is not an edit in the trail: %+v", trail[len(trail)-1])
	}

	// Read-only: e is refused with the command that can.
	ro := testOptions(newRunner(t))
	ro.CaseList = caseListReader{checks: map[string]*pipeline.Check{c.ID: got},
		recheck: map[string]cases.CaseRecheck{c.ID: {ID: c.ID, Pages: []cases.PageRecheck{{URL: c.Sources[0].URL, Reasons: []string{"gone: HTTP 410 Gone"}}}}}}
	ro.Case = got
	m = New(context.Background(), ro)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	if cmd := m.reviseVersion("text", "version 1"); cmd == nil || m.editing || !strings.Contains(m.status, "read-only") {
		t.Errorf("e on a read-only store: editing %v, status %q", m.editing, m.status)
	}
}

// TestQuitWhileRevising: quitting (ctrl+c) with a revision in the editor
// does not make it the correction: it stays in the case's draft, marked as
// a revision, and the case is as it was.
func TestQuitWhileRevising(t *testing.T) {
	store := openStore(t)
	c := changedCase(t, store, newChangingWeb(t), time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC))
	got, err := store.Get(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(newRunner(t))
	opts.Cases, opts.Case = store, got
	opts.DraftDir = t.TempDir()
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(80, 24))
	waitFor := func(s string) {
		t.Helper()
		teatest.WaitFor(t, tm.Output(), func(b []byte) bool { return bytes.Contains(b, []byte(s)) }, teatest.WithDuration(5*time.Second))
	}
	waitFor("cited pages changed")
	tm.Type("v")
	waitFor("revision draft the recheck kept")
	tm.Type("e")
	waitFor("your revision: ctrl+s accepts it")
	tm.Type("Revised")
	tm.Send(tea.KeyMsg{Type: tea.KeyCtrlC})
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))

	b, err := os.ReadFile(draftPath(opts.DraftDir, c.ID))
	if err != nil {
		t.Fatalf("no draft of the case after quitting mid-revision: %v", err)
	}
	var d draftFile
	if err := json.Unmarshal(b, &d); err != nil {
		t.Fatal(err)
	}
	if !d.Revising || !strings.Contains(d.Editing, "Revised") || !strings.Contains(d.Editing, "[Recheck ") {
		t.Errorf("the draft left: revising %v, editing %q", d.Revising, d.Editing)
	}
	saved, _ := store.Get(t.Context(), c.ID)
	if saved.Correction.Text != c.Correction.Text {
		t.Errorf("quitting made the unaccepted revision the correction: %q", saved.Correction.Text)
	}
	if rs, _ := store.Rechecks(t.Context(), c.ID); !rs[c.ID].Changed() {
		t.Error("quitting accepted the revision")
	}
}
