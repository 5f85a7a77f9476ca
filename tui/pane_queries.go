package tui

import (
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/musecheck/muse/pipeline"
)

func (m *Model) queriesPane(w, h int) string {
	qs := m.check.Queries
	if len(qs) == 0 {
		return m.emptyHint(pipeline.StageQueries, "Writing search queries…", "No queries. a adds one.")
	}
	cur := clamp(m.cursor[pipeline.StageQueries], 0, len(qs)-1)
	var lines []string
	for i, q := range qs {
		box := "[ ]"
		if q.Enabled {
			box = "[x]"
		}
		origin := ""
		if q.Origin != pipeline.OriginModel && q.Origin != "" {
			origin = " (" + q.Origin + ")"
		}
		line := ansi.Truncate(box+" "+q.Text, w-len(origin), "…") + m.st.Dim.Render(origin)
		if i == cur {
			line = m.st.Cursor.Render(ansi.Truncate(box+" "+q.Text+origin, w, "…"))
		} else if !q.Enabled {
			line = m.st.Dim.Render(ansi.Truncate(box+" "+q.Text+origin, w, "…"))
		}
		lines = append(lines, line)
	}
	lines = append(lines, "", m.st.Dim.Render(wrap("space turns a query on or off · e edits · a adds · d deletes · s searches again with the ticked queries", w)))
	return window(splitLines(lines), cur, h)
}

func (m *Model) onQueriesKey(k string) tea.Cmd {
	qs := m.check.Queries
	if m.moveCursor(k, len(qs)) {
		return nil
	}
	cur := clamp(m.cursor[pipeline.StageQueries], 0, len(qs)-1)
	switch k {
	case " ", "space":
		if len(qs) == 0 {
			return nil
		}
		qs[cur].Enabled = !qs[cur].Enabled
		return m.edited(pipeline.StageQueries)
	case "e", "enter":
		if len(qs) == 0 {
			return nil
		}
		return m.ask("Edit query:", qs[cur].Text, func(m *Model, v string) tea.Cmd {
			v = strings.TrimSpace(v)
			if v == "" || cur >= len(m.check.Queries) {
				return nil
			}
			m.check.Queries[cur].Text = v
			m.check.Queries[cur].Origin = pipeline.OriginUser
			m.check.Queries[cur].Enabled = true
			return m.edited(pipeline.StageQueries)
		})
	case "a":
		return m.ask("New query:", "", func(m *Model, v string) tea.Cmd {
			v = strings.TrimSpace(v)
			if v == "" {
				return nil
			}
			m.check.Queries = append(m.check.Queries, pipeline.Query{Text: v, Origin: pipeline.OriginUser, Enabled: true})
			m.cursor[pipeline.StageQueries] = len(m.check.Queries) - 1
			return m.edited(pipeline.StageQueries)
		})
	case "d", "delete":
		if len(qs) == 0 {
			return nil
		}
		m.check.Queries = append(qs[:cur:cur], qs[cur+1:]...)
		return m.edited(pipeline.StageQueries)
	case "s":
		return m.rerun(pipeline.StageSearch)
	}
	return nil
}

func anyEnabled(qs []pipeline.Query) bool {
	for _, q := range qs {
		if q.Enabled {
			return true
		}
	}
	return false
}
