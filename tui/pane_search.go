package tui

import (
	"fmt"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/musecheck/muse/pipeline"
)

func (m *Model) searchPane(w, h int) string {
	hits := m.check.Hits
	if len(hits) == 0 {
		return m.emptyHint(pipeline.StageSearch, "Searching…", "No results. Edit the queries and search again (s).")
	}
	cur := clamp(m.cursor[pipeline.StageSearch], 0, len(hits)-1)
	var lines []string
	for i, hit := range hits {
		dom := hostOf(hit.URL)
		line := fmt.Sprintf("%2d %s — %s", i+1, dom, firstNonEmpty(hit.Title, hit.URL))
		line = ansi.Truncate(line, w, "…")
		if i == cur {
			line = m.st.Cursor.Render(line)
		}
		lines = append(lines, line)
		if i == cur {
			meta := hit.Provider
			if hit.Query != "" {
				meta += " · " + hit.Query
			}
			if hit.Pass > 1 {
				meta += " · wider pass"
			}
			if hit.ClaimReview != nil {
				meta += " · fact-check: " + hit.ClaimReview.Rating
			}
			lines = append(lines, m.st.Dim.Render("   "+ansi.Truncate(meta, w-3, "…")))
		}
	}
	return window(lines, cur+1, h)
}

func (m *Model) onSearchKey(k string) tea.Cmd {
	if m.moveCursor(k, len(m.check.Hits)) {
		return nil
	}
	switch k {
	case "o":
		if len(m.check.Hits) > 0 {
			return m.openURL(m.check.Hits[clamp(m.cursor[pipeline.StageSearch], 0, len(m.check.Hits)-1)].URL)
		}
	case "s":
		return m.rerun(pipeline.StageSearch)
	}
	return nil
}
