package tui

import (
	"fmt"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"
	"github.com/musecheck/muse/pipeline"
)

// column is one column of the sources table.
type column struct {
	title string
	width int
	value func(s pipeline.Source) string
}

func (m *Model) sourceColumns(w int) []column {
	pub := column{"publisher", 16, func(s pipeline.Source) string { return firstNonEmpty(s.Publisher, s.Domain) }}
	tier := column{"tier", 8, func(s pipeline.Source) string { return string(s.Tier) }}
	fact := column{"factuality", 11, func(s pipeline.Source) string { return s.Factuality }}
	bias := column{"bias", 13, func(s pipeline.Source) string { return s.Bias }}
	published := column{"published", 10, func(s pipeline.Source) string {
		if s.Published.IsZero() {
			return "—"
		}
		return s.Published.Format("2006-01-02")
	}}
	rel := column{"rel", 4, func(s pipeline.Source) string {
		if s.Relevance == 0 {
			return "—"
		}
		return fmt.Sprintf("%.2f", s.Relevance)
	}}
	status := column{"status", 14, func(s pipeline.Source) string { return statusWord(s) }}
	cols := []column{pub, tier, published, rel, status}
	if w >= 100 {
		cols = []column{pub, tier, fact, bias, published, rel, status}
	}
	used := len(cols) - 1
	for _, c := range cols {
		used += c.width
	}
	if w >= 130 {
		// wide: say why each page was kept out right in the table
		cols[0].width += 8
		used += 8 + 1
		cols = append(cols, column{"why", max(w-used, 10), func(s pipeline.Source) string { return s.Reason }})
		return cols
	}
	cols[0].width += max(w-used, 0) // the publisher takes what is left
	return cols
}

// statusWord is a source's status in a few words.
func statusWord(s pipeline.Source) string {
	switch {
	case s.Dropped:
		return "✗ dropped"
	case s.Boosted && s.Status != pipeline.StatusUsed:
		return "↑ boosted"
	}
	switch s.Status {
	case pipeline.StatusUsed:
		return "✓ used"
	case pipeline.StatusPending:
		return "not read yet"
	case pipeline.StatusNotNeeded:
		return "not needed"
	case pipeline.StatusExcludedRating:
		return "✗ rating"
	case pipeline.StatusExcludedCutoff:
		return "✗ after cutoff"
	case "":
		return ""
	}
	return "✗ " + strings.ReplaceAll(string(s.Status), "_", " ")
}

func keptOut(s pipeline.Source) bool {
	switch s.Status {
	case pipeline.StatusUsed, pipeline.StatusBoosted, pipeline.StatusPending, pipeline.StatusNotNeeded:
		return s.Dropped
	}
	return true
}

func (m *Model) sourcesPane(w, h int) string {
	srcs := m.check.Sources
	if len(srcs) == 0 {
		return m.emptyHint(pipeline.StageSources, "Reading and rating pages…", "No pages were read. Edit the queries and search again.")
	}
	cols := m.sourceColumns(w)
	row := func(vals []string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = ansi.Truncate(fmt.Sprintf("%-*s", c.width, vals[i]), c.width, "…")
		}
		return strings.Join(parts, " ")
	}
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	cur := clamp(m.cursor[pipeline.StageSources], 0, len(srcs)-1)
	lines := []string{m.st.Bold.Render(row(titles))}
	for i, s := range srcs {
		vals := make([]string, len(cols))
		for j, c := range cols {
			vals[j] = c.value(s)
		}
		line := row(vals)
		switch {
		case i == cur:
			line = m.st.Cursor.Render(line)
		case keptOut(s):
			line = m.st.Dim.Render(line)
		case s.Status == pipeline.StatusUsed:
			line = m.st.Ok.Render(line)
		}
		lines = append(lines, line)
	}
	s := srcs[cur]
	why := firstNonEmpty(s.Reason, statusWord(s))
	if s.Dropped {
		why = "dropped by you — u restores"
	}
	footer := m.st.Dim.Render(wrap("↳ "+hostOf(firstNonEmpty(s.FinalURL, s.URL))+": "+why, w))
	tableH := max(h-lineCount(footer)-1, 2)
	return window(lines, cur+1, tableH) + "\n\n" + footer
}

func (m *Model) currentSource() *pipeline.Source {
	srcs := m.check.Sources
	if len(srcs) == 0 {
		return nil
	}
	return &srcs[clamp(m.cursor[pipeline.StageSources], 0, len(srcs)-1)]
}

