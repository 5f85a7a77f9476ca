package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// TestVersions: the correction's versions — the model's draft and the
// checker's edit — are listed, diffed word by word, and one is restored.
func TestVersions(t *testing.T) {
	m, store := caseModel(t, newRunner(t), 100, 30)
	press(t, m, "ctrl+s")
	model := m.check.Correction.Text
	edited := strings.Replace(model, "This post is misleading.", "This post is false.", 1)
	drive(t, m, m.setCorrection(edited, "edit saved"))
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d, _ := store.Drafts(t.Context(), m.check.ID); len(d) == 2 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the two versions were not kept")
		}
	}
	press(t, m, "v")
	if m.overlay != overlayVersions {
		t.Fatalf("v did not open the versions (status %q)", m.status)
	}
	v := m.View()
	if !strings.Contains(v, "model") || !strings.Contains(v, "yours") || !strings.Contains(v, "◆") {
		t.Errorf("versions list:\n%s", v)
	}
	press(t, m, "d") // the checker's edit against the model's draft (marked ◆)
	if v := m.View(); !strings.Contains(v, "[-misleading.-] {+false.+}") {
		t.Errorf("diff of the two versions:\n%s", v)
	}
	press(t, m, "k", "r") // restore the model's draft
	if m.overlay != overlayNone || m.check.Correction.Text != model || m.check.Correction.Edited {
		t.Errorf("restored %q (edited %v)", m.check.Correction.Text, m.check.Correction.Edited)
	}
	saved := storedCase(t, store, func(c *pipeline.Check) bool { return c.Correction.Text == model })
	_ = saved
	// The restore is a third version, labelled as the one it brought back;
	// the edit's row starts where it differs from the model's draft; the
	// selected version is shown whole.
	for end := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if d, _ := store.Drafts(t.Context(), m.check.ID); len(d) == 3 {
			break
		}
		if time.Now().After(end) {
			t.Fatal("the restore was not kept as a version")
		}
	}
	press(t, m, "v")
	v = m.View()
	if !strings.Contains(v, "= version 1, restored") {
		t.Errorf("the restore is not labelled:\n%s", v)
	}
	if !strings.Contains(v, "Version 3") || !strings.Contains(strings.Join(strings.Fields(v), " "), strings.Join(strings.Fields(model)[:5], " ")) {
		t.Errorf("the selected version is not shown whole:\n%s", v)
	}
}

// A diff keeps the lines of the text it shows.
func TestWordDiffKeepsLines(t *testing.T) {
	got := wordDiff("This post is misleading.\nSource: A", "This post is false.\nSource: A\nSee also B")
	if want := "This post is [-misleading.-] {+false.+}\nSource: A\n{+See also B+}"; got != want {
		t.Errorf("diff %q, want %q", got, want)
	}
}
