package tui

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

// draftDelay is how long typing pauses before the draft is written;
// draftMaxWait bounds how long a change waits while typing goes on, so
// every edit is on disk within a second.
const (
	draftDelay   = 400 * time.Millisecond
	draftMaxWait = 600 * time.Millisecond
)

// draftFile is what is kept on disk so nothing typed is lost: the check as
// it stands (post, edits, correction) and what was being edited.
type draftFile struct {
	SavedAt time.Time       `json:"saved_at"`
	Check   *pipeline.Check `json:"check"`
	// Editing holds the inline editor's text when it was open; it wins over
	// the correction when the draft is restored.
	Editing string `json:"editing,omitempty"`
	// Revising: Editing is the checker's revision of a case whose cited
	// pages changed, to be accepted (v, e), not yet the correction.
	Revising bool `json:"revising,omitempty"`
	// Prompt is the one-line edit (a query, an image's description) that
	// was open, with what had been typed in it.
	Prompt *draftPrompt `json:"prompt,omitempty"`
	path   string
}

// draftPrompt is a one-line edit of the check in progress: what it edits
// (Kind, and Key: the query's text or the image's address) and the text
// typed so far.
type draftPrompt struct {
	Kind  string `json:"kind"`
	Key   string `json:"key,omitempty"`
	Value string `json:"value"`
}

// Kinds of draftPrompt.
const (
	promptQuery       = "query"
	promptNewQuery    = "new_query"
	promptDescription = "description"
)

type draftTickMsg struct{ seq int }

type draftFoundMsg struct{ draft *draftFile }

// scheduleDraft saves the draft once changes pause (debounced by
// sequence), or draftMaxWait after the first unsaved change.
func (m *Model) scheduleDraft() tea.Cmd {
	if m.opts.DraftDir == "" {
		return nil
	}
	if m.draftSince.IsZero() {
		m.draftSince = time.Now() // wall time: the test clock stands still
	}
	m.draftSeq++
	seq := m.draftSeq
	return tea.Tick(draftDelay, func(time.Time) tea.Msg { return draftTickMsg{seq} })
}

// onDraftTick writes the draft when typing paused or has gone on too long.
func (m *Model) onDraftTick(msg draftTickMsg) tea.Cmd {
	if m.opts.DraftDir == "" || m.draftSince.IsZero() {
		return nil
	}
	if msg.seq != m.draftSeq && time.Since(m.draftSince) < draftMaxWait {
		return nil
	}
	m.draftSince = time.Time{}
	return saveDraft(m.gate, m.opts.DraftDir, m.draftKey(), m.draftSnapshot(), m.now())
}

// draftKey names the draft file: the case's ID for a check kept as a case
// (so reopening the case finds it), this run of the app's for the post being
// composed.
func (m *Model) draftKey() string {
	if m.screen == screenCheck && m.check != nil && m.check.ID != "" {
		return m.check.ID
	}
	return m.draftID
}

// draftSnapshot copies what must survive a crash; the copy is written by a
// Cmd, so the model is never read outside Update. A post being composed
// is kept alone: nothing of the check shown before it, which is another
// case.
func (m *Model) draftSnapshot() draftFile {
	if m.screen == screenCompose || m.check == nil {
		composed, err := m.compose.check(m.now())
		if err != nil || composed == nil {
			// Keep the text even when a date does not parse yet.
			composed = &pipeline.Check{Post: pipeline.Post{Text: m.compose.text.Value()}}
		}
		return draftFile{Check: composed}
	}
	d := draftFile{Check: cloneCheck(m.check)}
	switch {
	case m.editing:
		d.Editing, d.Revising = m.editor.Value(), m.revising
	case m.revision != "": // being accepted: in the draft until the store has it
		d.Editing, d.Revising = m.revision, true
	}
	if m.overlay == overlayPrompt && m.prompt.edit != nil {
		p := *m.prompt.edit
		p.Value = m.prompt.input.Value()
		d.Prompt = &p
	}
	return d
}

func draftPath(dir, id string) string { return filepath.Join(dir, id+".json") }

// draftGate orders the draft writes of one app, which run in concurrent
// tea.Cmds: once the app has removed its drafts on the way out, a write
// still in flight does not bring one back.
type draftGate struct {
	mu     sync.Mutex
	closed bool
}

func saveDraft(g *draftGate, dir, id string, d draftFile, now time.Time) tea.Cmd {
	return func() tea.Msg {
		if g != nil {
			g.mu.Lock()
			defer g.mu.Unlock()
			if g.closed {
				return nil
			}
		}
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

// removeDraft deletes drafts once nothing in them can be lost; final (on
// quitting) lets no later write through.
func removeDraft(g *draftGate, final bool, dir string, ids ...string) tea.Cmd {
	if dir == "" {
		return nil
	}
	return func() tea.Msg {
		g.mu.Lock()
		defer g.mu.Unlock()
		g.closed = g.closed || final
		for _, id := range ids {
			_ = os.Remove(draftPath(dir, id)) // absent is fine: nothing was typed
		}
		return nil
	}
}

// findCaseDraft offers back the draft a killed session left for case c:
// an inline edit in progress, or changes the case does not hold.
func findCaseDraft(dir string, c *pipeline.Check) tea.Cmd {
	id := c.ID
	saved, _ := json.Marshal(c)
	return func() tea.Msg {
		b, err := os.ReadFile(draftPath(dir, id))
		if err != nil {
			return nil
		}
		var d draftFile
		if json.Unmarshal(b, &d) != nil || d.Check == nil || d.Check.ID != id {
			return nil
		}
		if now, _ := json.Marshal(d.Check); d.Editing == "" && d.Prompt == nil && string(now) == string(saved) {
			return nil // nothing the case lacks
		}
		d.path = draftPath(dir, id)
		return draftFoundMsg{&d}
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
	text := strings.Join(strings.Fields(safe(p.Text)), " ")
	text = export.Clip(text, 160)
	what := "the post you were composing"
	switch {
	case d.Editing != "" && d.Revising:
		what = "your revision of the correction (its cited pages changed)"
	case d.Editing != "":
		what = "an edit of the correction"
	case d.Prompt != nil:
		what = "an edit (" + strings.ReplaceAll(d.Prompt.Kind, "_", " ") + ": “" + safe(d.Prompt.Value) + "”)"
	case d.Check.ID != "":
		what = "changes to case " + d.Check.ID
	case strings.TrimSpace(d.Check.Correction.Text) != "":
		what = "a check with its correction"
	}
	return m.boxView("Unsaved draft found",
		fmt.Sprintf("muse stopped before you finished %s (saved %s):\n\n“%s”\n\n%s",
			what, d.SavedAt.Local().Format("2006-01-02 15:04"), firstNonEmpty(text, safe(p.URL)), m.hints(m.keys.RestoreDraft, m.keys.DiscardDraft, m.keys.KeepDraft)))
}

func (m *Model) onRestoreKey(msg tea.KeyMsg) tea.Cmd {
	d := m.restore
	path := d.path
	drop := func() tea.Msg { os.Remove(path); return nil }
	k := m.keys
	switch {
	case key.Matches(msg, k.RestoreDraft):
		m.overlay = overlayNone
		m.restore = nil
		m.dirty = true
		hasResults := d.Check.ID != "" || len(d.Check.Queries) > 0 || strings.TrimSpace(d.Check.Correction.Text) != "" || d.Editing != "" || d.Prompt != nil
		if !hasResults {
			// A post being composed: back in the form, checked as a new case.
			m.compose = newCompose(m.st, d.Check.Post, d.Check.Cutoff)
			m.screen = screenCompose
			m.composeDirty = true
			return tea.Batch(drop, m.scheduleDraft(), m.setStatus("draft restored: ctrl+s checks it as a new case"))
		}
		m.openCase(d.Check)
		cmds := []tea.Cmd{m.saveCase(), m.setStatus("draft restored")}
		switch {
		case d.Editing != "":
			m.revising = d.Revising // ctrl+s accepts it once the case's recheck says it can
			cmds = append(cmds, m.startInlineEdit())
			m.editor.SetValue(d.Editing)
		case d.Prompt != nil:
			cmds = append(cmds, m.reopenPrompt(*d.Prompt))
		}
		// The draft stays on disk until its text is in the case.
		return tea.Batch(append(cmds, m.scheduleDraft())...)
	case key.Matches(msg, k.DiscardDraft):
		m.overlay = overlayNone
		m.restore = nil
		return tea.Batch(drop, m.setStatus("draft discarded"))
	case key.Matches(msg, k.KeepDraft):
		m.overlay = overlayNone
		m.restore = nil
	}
	return nil
}
