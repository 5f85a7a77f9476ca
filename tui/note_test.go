package tui

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/notes"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
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

// TestNoteSendKey: X in the Correction pane pre-flights the note, shows
// X's ClaimOpinion score and submits it in test mode only once the checker
// says yes; the note's ID and the admission ledger are shown after; live
// is not offered without the configuration's consent.
func TestNoteSendKey(t *testing.T) {
	x := notewritertest.New(t, notewritertest.Post{ID: "1900", Text: "Bikes banned", Lang: "en"})
	x.Score = func(string) (float64, map[string]string) {
		return 0.71, map[string]string{"ClaimOpinion": "High", "UrlValidity": "High", "HarassmentAbuse": "High"}
	}
	m, _ := finished(t, 100, 60)
	press(t, m, "X")
	if !strings.Contains(m.status, "needs the writer's keys") {
		t.Errorf("without a writer: %q", m.status)
	}
	cfg := &setup.Config{XAPIKey: notewritertest.Keys.APIKey, XAPIKeySecret: notewritertest.Keys.APISecret,
		XAccessToken: notewritertest.Keys.AccessToken, XAccessTokenSecret: notewritertest.Keys.AccessSecret, XAPIURL: x.URL}
	w, err := notes.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m.opts.Notes = w
	m.check.XNote = &pipeline.XNote{PostID: "1900", Requests: []pipeline.XNoteRequest{{Suggestion: "The council voted for lanes"}}}

	press(t, m, "X")
	if m.overlay != overlayPrompt || !strings.Contains(m.prompt.title, "scores the note 0.71 on ClaimOpinion") ||
		!strings.Contains(m.prompt.title, "Submit it to X in test mode? yes") || strings.Contains(m.prompt.title, "live") {
		t.Fatalf("after X: overlay %v, prompt %q, status %q", m.overlay, m.prompt.title, m.status)
	}
	press(t, m, "n", "o", "enter")
	if len(x.Notes()) != 0 || !strings.Contains(m.status, "nothing was sent") {
		t.Fatalf("no sent a note: %+v, status %q", x.Notes(), m.status)
	}
	press(t, m, "X", "y", "e", "s", "enter")
	ns := x.Notes()
	if len(ns) != 1 || !ns[0].TestMode || m.check.XNote.NoteID != ns[0].ID || !strings.Contains(m.status, "submitted to X in test mode as note "+ns[0].ID) {
		t.Fatalf("yes: notes %+v, xnote %+v, status %q", ns, m.check.XNote, m.status)
	}
	v := m.View()
	for _, want := range []string{"Asked for a note: The council voted for lanes", "X's evaluator: ClaimOpinion 0.71",
		"Submitted to X in test mode as note " + ns[0].ID, "Admission: 1 of 50 test-mode notes written; 49 more notes"} {
		if !strings.Contains(v, want) {
			t.Errorf("the pane lacks %q:\n%s", want, v)
		}
	}
	press(t, m, "X")
	if !strings.Contains(m.status, "went to X already") || len(x.Notes()) != 1 {
		t.Errorf("a second X: %q", m.status)
	}
}

// TestNoteSendLive: live is offered only when the configuration allows it
// and the ledger meets X's bar, and then only when the checker types it.
func TestNoteSendLive(t *testing.T) {
	x := notewritertest.New(t, notewritertest.Post{ID: "1900", Text: "Bikes banned", Lang: "en"})
	for range 50 {
		x.AddNotes(notewritertest.Note{ID: "1", PostID: "2", Text: "n", TestMode: true,
			Scores: map[string]string{"ClaimOpinion": "High", "UrlValidity": "High", "HarassmentAbuse": "High"}})
	}
	cfg := &setup.Config{XAPIKey: notewritertest.Keys.APIKey, XAPIKeySecret: notewritertest.Keys.APISecret,
		XAccessToken: notewritertest.Keys.AccessToken, XAccessTokenSecret: notewritertest.Keys.AccessSecret, XAPIURL: x.URL, XLiveNotes: true}
	w, err := notes.New(cfg, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	m, _ := finished(t, 100, 60)
	m.opts.Notes = w
	m.check.XNote = &pipeline.XNote{PostID: "1900"}
	press(t, m, "X")
	if m.overlay != overlayPrompt || !strings.Contains(m.prompt.title, "live for raters to see") {
		t.Fatalf("live not offered: %q %q", m.prompt.title, m.status)
	}
	press(t, m, "l", "i", "v", "e", "enter")
	if ns := x.Notes(); len(ns) != 51 || ns[0].TestMode || !m.check.XNote.Live {
		t.Fatalf("live: %+v %+v %q", ns[0], m.check.XNote, m.status)
	}
}
