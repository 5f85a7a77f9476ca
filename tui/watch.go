package tui

import (
	"context"
	"fmt"
	"os"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/muesli/termenv"

	"github.com/musecheck/muse/pipeline/watch"
)

// The triage view of `muse watch`: the stream's clusters ranked (pinned
// first, then repeats of fact-checked claims, then by score and size),
// refreshed every second from the watch store while the feeds run behind
// it. enter opens the selected post as a check (the app, prefilled and
// started; back here when it is quit), d dismisses it, p pins or unpins
// it, q quits.

// WatchStore is what the view reads and changes: *watch.Store.
type WatchStore interface {
	Ranked(ctx context.Context, n int) ([]watch.Cluster, error)
	SetState(ctx context.Context, id int64, state, note, batchID string) error
}

// WatchOptions set up the view.
type WatchOptions struct {
	Store WatchStore
	// Feeds names what is watched, for the header.
	Feeds string
	// Warnings are the latest things that went wrong without stopping
	// the watch.
	Warnings func() []string
	// Done delivers the watch's end (a feed that failed for good).
	Done <-chan error
	// Styles; nil: picked from the terminal.
	Styles *Styles
	// Refresh is how often the list is read again (0: a second).
	Refresh time.Duration
	// Select is the cluster selected first (the one just opened as a
	// check, back from it); 0: the top.
	Select int64
}

type watchModel struct {
	ctx           context.Context
	o             WatchOptions
	st            Styles
	rows          []watch.Cluster
	sel           int
	width, height int
	open          *watch.Cluster
	status        string
	// note says what the checker's last key did; it gives way to the
	// feeds' warnings after noteFor, so a feed that dies after a pin is
	// still said.
	note   string
	noteAt time.Time
	ended  error
}

// noteFor is how long a key's note stands before the warnings.
const noteFor = 5 * time.Second

type watchRowsMsg struct {
	rows []watch.Cluster
	err  error
}

type watchTickMsg struct{}

type watchDoneMsg struct{ err error }

func newWatchModel(ctx context.Context, o WatchOptions) watchModel {
	st := NewStyles(true, false)
	if o.Styles != nil {
		st = *o.Styles
	}
	if o.Refresh <= 0 {
		o.Refresh = time.Second
	}
	return watchModel{ctx: ctx, o: o, st: st, width: 100, height: 30}
}

// RunWatch shows the view until the checker quits (nil) or opens a post
// (its cluster).
func RunWatch(ctx context.Context, o WatchOptions) (*watch.Cluster, error) {
	out := termenv.NewOutput(os.Stdout)
	if o.Styles == nil {
		st := NewStyles(out.HasDarkBackground(), out.EnvColorProfile() != termenv.Ascii)
		o.Styles = &st
	}
	lipgloss.SetColorProfile(out.EnvColorProfile())
	p := tea.NewProgram(newWatchModel(ctx, o), tea.WithAltScreen(), tea.WithContext(ctx))
	final, err := p.Run()
	if m, ok := final.(watchModel); ok {
		if m.ended != nil && err == nil {
			err = m.ended
		}
		return m.open, err
	}
	return nil, err
}

func (m watchModel) load() tea.Cmd {
	return func() tea.Msg {
		rows, err := m.o.Store.Ranked(m.ctx, 500)
		return watchRowsMsg{rows, err}
	}
}

func (m watchModel) tick() tea.Cmd {
	return tea.Tick(m.o.Refresh, func(time.Time) tea.Msg { return watchTickMsg{} })
}

func (m watchModel) waitDone() tea.Cmd {
	if m.o.Done == nil {
		return nil
	}
	done := m.o.Done
	return func() tea.Msg { return watchDoneMsg{<-done} }
}

func (m watchModel) Init() tea.Cmd { return tea.Batch(m.load(), m.tick(), m.waitDone()) }

func (m watchModel) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.width, m.height = msg.Width, msg.Height
	case watchTickMsg:
		return m, tea.Batch(m.load(), m.tick())
	case watchDoneMsg:
		if msg.err != nil && m.ctx.Err() == nil {
			m.ended = msg.err
			return m, tea.Quit
		}
		m.status = "every feed has ended; the list stays as it is"
	case watchRowsMsg:
		if msg.err != nil {
			m.status = msg.err.Error()
			break
		}
		id := m.o.Select // the first list: back where the checker was
		if m.sel < len(m.rows) {
			id = m.rows[m.sel].ID
		}
		m.rows = msg.rows
		m.sel = min(m.sel, max(len(m.rows)-1, 0))
		for i, r := range m.rows { // the selection follows its cluster
			if r.ID == id {
				m.sel = i
			}
		}
	case watchStateMsg:
		m.noteAt = time.Now()
		if msg.err != nil {
			m.note = msg.err.Error()
			break
		}
		m.note = msg.note
		return m, m.load()
	case tea.KeyMsg:
		return m.key(msg)
	}
	return m, nil
}

func (m watchModel) key(k tea.KeyMsg) (tea.Model, tea.Cmd) {
	switch k.String() {
	case "q", "ctrl+c", "esc":
		return m, tea.Quit
	case "up", "k":
		m.sel = max(m.sel-1, 0)
	case "down", "j":
		m.sel = min(m.sel+1, max(len(m.rows)-1, 0))
	case "g", "home":
		m.sel = 0
	case "G", "end":
		m.sel = max(len(m.rows)-1, 0)
	case "enter", "o":
		if m.sel < len(m.rows) {
			c := m.rows[m.sel]
			m.open = &c
			return m, tea.Quit
		}
	case "d", "p":
		if m.sel >= len(m.rows) {
			break
		}
		c := m.rows[m.sel]
		state, note := watch.StateDismissed, "dismissed by the checker"
		if k.String() == "p" {
			state, note = watch.StatePinned, "pinned by the checker"
			if c.State == watch.StatePinned {
				state, note = watch.StateNew, "unpinned by the checker"
			}
		}
		return m, m.setState(c, state, note)
	}
	return m, nil
}

