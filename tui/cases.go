package tui

import (
	"context"
	"errors"
	"strings"
	"sync"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// CaseStore keeps checks as cases (package pipeline/cases; *cases.Store
// satisfies it). The app saves its own copy of the check after every
// engine event but token deltas and after every edit, and each version of
// the correction as a draft.
type CaseStore interface {
	Save(ctx context.Context, c *pipeline.Check) error
	SaveDraft(ctx context.Context, id, text string, edited bool) error
	Drafts(ctx context.Context, id string) ([]cases.Draft, error)
}

// caseSaver orders saves that run in concurrent tea.Cmds: a save older
// than one already written is skipped, so the case never goes back in time.
type caseSaver struct {
	mu      sync.Mutex
	written int
	saved   bool // at least one save reached the store
}

func (s *caseSaver) save(ctx context.Context, st CaseStore, seq int, c *pipeline.Check) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if seq <= s.written {
		return nil
	}
	err := st.Save(ctx, c)
	var conflict *cases.ConflictError
	if err != nil && !errors.As(err, &conflict) {
		return err
	}
	s.written = seq
	s.saved = true
	return err // nil, or the conflict: saved, with both versions kept
}

func (s *caseSaver) anySaved() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.saved
}

// caseSavedMsg reports one save of the case.
type caseSavedMsg struct {
	seq int
	err error
}

// saving says whether this check is kept as a case.
func (m *Model) saving() bool {
	return m.opts.Cases != nil && m.check != nil && m.check.ID != ""
}

// saveCase saves a copy of the app's check. One save is in flight at a
// time; changes made meanwhile are saved as soon as it lands, so a burst of
// events costs two saves, not one per event.
func (m *Model) saveCase() tea.Cmd {
	if !m.saving() {
		return nil
	}
	if m.caseSaving {
		m.casePending = true
		return nil
	}
	return m.saveCaseNow()
}

// saveCaseNow saves at once, even with another save in flight (quitting
// must not wait for a later turn); caseSaver keeps the newest.
func (m *Model) saveCaseNow() tea.Cmd {
	if !m.saving() {
		return nil
	}
	if m.accepting {
		m.casePending = true // after the revision lands (onRevisionAccepted)
		return nil
	}
	m.caseSaving = true
	m.casePending = false
	m.caseSeq++
	seq, c, st, saver, ctx := m.caseSeq, cloneCheck(m.check), m.opts.Cases, m.saver, m.appCtx
	return func() tea.Msg {
		return caseSavedMsg{seq: seq, err: saver.save(ctx, st, seq, c)}
	}
}

func (m *Model) onCaseSaved(msg caseSavedMsg) tea.Cmd {
	m.caseSaving = false
	var cmds []tea.Cmd
	var conflict *cases.ConflictError
	if errors.As(msg.err, &conflict) {
		cmds = append(cmds, m.setStatus(conflict.Error()))
		msg.err = nil
	}
	if msg.err != nil {
		// Say it once per distinct failure, not on every event of a run.
		if e := msg.err.Error(); e != m.caseErr {
			m.caseErr = e
			cmds = append(cmds, m.setFailure("saving the case failed: "+e))
		}
	} else {
		m.caseErr = ""
	}
	if m.casePending {
		cmds = append(cmds, m.saveCaseNow())
	}
	return tea.Batch(cmds...)
}

// saveCorrectionDraft keeps the correction as the model finished it as
// one version.
func (m *Model) saveCorrectionDraft(edited bool) tea.Cmd {
	return m.saveVersion(m.check.Correction.Text, edited)
}

// saveVersion keeps one version of the correction in the case: the model's
// when it finishes (or is stopped) writing, the person's when an edit is
// saved.
func (m *Model) saveVersion(text string, edited bool) tea.Cmd {
	if !m.saving() || strings.TrimSpace(text) == "" {
		return nil
	}
	st, ctx, id := m.opts.Cases, m.appCtx, m.check.ID
	return func() tea.Msg {
		if err := st.SaveDraft(ctx, id, text, edited); err != nil {
			return resultMsg{what: "save a version of the correction", err: err}
		}
		return nil
	}
}

// saveSnapshots keeps the page behind each source the check now rests on
// (quoted, used or boosted), each read of a page once, off the UI loop.
func (m *Model) saveSnapshots() tea.Cmd {
	if !m.saving() || m.snaps == nil {
		return nil
	}
	snaps, ctx, c := m.snaps, m.appCtx, cloneCheck(m.check)
	return func() tea.Msg {
		if err := snaps.Save(ctx, c); err != nil {
			return resultMsg{what: "save the evidence pages", err: err}
		}
		return nil
	}
}

// openCase shows a saved case where the journalist left it: the check
// view, on the correction when there is one, edits intact. Nothing runs.
func (m *Model) openCase(c *pipeline.Check) {
	m.check = c
	m.screen = screenCheck
	m.compose = newCompose(m.st, c.Post, c.Cutoff)
	c.MarkStopped(nil) // a stage still running when it was saved: the process that ran it is gone
	m.sel = 0
	for i, s := range pipeline.Stages {
		if m.stage(s).State != pipeline.StateWaiting {
			m.sel = i
		}
	}
	if strings.TrimSpace(c.Correction.Text) != "" {
		m.sel = stageIndex(pipeline.StageCorrection)
	}
	m.stopped = m.stage(m.selected()).Stopped()
}

// caseChangedMsg is a save or deletion of a case made elsewhere (another
// checker, another muse), from the store's Watch.
type caseChangedMsg struct {
	change cases.Change
	ch     <-chan cases.Change
}

// watchCases starts listening for cases changed elsewhere when the store
// can say (*cases.Store: LISTEN/NOTIFY on PostgreSQL, polling on SQLite).
func (m *Model) watchCases() tea.Cmd {
	w, ok := m.opts.Cases.(interface {
		Watch(ctx context.Context) (<-chan cases.Change, error)
	})
	if !ok {
		return nil
	}
	ch, err := w.Watch(m.appCtx)
	if err != nil {
		return m.setStatus("changes made elsewhere will not be shown: " + err.Error())
	}
	return waitCaseChange(ch)
}

func waitCaseChange(ch <-chan cases.Change) tea.Cmd {
	return func() tea.Msg {
		c, ok := <-ch
		if !ok {
			return nil
		}
		return caseChangedMsg{change: c, ch: ch}
	}
}

// onCaseChanged tells the checker when the case open here changed
// elsewhere (the next save keeps both versions and says so) or was deleted
// elsewhere (the next save puts it back).
func (m *Model) onCaseChanged(msg caseChangedMsg) tea.Cmd {
	next := waitCaseChange(msg.ch)
	if m.check == nil || msg.change.ID != m.check.ID {
		return next
	}
	notice := msg.change.String()
	if msg.change.Deleted {
		notice += "; saving it here puts it back"
	}
	return tea.Batch(m.setStatus(notice), next)
}

// auditCase adds an entry to the case's trail (a rerun, an export) when
// the store keeps one (*cases.Store does).
func (m *Model) auditCase(action, detail string) tea.Cmd {
	a, ok := m.opts.Cases.(interface {
		Audit(ctx context.Context, id, action, detail string) error
	})
	if !ok || !m.saving() {
		return nil
	}
	ctx, id := m.appCtx, m.check.ID
	return func() tea.Msg {
		if err := a.Audit(ctx, id, action, detail); err != nil {
			return resultMsg{what: "note the " + action + " in the case's trail", err: err}
		}
		return nil
	}
}