func (m *Model) onSourcesKey(k string) tea.Cmd {
	if m.why && k == "esc" {
		m.why = false
		return nil
	}
	if !m.why && m.moveCursor(k, len(m.check.Sources)) {
		return nil
	}
	if m.why && m.moveCursor(k, len(m.check.Sources)) {
		return nil
	}
	s := m.currentSource()
	switch k {
	case "s":
		return m.rerun(pipeline.StageSearch)
	case "r":
		return m.rerun(pipeline.StageEvidence)
	}
	if s == nil {
		return nil
	}
	switch k {
	case "enter":
		m.why = !m.why
	case "o":
		return m.openURL(firstNonEmpty(s.FinalURL, s.URL))
	case "d":
		s.Dropped, s.Boosted = true, false
		return tea.Batch(m.edited(pipeline.StageSources), m.setStatus("dropped "+s.Domain+" for this check — s searches again, r finds evidence again"))
	case "b":
		s.Boosted, s.Dropped = true, false
		return tea.Batch(m.edited(pipeline.StageSources), m.setStatus("boosted "+s.Domain+": it goes first — r finds evidence again"))
	case "u":
		s.Boosted, s.Dropped = false, false
		return tea.Batch(m.edited(pipeline.StageSources), m.setStatus("restored "+s.Domain))
	case "D", "B":
		if m.opts.Remember == nil {
			return m.setStatus("no overrides file configured: drop and boost apply to this check only")
		}
		boost := k == "B"
		s.Boosted, s.Dropped = boost, !boost
		return tea.Batch(m.edited(pipeline.StageSources), m.remember(s.Domain, boost))
	}
	return nil
}

// remember writes a newsroom-wide drop or boost to the overrides file.
func (m *Model) remember(domain string, boost bool) tea.Cmd {
	f := m.opts.Remember
	return func() tea.Msg {
		err := f(domain, boost)
		verb := "dropped"
		if boost {
			verb = "boosted"
		}
		return resultMsg{what: "remember " + domain, err: err, text: verb + " " + domain + " for the newsroom (overrides file)"}
	}
}

// whyPane answers "why this source": rating and origin, date against the
// cutoff, relevance, status, a preview of the text and the quotes taken.
func (m *Model) whyPane(w, h int) string {
	s := m.currentSource()
	if s == nil {
		return ""
	}
	var lines []string
	add := func(label, v string) {
		if v != "" {
			// a hanging indent keeps the labels in a column
			body := indent(wrap(v, max(w-12, 10)), strings.Repeat(" ", 12))[12:]
			lines = append(lines, m.st.Bold.Render(fmt.Sprintf("%-11s", label))+" "+body)
		}
	}
	lines = append(lines, m.st.Bold.Render(wrap(firstNonEmpty(s.Title, s.URL), w)))
	add("page", firstNonEmpty(s.FinalURL, s.URL))
	add("publisher", firstNonEmpty(s.Publisher, s.Domain))
	rating := strings.TrimSpace(fmt.Sprintf("%s tier · factuality %s · bias %s", s.Tier, firstNonEmpty(s.Factuality, "unknown"), firstNonEmpty(s.Bias, "unknown")))
	add("rating", rating)
	add("rated by", firstNonEmpty(s.RatingOrigin, "no rating found"))
	add("published", m.dateVsCutoff(s.Published))
	if s.Relevance != 0 {
		add("relevance", fmt.Sprintf("%.2f", s.Relevance))
	}
	status := statusWord(*s)
	if s.Reason != "" {
		status += " — " + s.Reason
	}
	add("status", status)
	if len(s.FoundBy) > 0 {
		add("found by", strings.Join(s.FoundBy, "; "))
	}
	if s.Words > 0 {
		add("length", fmt.Sprintf("%d words", s.Words))
	}
	var quotes []string
	for _, e := range m.check.Evidence {
		if e.SourceURL == s.URL || e.SourceURL == s.FinalURL {
			quotes = append(quotes, string(e.Kind)+": “"+e.Quote+"”")
		}
	}
	if len(quotes) > 0 {
		lines = append(lines, "", m.st.Bold.Render("Quotes taken"))
		for _, q := range quotes {
			lines = append(lines, wrap("• "+q, w))
		}
	}
	if len(s.Paragraphs) > 0 {
		lines = append(lines, "", m.st.Bold.Render("Text"))
		preview := strings.Join(s.Paragraphs, "\n\n")
		if r := []rune(preview); len(r) > 1200 {
			preview = string(r[:1200]) + "…"
		}
		lines = append(lines, m.st.Dim.Render(wrap(preview, w)))
	}
	lines = splitLines(lines)
	lines = append(lines[:min(len(lines), max(h-1, 1))], m.st.Dim.Render("esc back · o open · d drop · b boost · u restore"))
	return strings.Join(lines, "\n")
}

func (m *Model) dateVsCutoff(t time.Time) string {
	if t.IsZero() {
		return "no date found"
	}
	out := t.Format("2006-01-02")
	cut := m.check.Cutoff
	if cut.IsZero() {
		return out + " (no cutoff)"
	}
	d := cut.Sub(t)
	days := int(d.Hours() / 24)
	switch {
	case d < 0:
		return fmt.Sprintf("%s — after the cutoff %s, so it cannot count", out, formatWhen(cut))
	case days == 0:
		return fmt.Sprintf("%s — the day of the cutoff %s", out, formatWhen(cut))
	}
	return fmt.Sprintf("%s — %d days before the cutoff %s", out, days, formatWhen(cut))
}
