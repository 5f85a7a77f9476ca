package tui

import (
	"context"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/watch"
	"github.com/musecheck/muse/sources/posts"
)

// fakeWatchStore ranks as the store does for the states the test uses.
type fakeWatchStore struct {
	rows   []watch.Cluster
	states map[int64]string
}

func (f *fakeWatchStore) Ranked(context.Context, int) ([]watch.Cluster, error) {
	var out []watch.Cluster
	for _, c := range f.rows {
		if s, ok := f.states[c.ID]; ok {
			c.State = s
		}
		if c.State != watch.StateDismissed {
			out = append(out, c)
		}
	}
	return out, nil
}

func (f *fakeWatchStore) SetState(_ context.Context, id int64, state, _, _ string) error {
	f.states[id] = state
	return nil
}

func TestWatchViewRanksOpensDismissesPins(t *testing.T) {
	score := 0.92
	low := 0.1
	st := &fakeWatchStore{states: map[int64]string{}, rows: []watch.Cluster{
		{ID: 1, Size: 14, Lang: "en", State: watch.StateNew, Score: &score, Post: posts.Post{Text: "5G towers spread the coronavirus", URL: "https://bsky.app/profile/a/post/1"},
			FactChecks: []pipeline.FactCheck{{Claim: "5G spreads the coronavirus", Reviewer: "PolitiFact", Rating: "False", ReviewerVerified: true,
				URL: "https://www.politifact.com/factchecks/2020/apr/06/5g/", ReviewDate: time.Date(2020, 4, 6, 0, 0, 0, 0, time.UTC)}}},
		{ID: 2, Size: 1, Lang: "de", State: watch.StateNew, Score: &low, ScoreNote: "an opinion", Post: posts.Post{Text: "Was für ein schöner Tag"}},
		{ID: 3, Size: 2, State: watch.StateNew, ScoreNote: "not scored: no model configured", Post: posts.Post{Text: "Unemployment fell to 3.9%\x1b]0;pwned\x07\x1b[2J"}},
	}}
	m := newWatchModel(context.Background(), WatchOptions{Store: st, Feeds: "jetstream wss://…"})
	step := func(msg tea.Msg) {
		t.Helper()
		next, cmd := m.Update(msg)
		m = next.(watchModel)
		for cmd != nil { // a state written, then the list read again
			switch msg := cmd().(type) {
			case watchStateMsg, watchRowsMsg:
				next, cmd = m.Update(msg)
				m = next.(watchModel)
			default:
				cmd = nil
			}
		}
	}
	step(tea.WindowSizeMsg{Width: 100, Height: 24})
	step(m.load()())
	v := m.View()
	for _, want := range []string{"0.92    14 en   new       !5G towers spread the coronavirus", "0.10     1 de", "  –      2 ?",
		"⚠ repeat of a claim PolitiFact rated False on 2020-04-06: 5G spreads the coronavirus", "https://www.politifact.com/factchecks/2020/apr/06/5g/"} {
		if !strings.Contains(v, want) {
			t.Errorf("view lacks %q:\n%s", want, v)
		}
	}
	step(tea.KeyMsg{Type: tea.KeyDown})
	step(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("d")})
	if st.states[2] != watch.StateDismissed || strings.Contains(m.View(), "0.10     1 de") {
		t.Errorf("d: states %v, view:\n%s", st.states, m.View())
	}
	step(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	if st.states[3] != watch.StatePinned {
		t.Errorf("p pinned %v", st.states)
	}
	if v := m.View(); !strings.Contains(v, "score: – — not scored: no model configured") || strings.Contains(v, "\x1b]0;") || strings.Contains(v, "\x1b[2J") {
		t.Errorf("the unscored post's detail does not say why, or passes escape sequences through:\n%q", v)
	}
	step(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	if st.states[3] != watch.StateNew {
		t.Errorf("p again did not unpin: %v", st.states)
	}
	next, cmd := m.Update(tea.KeyMsg{Type: tea.KeyEnter})
	m = next.(watchModel)
	if m.open == nil || m.open.ID != 3 || cmd == nil {
		t.Errorf("enter opened %+v", m.open)
	}
}

// Without colour (NO_COLOR) the reverse video of the selected row is not
// drawn: the row is marked in text, and moving moves the mark. A post
// waiting for its score says so, and one post is "1 post".
func TestWatchViewMarksTheSelectionWithoutColour(t *testing.T) {
	st := &fakeWatchStore{states: map[int64]string{}, rows: []watch.Cluster{
		{ID: 1, Size: 2, Lang: "en", State: watch.StateNew, Post: posts.Post{Text: "5G towers spread the coronavirus"}},
		{ID: 2, Size: 1, Lang: "en", State: watch.StateNew, Post: posts.Post{Text: "Lovely walk by the river"}},
	}}
	styles := NewStyles(true, false)
	m := newWatchModel(context.Background(), WatchOptions{Store: st, Styles: &styles})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	next, _ = next.Update(m.load()())
	m = next.(watchModel)
	v := ansi.Strip(m.View())
	if !strings.Contains(v, "▸   –      2 en   new        5G towers") || !strings.Contains(v, "\n    –      1 en   new        Lovely walk") {
		t.Errorf("the first row is not marked as selected:\n%s", v)
	}
	if !strings.Contains(v, "score: – — not scored yet") || !strings.Contains(v, "2 posts · new") {
		t.Errorf("detail:\n%s", v)
	}
	next, _ = m.Update(tea.KeyMsg{Type: tea.KeyDown})
	m = next.(watchModel)
	v = ansi.Strip(m.View())
	if !strings.Contains(v, "▸   –      1 en   new        Lovely walk") || strings.Contains(v, "▸   –      2 en") || !strings.Contains(v, "1 post · new") {
		t.Errorf("after ↓ the mark did not move, or one post is not \"1 post\":\n%s", v)
	}
}

// A feed's warning that comes after the checker pinned or dismissed a
// post is not hidden for good by the note of that key.
func TestWatchViewWarningAfterAKey(t *testing.T) {
	st := &fakeWatchStore{states: map[int64]string{}, rows: []watch.Cluster{
		{ID: 1, Size: 1, Lang: "en", State: watch.StateNew, Post: posts.Post{Text: "5G towers spread the coronavirus"}},
	}}
	var warnings []string
	m := newWatchModel(context.Background(), WatchOptions{Store: st, Warnings: func() []string { return warnings }})
	next, _ := m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	next, _ = next.Update(m.load()())
	next, cmd := next.Update(tea.KeyMsg{Type: tea.KeyRunes, Runes: []rune("p")})
	next, _ = next.Update(cmd()) // the state written
	m = next.(watchModel)
	if v := m.View(); !strings.Contains(v, "pinned by the checker: 5G towers") {
		t.Errorf("the pin is not said:\n%s", v)
	}
	warnings = []string{"mastodon https://mastodon.example public: connection refused; connecting again in 8.9s"}
	m.noteAt = time.Now().Add(-time.Minute)
	if v := m.View(); !strings.Contains(v, "⚠ mastodon https://mastodon.example public: connection refused") {
		t.Errorf("the feed's warning after the pin is hidden:\n%s", v)
	}
}

// A post opened from the stream (or any post the app is handed) keeps no
// part of a hostile escape sequence: the form's inputs drop control
// characters one by one, which left an OSC's payload ("]0;pwned") in the
// handle and "[2J" in the text; whole sequences go first.
func TestOpenedPostKeepsNoEscapeRemnant(t *testing.T) {
	p := pipeline.Post{Text: "\x1b[2J\x1b]0;owned\x07Breaking: the \u202emayor\u202c resigned", Author: "Health \u202eWatch\x1b[31m",
		Handle: "@health\x1b]0;pwned\x07watch@mastodon.example", URL: "https://mastodon.example/@healthwatch/1\x1b[0m"}
	c := newCompose(NewStyles(true, false), p, time.Time{})
	got, err := c.check(time.Now())
	if err != nil {
		t.Fatal(err)
	}
	q := got.Post
	if q.Text != "Breaking: the mayor resigned" || q.Author != "Health Watch" || q.Handle != "@healthwatch@mastodon.example" ||
		q.URL != "https://mastodon.example/@healthwatch/1" {
		t.Errorf("read back as %q, %q, %q, %q", q.Text, q.Author, q.Handle, q.URL)
	}
}

// Back from a post opened as a check, the stream selects that post again,
// not the top of the list.
func TestWatchViewSelectsThePostOpenedBefore(t *testing.T) {
	st := &fakeWatchStore{states: map[int64]string{}, rows: []watch.Cluster{
		{ID: 1, Size: 2, State: watch.StateNew, Post: posts.Post{Text: "5G towers spread the coronavirus"}},
		{ID: 2, Size: 1, State: watch.StateNew, Post: posts.Post{Text: "Lovely walk by the river"}},
		{ID: 3, Size: 1, State: watch.StateOpened, Post: posts.Post{Text: "Unemployment fell to 3.9% in April"}},
	}}
	m := newWatchModel(context.Background(), WatchOptions{Store: st, Select: 3})
	next, _ := m.Update(m.load()())
	if m = next.(watchModel); m.sel != 2 {
		t.Errorf("selected row %d, want the opened post's (2)", m.sel)
	}
}
