package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// The support map (pipeline.Check.SupportMap) is shown under the
// correction: its lexical part is derived on every view, the model's
// judgement is asked for supportDelay after the last keystroke, in one
// call run as a tea.Cmd so typing never waits, and kept in the check per
// sentence and cited quotes so an unchanged sentence is not asked about
// again.

// supportDelay is the pause in typing after which the sentences are
// judged.
const supportDelay = 800 * time.Millisecond

// supportTickMsg fires supportDelay after change seq of the text.
type supportTickMsg struct{ seq int }

// supportResultMsg is the model's judgement of the text of change seq.
type supportResultMsg struct {
	seq int
	res pipeline.SupportResult
	err error
}

// supportJudge is the engine's model when it can judge the support map.
func (m *Model) supportJudge() pipeline.SupportJudge {
	if r, ok := m.opts.Runner.(interface{ SupportJudge() pipeline.SupportJudge }); ok {
		return r.SupportJudge()
	}
	return nil
}

// scheduleSupport asks for a judgement once the text has not changed for
// supportDelay.
func (m *Model) scheduleSupport() tea.Cmd {
	if m.supportJudge() == nil {
		return nil
	}
	m.support.seq++
	seq := m.support.seq
	return tea.Tick(supportDelay, func(time.Time) tea.Msg { return supportTickMsg{seq} })
}

// supportCheck is the check as the person sees it: with the text being
// typed while the editor is open.
func (m *Model) supportCheck() *pipeline.Check {
	if !m.editing {
		return m.check
	}
	c := *m.check
	c.Correction.Text = m.editor.Value()
	c.Correction.Edited = true
	return &c
}

// onSupportTick starts the model's call in the background when no key
// came since the tick was scheduled and a sentence is not yet judged.
func (m *Model) onSupportTick(msg supportTickMsg) tea.Cmd {
	judge := m.supportJudge()
	if msg.seq != m.support.seq || judge == nil || m.running || m.check == nil {
		return nil
	}
	req := m.supportCheck().SupportRequest()
	if len(req.Sentences) == 0 {
		return nil
	}
	m.support.busy = true
	ctx, seq := m.appCtx, msg.seq
	return func() tea.Msg {
		res, err := pipeline.JudgeSupport(ctx, judge, req)
		return supportResultMsg{seq: seq, res: res, err: err}
	}
}

// onSupportResult keeps the judgements; the marks follow on the next view.
func (m *Model) onSupportResult(msg supportResultMsg) tea.Cmd {
	if msg.seq == m.support.seq {
		m.support.busy = false
	}
	if m.running || m.check == nil {
		return nil // the engine owns the check; the next edit asks again
	}
	m.check.AddSupport(msg.res)
	m.support.err = ""
	if msg.err != nil {
		m.support.err = msg.err.Error()
	}
	return m.saveCase()
}

// supportLines are the support map's lines under the correction: each
// sentence's mark, number and what the quotes it cites say of it.
func (m *Model) supportLines(w int) []string {
	sm := m.supportCheck().SupportMap()
	if len(sm) == 0 {
		return nil
	}
	head := "support of each sentence (✓ supported ◐ partly ✗ unsupported ○ uncited ? not judged):"
	if m.support.busy {
		head = "support of each sentence — judging…"
	}
	out := []string{m.st.Dim.Render(wrap(head, w))}
	for _, s := range sm {
		line := fmt.Sprintf("%s %d %s — %s", pipeline.SupportMark(s.Status), s.N, truncate(s.Text, 40, "…"), s.Line())
		st := m.st.Dim
		if s.Status == pipeline.SupportUnsupported || s.Status == pipeline.SupportPartly || len(s.Unheld) > 0 {
			st = m.st.Warn
		}
		out = append(out, st.Render(indent(wrap(safe(line), w-2), "  ")))
	}
	if m.support.err != "" {
		out = append(out, m.st.Warn.Render(wrap(safe("⚠ the model's judgement failed: "+m.support.err), w)))
	}
	return out
}

// supportStrip is the support map in one line under the editor: a mark
// per sentence, then the first sentence in doubt.
func (m *Model) supportStrip(w int) string {
	sm := m.supportCheck().SupportMap()
	if len(sm) == 0 {
		return ""
	}
	var marks []string
	doubt := ""
	for _, s := range sm {
		marks = append(marks, fmt.Sprintf("%d%s", s.N, pipeline.SupportMark(s.Status)))
		if doubt == "" && (s.Status == pipeline.SupportUnsupported || s.Status == pipeline.SupportPartly || len(s.Unheld) > 0) {
			doubt = fmt.Sprintf(" · %d: %s", s.N, s.Line())
		}
	}
	line := "support " + strings.Join(marks, " ")
	if m.support.busy {
		line += " (judging…)"
	}
	return m.st.Dim.Render(truncate(safe(line+doubt), w, "…"))
}
