package tui

import (
	"strings"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

func (m *Model) emptyHint(s pipeline.Stage, waiting, none string) string {
	switch m.stages[s].state {
	case pipeline.StateWaiting, pipeline.StateRunning:
		return m.st.Dim.Render(waiting)
	}
	return m.st.Dim.Render(none)
}

// edited records a change the journalist made in stage s: later stages
// are stale and the draft is saved.
func (m *Model) edited(s pipeline.Stage) tea.Cmd {
	m.markStale(s)
	m.dirty = true
	return tea.Batch(m.scheduleDraft(), m.saveCase())
}

// rerun starts the engine again from a stage with the check as edited.
func (m *Model) rerun(from pipeline.Stage) tea.Cmd {
	if m.running {
		m.stopRun()
	}
	if from == pipeline.StageSearch && !anyEnabled(m.check.Queries) {
		return m.setStatus("no query is ticked: tick one (space) or add one (a) first")
	}
	return tea.Batch(m.startRun(from), m.setStatus("running again from "+string(from)+"…"))
}

// ask opens the one-line prompt.
func (m *Model) ask(title, value string, done func(m *Model, v string) tea.Cmd) tea.Cmd {
	in := textinput.New()
	in.Prompt = ""
	in.SetValue(value)
	in.CursorEnd()
	m.prompt = promptState{title: title, input: in, done: done}
	m.overlay = overlayPrompt
	m.layout()
	return m.prompt.input.Focus()
}

func (m *Model) onPromptKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "enter":
		m.overlay = overlayNone
		return m.prompt.done(m, m.prompt.input.Value())
	case "esc", "ctrl+c":
		m.overlay = overlayNone
		return nil
	}
	var cmd tea.Cmd
	m.prompt.input, cmd = m.prompt.input.Update(msg)
	return cmd
}

func hostOf(u string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	s = strings.TrimPrefix(s, "www.")
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// splitLines flattens entries that hold several lines.
func splitLines(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, strings.Split(s, "\n")...)
	}
	return out
}

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }
