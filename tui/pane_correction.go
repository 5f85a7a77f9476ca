package tui

import (
	"fmt"
	"os"
	"os/exec"
	"regexp"
	"runtime"
	"strings"

	"github.com/atotto/clipboard"
	"github.com/aymanbagabas/go-osc52/v2"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"
	"github.com/charmbracelet/x/ansi"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

// linkRE finds the links a person's edit cites (Correction.URLs).
var linkRE = regexp.MustCompile(`https?://[^\s)\]>"]+`)

// renderMarkdown renders the correction with glamour, cached by text and
// width because View runs on every spinner tick.
func (m *Model) renderMarkdown(text string, w int) string {
	key := fmt.Sprintf("%d\x00%s\x00%s", w, m.st.Glamour, text)
	if m.rendered.key == key {
		return m.rendered.out
	}
	out := text
	// glamour's own wrapping splits links at dots and dashes; wrap here
	// instead, where a link breaks only when it is wider than the pane.
	r, err := glamour.NewTermRenderer(glamour.WithStandardStyle(m.st.Glamour), glamour.WithWordWrap(0))
	if err == nil {
		if s, err := r.Render(text); err == nil {
			out = strings.Trim(s, "\n")
		}
	}
	var lines []string
	for _, l := range strings.Split(out, "\n") {
		l = strings.TrimRight(l, " ")
		trimmed := strings.TrimLeft(l, " ")
		pad := strings.Repeat(" ", len(l)-len(trimmed))
		lines = append(lines, indent(wrap(trimmed, max(w-len(pad), 10)), pad))
	}
	out = strings.Join(lines, "\n")
	m.rendered.key, m.rendered.out = key, out
	return out
}

func (m *Model) correctionPane(w, h int) string {
	c := m.check.Correction
	if m.editing {
		return m.editor.View() + "\n" + m.countLine(m.editor.Value(), w)
	}
	if strings.TrimSpace(c.Text) == "" {
		return m.emptyHint(pipeline.StageCorrection, "The correction appears here as it is written…", "No correction was written. Check the evidence and write again (w).")
	}
	text := m.renderMarkdown(c.Text, w)
	if m.stages[pipeline.StageCorrection].state == pipeline.StateRunning {
		text += "▍"
	}
	var meta []string
	meta = append(meta, m.countLine(c.Text, w))
	if c.Edited {
		meta = append(meta, m.st.Dim.Render("edited by you"))
	}
	for _, warn := range c.Warnings {
		meta = append(meta, m.st.Warn.Render(wrap("⚠ "+warn, w)))
	}
	if len(c.URLs) > 0 {
		meta = append(meta, m.st.Dim.Render("links cited:"))
		for _, u := range c.URLs {
			meta = append(meta, m.st.Dim.Render("  "+ansi.Truncate(u, w-2, "…")))
		}
	}
	lines := splitLines(append([]string{text, ""}, meta...))
	m.scroll = clamp(m.scroll, 0, max(len(lines)-h, 0))
	return strings.Join(lines[m.scroll:min(len(lines), m.scroll+h)], "\n")
}

func (m *Model) countLine(text string, w int) string {
	n := export.NoteLength(text)
	s := fmt.Sprintf("%d/%d characters (each link counts as 1)", n, export.NoteLimit)
	if n > export.NoteLimit {
		return m.st.Fail.Render(wrap(s+fmt.Sprintf(" — %d over the Community Notes limit", n-export.NoteLimit), w))
	}
	return m.st.Dim.Render(wrap(s, w))
}

func (m *Model) onCorrectionKey(k string) tea.Cmd {
	switch k {
	case "up", "k":
		m.scroll--
	case "down", "j":
		m.scroll++
	case "pgup":
		m.scroll -= 10
	case "pgdown":
		m.scroll += 10
	case "w":
		return m.rerun(pipeline.StageCorrection)
	case "e", "enter":
		if m.running {
			return m.setStatus("wait for the correction to finish (or esc to stop) before editing")
		}
		return m.startInlineEdit()
	case "E":
		if m.running {
			return m.setStatus("wait for the correction to finish (or esc to stop) before editing")
		}
		return writeEditorFile(m.check.Correction.Text)
	}
	m.scroll = max(m.scroll, 0)
	return nil
}

func (m *Model) startInlineEdit() tea.Cmd {
	m.editor = textarea.New()
	m.editor.ShowLineNumbers = false
	m.editor.CharLimit = 0
	m.editor.Prompt = "┃ "
	m.layout()
	m.editor.SetValue(m.check.Correction.Text)
	m.editing = true
	m.sel = stageIndex(pipeline.StageCorrection)
	return m.editor.Focus()
}

func (m *Model) onEditorKey(msg tea.KeyMsg) tea.Cmd {
	switch msg.String() {
	case "ctrl+s", "esc":
		m.editing = false
		m.editor.Blur()
		return m.setCorrection(m.editor.Value(), "edit saved")
	}
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(msg)
	return tea.Batch(cmd, m.scheduleDraftEditing())
}

// scheduleDraftEditing saves the text in the inline editor as it is typed.
func (m *Model) scheduleDraftEditing() tea.Cmd {
	m.dirty = true
	return m.scheduleDraft()
}

// setCorrection stores a correction the journalist wrote.
func (m *Model) setCorrection(text, status string) tea.Cmd {
	c := &m.check.Correction
	if text == c.Text {
		return m.setStatus("no change")
	}
	c.Text = text
	c.Edited = true
	c.URLs = linkRE.FindAllString(text, -1)
	m.dirty = true
	return tea.Batch(m.setStatus(status), m.scheduleDraft(), m.saveCase(), m.saveCorrectionDraft(true))
}

type editorReadyMsg struct {
	path string
	err  error
}

type editorDoneMsg struct {
	text string
	err  error
}

func writeEditorFile(text string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", "muse-correction-*.md")
		if err != nil {
			return editorReadyMsg{err: fmt.Errorf("create file for the editor: %w", err)}
		}
		_, err = f.WriteString(text)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return editorReadyMsg{err: fmt.Errorf("write file for the editor: %w", err)}
		}
		return editorReadyMsg{path: f.Name()}
	}
}

