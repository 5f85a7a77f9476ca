package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// draftDelay is how long typing pauses before the draft is written.
const draftDelay = 400 * time.Millisecond

// draftFile is what is kept on disk so nothing typed is lost: the check as
// it stands (post, edits, correction) and what was being edited.
type draftFile struct {
	SavedAt time.Time       `json:"saved_at"`
	Check   *pipeline.Check `json:"check"`
	// Editing holds the inline editor's text when it was open; it wins over
	// the correction when the draft is restored.
	Editing string `json:"editing,omitempty"`
	path    string
}

type draftTickMsg struct{ seq int }

type draftFoundMsg struct{ draft *draftFile }

// scheduleDraft saves the draft once changes pause (debounced by sequence).
func (m *Model) scheduleDraft() tea.Cmd {
	if m.opts.DraftDir == "" {
		return nil
	}
	m.draftSeq++
	seq := m.draftSeq
	return tea.Tick(draftDelay, func(time.Time) tea.Msg { return draftTickMsg{seq} })
}

// draftSnapshot copies what must survive a crash; the copy is written by a
// Cmd, so the model is never read outside Update.
func (m *Model) draftSnapshot() draftFile {
	var c *pipeline.Check
	if m.screen == screenCompose || m.check == nil {
		composed, err := m.compose.check(m.now())
		if err != nil || composed == nil {
			// Keep the text even when a date does not parse yet.
			composed = &pipeline.Check{Post: pipeline.Post{Text: m.compose.text.Value()}}
		}
		if m.check != nil {
			c = cloneCheck(m.check)
			c.Post, c.Cutoff = composed.Post, composed.Cutoff
		} else {
			c = composed
		}
	} else {
		c = cloneCheck(m.check)
	}
	d := draftFile{Check: c}
	if m.editing {
		d.Editing = m.editor.Value()
	}
	return d
}

func draftPath(dir, id string) string { return filepath.Join(dir, id+".json") }

func saveDraft(dir, id string, d draftFile, now time.Time) tea.Cmd {
	return func() tea.Msg {
		d.SavedAt = now
		b, err := json.Marshal(d)
		if err != nil {
			return resultMsg{what: "save draft", err: err}
		}
		if err := os.MkdirAll(dir, 0o700); err != nil {
			return resultMsg{what: "save draft", err: fmt.Errorf("create %s: %w", dir, err)}
		}
		return resultMsg{what: "save draft", err: writeAtomic(draftPath(dir, id), b)}
	}
}

// removeDraft deletes this session's draft once nothing in it can be lost.
func removeDraft(dir, id string) tea.Cmd {
	if dir == "" {
		return nil
	}
	return func() tea.Msg {
		_ = os.Remove(draftPath(dir, id)) // absent is fine: nothing was typed
		return nil
	}
}

// findDraft looks for the newest draft another session left behind.
func findDraft(dir, own string) tea.Cmd {
	return func() tea.Msg {
		paths, _ := filepath.Glob(filepath.Join(dir, "*.json"))
		sort.Sort(sort.Reverse(sort.StringSlice(paths))) // names are start times
		for _, p := range paths {
			if filepath.Base(p) == own+".json" {
				continue
			}
			b, err := os.ReadFile(p)
			if err != nil {
				continue
			}
			var d draftFile
			if json.Unmarshal(b, &d) != nil || d.Check == nil {
				continue
			}
			d.path = p
			return draftFoundMsg{&d}
		}
		return nil
	}
}

// writeAtomic writes through a temporary file and a rename, so a crash
// leaves either the old file or the new one, never half of one.
func writeAtomic(path string, b []byte) error {
	dir := filepath.Dir(path)
	f, err := os.CreateTemp(dir, "."+filepath.Base(path)+".*")
	if err != nil {
		return fmt.Errorf("write %s: %w", path, err)
	}
	_, err = f.Write(b)
	if serr := f.Sync(); err == nil {
		err = serr
	}
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err == nil {
		err = os.Rename(f.Name(), path)
	}
	if err != nil {
		os.Remove(f.Name())
		return fmt.Errorf("write %s: %w", path, err)
	}
	return nil
}

func (m *Model) restoreView() string {
	d := m.restore
	p := d.Check.Post
	text := strings.Join(strings.Fields(p.Text), " ")
	if r := []rune(text); len(r) > 160 {
		text = string(r[:160]) + "…"
	}
	what := "the post you were composing"
	if strings.TrimSpace(d.Check.Correction.Text) != "" || d.Editing != "" {
		what = "a check with its correction"
	}
	return m.boxView("Unsaved draft found",
		fmt.Sprintf("muse stopped before you finished %s (saved %s):\n\n“%s”\n\nr restore it · d discard it · esc keep it for later",
			what, d.SavedAt.Local().Format("2006-01-02 15:04"), firstNonEmpty(text, p.URL)))
}

func (m *Model) onRestoreKey(msg tea.KeyMsg) tea.Cmd {
	d := m.restore
	switch msg.String() {
	case "r", "enter":
		m.overlay = overlayNone
		m.restore = nil
		m.compose = newCompose(m.st, d.Check.Post, d.Check.Cutoff)
		m.dirty = true
		path := d.path
		drop := func() tea.Msg { os.Remove(path); return nil }
		hasResults := len(d.Check.Queries) > 0 || strings.TrimSpace(d.Check.Correction.Text) != "" || d.Editing != ""
		if !hasResults {
			return tea.Batch(drop, m.scheduleDraft())
		}
		m.check = d.Check
		m.screen = screenCheck
		m.resetStages()
		for _, info := range d.Check.Stages {
			if sv := m.stages[info.Stage]; sv != nil {
				sv.state, sv.count, sv.seconds, sv.err = info.State, info.Count, info.Seconds, info.Error
			}
		}
		m.sel = stageIndex(pipeline.StageCorrection)
		cmds := []tea.Cmd{drop, m.scheduleDraft(), m.setStatus("draft restored")}
		if d.Editing != "" {
			cmds = append(cmds, m.startInlineEdit())
			m.editor.SetValue(d.Editing)
		}
		return tea.Batch(cmds...)
	case "d":
		m.overlay = overlayNone
		m.restore = nil
		path := d.path
		return tea.Batch(func() tea.Msg { os.Remove(path); return nil }, m.setStatus("draft discarded"))
	case "esc", "q":
		m.overlay = overlayNone
		m.restore = nil
	}
	return nil
}
