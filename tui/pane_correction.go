package tui

import (
	"context"
	"fmt"
	"os"
	"os/exec"
	"runtime"
	"strings"

	"github.com/atotto/clipboard"
	"github.com/aymanbagabas/go-osc52/v2"
	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textarea"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/glamour"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

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
		v := m.editor.View() + "\n" + m.countLine(m.editor.Value(), w) + "\n" + m.supportStrip(w)
		if m.revising {
			v = m.st.Warn.Render(truncate("Δ your revision: "+m.keys.AcceptEdited.Help().Key+" accepts it · esc keeps it unaccepted", w, "…")) + "\n" + v
		}
		return v
	}
	if strings.TrimSpace(c.Text) == "" {
		return m.emptyHint(pipeline.StageCorrection, "The correction appears here as it is written…", "No correction was written. Check the evidence and write again (w).")
	}
	text := m.renderMarkdown(safe(c.Text), w)
	if m.stage(pipeline.StageCorrection).State == pipeline.StateRunning {
		text += "▍"
	}
	var meta []string
	meta = append(meta, m.countLine(c.Text, w))
	meta = append(meta, m.noteLines(w)...)
	if c.Edited {
		meta = append(meta, m.st.Dim.Render("edited by you"))
	}
	for _, warn := range m.check.CorrectionWarnings() {
		meta = append(meta, m.st.Warn.Render(wrap("⚠ "+safe(warn), w)))
	}
	meta = append(meta, m.supportLines(w)...)
	if len(c.URLs) > 0 {
		meta = append(meta, m.st.Dim.Render("links cited:"))
		for _, u := range c.URLs {
			meta = append(meta, m.st.Dim.Render(indent(wrap(safe(u), w-2), "  ")))
		}
	}
	lines := splitLines(append([]string{text, ""}, meta...))
	m.scroll = clamp(m.scroll, 0, max(len(lines)-h, 0))
	return strings.Join(lines[m.scroll:min(len(lines), m.scroll+h)], "\n")
}

// noteLines are the note's classification and tags ("Note: misleading ·
// factual_error") and what X's admission would refuse of it, each with
// its fix: export.NoteFor offline, as `muse cases export --format note`
// says it.
func (m *Model) noteLines(w int) []string {
	if m.check.NoLLM || m.running {
		return nil
	}
	d := export.NoteFor(context.Background(), m.check, nil)
	f := m.check.NoteFields()
	line := "Note: " + f.Short()
	if f.Classification == "" {
		line = "Note: none"
	}
	if f.By == pipeline.VerdictByChecker {
		line += " (yours)"
	}
	out := []string{m.st.Dim.Render(wrap(safe(line), w))}
	for _, p := range d.Preflight.Problems {
		out = append(out, m.st.Warn.Render(wrap("✗ "+safe(p.What+" — "+p.Fix), w)))
	}
	return append(out, m.xNoteLines(w)...)
}

// askNoteChoice asks the checker's classification and tags for the note:
// "misleading" and X's tags, "not misleading", or nothing to give them
// back to the evidence.
func (m *Model) askNoteChoice() tea.Cmd {
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	cur := ""
	if ch := m.check.CheckerNote; ch != nil {
		cur = strings.Join(append([]string{noteClassWord(ch.Classification)}, ch.Tags...), " ")
	}
	return m.ask("Note: misleading and its tags ("+strings.Join(pipeline.MisleadingTags, " ")+"), or not misleading; empty: the evidence's:",
		cur, func(m *Model, s string) tea.Cmd {
			words := strings.Fields(strings.ToLower(s))
			class := ""
			switch {
			case len(words) == 0:
			case words[0] == "misleading":
				class, words = pipeline.ClassMisleading, words[1:]
			case len(words) >= 2 && words[0] == "not" && words[1] == "misleading":
				class, words = pipeline.ClassNotMisleading, words[2:]
			default:
				return m.setFailure(fmt.Sprintf("%q: start with misleading or not misleading", safe(s)))
			}
			if err := m.check.SetNoteChoice(class, words); err != nil {
				return m.setFailure(safe(err.Error()))
			}
			status := "the note's fields are the evidence's: " + m.check.NoteFields().Short()
			if class != "" {
				status = "the note's fields are yours: " + m.check.NoteFields().Short() + " (kept when the check runs again)"
			}
			return tea.Batch(m.edited(), m.setStatus(status))
		})
}

