package tui

import (
	"context"
	"errors"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
)

func (m *Model) resetStages() {
	m.stages = map[pipeline.Stage]*stageView{}
	for _, s := range pipeline.Stages {
		m.stages[s] = &stageView{state: pipeline.StateWaiting}
	}
	m.warnings = map[pipeline.Stage][]string{}
	m.progress = map[pipeline.Stage]string{}
	m.runErr = ""
}

func (m *Model) stageRan() bool {
	for _, s := range m.stages {
		if s.state != pipeline.StateWaiting {
			return true
		}
	}
	return false
}

// startRun hands a copy of the check to the engine and runs it from a stage.
// The app keeps showing its own copy, refreshed from events, until the
// engine hands its record back at the end.
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
	after := false
	for _, s := range pipeline.Stages {
		if s == from {
			after = true
		}
		if after {
			m.stages[s].state = pipeline.StateWaiting
			m.stages[s].err = ""
			m.syncStage(s)
		}
	}
	out := make(chan tea.Msg, 64)
	return tea.Batch(startRun(ctx, m.appCtx, m.opts.Runner, cloneCheck(m.check), from, m.gen, out), m.spin.Tick)
}

// stopRun cancels the run; the engine returns what it found and runDoneMsg
// brings it back.
func (m *Model) stopRun() {
	if m.cancel != nil {
		m.cancel()
	}
	m.stopped = true
}

// onEvent folds one engine event into the app's copy of the check, then
// saves that copy as the case (the engine's own record is still its own).
func (m *Model) onEvent(ev pipeline.Event) tea.Cmd {
	cmd := m.foldEvent(ev)
	if !cases.ShouldSave(ev) {
		return cmd
	}
	if ev.Kind == pipeline.EventStageFinished && ev.Stage == pipeline.StageCorrection {
		cmd = tea.Batch(cmd, m.saveCorrectionDraft(false))
	}
	if ev.Kind == pipeline.EventStageFinished && (ev.Stage == pipeline.StageEvidence || ev.Stage == pipeline.StageCorrection) {
		cmd = tea.Batch(cmd, m.saveSnapshots())
	}
	return tea.Batch(cmd, m.saveCase())
}

func (m *Model) foldEvent(ev pipeline.Event) tea.Cmd {
	sv := m.stages[ev.Stage]
	switch ev.Kind {
	case pipeline.EventStageStarted:
		if sv != nil {
			sv.state, sv.started, sv.err = pipeline.StateRunning, m.now(), ""
		}
		m.clearOutput(ev.Stage)
		delete(m.warnings, ev.Stage)
		delete(m.progress, ev.Stage)
		m.follow(ev.Stage)
	case pipeline.EventStageFinished:
		if sv != nil {
			sv.state, sv.count, sv.seconds = pipeline.StateDone, ev.Count, ev.Seconds
			// the engine says "images: skipped"; older runners "images skipped"
			if strings.HasPrefix(ev.Message, string(ev.Stage)+": "+pipeline.StateSkipped) ||
				strings.HasPrefix(ev.Message, string(ev.Stage)+" "+pipeline.StateSkipped) {
				sv.state = pipeline.StateSkipped
			}
		}
	case pipeline.EventStageFailed:
		if sv != nil {
			sv.state, sv.seconds, sv.err = pipeline.StateFailed, ev.Seconds, firstNonEmpty(ev.Err, ev.Message, "failed")
		}
	}
	switch ev.Kind {
	case pipeline.EventStageStarted, pipeline.EventStageFinished, pipeline.EventStageFailed:
		m.syncStage(ev.Stage)
	}
	switch ev.Kind {
	case pipeline.EventItem:
		m.addItem(ev.Item)
	case pipeline.EventTokenDelta:
		m.check.Correction.Text += ev.Delta
		m.follow(pipeline.StageCorrection)
	case pipeline.EventWarning:
		m.warnings[ev.Stage] = append(m.warnings[ev.Stage], firstNonEmpty(ev.Message, ev.Err))
	case pipeline.EventProgress:
		m.progress[ev.Stage] = ev.Message
	case pipeline.EventDone:
		if ev.Err != "" && !m.stopped {
			m.runErr = ev.Err
		}
	default:
		// The engine's usage event (after every model call) carries the
		// check's Usage so far, ByStage included: the cost shows live.
		switch u := ev.Item.(type) {
		case pipeline.Usage:
			m.check.Usage = u
		case *pipeline.Usage:
			m.check.Usage = *u
		}
	}
	return nil
}

// syncStage copies a stage's state into the app's check, so a case saved
// mid-run (and reopened after a kill) shows how far the run got.
func (m *Model) syncStage(s pipeline.Stage) {
	sv := m.stages[s]
	if sv == nil || m.check == nil {
		return
	}
	info := pipeline.StageInfo{Stage: s, State: sv.state, Count: sv.count, Seconds: sv.seconds, Error: sv.err}
	for i := range m.check.Stages {
		if m.check.Stages[i].Stage == s {
			m.check.Stages[i] = info
			return
		}
	}
	m.check.Stages = append(m.check.Stages, info)
}

