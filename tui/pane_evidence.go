package tui

import (
	"fmt"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/musecheck/muse/pipeline"
)

func (m *Model) evidencePane(w, h int) string {
	ev := m.check.Evidence
	if len(ev) == 0 {
		return m.emptyHint(pipeline.StageEvidence, "Reading sources for quotes…", "No quotes were found. Boost or restore sources and find evidence again (r on Sources).")
	}
	cur := m.cur(pipeline.StageEvidence)
	shown := map[int]bool{}
	for _, i := range m.order(pipeline.StageEvidence) {
		shown[i] = true
	}
	var lines []string
	claims := m.check.Verdicts().Claims
	if len(claims) > 1 {
		// The post's claims and their verdicts, read-only: the model's
		// split, as the queries answer gave it.
		lines = append(lines, m.st.Bold.Render("Claims"))
		for _, cv := range claims {
			lines = append(lines, splitLines([]string{indent(wrap(fmt.Sprintf("%d. %s — %s", cv.Claim, safe(cv.Text), cv.Verdict.Label()), w-3), "   ")})...)
		}
		lines = append(lines, "")
	}
	at := 0
	for _, g := range m.evidenceGroups() {
		titled := false
		for _, i := range g.items {
			if !shown[i] {
				continue
			}
			if !titled {
				lines = append(lines, m.st.Bold.Render(truncate(safe(g.title), w, "…")))
				titled = true
			}
			e := ev[i]
			box := "[ ]"
			if e.Included {
				box = "[x]"
			}
			kind := m.st.Context.Render("context")
			switch e.Kind {
			case pipeline.KindRefutes:
				kind = m.st.Refutes.Render("refutes")
			case pipeline.KindSupports:
				kind = m.st.Supports.Render("supports")
			}
			if len(claims) > 1 {
				kind += m.st.Dim.Render(fmt.Sprintf(" claim %d", e.ClaimOf()))
			}
			mark := m.st.Ok.Render("✓ verified")
			if !e.Verified {
				mark = m.st.Warn.Render("! not found in page")
				// Looked for on the selected row only: it reads every
				// page's text, too much for each row of every frame.
				if i == cur {
					if on := m.check.QuoteFoundOn(i); len(on) == 1 {
						mark += m.st.Warn.Render(" — it is on " + safe(hostOf(on[0])) + ": m moves it there")
					}
				}
			}
			head := m.marker(i == cur) + box + " " + kind + " " + mark
			if i == cur {
				at = len(lines)
				head = m.st.Cursor.Render(ansi.Strip(head))
			}
			lines = append(lines, head)
			q := indent(wrap("“"+safe(e.Quote)+"”", w-4), "    ")
			if !e.Included {
				q = m.st.Dim.Render(q)
			}
			lines = append(lines, splitLines([]string{q})...)
		}
	}
	lines = append(lines, "", m.st.Dim.Render(wrap("space includes or leaves out a quote · w writes the correction again from the ticked quotes", w)))
	return window(splitLines(lines), at, h)
}

type evidenceGroup struct {
	title string
	items []int
}

// evidenceGroups orders quotes by source, in the order sources were ranked.
func (m *Model) evidenceGroups() []evidenceGroup {
	var groups []evidenceGroup
	index := map[string]int{}
	for i, e := range m.check.Evidence {
		gi, ok := index[e.SourceURL]
		if !ok {
			gi = len(groups)
			index[e.SourceURL] = gi
			groups = append(groups, evidenceGroup{title: m.sourceTitle(e.SourceURL)})
		}
		groups[gi].items = append(groups[gi].items, i)
	}
	return groups
}

func (m *Model) sourceTitle(url string) string {
	for _, s := range m.check.Sources {
		if s.URL == url || s.FinalURL == url {
			t := s.Label()
			if s.Tier != "" {
				t += " (" + string(s.Tier) + ")"
			}
			if s.Title != "" {
				t += " — " + s.Title
			}
			return t
		}
	}
	return hostOf(url)
}

// evidenceOrder lists quote indexes in the order they are drawn, so the
// cursor moves down the screen.
func (m *Model) evidenceOrder() []int {
	var order []int
	for _, g := range m.evidenceGroups() {
		order = append(order, g.items...)
	}
	return order
}

func (m *Model) onEvidenceKey(msg tea.KeyMsg) tea.Cmd {
	if m.moveCursor(msg) {
		return nil
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Include):
		i := m.cur(pipeline.StageEvidence)
		if i < 0 {
			return nil
		}
		if cmd, ok := m.editable(); !ok {
			return cmd
		}
		if err := m.check.IncludeQuote(i, !m.check.Evidence[i].Included); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		return m.edited()
	case key.Matches(msg, k.MoveQuote):
		i := m.cur(pipeline.StageEvidence)
		if i < 0 {
			return nil
		}
		if cmd, ok := m.editable(); !ok {
			return cmd
		}
		on := m.check.QuoteFoundOn(i)
		if len(on) != 1 {
			return m.setStatus("m moves a quote not found on its page to the one other page it is on; this one has none")
		}
		if err := m.check.MoveQuote(i, on[0]); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		return tea.Batch(m.edited(), m.setStatus("moved the quote to "+safe(hostOf(on[0]))+" — w writes the correction again"))
	case key.Matches(msg, k.Open):
		return m.openURL(m.selectedURL())
	case key.Matches(msg, k.WriteAgain):
		return m.rerun(pipeline.StageCorrection)
	}
	return nil
}