// noteClassWord is a classification as the checker types it.
func noteClassWord(c string) string {
	if c == pipeline.ClassNotMisleading {
		return "not misleading"
	}
	return "misleading"
}

func (m *Model) countLine(text string, w int) string {
	n := export.NoteLength(text)
	s := fmt.Sprintf("%d/%d characters (each link counts as 1)", n, export.NoteLimit)
	if n > export.NoteLimit {
		return m.st.Fail.Render(wrap(s+fmt.Sprintf(" — %d over the Community Notes limit", n-export.NoteLimit), w))
	}
	return m.st.Dim.Render(wrap(s, w))
}

func (m *Model) onCorrectionKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if n, ok := m.scrollStep(msg); ok {
		m.scroll = max(m.scroll+n, 0)
		return nil
	}
	switch {
	case key.Matches(msg, k.WriteAgain):
		return m.rerun(pipeline.StageCorrection)
	case key.Matches(msg, k.Versions):
		return m.openVersions()
	case key.Matches(msg, k.NoteChoice):
		return m.askNoteChoice()
	case key.Matches(msg, k.NoteSend):
		return m.sendNote()
	case key.Matches(msg, k.EditInline):
		if m.running {
			return m.setStatus("wait for the correction to finish (or esc to stop) before editing")
		}
		m.revising = false
		return m.startInlineEdit()
	case key.Matches(msg, k.EditExternal):
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
	m.editor.SetValue(safe(m.check.Correction.Text))
	m.editing = true
	m.sel = stageIndex(pipeline.StageCorrection)
	return m.editor.Focus()
}

func (m *Model) onEditorKey(msg tea.KeyMsg) tea.Cmd {
	if m.revising && key.Matches(msg, m.keys.AcceptEdited, m.keys.Back) {
		text := m.editor.Value()
		accept := key.Matches(msg, m.keys.AcceptEdited)
		if accept && strings.TrimSpace(text) == "" {
			return m.setStatus("an empty revision cannot be accepted: write it, or esc")
		}
		if acc, refused := m.revisionStore(); accept && acc == nil {
			return refused // the editor stays open: esc keeps the text as the correction
		}
		m.editing, m.revising = false, false
		m.editor.Blur()
		m.layout()
		if accept {
			return m.acceptRevision(text)
		}
		return m.setCorrection(text, "your revision is the correction, not accepted: the cited pages stay marked changed (v, then e or a)")
	}
	if key.Matches(msg, m.keys.Save) {
		m.editing = false
		m.editor.Blur()
		return m.setCorrection(m.editor.Value(), "edit saved")
	}
	before := m.editor.Value()
	var cmd tea.Cmd
	m.editor, cmd = m.editor.Update(msg)
	if m.editor.Value() == before {
		return cmd
	}
	m.dirty = true
	// The draft, tied to the case, holds the text being typed; the
	// support map is judged once typing pauses.
	return tea.Batch(cmd, m.scheduleDraft(), m.scheduleSupport())
}

// setCorrection stores a correction the journalist wrote and says so.
func (m *Model) setCorrection(text, status string) tea.Cmd {
	if text == m.check.Correction.Text {
		return tea.Batch(m.setStatus("no change"), m.scheduleDraft())
	}
	return tea.Batch(m.setStatus(status), m.storeCorrection(text))
}

// storeCorrection puts the person's text in the check, saves the case and
// keeps the text as a version of the correction.
func (m *Model) storeCorrection(text string) tea.Cmd {
	if text == m.check.Correction.Text {
		return nil
	}
	m.check.SetCorrection(text, true)
	m.dirty = true
	return tea.Batch(m.scheduleDraft(), m.saveCase(), m.saveVersion(text, true), m.scheduleSupport())
}

// editorReadyMsg and editorDoneMsg carry an edit in $EDITOR: of the
// correction, or, when source names one, of the text pasted into that
// source.
type editorReadyMsg struct {
	path   string
	source string
	err    error
}

type editorDoneMsg struct {
	text   string
	source string
	err    error
}

func writeEditorFile(text string) tea.Cmd {
	return writeEditorFileFor(text, "", "muse-correction-*.md")
}

