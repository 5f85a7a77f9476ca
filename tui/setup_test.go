package tui

import (
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
)

func TestSetupScreen(t *testing.T) {
	d := setup.Detection{Findings: []setup.Finding{
		{Name: "OPENAI_API_KEY", Detail: "not set", Fix: "export OPENAI_API_KEY=sk-…"},
		{Name: "ollama", Detail: "Ollama answers at http://localhost:11434 but has no model pulled", Fix: "ollama pull llama3.1"},
		{Name: "searxng", Found: true, Detail: "SEARXNG_URL set"},
	}, Search: true}
	m := newSetupModel(Options{Setup: &d, Post: pipeline.Post{Text: "5G towers spread the virus"}})
	view := m.View()
	for _, want := range []string{"No language model is configured", "✗ OPENAI_API_KEY", "→ export OPENAI_API_KEY=sk-…",
		"→ ollama pull llama3.1", "✓ searxng", "muse config init", "enter  check the post in the extractive mode (--no-llm)", "q      quit"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
	if strings.Contains(view, "Nothing to search yet") {
		t.Error("warns of nothing to search with SearXNG set")
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	if !next.(setupModel).start || cmd == nil {
		t.Error("enter does not start")
	}
	next, cmd = m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("q")})
	if next.(setupModel).start || cmd == nil {
		t.Error("q does not quit without starting")
	}
	d.Search = false
	if v := newSetupModel(Options{Setup: &d}).View(); !strings.Contains(v, "Nothing to search yet") || !strings.Contains(v, "enter  start") {
		t.Errorf("no search, no post:\n%s", v)
	}
	d.Model = "gpt-4o"
	if v := newSetupModel(Options{Setup: &d}).View(); !strings.Contains(v, "a check would pay gpt-4o and find nothing") {
		t.Errorf("a model but nothing to search:\n%s", v)
	}
}

// Programs found take one line between them; a missing one says what is
// lost and how to install it.
func TestSetupScreenTools(t *testing.T) {
	d := setup.Detection{Findings: []setup.Finding{
		{Name: "OPENAI_API_KEY", Detail: "not set", Fix: "export OPENAI_API_KEY=sk-…"},
		{Name: "tesseract", Found: true, Tool: true, Detail: "tesseract 5.3.0: the text in post images is read"},
		{Name: "ffmpeg", Tool: true, Detail: "ffmpeg not found on PATH: post videos are not read (only their poster image is)", Fix: "apt-get install ffmpeg"},
	}}
	v := newSetupModel(Options{Setup: &d}).View()
	for _, want := range []string{"✓ tesseract  installed", "✗ ffmpeg  ffmpeg not found on PATH: post videos are not read", "→ apt-get install ffmpeg"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	if strings.Contains(v, "the text in post images is read") {
		t.Errorf("a program found takes a line of its own:\n%s", v)
	}
}
