package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources"
)

// stage is a stage's state as the check records it (Check.Stage).
func (m *Model) stage(s pipeline.Stage) pipeline.StageInfo {
	if m.check == nil {
		return pipeline.StageInfo{Stage: s, State: pipeline.StateWaiting}
	}
	return m.check.Stage(s)
}

func (m *Model) stageRan() bool {
	for _, s := range pipeline.Stages {
		if m.stage(s).State != pipeline.StateWaiting {
			return true
		}
	}
	return false
}

// stageLog is what the engine logged (Check.Events) for stage s since it
// last started: its warnings and progress lines of the latest run.
func (m *Model) stageLog(s pipeline.Stage) []pipeline.Event {
	if m.check == nil {
		return nil
	}
	evs := m.check.Events
	for i := len(evs) - 1; i >= 0; i-- {
		if evs[i].Stage == s && evs[i].Kind == pipeline.EventStageStarted {
			evs = evs[i:]
			break
		}
	}
	var out []pipeline.Event
	for _, ev := range evs {
		if ev.Stage == s {
			out = append(out, ev)
		}
	}
	return out
}

// stageStarted is when stage s last started, from the engine's log.
func (m *Model) stageStarted(s pipeline.Stage) time.Time {
	for _, ev := range m.stageLog(s) {
		if ev.Kind == pipeline.EventStageStarted {
			return ev.Time
		}
	}
	return m.runStart
}

