package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/musecheck/muse/pipeline"
)

func (m *Model) searchPane(w, h int) string {
	hits := m.check.Hits
	if len(hits) == 0 {
		return m.emptyHint(pipeline.StageSearch, "Searching…", "No results. Edit the queries and search again (s).")
	}
	cur := m.cur(pipeline.StageSearch)
	var lines []string
	at := 0
	for _, i := range m.order(pipeline.StageSearch) {
		hit := hits[i]
		line := fmt.Sprintf("%s%2d %s — %s", m.marker(i == cur), i+1, safe(hostOf(hit.URL)), safe(firstNonEmpty(hit.Title, hit.URL)))
		line = truncate(line, w, "…")
		if i != cur {
			lines = append(lines, line)
			continue
		}
		at = len(lines)
		lines = append(lines, m.st.Cursor.Render(line))
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
		lines = append(lines, m.st.Dim.Render("     "+truncate(safe(meta), w-5, "…")))
	}
	return window(lines, at, h)
}

func (m *Model) onSearchKey(msg tea.KeyMsg) tea.Cmd {
	if m.moveCursor(msg) {
		return nil
	}
	switch {
	case key.Matches(msg, m.keys.Open):
		return m.openURL(m.selectedURL())
	case key.Matches(msg, m.keys.SearchAgain):
		return m.rerun(pipeline.StageSearch)
	}
	return nil
}
