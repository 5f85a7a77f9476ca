package tui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/exp/golden"
	"github.com/muesli/termenv"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

func TestMain(m *testing.M) {
	// Goldens are plain text: no colour profile, whatever the terminal.
	lipgloss.SetColorProfile(termenv.Ascii)
	os.Exit(m.Run())
}

var testPost = pipeline.Post{
	Text:     "BREAKING: the Baltimore bridge just collapsed, watch the video!! Authorities are hiding the death toll.",
	Author:   "Daily Truth Bomb",
	Handle:   "@truthbomb",
	PostedAt: time.Date(2024, 3, 5, 9, 12, 0, 0, time.UTC),
	URL:      "https://x.com/truthbomb/status/1765001",
}

func testOptions(r Runner) Options {
	st := NewStyles(true, false)
	clock := fixedNow
	return Options{Runner: r, Post: testPost, Model: "gpt-4o-mini", Styles: &st,
		Now: func() time.Time { return clock }, Clipboard: func(string) error { return nil },
		OpenURL: func(string) error { return nil }}
}

func newTestModel(t *testing.T, w, h int, r Runner) *Model {
	t.Helper()
	m := New(context.Background(), testOptions(r))
	m.Update(tea.WindowSizeMsg{Width: w, Height: h})
	return m
}

// drive runs the cmd and feeds back its messages (and theirs), as the
// program would, until only timers are left: while a run goes on it waits
// for its messages, and otherwise for none longer than a moment (tea.Tick
// blocks for its duration; the test clock never moves). Ticks and blinks
// are skipped so that views stay fixed.
func drive(t *testing.T, m *Model, cmd tea.Cmd) {
	t.Helper()
	msgs := make(chan tea.Msg, 64)
	pending := 0
	start := func(c tea.Cmd) {
		if c != nil {
			pending++
			go func() { msgs <- c() }()
		}
	}
	start(cmd)
	for n := 0; pending > 0; n++ {
		if n > 10000 {
			t.Fatal("drive: too many messages")
		}
		wait := 200 * time.Millisecond
		if m.running {
			wait = 20 * time.Second
		}
		var msg tea.Msg
		select {
		case msg = <-msgs:
			pending--
		case <-time.After(wait):
			if m.running {
				t.Fatalf("drive: the run sent nothing for %s", wait)
			}
			return // only timers are left
		}
		switch msg := msg.(type) {
		case nil, statusClearMsg, draftTickMsg:
		case tea.BatchMsg:
			for _, c := range msg {
				start(c)
			}
		default:
			if skipped(msg) {
				continue
			}
			_, next := m.Update(msg)
			start(next)
		}
	}
}

// skipped are the messages the tests do not feed back: ticks and blinks
// (views stay fixed) and sequences.
func skipped(msg tea.Msg) bool {
	name := fmt.Sprintf("%T", msg)
	return strings.Contains(name, "TickMsg") || strings.Contains(name, "cursor.") || strings.Contains(name, "sequenceMsg")
}

func press(t *testing.T, m *Model, keys ...string) {
	t.Helper()
	for _, k := range keys {
		var msg tea.KeyMsg
		switch k {
		case "tab":
			msg = tea.KeyMsg{Type: tea.KeyTab}
		case "shift+tab":
			msg = tea.KeyMsg{Type: tea.KeyShiftTab}
		case "enter":
			msg = tea.KeyMsg{Type: tea.KeyEnter}
		case "esc":
			msg = tea.KeyMsg{Type: tea.KeyEsc}
		case "space":
			msg = tea.KeyMsg{Type: tea.KeySpace, Runes: []rune{' '}}
		case "down":
			msg = tea.KeyMsg{Type: tea.KeyDown}
		case "pgdown":
			msg = tea.KeyMsg{Type: tea.KeyPgDown}
		case "ctrl+s":
			msg = tea.KeyMsg{Type: tea.KeyCtrlS}
		case "ctrl+o":
			msg = tea.KeyMsg{Type: tea.KeyCtrlO}
		default:
			msg = tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune(k)}
		}
		_, cmd := m.Update(msg)
		drive(t, m, cmd)
	}
}

// finished returns a model whose check has run to the end.
func finished(t *testing.T, w, h int) (*Model, *engineRunner) {
	t.Helper()
	r := newRunner(t)
	m := newTestModel(t, w, h, r)
	press(t, m, "ctrl+s")
	if m.running {
		t.Fatal("run still going after drive")
	}
	return m, r
}

func sizes() [][2]int { return [][2]int{{80, 24}, {160, 48}} }

func TestComposeView(t *testing.T) {
	for _, sz := range sizes() {
		t.Run(fmt.Sprintf("%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m := newTestModel(t, sz[0], sz[1], newRunner(t))
			golden.RequireEqual(t, m.View())
		})
	}
}

func TestComposeValidation(t *testing.T) {
	m := newTestModel(t, 80, 24, newRunner(t))
	m.compose.inputs[fieldPosted].SetValue("last tuesday")
	press(t, m, "ctrl+s")
	if m.screen != screenCompose {
		t.Fatal("a bad date started the check")
	}
	if !strings.Contains(m.View(), `posted time: "last tuesday" is not a time`) {
		t.Errorf("no reason shown for a bad date:\n%s", m.View())
	}
}