// follow shows a stage while it runs unless the journalist chose another.
func (m *Model) follow(s pipeline.Stage) {
	if m.userMoved || m.why || m.editing {
		return
	}
	m.sel = stageIndex(s)
}

// clearOutput empties what a stage is about to produce again.
func (m *Model) clearOutput(s pipeline.Stage) {
	c := m.check
	switch s {
	case pipeline.StageImages:
		// descriptions replace images one by one (addItem)
	case pipeline.StageQueries:
		var keep []pipeline.Query
		for _, q := range c.Queries {
			if q.Origin == pipeline.OriginUser {
				keep = append(keep, q)
			}
		}
		c.Queries = keep
	case pipeline.StageSearch:
		c.Hits = nil
	case pipeline.StageSources:
		// The engine reads every hit again (keeping what the person
		// decided) and starts the evidence afresh.
		c.Sources = nil
		c.Evidence = nil
	case pipeline.StageEvidence:
		c.Evidence = nil
	case pipeline.StageCorrection:
		c.Correction = pipeline.Correction{}
		m.scroll = 0
	}
}

func (m *Model) addItem(item any) {
	c := m.check
	switch v := item.(type) {
	case pipeline.Query:
		for _, q := range c.Queries {
			if q.Text == v.Text {
				return
			}
		}
		c.Queries = append(c.Queries, v)
	case *pipeline.Query:
		m.addItem(*v)
	case pipeline.Hit:
		c.Hits = append(c.Hits, v)
	case *pipeline.Hit:
		m.addItem(*v)
	case pipeline.Source:
		for i := range c.Sources {
			if c.Sources[i].URL == v.URL {
				c.Sources[i] = v
				return
			}
		}
		c.Sources = append(c.Sources, v)
	case *pipeline.Source:
		m.addItem(*v)
	case pipeline.Evidence:
		for _, e := range c.Evidence {
			if e.SourceURL == v.SourceURL && e.Quote == v.Quote {
				return
			}
		}
		c.Evidence = append(c.Evidence, v)
	case *pipeline.Evidence:
		m.addItem(*v)
	case pipeline.Image:
		for i := range c.Images {
			if c.Images[i].Source == v.Source {
				c.Images[i] = v
				return
			}
		}
		c.Images = append(c.Images, v)
	case *pipeline.Image:
		m.addItem(*v)
	case pipeline.Correction:
		c.Correction = v
	case *pipeline.Correction:
		c.Correction = *v
	case pipeline.Usage:
		c.Usage = v
	case *pipeline.Usage:
		c.Usage = *v
	}
}

// onRunDone takes back the engine's record, which is complete where the
// events may have been merged.
func (m *Model) onRunDone(msg runDoneMsg) tea.Cmd {
	m.running = false
	m.lastRun = m.now().Sub(m.runStart)
	if m.cancel != nil {
		m.cancel()
		m.cancel = nil
	}
	if msg.check != nil {
		m.check = msg.check
	}
	for _, info := range m.check.Stages {
		if sv := m.stages[info.Stage]; sv != nil && info.State != "" {
			sv.state, sv.count, sv.seconds, sv.err = info.State, info.Count, info.Seconds, info.Error
		}
	}
	for _, s := range pipeline.Stages {
		if sv := m.stages[s]; sv.state == pipeline.StateRunning {
			sv.state = pipeline.StateFailed
			sv.err = "stopped"
			if !m.stopped && msg.err != nil {
				sv.err = msg.err.Error()
			}
		}
	}
	var status string
	switch {
	case m.stopped:
		status = "stopped — kept what was found; rerun a stage to go on"
	case msg.err != nil && !errors.Is(msg.err, context.Canceled):
		m.runErr = msg.err.Error()
		status = "check failed: " + m.runErr
	default:
		status = "check finished"
		if n := len([]rune(m.check.Correction.Text)); n > 0 {
			status = fmt.Sprintf("check finished — correction ready (%d characters)", export.NoteLength(m.check.Correction.Text))
		}
	}
	if !m.userMoved && !m.why && !m.editing && strings.TrimSpace(m.check.Correction.Text) != "" {
		m.sel = stageIndex(pipeline.StageCorrection)
	}
	if strings.TrimSpace(m.check.Correction.Text) != "" {
		m.dirty = true
	}
	return tea.Batch(m.setStatus(status), m.scheduleDraft(), m.saveCase())
}

// markStale flags the stages after s whose output an edit made out of date.
func (m *Model) markStale(after pipeline.Stage) {
	seen := false
	for _, s := range pipeline.Stages {
		if seen {
			if sv := m.stages[s]; sv.state == pipeline.StateDone || sv.state == pipeline.StateFailed {
				sv.state = pipeline.StateStale
			}
		}
		if s == after {
			seen = true
		}
	}
	for i := range m.check.Stages {
		if sv := m.stages[m.check.Stages[i].Stage]; sv != nil {
			m.check.Stages[i].State = sv.state
		}
	}
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
