package tui

import (
	"context"
	"path/filepath"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// TestCaseChangedElsewhere: with a case open, a colleague's save of it is
// a notice in the status line and the message log; the app's next save
// keeps both versions and says who changed the case.
func TestCaseChangedElsewhere(t *testing.T) {
	ctx := t.Context()
	m, wait, bob, c := openWatched(t)

	theirs, _ := bob.Get(ctx, c.ID)
	theirs.Correction.Text = "This post is false: bob's wording."
	if err := bob.Save(ctx, theirs); err != nil {
		t.Fatal(err)
	}
	m.Update(within(t, wait, "bob's save"))
	if !strings.Contains(m.status, "changed by bob at ") || !strings.Contains(strings.Join(m.log, "\n"), "changed by bob") {
		t.Errorf("status %q, log %q", m.status, m.log)
	}

	m.check.Correction.Text = "This post is false: alice's wording."
	drive(t, m, m.saveCaseNow())
	if !strings.Contains(m.status, "changed by bob") || !strings.Contains(m.status, "both are kept") || m.statusFailure {
		t.Errorf("after the app's save on the stale version: status %q (failure %v)", m.status, m.statusFailure)
	}
	if now, _ := bob.Get(ctx, c.ID); now.Correction.Text != "This post is false: alice's wording." {
		t.Errorf("the app's save is the case now: %q", now.Correction.Text)
	}
	if vs, _ := bob.Versions(ctx, c.ID); len(vs) != 1 || vs[0].UpdatedBy != "bob" {
		t.Errorf("bob's version is kept: %+v", vs)
	}

	// An export from the app is in the case's trail, in alice's name.
	m.opts.ExportDir = t.TempDir()
	press(t, m, "x", "m", "enter")
	if !strings.Contains(m.status, "exported md") {
		t.Fatalf("export: status %q", m.status)
	}
	trail, _ := bob.Trail(ctx, c.ID)
	var got []string
	for _, e := range trail {
		got = append(got, e.User+" "+e.Action)
	}
	if strings.Join(got, ", ") != "alice created, bob changed, alice conflict, alice exported" {
		t.Errorf("trail: %v", got)
	}
}

// TestCaseDeletedElsewhere: with a case open, a colleague's deletion of it
// (seen by the SQLite store's poll) is a notice saying it was deleted and
// by whom; the app's next save puts the case back, saying so.
func TestCaseDeletedElsewhere(t *testing.T) {
	ctx := t.Context()
	m, wait, bob, c := openWatched(t)

	if err := bob.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	m.Update(within(t, wait, "bob's deletion"))
	if !strings.Contains(m.status, "deleted by bob at ") || !strings.Contains(m.status, "puts it back") ||
		!strings.Contains(strings.Join(m.log, "\n"), "deleted by bob") {
		t.Errorf("status %q, log %q", m.status, m.log)
	}

	m.check.Correction.Text = "This post is false: alice's wording."
	drive(t, m, m.saveCaseNow())
	if !strings.Contains(m.status, "deleted by bob") || !strings.Contains(m.status, "put it back") || m.statusFailure {
		t.Errorf("after the app's save of the deleted case: status %q (failure %v)", m.status, m.statusFailure)
	}
	if now, err := bob.Get(ctx, c.ID); err != nil || now.Correction.Text != "This post is false: alice's wording." {
		t.Errorf("the app's save is the case again: %v", err)
	}
}

// openWatched opens, in the app as alice, a case she saved in a SQLite
// store that bob opens too, and starts the app's watch: wait returns its
// first message.
func openWatched(t *testing.T) (m *Model, wait tea.Cmd, bob *cases.Store, c *pipeline.Check) {
	t.Helper()
	ctx := t.Context()
	path := filepath.Join(t.TempDir(), "cases.db")
	open := func(user string) *cases.Store {
		st, err := cases.OpenOptions(ctx, cases.Options{Path: path, User: user})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { st.Close() })
		return st
	}
	alice := open("alice")
	bob = open("bob")
	c = &pipeline.Check{ID: pipeline.NewID(), Post: pipeline.Post{Text: "The mayor banned bicycles"},
		Correction: pipeline.Correction{Text: "This post is false."}}
	if err := alice.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	opened, err := alice.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(newRunner(t))
	opts.Cases, opts.Case = alice, opened
	m = New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 100, Height: 30})
	return m, m.watchCases(), bob, c
}

// within runs cmd and returns its message, failing the test when none has
// come after 10 s.
func within(t *testing.T, cmd tea.Cmd, what string) tea.Msg {
	t.Helper()
	msg := make(chan tea.Msg, 1)
	go func() { msg <- cmd() }()
	select {
	case got := <-msg:
		return got
	case <-time.After(10 * time.Second):
		t.Fatalf("%s never reached the app", what)
		return nil
	}
}
