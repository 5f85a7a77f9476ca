package tui

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// TestCorrectionPaneShowsNote: the Correction pane says the note's
// classification and tags as the evidence gives them, marks the checker's
// choice, and names what X's admission would refuse, with its fix.
func TestCorrectionPaneShowsNote(t *testing.T) {
	m, _ := finished(t, 100, 60)
	v := m.View()
	if !strings.Contains(v, "Note: misleading · missing_important_context") {
		t.Fatalf("the pane does not give the note's fields (%s):\n%s", m.check.NoteFields().Short(), v)
	}
	if err := m.check.SetNoteChoice(pipeline.ClassMisleading, []string{pipeline.TagOutdatedInformation}); err != nil {
		t.Fatal(err)
	}
	if v := m.View(); !strings.Contains(v, "Note: misleading · outdated_information (yours)") {
		t.Errorf("the checker's choice is not shown as theirs:\n%s", v)
	}
	m.check.Correction.Text = "Community Note: the council approved lanes #bikes https://www.reuters.com/world/fact-check-bridge-video-2024-03-02/"
	m.check.Correction.Edited = true
	v = m.View()
	for _, want := range []string{"opens with “Community Note” — start with", "holds a hashtag — remove the #"} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane does not say %q:\n%s", want, v)
		}
	}
}

// TestNoteChoiceKey: T in the Correction pane sets the checker's
// classification and tags, refusing what X would refuse.
func TestNoteChoiceKey(t *testing.T) {
	m, _ := finished(t, 100, 60)
	press(t, m, "T", "misleading fake_news", "enter")
	if m.check.CheckerNote != nil {
		t.Fatalf("an unknown tag was taken: %+v", m.check.CheckerNote)
	}
	press(t, m, "T", "misleading outdated_information missing_important_context", "enter")
	if ch := m.check.CheckerNote; ch == nil || ch.Classification != pipeline.ClassMisleading || len(ch.Tags) != 2 {
		t.Fatalf("the checker's choice: %+v", ch)
	}
	if v := m.View(); !strings.Contains(v, "Note: misleading · outdated_information · missing_important_context (yours)") {
		t.Errorf("the pane does not show the choice:\n%s", v)
	}
}
