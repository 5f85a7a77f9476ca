package tui

import (
	"context"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
)

// judgingRunner runs nothing; its model judges the support map, each call
// held until release is closed: a sentence holding "14" is unsupported,
// any other supported.
type judgingRunner struct {
	calls   atomic.Int32
	release chan struct{}
}

func (r *judgingRunner) Run(context.Context, *pipeline.Check, pipeline.Stage, chan<- pipeline.Event) error {
	return nil
}
func (r *judgingRunner) SupportJudge() pipeline.SupportJudge { return r }
func (r *judgingRunner) ModelName(string) string             { return "judge-model" }
func (r *judgingRunner) JudgeSupport(ctx context.Context, _ pipeline.Post, ss []prompts.SupportSentence) ([]prompts.SupportJudgement, pipeline.CallUsage, error) {
	r.calls.Add(1)
	select {
	case <-r.release:
	case <-ctx.Done():
		return nil, pipeline.CallUsage{}, ctx.Err()
	}
	var out []prompts.SupportJudgement
	for _, s := range ss {
		j := prompts.SupportJudgement{N: s.N, Status: prompts.SupportSupported, Reason: "The quote says so."}
		if strings.Contains(s.Text, "14") {
			j.Status, j.Reason = prompts.SupportUnsupported, "No quote gives 14 lanes."
		}
		out = append(out, j)
	}
	return out, pipeline.CallUsage{LLMCalls: 1, PromptTokens: 100, CompletionTokens: 20}, nil
}

// supportMsgs runs cmd and the commands it batches, and returns the
// support map's messages they send within limit.
func supportMsgs(cmd tea.Cmd, limit time.Duration) []tea.Msg {
	out := make(chan tea.Msg, 256)
	var run func(tea.Cmd)
	run = func(c tea.Cmd) {
		if c == nil {
			return
		}
		go func() {
			msg := c()
			if b, ok := msg.(tea.BatchMsg); ok {
				for _, c := range b {
					run(c)
				}
				return
			}
			out <- msg
		}()
	}
	run(cmd)
	var msgs []tea.Msg
	deadline := time.After(limit)
	for {
		select {
		case msg := <-out:
			switch msg.(type) {
			case supportTickMsg, supportResultMsg:
				msgs = append(msgs, msg)
			}
		case <-deadline:
			return msgs
		}
	}
}

// Typing in the correction never waits for the model: each keystroke
// returns at once, the lexical check shows a number no quote holds as it
// is typed, and the model is asked once, supportDelay after the last
// keystroke, in a command of its own; its judgement then marks the
// sentences.
func TestSupportWhileTyping(t *testing.T) {
	r := &judgingRunner{release: make(chan struct{})}
	opts := testOptions(r)
	opts.Case = &pipeline.Check{ID: "c1", Post: testPost,
		Sources: []pipeline.Source{{URL: "https://www.reuters.com/a", Status: pipeline.StatusUsed, Publisher: "Reuters"}},
		Evidence: []pipeline.Evidence{{SourceURL: "https://www.reuters.com/a", Quote: "The council voted 7-2 to add lanes.",
			Kind: pipeline.KindRefutes, Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "This post is false: the council voted 7-2 to add lanes (https://www.reuters.com/a)."}}
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := New(ctx, opts)
	m.Update(tea.WindowSizeMsg{Width: 160, Height: 48})
	m.startInlineEdit()

	var cmds []tea.Cmd
	start := time.Now()
	for _, ch := range " It added 14 lanes (https://www.reuters.com/a)." {
		_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{ch}})
		cmds = append(cmds, cmd)
	}
	if d := time.Since(start); d > 500*time.Millisecond {
		t.Errorf("typing 47 characters took %s", d)
	}
	if n := r.calls.Load(); n != 0 {
		t.Fatalf("%d model calls while typing", n)
	}
	if strip := m.supportStrip(160); !strings.Contains(strip, "no quote it cites holds 14") {
		t.Errorf("the lexical check does not show the figure as it is typed: %q", strip)
	}

	start = time.Now()
	var ticks []supportTickMsg
	for _, msg := range supportMsgs(tea.Batch(cmds...), supportDelay+700*time.Millisecond) {
		ticks = append(ticks, msg.(supportTickMsg))
	}
	if len(ticks) == 0 {
		t.Fatal("no judgement scheduled")
	}
	if d := time.Since(start); d < supportDelay {
		t.Errorf("judged after %s, before the pause of %s", d, supportDelay)
	}
	var judge tea.Cmd
	for _, tk := range ticks {
		if _, cmd := m.Update(tk); cmd != nil {
			if judge != nil {
				t.Fatal("two judgements for one pause in typing")
			}
			judge = cmd
		}
	}
	if judge == nil {
		t.Fatal("the last keystroke's tick asked for no judgement")
	}
	result := make(chan tea.Msg, 1)
	go func() { result <- judge() }()
	for r.calls.Load() == 0 {
		time.Sleep(5 * time.Millisecond)
	}
	// The model is thinking: typing goes on.
	start = time.Now()
	m.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune{' '}})
	if d := time.Since(start); d > 100*time.Millisecond {
		t.Errorf("a keystroke during the judgement took %s", d)
	}
	if !strings.Contains(m.supportStrip(160), "judging") {
		t.Errorf("the strip does not say a judgement is under way: %q", m.supportStrip(160))
	}
	close(r.release)
	m.Update(<-result)

	sm := m.supportCheck().SupportMap()
	if len(sm) != 2 || sm[0].Status != pipeline.SupportSupported || sm[1].Status != pipeline.SupportUnsupported {
		t.Fatalf("support map %+v", sm)
	}
	if r.calls.Load() != 1 {
		t.Errorf("%d model calls, want 1 for both sentences", r.calls.Load())
	}
	if strip := m.supportStrip(160); !strings.Contains(strip, "1✓ 2✗") || !strings.Contains(strip, "No quote gives 14 lanes") {
		t.Errorf("strip %q", strip)
	}
	// Saved, the pane lists each sentence with its mark.
	m.Update(keyMsg(tea.KeyCtrlS))
	view := m.View()
	for _, want := range []string{"✓ 1 This post is false", "✗ 2 It added 14 lanes"} {
		if !strings.Contains(view, want) {
			t.Errorf("view lacks %q:\n%s", want, view)
		}
	}
}
