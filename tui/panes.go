package tui

import (
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/ansi"

	"github.com/musecheck/muse/pipeline"
)

func (m *Model) emptyHint(s pipeline.Stage, waiting, none string) string {
	switch m.stages[s].state {
	case pipeline.StateWaiting, pipeline.StateRunning:
		return m.st.Dim.Render(waiting)
	}
	return m.st.Dim.Render(none)
}

func (m *Model) imagesPane(w, h int) string {
	imgs := m.check.Images
	if len(imgs) == 0 && len(m.check.Post.Images) == 0 {
		return m.st.Dim.Render(wrap("No images in this post. Add image paths or URLs in the compose view (n) to have them described.", w))
	}
	var lines []string
	if len(imgs) == 0 {
		for _, src := range m.check.Post.Images {
			lines = append(lines, "• "+ansi.Truncate(src, w-2, "…"), m.emptyHint(pipeline.StageImages, "  waiting for a description…", "  not described"))
		}
		return window(lines, 0, h)
	}
	cur := clamp(m.cursor[pipeline.StageImages], 0, len(imgs)-1)
	at := 0
	// part is one labelled piece of what is known about an image, with
	// where it came from, so the journalist can weigh each one.
	part := func(label, from, text string, style func(...string) string) {
		if strings.TrimSpace(text) == "" {
			return
		}
		head := label
		if from != "" {
			head += " " + m.st.Dim.Render("("+from+")")
		}
		lines = append(lines, "  "+head)
		lines = append(lines, style(indent(wrap(strings.TrimSpace(text), max(w-4, 10)), "    ")))
	}
	plain := func(s ...string) string { return strings.Join(s, "") }
	for i, img := range imgs {
		if i == cur {
			at = len(lines)
		}
		head := "• " + ansi.Truncate(img.Source, w-2, "…")
		if i == cur {
			head = m.st.Cursor.Render(head)
		}
		lines = append(lines, head)
		if img.Error != "" {
			lines = append(lines, m.st.Fail.Render(indent(wrap("✗ "+img.Error, w-2), "  ")))
		}
		descFrom := firstNonEmpty(img.Origin, "engine")
		if img.Edited {
			descFrom = "written by you"
		}
		part("description", descFrom, img.Description, plain)
		part("alt text", "given with the post", img.AltText, m.st.Dim.Render)
		part("caption", "vision model", img.Caption, m.st.Dim.Render)
		part("text in the image", ocrFrom(firstNonEmpty(img.TextOrigin, img.Origin)), img.OCRText, m.st.Dim.Render)
		if len(img.People) > 0 {
			part("people named", "vision model, from visible text or the post", strings.Join(img.People, ", "), m.st.Dim.Render)
		}
		if strings.TrimSpace(img.Description) == "" && img.Error == "" {
			lines = append(lines, m.st.Dim.Render("  no description yet — e writes one"))
		}
		lines = append(lines, "")
	}
	hint := "e edits the description · s makes the queries and searches again with it · o opens the image"
	lines = append(lines, m.st.Dim.Render(wrap(hint, w)))
	return window(splitLines(lines), at, h)
}

// ocrFrom says what read an image's text, as far as its origin tells.
func ocrFrom(origin string) string {
	o := strings.ToLower(origin)
	switch {
	case strings.Contains(o, "ocr") || strings.Contains(o, "tesseract"):
		return "OCR"
	case strings.Contains(o, "vision"):
		return "vision model"
	}
	return ""
}

func (m *Model) onImagesKey(k string) tea.Cmd {
	imgs := m.check.Images
	if m.moveCursor(k, len(imgs)) || len(imgs) == 0 {
		return nil
	}
	cur := clamp(m.cursor[pipeline.StageImages], 0, len(imgs)-1)
	switch k {
	case "e", "enter":
		return m.ask("Describe the image:", imgs[cur].Description, func(m *Model, v string) tea.Cmd {
			v = strings.TrimSpace(v)
			if v == "" || cur >= len(m.check.Images) || v == m.check.Images[cur].Description {
				return nil
			}
			im := &m.check.Images[cur]
			im.Description, im.Edited, im.Origin, im.Error = v, true, pipeline.OriginUser, ""
			var keep []string // the engine's word on this image no longer holds
			for _, w := range m.warnings[pipeline.StageImages] {
				if !strings.Contains(w, im.Source) {
					keep = append(keep, w)
				}
			}
			m.warnings[pipeline.StageImages] = keep
			return tea.Batch(m.edited(pipeline.StageImages), m.setStatus("description saved — s makes the queries again with it"))
		})
	case "s":
		return m.rerun(pipeline.StageQueries)
	case "o":
		return m.openURL(imgs[cur].Source)
	}
	return nil
}

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

