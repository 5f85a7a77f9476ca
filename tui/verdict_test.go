package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// TestVerdictKey: the header shows the verdict derived from the check;
// V sets the checker's own, which the header marks as theirs, and an
// empty answer gives it back to the evidence.
func TestVerdictKey(t *testing.T) {
	m, _ := finished(t, 160, 48)
	derived := m.check.Verdicts().Post
	if derived == "" || !strings.Contains(m.headerLine(), derived.Label()) {
		t.Fatalf("header %q lacks the verdict %q", m.headerLine(), derived)
	}
	press(t, m, "V", "banana", "enter")
	if m.check.CheckerVerdict != "" {
		t.Fatalf("a word that is no verdict was taken: %q", m.check.CheckerVerdict)
	}
	press(t, m, "V", "not enough evidence", "enter")
	if m.check.CheckerVerdict != pipeline.VerdictNotEnough || !strings.Contains(m.headerLine(), "Not enough evidence (yours)") {
		t.Fatalf("checker's verdict %q, header %q", m.check.CheckerVerdict, m.headerLine())
	}
	press(t, m, "V")
	for range len("not enough evidence") {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
		drive(t, m, cmd)
	}
	press(t, m, "enter")
	if m.check.CheckerVerdict != "" || !strings.Contains(m.headerLine(), derived.Label()) || strings.Contains(m.headerLine(), "(yours)") {
		t.Fatalf("after an empty answer: %q, header %q", m.check.CheckerVerdict, m.headerLine())
	}
}

// TestClaimsKey: C edits the claims in one line, | between them; the
// evidence is found again for them, and the Evidence pane lists them.
func TestClaimsKey(t *testing.T) {
	m, _ := finished(t, 160, 48)
	press(t, m, "C")
	for range len(m.check.ClaimTexts()[0]) {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
		drive(t, m, cmd)
	}
	press(t, m, "The Baltimore bridge collapsed | Authorities are hiding the video", "enter")
	if m.running {
		t.Fatal("the evidence run did not finish")
	}
	got := m.check.ClaimTexts()
	if len(got) != 2 || got[0] != "The Baltimore bridge collapsed" || m.check.Claims[1].Origin != pipeline.OriginUser {
		t.Fatalf("claims %q", got)
	}
	if st := m.check.Stage(pipeline.StageEvidence).State; st != pipeline.StateDone {
		t.Errorf("evidence %s after the claims changed", st)
	}
	m.sel = stageIndex(pipeline.StageEvidence)
	if v := m.View(); !strings.Contains(v, "1. The Baltimore bridge collapsed — ") || !strings.Contains(v, "2. Authorities are hiding the video — ") {
		t.Errorf("the Evidence pane does not list the claims:\n%s", v)
	}
}

// TestClaimVerdictKey: with two claims, "2: refuted" at V sets the second
// claim's verdict, kept in the check and shown in the Evidence pane; a
// claim that is not there is refused; "2:" alone gives it back.
func TestClaimVerdictKey(t *testing.T) {
	m, _ := finished(t, 160, 48)
	press(t, m, "C")
	for range len(m.check.ClaimTexts()[0]) {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyBackspace})
		drive(t, m, cmd)
	}
	press(t, m, "The Baltimore bridge collapsed | Authorities are hiding the video", "enter")
	press(t, m, "V", "2: refuted", "enter")
	if got := m.check.Claims[1].CheckerVerdict; got != pipeline.VerdictRefuted || m.check.CheckerVerdict != "" {
		t.Fatalf("claim 2's verdict %q, the post's %q", got, m.check.CheckerVerdict)
	}
	vs := m.check.Verdicts()
	if len(vs.Claims) != 2 || vs.Claims[1].Verdict != pipeline.VerdictRefuted || vs.Claims[1].By != pipeline.VerdictByChecker {
		t.Fatalf("verdicts %+v", vs.Claims)
	}
	press(t, m, "V", "7: refuted", "enter")
	if !strings.Contains(m.status, "there is no claim 7") {
		t.Errorf("status %q", m.status)
	}
	press(t, m, "V", "2:", "enter")
	if got := m.check.Claims[1].CheckerVerdict; got != "" {
		t.Errorf("claim 2's verdict after an empty answer: %q", got)
	}
}
