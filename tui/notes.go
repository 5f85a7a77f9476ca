package tui

import (
	"context"
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/notewriter"
)

// NoteWriter sends a check's note to X's AI Note Writer API
// (*notes.Writer): the pre-flight and X's evaluator, the submission once
// the checker confirms it, and the admission ledger.
type NoteWriter interface {
	Evaluate(ctx context.Context, c *pipeline.Check) (float64, error)
	Submit(ctx context.Context, c *pipeline.Check, live bool) (string, error)
	Ledger(ctx context.Context) (notewriter.Ledger, error)
	// LiveRefusal says why a live note is not allowed (nil: it is).
	LiveRefusal(l notewriter.Ledger) error
}

type noteEvaluatedMsg struct {
	checkID   string
	x         *pipeline.XNote
	score     float64
	err       error
	ledger    *notewriter.Ledger
	ledgerErr error
}

type noteSubmittedMsg struct {
	checkID, noteID string
	x               *pipeline.XNote
	live            bool
	err             error
	ledger          *notewriter.Ledger // read again after the submission
}

// sendNote pre-flights the note and asks X's evaluator for its
// ClaimOpinion score, reading the admission ledger with it; the checker
// then confirms the submission (onNoteEvaluated). Nothing is submitted
// without that answer.
func (m *Model) sendNote() tea.Cmd {
	w := m.opts.Notes
	if w == nil {
		return m.setStatus("sending a note to X needs the writer's keys: x.api_key, x.api_key_secret, x.access_token and x.access_token_secret in the config (see muse notes --help)")
	}
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	if x := m.check.XNote; x != nil && x.NoteID != "" {
		return m.setStatus("this note went to X already as note " + x.NoteID + "; muse notes status brings its scores")
	}
	c, ctx := m.check.Clone(), m.appCtx
	return tea.Batch(m.setStatus("pre-flight, then X's evaluator…"), func() tea.Msg {
		score, err := w.Evaluate(ctx, c)
		msg := noteEvaluatedMsg{checkID: c.ID, x: c.XNote, score: score, err: err}
		if err == nil {
			l, lerr := w.Ledger(ctx)
			msg.ledger, msg.ledgerErr = &l, lerr
			if lerr != nil {
				msg.ledger = nil
			}
		}
		return msg
	})
}

// onNoteEvaluated shows X's score and asks the checker to confirm: yes
// (or test) submits in test mode; live, offered only when the
// configuration allows it and the ledger meets X's bar, submits for raters
// to see; anything else sends nothing.
func (m *Model) onNoteEvaluated(msg noteEvaluatedMsg) tea.Cmd {
	if m.check == nil || msg.checkID != m.check.ID {
		return nil
	}
	if msg.err != nil {
		return m.setFailure("not sent to X: " + safe(msg.err.Error()))
	}
	m.check.XNote, m.ledger = msg.x, msg.ledger
	saved := m.edited()
	live := msg.ledger != nil && m.opts.Notes.LiveRefusal(*msg.ledger) == nil
	title := fmt.Sprintf("X's evaluator scores the note %.2f on ClaimOpinion. Submit it to X in test mode? yes to submit, anything else sends nothing:", msg.score)
	if live {
		title = fmt.Sprintf("X's evaluator scores the note %.2f on ClaimOpinion. test submits it in test mode, live for raters to see; anything else sends nothing:", msg.score)
	}
	return tea.Batch(saved, m.ask(title, "", func(m *Model, v string) tea.Cmd {
		switch strings.ToLower(strings.TrimSpace(v)) {
		case "yes", "y", "test":
			return m.submitNote(false)
		case "live":
			if live {
				return m.submitNote(true)
			}
		}
		return m.setStatus("nothing was sent to X; the note stays here")
	}))
}

func (m *Model) submitNote(live bool) tea.Cmd {
	w, c, ctx := m.opts.Notes, m.check.Clone(), m.appCtx
	mode := "test mode"
	if live {
		mode = "live"
	}
	return tea.Batch(m.setStatus("submitting the note to X in "+mode+"…"), func() tea.Msg {
		id, err := w.Submit(ctx, c, live)
		msg := noteSubmittedMsg{checkID: c.ID, noteID: id, x: c.XNote, live: live, err: err}
		if err == nil {
			if l, err := w.Ledger(ctx); err == nil {
				msg.ledger = &l
			}
		}
		return msg
	})
}

func (m *Model) onNoteSubmitted(msg noteSubmittedMsg) tea.Cmd {
	if m.check == nil || msg.checkID != m.check.ID {
		return nil
	}
	if msg.err != nil {
		return m.setFailure("not submitted: " + safe(msg.err.Error()))
	}
	m.check.XNote = msg.x
	if msg.ledger != nil {
		m.ledger = msg.ledger
	}
	mode := "test mode"
	if msg.live {
		mode = "live"
	}
	return tea.Batch(m.edited(), m.auditCase(cases.ActionExported, "note submitted to X in "+mode+" as note "+msg.noteID),
		m.setStatus("submitted to X in "+mode+" as note "+msg.noteID+"; muse notes status brings its scores"))
}

// xNoteLines say what X said of the post and its note: the note requests
// X gave with the post, the evaluator's score, the note submitted and its
// scores, and the admission ledger when it was read.
func (m *Model) xNoteLines(w int) []string {
	var out []string
	line := func(s string) { out = append(out, m.st.Dim.Render(wrap(safe(s), w))) }
	if x := m.check.XNote; x != nil {
		for _, r := range x.Requests {
			s := "Asked for a note: " + r.Suggestion
			if r.SourceLink != "" {
				s += " (" + r.SourceLink + ")"
			}
			line(s)
		}
		for _, s := range x.Sources {
			line(fmt.Sprintf("Suggested source ×%d: %s", s.Count, s.URL))
		}
		if x.ClaimOpinion != nil {
			s := fmt.Sprintf("X's evaluator: ClaimOpinion %.2f", *x.ClaimOpinion)
			if x.EvaluatedText != "" && x.EvaluatedText != x.SubmittedText && x.NoteID == "" {
				s += " (of the note as it was then)"
			}
			line(s)
		}
		if x.NoteID != "" {
			mode := "test mode"
			if x.Live {
				mode = "live"
			}
			s := "Submitted to X in " + mode + " as note " + x.NoteID
			if len(x.Scores) > 0 {
				var parts []string
				for _, t := range []string{notewriter.ScoreClaimOpinion, notewriter.ScoreURLValidity, notewriter.ScoreHarassmentAbuse} {
					if b := x.Scores[t]; b != "" {
						parts = append(parts, t+" "+b)
					}
				}
				s += ": " + strings.Join(parts, " · ")
			}
			if x.Status != "" {
				s += " (" + x.Status + ")"
			}
			line(s)
		}
	}
	if m.ledger != nil {
		line("Admission: " + m.ledger.Summary())
	}
	return out
}
