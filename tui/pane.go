package tui

import (
	"fmt"
	"slices"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// listKeys are the identities of a stage's list items in the check's
// order, so that a cursor stays on its item when a rerun re-sorts the list
// or a filter hides rows.
func (m *Model) listKeys(s pipeline.Stage) []string {
	c := m.check
	var keys []string
	switch s {
	case pipeline.StageImages:
		for _, im := range c.Images {
			keys = append(keys, im.Source)
		}
		if c.Video != nil { // the video is the list's last item
			keys = append(keys, videoKey+c.Video.Source)
		}
	case pipeline.StageQueries:
		for _, q := range c.Queries {
			keys = append(keys, q.Text)
		}
	case pipeline.StageSearch:
		for _, h := range c.Hits {
			keys = append(keys, h.URL+"\x00"+h.Query)
		}
	case pipeline.StageSources:
		for _, src := range c.Sources {
			keys = append(keys, src.URL)
		}
	case pipeline.StageEvidence:
		for _, e := range c.Evidence {
			keys = append(keys, e.SourceURL+"\x00"+e.Quote)
		}
	}
	return keys
}

// listText is what `/` matches in item i of a stage's list.
func (m *Model) listText(s pipeline.Stage, i int) string {
	c := m.check
	switch s {
	case pipeline.StageImages:
		if i >= len(c.Images) {
			return "video " + c.Video.Source + " " + c.Video.Description
		}
		return c.Images[i].Source + " " + c.Images[i].Description
	case pipeline.StageQueries:
		return c.Queries[i].Text
	case pipeline.StageSearch:
		return c.Hits[i].URL + " " + c.Hits[i].Title + " " + c.Hits[i].Provider
	case pipeline.StageSources:
		src := c.Sources[i]
		return strings.Join([]string{src.Publisher, src.Domain, string(src.Tier), string(src.Status), statusWord(src), src.URL}, " ")
	case pipeline.StageEvidence:
		e := c.Evidence[i]
		return e.Quote + " " + string(e.Kind) + " " + m.sourceTitle(e.SourceURL)
	}
	return ""
}

// matches reports whether every word of the filter is in text.
func matches(text, filter string) bool {
	text = strings.ToLower(text)
	for _, w := range strings.Fields(strings.ToLower(filter)) {
		if !strings.Contains(text, w) {
			return false
		}
	}
	return true
}

// order lists the items of a stage's list that show, in the order they are
// drawn: all of them, or those the filter matches.
func (m *Model) order(s pipeline.Stage) []int {
	var all []int
	if s == pipeline.StageEvidence {
		all = m.evidenceOrder()
	} else {
		for i := range m.listKeys(s) {
			all = append(all, i)
		}
	}
	f := m.filter[s]
	if f == "" {
		return all
	}
	var out []int
	for _, i := range all {
		if matches(m.listText(s, i), f) {
			out = append(out, i)
		}
	}
	return out
}

// cur is the index of the selected item of a stage's list (-1: none shows):
// the item the cursor was put on, wherever it is now, else the nearest row.
func (m *Model) cur(s pipeline.Stage) int {
	order := m.order(s)
	if len(order) == 0 {
		return -1
	}
	if k, ok := m.cursorKey[s]; ok {
		if i := slices.Index(m.listKeys(s), k); i >= 0 && slices.Contains(order, i) {
			return i
		}
	}
	c := m.cursor[s]
	for _, i := range order {
		if i >= c {
			return i
		}
	}
	return order[len(order)-1]
}

// setCursor puts the cursor of a stage's list on item i.
func (m *Model) setCursor(s pipeline.Stage, i int) {
	keys := m.listKeys(s)
	if i < 0 || i >= len(keys) {
		return
	}
	m.cursor[s] = i
	m.cursorKey[s] = keys[i]
}

// relocateCursors keeps every cursor on its item after the check changed.
func (m *Model) relocateCursors() {
	for s, k := range m.cursorKey {
		if i := slices.Index(m.listKeys(s), k); i >= 0 {
			m.cursor[s] = i
		}
	}
}

// moveCursor moves the selected stage's list cursor over the rows shown.
func (m *Model) moveCursor(msg tea.KeyMsg) bool {
	s := m.selected()
	order := m.order(s)
	k := m.keys
	var step int
	switch {
	case key.Matches(msg, k.Up):
		step = -1
	case key.Matches(msg, k.Down):
		step = 1
	case key.Matches(msg, k.PageUp):
		step = -10
	case key.Matches(msg, k.PageDown):
		step = 10
	case key.Matches(msg, k.Top):
		step = -len(order)
	case key.Matches(msg, k.Bottom):
		step = len(order)
	default:
		return false
	}
	if len(order) == 0 {
		return true
	}
	pos := max(slices.Index(order, m.cur(s)), 0)
	m.setCursor(s, order[clamp(pos+step, 0, len(order)-1)])
	return true
}

// filterList asks for the words the current list must match.
func (m *Model) filterList() tea.Cmd {
	s := m.selected()
	if s == pipeline.StageCorrection {
		return m.setStatus("/ filters a list: queries, search results, sources, evidence or images")
	}
	cmd := m.ask("Filter "+string(s)+" as you type (enter keeps it, esc clears it):", m.filter[s], func(m *Model, v string) tea.Cmd {
		m.filter[s] = strings.TrimSpace(v)
		return nil
	})
	m.prompt.live = func(m *Model, v string) { m.filter[s] = strings.TrimSpace(v) }
	return cmd
}

// filterCount is "3/11 match “bbc”" while a filter hides rows.
func (m *Model) filterCount(s pipeline.Stage) string {
	f := m.filter[s]
	if f == "" {
		return ""
	}
	return fmt.Sprintf("%d/%d match “%s” (/ to change)", len(m.order(s)), len(m.listKeys(s)), safe(f))
}

// marker is the cursor's sign at the start of a row: reverse video goes
// with the colours under NO_COLOR, the sign stays.
func (m *Model) marker(selected bool) string {
	if selected {
		return "▸ "
	}
	return "  "
}

// editable says whether the person may change the check now: not while the
// engine owns it, whose next snapshot would undo the change.
func (m *Model) editable() (tea.Cmd, bool) {
	if m.running {
		return m.setStatus("the check is running: wait for it, or stop it (esc), before changing it"), false
	}
	return nil, true
}

func (m *Model) emptyHint(s pipeline.Stage, waiting, none string) string {
	switch m.stage(s).State {
	case pipeline.StateWaiting, pipeline.StateRunning:
		return m.st.Dim.Render(waiting)
	}
	return m.st.Dim.Render(none)
}

// edited follows a change the journalist made to the check (the engine's
// edit methods record it and mark what it made stale): the draft and the
// case are saved.
func (m *Model) edited() tea.Cmd {
	m.dirty = true
	return tea.Batch(m.scheduleDraft(), m.saveCase())
}

// rerun starts the engine again from a stage with the check as edited.
func (m *Model) rerun(from pipeline.Stage) tea.Cmd {
	if m.running {
		m.stopRun()
	}
	if from == pipeline.StageSearch && len(m.check.EnabledQueries()) == 0 {
		return m.setStatus("no query is ticked: tick one (space) or add one (a) first")
	}
	return tea.Batch(m.startRun(from), m.setStatus("running again from "+string(from)+"…"))
}

// askEdit opens the one-line prompt for an edit of the check: what is
// typed in it goes into the draft as it is typed, and is offered back
// after a crash (reopenPrompt).
func (m *Model) askEdit(what draftPrompt, title, value string, done func(m *Model, v string) tea.Cmd) tea.Cmd {
	cmd := m.ask(title, value, done)
	m.prompt.edit = &what
	return cmd
}

// reopenPrompt opens again the edit a draft was left in.
func (m *Model) reopenPrompt(p draftPrompt) tea.Cmd {
	switch p.Kind {
	case promptQuery:
		if m.queryIndex(p.Key) >= 0 {
			m.sel = stageIndex(pipeline.StageQueries)
			return m.editQuery(p.Key, p.Value)
		}
	case promptNewQuery:
		m.sel = stageIndex(pipeline.StageQueries)
		return m.addQuery(p.Value)
	case promptDescription:
		if p.Key == videoKey && m.check.Video != nil {
			m.sel = stageIndex(pipeline.StageImages)
			return m.describeVideo(p.Value)
		}
		for _, im := range m.check.Images {
			if im.Source == p.Key {
				m.sel = stageIndex(pipeline.StageImages)
				return m.describeImage(p.Key, p.Value)
			}
		}
	}
	return nil
}

// ask opens the one-line prompt.
func (m *Model) ask(title, value string, done func(m *Model, v string) tea.Cmd) tea.Cmd {
	in := textinput.New()
	in.Prompt = ""
	in.SetValue(value)
	in.CursorEnd()
	m.prompt = promptState{title: title, input: in, done: done}
	m.overlay = overlayPrompt
	m.layout()
	return m.prompt.input.Focus()
}

func (m *Model) onPromptKey(msg tea.KeyMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.keys.Accept):
		m.overlay = overlayNone
		return m.prompt.done(m, m.prompt.input.Value())
	case key.Matches(msg, m.keys.Cancel):
		m.overlay = overlayNone
		if m.prompt.live != nil {
			m.prompt.live(m, "")
		}
		return nil
	}
	before := m.prompt.input.Value()
	var cmd tea.Cmd
	m.prompt.input, cmd = m.prompt.input.Update(msg)
	if m.prompt.edit != nil && m.prompt.input.Value() != before {
		cmd = tea.Batch(cmd, m.scheduleDraft())
	}
	if m.prompt.live != nil && m.prompt.input.Value() != before {
		m.prompt.live(m, m.prompt.input.Value())
	}
	return cmd
}

func hostOf(u string) string {
	s := strings.TrimPrefix(strings.TrimPrefix(u, "https://"), "http://")
	s = strings.TrimPrefix(s, "www.")
	if i := strings.IndexAny(s, "/?#"); i >= 0 {
		s = s[:i]
	}
	return s
}

func indent(s, pre string) string {
	return pre + strings.ReplaceAll(s, "\n", "\n"+pre)
}

// splitLines flattens entries that hold several lines.
func splitLines(in []string) []string {
	var out []string
	for _, s := range in {
		out = append(out, strings.Split(s, "\n")...)
	}
	return out
}

func lineCount(s string) int { return strings.Count(s, "\n") + 1 }