// openEditor hands the terminal to $EDITOR; the app resumes when it exits.
func (m *Model) openEditor(msg editorReadyMsg) tea.Cmd {
	if msg.err != nil {
		return m.setStatus(msg.err.Error())
	}
	args := strings.Fields(firstNonEmpty(m.opts.Editor, "vi"))
	cmd := exec.Command(args[0], append(args[1:], msg.path)...)
	path := msg.path
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{err: fmt.Errorf("run editor %s: %w", args[0], err)}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return editorDoneMsg{err: fmt.Errorf("read back the edited correction: %w", err)}
		}
		return editorDoneMsg{text: string(b)}
	})
}

func (m *Model) onEditorDone(msg editorDoneMsg) tea.Cmd {
	if msg.err != nil {
		return m.setStatus(msg.err.Error())
	}
	return m.setCorrection(strings.TrimRight(msg.text, "\n"), "edit from the editor saved")
}

// copyCorrection copies the correction with OSC 52 (which reaches the
// journalist's own clipboard over SSH and through tmux) and the native
// clipboard when there is one.
func (m *Model) copyCorrection() tea.Cmd {
	text := strings.TrimSpace(m.check.Correction.Text)
	if m.editing {
		text = strings.TrimSpace(m.editor.Value())
	}
	if text == "" {
		return m.setStatus("nothing to copy yet")
	}
	if f := m.opts.Clipboard; f != nil {
		return func() tea.Msg {
			return resultMsg{what: "copy", err: f(text), saved: true, text: fmt.Sprintf("copied the correction (%d characters)", export.NoteLength(text))}
		}
	}
	out, tmux, screen := m.opts.Output, m.opts.Tmux, m.opts.Screen
	return func() tea.Msg {
		seq := osc52.New(text)
		switch {
		case tmux:
			seq = seq.Tmux()
		case screen:
			seq = seq.Screen()
		}
		var how []string
		if out != nil {
			if _, err := seq.WriteTo(out); err == nil {
				how = append(how, "OSC 52")
			}
		}
		if !clipboard.Unsupported {
			if err := clipboard.WriteAll(text); err == nil {
				how = append(how, "system clipboard")
			}
		}
		if len(how) == 0 {
			return resultMsg{what: "copy", err: fmt.Errorf("no clipboard reachable: export with x instead")}
		}
		return resultMsg{what: "copy", saved: true, text: fmt.Sprintf("copied the correction (%d characters) via %s", export.NoteLength(text), strings.Join(how, " + "))}
	}
}

// openURL opens a page in the browser without waiting for it.
func (m *Model) openURL(u string) tea.Cmd {
	if u == "" {
		return nil
	}
	if f := m.opts.OpenURL; f != nil {
		return func() tea.Msg { return resultMsg{what: "open", err: f(u), text: "opened " + u} }
	}
	return func() tea.Msg {
		name := "xdg-open"
		if runtime.GOOS == "darwin" {
			name = "open"
		}
		cmd := exec.Command(name, u)
		if err := cmd.Start(); err != nil {
			return resultMsg{what: "open", err: fmt.Errorf("%s %s: %w", name, u, err)}
		}
		go cmd.Wait() //nolint:errcheck // the browser outlives us; only reap the launcher
		return resultMsg{what: "open", text: "opened " + u}
	}
}