func writeEditorFileFor(text, source, pattern string) tea.Cmd {
	return func() tea.Msg {
		f, err := os.CreateTemp("", pattern)
		if err != nil {
			return editorReadyMsg{err: fmt.Errorf("create file for the editor: %w", err)}
		}
		// A last newline, as editors expect: text an editor appends then
		// starts a line of its own instead of joining the last one.
		_, err = f.WriteString(strings.TrimRight(text, "\n") + "\n")
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return editorReadyMsg{err: fmt.Errorf("write file for the editor: %w", err)}
		}
		return editorReadyMsg{path: f.Name(), source: source}
	}
}

// openEditor hands the terminal to $EDITOR; the app resumes when it exits.
func (m *Model) openEditor(msg editorReadyMsg) tea.Cmd {
	if msg.err != nil {
		return m.setStatus(msg.err.Error())
	}
	cmd, args := editorCmd(m.opts.Editor, msg.path), strings.Fields(firstNonEmpty(m.opts.Editor, "vi"))
	path, source := msg.path, msg.source
	return tea.ExecProcess(cmd, func(err error) tea.Msg {
		defer os.Remove(path)
		if err != nil {
			return editorDoneMsg{source: source, err: fmt.Errorf("run editor %s: %w", args[0], err)}
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return editorDoneMsg{source: source, err: fmt.Errorf("read back the edited text: %w", err)}
		}
		return editorDoneMsg{text: string(b), source: source}
	})
}

// editorCmd is the editor's command line with the file to edit.
func editorCmd(editor, path string) *exec.Cmd {
	args := strings.Fields(firstNonEmpty(editor, "vi"))
	return exec.Command(args[0], append(args[1:], path)...)
}

func (m *Model) onEditorDone(msg editorDoneMsg) tea.Cmd {
	if msg.err != nil {
		return m.setStatus(msg.err.Error())
	}
	if msg.source != "" {
		return m.pasteSourceText(msg.source, msg.text)
	}
	return m.setCorrection(strings.TrimRight(msg.text, "\n"), "edit from the editor saved")
}

// copyCorrection copies the correction (the editor's text while it is open).
func (m *Model) copyCorrection() tea.Cmd {
	text := strings.TrimSpace(m.check.Correction.Text)
	if m.editing {
		text = strings.TrimSpace(m.editor.Value())
	}
	if text == "" {
		return m.setStatus("nothing to copy yet")
	}
	return m.copyText(fmt.Sprintf("the correction (%d characters)", export.NoteLength(text)), text, true)
}

// copySelectedURL copies the address of the selected page (for machines
// where o finds no browser).
func (m *Model) copySelectedURL() tea.Cmd {
	u := m.selectedURL()
	if u == "" {
		return m.setStatus("no page selected: Y copies the URL of the selected image, result, source or quote")
	}
	return m.copyText(safe(u), u, false)
}

// copyText puts text on the clipboards within reach and says which: the
// system clipboard when there is one, and the terminal's by a plain OSC 52
// (which tmux relays with set-clipboard on; wrapping it in tmux's DCS
// passthrough is dropped by tmux 3.3+). Whether a terminal honours OSC 52
// cannot be known, so the status says it was sent, not that it landed.
func (m *Model) copyText(what, text string, correction bool) tea.Cmd {
	if f := m.opts.Clipboard; f != nil {
		return func() tea.Msg {
			return resultMsg{what: "copy", err: f(text), saved: correction, text: "copied " + what}
		}
	}
	out, tmux := m.opts.Output, m.opts.Tmux
	return func() tea.Msg {
		system := !clipboard.Unsupported && clipboard.WriteAll(text) == nil
		sent := false
		if out != nil {
			_, err := osc52.New(text).WriteTo(out)
			sent = err == nil
		}
		via := "the terminal by OSC 52"
		if tmux {
			via += " (tmux relays it with set-clipboard on)"
		}
		switch {
		case system && sent:
			return resultMsg{what: "copy", saved: correction, text: "copied " + what + " to the system clipboard, and sent it to " + via}
		case system:
			return resultMsg{what: "copy", saved: correction, text: "copied " + what + " to the system clipboard"}
		case sent:
			return resultMsg{what: "copy", text: "sent " + what + " to " + via + "; no system clipboard here"}
		}
		return resultMsg{what: "copy", err: fmt.Errorf("no clipboard reachable: export with x instead")}
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