// stageWarnings are the engine's warnings for stage s in its latest run,
// less those about an image whose description the person has since
// written: the engine's word on it no longer holds.
func (m *Model) stageWarnings(s pipeline.Stage) []string {
	var out []string
	for _, ev := range m.stageLog(s) {
		if ev.Kind != pipeline.EventWarning {
			continue
		}
		w := firstNonEmpty(ev.Message, ev.Err)
		if s == pipeline.StageImages && m.aboutEditedImage(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func (m *Model) aboutEditedImage(w string) bool {
	for _, im := range m.check.Images {
		if im.Edited && strings.Contains(w, im.Source) {
			return true
		}
	}
	return false
}

// stageProgress is the engine's latest progress line for stage s.
func (m *Model) stageProgress(s pipeline.Stage) string {
	p := ""
	for _, ev := range m.stageLog(s) {
		if ev.Kind == pipeline.EventProgress {
			p = ev.Message
		}
	}
	return p
}

// startRun hands a copy of the check to the engine and runs it from a
// stage. The app shows the snapshots the engine sends with its events, and
// takes the engine's record back when the run ends.
func (m *Model) startRun(from pipeline.Stage) tea.Cmd {
	if m.opts.Runner == nil {
		m.runErr = "no engine configured"
		return m.setStatus("cannot run: no engine configured (see muse doctor)")
	}
	if m.running {
		m.stopRun()
	}
	m.gen++
	ctx, cancel := context.WithCancel(m.appCtx)
	m.cancel = cancel
	m.running = true
	m.stopped = false
	m.runFrom = from
	m.runStart = m.now()
	m.runErr = ""
	m.userMoved = false
	m.stream = ""
	m.before = nil
	m.lastRunSources = nil
	if len(m.check.Sources) > 0 { // a rerun: its rows are marked new or changed against these
		m.lastRunSources = map[string]string{}
		for _, s := range m.check.Sources {
			m.lastRunSources[sources.Key(s.URL)] = sourceState(s)
		}
	}
	if strings.TrimSpace(m.check.Correction.Text) != "" {
		prev := m.check.Correction
		m.before = &prev // kept if the person stops the rewrite
	}
	out := make(chan tea.Msg, 64)
	var audit tea.Cmd
	if m.saver.anySaved() { // a new case's first run is its "created"
		audit = m.auditCase(cases.ActionRan, "from the "+string(from)+" stage")
	}
	return tea.Batch(startRun(ctx, m.appCtx, m.opts.Runner, cloneCheck(m.check), from, m.gen, out), m.spin.Tick, audit)
}

// stopRun cancels the run; the engine returns what it found and runDoneMsg
// brings it back.
func (m *Model) stopRun() {
	if m.cancel != nil {
		m.cancel()
	}
	m.stopped = true
}

// onEvent takes the engine's snapshot of the check as the app's state,
// then saves it as the case.
func (m *Model) onEvent(ev pipeline.Event) tea.Cmd {
	m.applyEvent(ev)
	if !cases.ShouldSave(ev) {
		return nil
	}
	var cmd tea.Cmd
	if ev.Kind == pipeline.EventStageFinished && ev.Stage == pipeline.StageCorrection {
		cmd = m.saveCorrectionDraft(false)
	}
	if ev.Kind == pipeline.EventStageFinished && (ev.Stage == pipeline.StageEvidence || ev.Stage == pipeline.StageCorrection) {
		cmd = tea.Batch(cmd, m.saveSnapshots())
	}
	return tea.Batch(cmd, m.saveCase())
}

func (m *Model) applyEvent(ev pipeline.Event) {
	if ev.Kind == pipeline.EventStageStarted && ev.Stage == pipeline.StageCorrection {
		m.stream = ""
	}
	if ev.Check != nil {
		m.check = ev.Check
		m.relocateCursors()
	}
	if ev.Kind == pipeline.EventTokenDelta {
		m.stream += ev.Delta
		if ev.Text != "" {
			m.stream = ev.Text // the ids already read as the URLs they name
		}
		m.follow(pipeline.StageCorrection)
	}
	if m.stage(pipeline.StageCorrection).State == pipeline.StateRunning {
		// While it streams, the engine's record holds no correction yet
		// (the stage's start event still carries the last one): what has
		// been written so far is the deltas.
		m.check.Correction = pipeline.Correction{Text: m.stream}
	}
	switch ev.Kind {
	case pipeline.EventStageStarted:
		m.follow(ev.Stage)
	case pipeline.EventDone:
		if ev.Err != "" && !m.stopped {
			m.runErr = ev.Err
		}
	}
}

// follow shows a stage while it runs unless the journalist chose another.
func (m *Model) follow(s pipeline.Stage) {
	if m.userMoved || m.why || m.editing {
		return
	}
	m.sel = stageIndex(s)
}

// onRunDone takes back the engine's record, now that Run has returned.
func (m *Model) onRunDone(msg runDoneMsg) tea.Cmd {
	m.running = false
	m.lastRun = m.now().Sub(m.runStart)
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if msg.check != nil {
		m.check = msg.check
		m.relocateCursors()
	}
	var cmds []tea.Cmd
	var status string
	switch {
	case m.stopped:
		status = "stopped — kept what was found; rerun a stage to go on"
		partial := m.check.MarkStopped(m.before)
		if cmd := m.saveVersion(partial, false); cmd != nil {
			cmds = append(cmds, cmd)
			status = "stopped — the previous correction is kept; the half-written one is a version (v lists them)"
		}
		m.before = nil
	case msg.err != nil && !errors.Is(msg.err, context.Canceled):
		m.runErr = msg.err.Error()
		status = "check failed: " + m.runErr
	default:
		status = "check finished"
		switch t := strings.TrimSpace(m.check.Correction.Text); {
		case t == pipeline.NoSourceText:
			status = "check finished — no credible source found: nothing to correct with"
		case m.check.Correction.Unsourced():
			status = "check finished — no sourced correction: " + m.check.Account().Summary
		case m.check.NoLLM && t != "":
			status = "check finished — reading list ready (no verdict without a model)"
		case t != "":
			status = fmt.Sprintf("check finished — correction ready (%d characters)", export.NoteLength(t))
			if v := m.verdictLabel(); v != "" {
				status = fmt.Sprintf("check finished — %s · correction ready (%d characters)", v, export.NoteLength(t))
			}
		}
	}
	if !m.userMoved && !m.why && !m.editing && strings.TrimSpace(m.check.Correction.Text) != "" {
		m.sel = stageIndex(pipeline.StageCorrection)
	}
	if strings.TrimSpace(m.check.Correction.Text) != "" {
		m.dirty = true
	}
	return tea.Batch(append(cmds, m.setStatus(status), m.scheduleDraft(), m.saveCase(), m.scheduleSupport())...)
}

func stageIndex(s pipeline.Stage) int {
	for i, st := range pipeline.Stages {
		if st == s {
			return i
		}
	}
	return 0
}

// cloneCheck is Check.Clone that never returns nil, so the engine always
// gets a record of its own.
func cloneCheck(c *pipeline.Check) *pipeline.Check {
	if c == nil {
		return &pipeline.Check{}
	}
	return c.Clone()
}