// edited records a change the journalist made in stage s: later stages
// are stale and the draft is saved.
func (m *Model) edited(s pipeline.Stage) tea.Cmd {
	m.markStale(s)
	m.dirty = true
	return tea.Batch(m.scheduleDraft(), m.saveCase())
}

// rerun starts the engine again from a stage with the check as edited.
func (m *Model) rerun(from pipeline.Stage) tea.Cmd {
	if m.running {
		m.stopRun()
	}
	if from == pipeline.StageSearch && !anyEnabled(m.check.Queries) {
		return m.setStatus("no query is ticked: tick one (space) or add one (a) first")
	}
	return tea.Batch(m.startRun(from), m.setStatus("running again from "+string(from)+"…"))
}

func anyEnabled(qs []pipeline.Query) bool {
	for _, q := range qs {
		if q.Enabled {
			return true
		}
	}
	return false
}

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

// column is one column of the sources table.
type column struct {
	title string
	width int
	value func(s pipeline.Source) string
}

func (m *Model) sourceColumns(w int) []column {
	pub := column{"publisher", 16, func(s pipeline.Source) string { return firstNonEmpty(s.Publisher, s.Domain) }}
	tier := column{"tier", 8, func(s pipeline.Source) string { return s.Tier }}
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
	return "✗ " + strings.ReplaceAll(s.Status, "_", " ")
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
			quotes = append(quotes, e.Kind+": “"+e.Quote+"”")
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

func (m *Model) evidencePane(w, h int) string {
	ev := m.check.Evidence
	if len(ev) == 0 {
		return m.emptyHint(pipeline.StageEvidence, "Reading sources for quotes…", "No quotes were found. Boost or restore sources and find evidence again (r on Sources).")
	}
	cur := clamp(m.cursor[pipeline.StageEvidence], 0, len(ev)-1)
	var lines []string
	at := 0
	for _, g := range m.evidenceGroups() {
		lines = append(lines, m.st.Bold.Render(ansi.Truncate(g.title, w, "…")))
		for _, i := range g.items {
			e := ev[i]
			box := "[ ]"
			if e.Included {
				box = "[x]"
			}
			kind := m.st.Context.Render("context")
			if e.Kind == pipeline.KindRefutes {
				kind = m.st.Refutes.Render("refutes")
			}
			mark := m.st.Ok.Render("✓ verified")
			if !e.Verified {
				mark = m.st.Warn.Render("! not found in page")
			}
			head := box + " " + kind + " " + mark
			if i == cur {
				at = len(lines)
				head = m.st.Cursor.Render(ansi.Strip(head))
			}
			lines = append(lines, head)
			q := indent(wrap("“"+e.Quote+"”", w-4), "    ")
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
			t := firstNonEmpty(s.Publisher, s.Domain)
			if s.Tier != "" {
				t += " (" + s.Tier + ")"
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

func (m *Model) onEvidenceKey(k string) tea.Cmd {
	ev := m.check.Evidence
	order := m.evidenceOrder()
	pos := 0
	for i, idx := range order {
		if idx == m.cursor[pipeline.StageEvidence] {
			pos = i
		}
	}
	switch k {
	case "up", "k", "down", "j", "home", "g", "end", "G":
		if len(order) == 0 {
			return nil
		}
		switch k {
		case "up", "k":
			pos--
		case "down", "j":
			pos++
		case "home", "g":
			pos = 0
		default:
			pos = len(order) - 1
		}
		m.cursor[pipeline.StageEvidence] = order[clamp(pos, 0, len(order)-1)]
	case " ", "space":
		if len(ev) == 0 {
			return nil
		}
		i := clamp(m.cursor[pipeline.StageEvidence], 0, len(ev)-1)
		ev[i].Included = !ev[i].Included
		return m.edited(pipeline.StageEvidence)
	case "o":
		if len(ev) > 0 {
			return m.openURL(ev[clamp(m.cursor[pipeline.StageEvidence], 0, len(ev)-1)].SourceURL)
		}
	case "w":
		return m.rerun(pipeline.StageCorrection)
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
	switch msg.String() {
	case "enter":
		m.overlay = overlayNone
		return m.prompt.done(m, m.prompt.input.Value())
	case "esc", "ctrl+c":
		m.overlay = overlayNone
		return nil
	}
	var cmd tea.Cmd
	m.prompt.input, cmd = m.prompt.input.Update(msg)
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