// watchStateMsg is a cluster's state written (note says so) or not (err).
type watchStateMsg struct {
	note string
	err  error
}

// setState writes c's new state off the UI loop.
func (m watchModel) setState(c watch.Cluster, state, note string) tea.Cmd {
	return func() tea.Msg {
		if err := m.o.Store.SetState(m.ctx, c.ID, state, note, ""); err != nil {
			return watchStateMsg{err: err}
		}
		return watchStateMsg{note: note + ": " + truncate(oneLine(c.Post.Text), 50, "…")}
	}
}

// oneLine is outside text made safe for the terminal, on one line.
func oneLine(s string) string { return strings.Join(strings.Fields(safe(s)), " ") }

// watchScore is a cluster's score column: the score, or "–" when it was
// not scored (the detail says why).
func watchScore(c watch.Cluster) string {
	if c.Score == nil {
		return "  – "
	}
	return fmt.Sprintf("%.2f", *c.Score)
}

func (m watchModel) View() string {
	st := m.st
	var b strings.Builder
	w := max(m.width, 40)
	b.WriteString(st.Title.Render("muse watch") + st.Dim.Render(" — "+truncate(oneLine(m.o.Feeds), w-14, "…")) + "\n")
	b.WriteString(st.Dim.Render(fmt.Sprintf("  %-5s %5s %-4s %-9s %s", "score", "posts", "lang", "state", "post")) + "\n")
	detail := m.detail(w)
	listH := max(m.height-4-lipgloss.Height(detail), 3)
	start := 0
	if m.sel >= listH {
		start = m.sel - listH + 1
	}
	if len(m.rows) == 0 {
		b.WriteString(st.Dim.Render("waiting for posts…") + "\n")
	}
	for i := start; i < len(m.rows) && i < start+listH; i++ {
		c := m.rows[i]
		mark := " "
		if c.Alert() != "" {
			mark = "!"
		}
		lang := c.Lang
		if lang == "" {
			lang = "?"
		}
		// The selected row is marked in text too: without colour (NO_COLOR,
		// a dumb terminal) the reverse video is not drawn.
		sel := "  "
		if i == m.sel {
			sel = "▸ "
		}
		line := fmt.Sprintf("%s%s %5d %-4s %-9s %s%s", sel, watchScore(c), c.Size, lang, c.State, mark, oneLine(c.Post.Text))
		line = truncate(line, w, "…")
		if i == m.sel {
			line = st.Cursor.Render(line)
		} else if c.Alert() != "" {
			line = st.Warn.Render(line)
		}
		b.WriteString(line + "\n")
	}
	b.WriteString(detail)
	status := m.status
	var ws []string
	if m.o.Warnings != nil {
		ws = m.o.Warnings()
	}
	switch {
	case status != "":
	case m.note != "" && (len(ws) == 0 || time.Since(m.noteAt) < noteFor):
		status = m.note
	case len(ws) > 0:
		status = "⚠ " + oneLine(ws[len(ws)-1])
	}
	b.WriteString(st.StatusBar.Render(truncate("enter open as a check · d dismiss · p pin/unpin · ↑↓ move · q quit", w, "…")))
	if status != "" {
		b.WriteString("\n" + st.StatusMsg.Render(truncate(oneLine(status), w, "…")))
	}
	return b.String()
}

// detail is the selected cluster in full: its post, its repeat-claim
// alert and fact-check, its score and why, its state.
func (m watchModel) detail(w int) string {
	if m.sel >= len(m.rows) {
		return ""
	}
	c := m.rows[m.sel]
	st := m.st
	var lines []string
	lines = append(lines, st.Divider.Render(strings.Repeat("─", w)))
	who := oneLine(c.Post.Author + " " + c.Post.Handle)
	if who != "" {
		who += " · "
	}
	if who+c.Post.URL != "" {
		lines = append(lines, st.Dim.Render(truncate(who+oneLine(c.Post.URL), w, "…")))
	}
	text := strings.Split(wrap(oneLine(c.Post.Text), w), "\n")
	if len(text) > 4 {
		text = append(text[:3], truncate(text[3]+" …", w, "…"))
	}
	lines = append(lines, text...)
	if a := c.Alert(); a != "" {
		f := c.FactChecks[0]
		lines = append(lines, st.Warn.Render(truncate(oneLine("⚠ "+a+": "+f.Claim), w, "…")), st.Dim.Render(truncate(oneLine(f.URL), w, "…")))
	}
	score := "score: " + strings.TrimSpace(watchScore(c))
	switch {
	case c.ScoreNote != "":
		score += " — " + oneLine(c.ScoreNote)
	case c.Score == nil:
		score += " — not scored yet"
	}
	lines = append(lines, truncate(score, w, "…"))
	state := fmt.Sprintf("%d posts · %s", c.Size, c.State)
	if c.Size == 1 {
		state = "1 post · " + c.State
	}
	if c.StateNote != "" {
		state += " — " + oneLine(c.StateNote)
	}
	if c.BatchID != "" {
		state += " · batch " + c.BatchID
	}
	lines = append(lines, st.Dim.Render(truncate(state, w, "…")))
	return strings.Join(lines, "\n") + "\n"
}
