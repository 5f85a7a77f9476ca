package tui

import (
	"fmt"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
)

func (m *Model) queriesPane(w, h int) string {
	qs := m.check.Queries
	if len(qs) == 0 {
		return m.emptyHint(pipeline.StageQueries, "Writing search queries…", "No queries. a adds one.")
	}
	cur := m.cur(pipeline.StageQueries)
	var lines []string
	at := 0
	for _, i := range m.order(pipeline.StageQueries) {
		q := qs[i]
		box := "[ ]"
		if q.Enabled {
			box = "[x]"
		}
		origin := ""
		if q.Origin != pipeline.OriginModel && q.Origin != "" {
			origin = " (" + q.Origin + ")"
		}
		text := m.marker(i == cur) + box + " " + safe(q.Text)
		line := truncate(text, w-cells(origin), "…") + m.st.Dim.Render(origin)
		if i == cur {
			at = len(lines)
			line = m.st.Cursor.Render(truncate(text+origin, w, "…"))
		} else if !q.Enabled {
			line = m.st.Dim.Render(truncate(text+origin, w, "…"))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", m.st.Dim.Render(wrap("space turns a query on or off · e edits · a adds · d deletes · s searches again with the ticked queries", w)))
	return window(splitLines(lines), at, h)
}

func (m *Model) onQueriesKey(msg tea.KeyMsg) tea.Cmd {
	if m.moveCursor(msg) {
		return nil
	}
	k := m.keys
	if key.Matches(msg, k.SearchAgain) {
		return m.rerun(pipeline.StageSearch)
	}
	if !key.Matches(msg, k.Toggle, k.Edit, k.Add, k.Delete) {
		return nil
	}
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	cur := m.cur(pipeline.StageQueries)
	if cur < 0 && !key.Matches(msg, k.Add) {
		return nil
	}
	switch {
	case key.Matches(msg, k.Toggle):
		if err := m.check.SetQueryEnabled(cur, !m.check.Queries[cur].Enabled); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		return m.edited()
	case key.Matches(msg, k.Edit):
		return m.editQuery(m.check.Queries[cur].Text, m.check.Queries[cur].Text)
	case key.Matches(msg, k.Add):
		return m.addQuery("")
	case key.Matches(msg, k.Delete):
		text := m.check.Queries[cur].Text
		if err := m.check.DeleteQuery(cur); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		delete(m.cursorKey, pipeline.StageQueries) // the next row takes its place
		return tea.Batch(m.edited(), m.setStatus("deleted the query “"+safe(text)+"”"))
	}
	return nil
}

// editQuery asks for a query's new wording, starting from value.
func (m *Model) editQuery(old, value string) tea.Cmd {
	return m.askEdit(draftPrompt{Kind: promptQuery, Key: old}, "Edit query:", value, func(m *Model, v string) tea.Cmd {
		i := m.queryIndex(old)
		if strings.TrimSpace(v) == "" || i < 0 {
			return nil // nothing typed, or the query is gone
		}
		if err := m.check.EditQuery(i, v); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		m.setCursor(pipeline.StageQueries, i)
		return m.edited()
	})
}

// addQuery asks for a query of the person's own.
func (m *Model) addQuery(value string) tea.Cmd {
	return m.askEdit(draftPrompt{Kind: promptNewQuery}, "New query:", value, func(m *Model, v string) tea.Cmd {
		if strings.TrimSpace(v) == "" {
			return nil // nothing typed
		}
		if err := m.check.AddQuery(v); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		m.setCursor(pipeline.StageQueries, len(m.check.Queries)-1)
		return m.edited()
	})
}

// queryIndex finds a query by its text (-1: gone).
func (m *Model) queryIndex(text string) int {
	for i, q := range m.check.Queries {
		if q.Text == text {
			return i
		}
	}
	return -1
}

// askLanguage asks for the post's language (a code or a name, checked with
// sources/lang; empty has the engine detect it) and writes the queries
// again in it: the engine reads Post.Language when it writes the queries,
// and everything after them follows from the queries (Check.SetLanguage
// says where to start).
func (m *Model) askLanguage() tea.Cmd {
	title := "Post language (es, ar, Spanish…; empty detects it):"
	return m.ask(title, m.check.Post.Language, func(m *Model, v string) tea.Cmd {
		v = strings.TrimSpace(v)
		code := lang.Normalise(v)
		if v != "" && code == "" {
			return m.setFailure(fmt.Sprintf("%q is not a language: use a code such as es, ar or hi, or a name such as Spanish", safe(v)))
		}
		if code != "" && code == m.check.Post.Language {
			return m.setStatus("the post is already in " + lang.Label(code) + "; nothing rerun")
		}
		from := m.check.SetLanguage(code)
		status := "the post is in " + lang.Label(code) + ": writing the queries again…"
		if code == "" {
			status = "the post's language will be detected again: writing the queries again…"
		}
		return tea.Batch(m.edited(), m.startRun(from), m.setStatus(status))
	})
}