func TestCheckViews(t *testing.T) {
	for _, sz := range sizes() {
		m, _ := finished(t, sz[0], sz[1])
		for i, s := range pipeline.Stages {
			t.Run(fmt.Sprintf("%s_%dx%d", s, sz[0], sz[1]), func(t *testing.T) {
				m.sel = i
				golden.RequireEqual(t, m.View())
			})
		}
		t.Run(fmt.Sprintf("why_%dx%d", sz[0], sz[1]), func(t *testing.T) {
			m.sel = stageIndex(pipeline.StageSources)
			press(t, m, "enter")
			defer press(t, m, "esc")
			golden.RequireEqual(t, m.View())
		})
		t.Run(fmt.Sprintf("help_%dx%d", sz[0], sz[1]), func(t *testing.T) {
			press(t, m, "?")
			golden.RequireEqual(t, m.View())
			press(t, m, "x") // any key closes
			if m.overlay != overlayNone {
				t.Fatal("help did not close")
			}
		})
	}
}

func TestEndsOnCorrection(t *testing.T) {
	m, _ := finished(t, 80, 24)
	if m.selected() != pipeline.StageCorrection {
		t.Fatalf("after the run the %s pane shows, want correction", m.selected())
	}
	v := m.View()
	for _, want := range []string{"This post is misleading", "(each link counts as 1)", "gpt-4o-mini", "2,040 tokens", "$0.0012", "▸✓6"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
}

func TestStaleAfterDrop(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.sel = stageIndex(pipeline.StageSources)
	press(t, m, "d")
	if !m.check.Sources[0].Dropped {
		t.Fatal("d did not drop the first source")
	}
	for _, s := range []pipeline.Stage{pipeline.StageEvidence, pipeline.StageCorrection} {
		if m.stage(s).State != pipeline.StateStale {
			t.Errorf("%s is %s after a drop, want stale", s, m.stage(s).State)
		}
	}
	golden.RequireEqual(t, m.View())
}

func TestStreamingView(t *testing.T) {
	r := newRunner(t)
	r.web.HoldStreams(6) // the model sends six words of the correction, then hangs
	m := newTestModel(t, 80, 24, r)
	_, cmd := m.Update(tea.KeyMsg{Type: tea.KeyCtrlS})
	// Feed messages until six words have arrived.
	msgs := untilTrue(t, m, cmd, func() bool { return strings.Count(m.check.Correction.Text, " ") >= 6 })
	if m.selected() != pipeline.StageCorrection {
		t.Errorf("streaming correction not in view: %s pane shows", m.selected())
	}
	v := m.View()
	if !strings.Contains(v, "This post is misleading.") || !strings.Contains(v, "stop the run") {
		t.Errorf("streaming view:\n%s", v)
	}
	// Stop: the run ends, what was found stays.
	press(t, m, "esc")
	feed(t, m, msgs, func() bool { return !m.running })
	if len(m.check.Sources) == 0 || len(m.check.Evidence) == 0 {
		t.Error("stopping lost what the run had found")
	}
	if st := m.stage(pipeline.StageCorrection); st.State != pipeline.StateFailed {
		t.Errorf("stopped correction stage is %q", st.State)
	}
	if !strings.Contains(m.View(), "stopped") {
		t.Errorf("no sign the run was stopped:\n%s", m.View())
	}
}

// pump runs a command in the background, flattening batches, and sends
// on its message unless skipped.
func pump(cmd tea.Cmd, out chan<- tea.Msg) {
	if cmd == nil {
		return
	}
	msg := cmd()
	if b, ok := msg.(tea.BatchMsg); ok {
		for _, c := range b {
			go pump(c, out)
		}
		return
	}
	if msg == nil || skipped(msg) {
		return
	}
	out <- msg
}

// TestCountIsExportNoteLength: the count beside the correction is the one
// the note export enforces (graphemes, each link 1, a link's trailing
// full stop not part of it), not a count of runes.
func TestCountIsExportNoteLength(t *testing.T) {
	m, _ := finished(t, 80, 24)
	text := "Cafe\u0301 🇺🇦 👨‍👩‍👧 see https://www.reuters.com/world/fact-check-2024."
	m.check.Correction.Text = text
	n := export.NoteLength(text)
	if runes := utf8.RuneCountInString(text); n == runes {
		t.Fatalf("test text does not tell graphemes from runes (%d)", n)
	}
	if want := fmt.Sprintf("%d/%d characters", n, export.NoteLimit); !strings.Contains(m.View(), want) {
		t.Errorf("view lacks %q:\n%s", want, m.View())
	}
}

func TestOverLimitIsFlagged(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.Correction.Text = strings.Repeat("word ", 70)
	if v := m.View(); !strings.Contains(v, "349/280") || !strings.Contains(v, "69 over") {
		t.Errorf("a 350-character note is not flagged:\n%s", v)
	}
}

// TestFooterKeepsPaneKeys: at 80 columns every key of the pane shown is
// in the footer (the keys that always hold give way to "? more"), in each
// pane and in "why this source", with the newsroom's keys offered too.
func TestFooterKeepsPaneKeys(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.opts.Remember = func(string, bool) error { return nil }
	check := func(t *testing.T) {
		t.Helper()
		v := m.View()
		lines := strings.Split(v, "\n")
		foot := strings.Join(lines[len(lines)-3:], "\n")
		for _, kb := range m.checkHelp().short {
			if want := kb.Help().Key + " " + kb.Help().Desc; !strings.Contains(foot, want) {
				t.Errorf("the %s footer hides %q:\n%s", m.selected(), want, foot)
			}
		}
		if !strings.Contains(foot, "? ") {
			t.Errorf("the %s footer lost the help key:\n%s", m.selected(), foot)
		}
	}
	for i, s := range pipeline.Stages {
		t.Run(string(s), func(t *testing.T) {
			m.sel = i
			check(t)
		})
	}
	t.Run("why", func(t *testing.T) {
		m.sel = stageIndex(pipeline.StageSources)
		press(t, m, "enter")
		defer press(t, m, "esc")
		check(t)
	})
}
