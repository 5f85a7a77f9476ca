package tui

import (
	"cmp"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources"
)

// column is one column of the sources table.
type column struct {
	title string
	width int
	value func(s pipeline.Source) string
}

func (m *Model) sourceColumns(w int) []column {
	pub := column{"publisher", 16, func(s pipeline.Source) string {
		if s.OfPost != "" {
			return "★ " + s.Label() // about this very post
		}
		return s.Label()
	}}
	tier := column{"tier", 8, func(s pipeline.Source) string { return string(s.Tier) }}
	fact := column{"factuality", 11, func(s pipeline.Source) string { return s.Factuality }}
	bias := column{"bias", 13, func(s pipeline.Source) string { return s.Bias }}
	published := column{"published", 10, func(s pipeline.Source) string {
		if s.Published.IsZero() {
			return cmp.Or(s.PublishedPartial.String(), "—") // a year or month alone, as the page gives it
		}
		return s.Published.Format("2006-01-02")
	}}
	rel := column{"rel", 4, func(s pipeline.Source) string {
		if !scored(s) {
			return "—"
		}
		return fmt.Sprintf("%.2f", s.Relevance)
	}}
	status := column{"status", 14, func(s pipeline.Source) string {
		// A cited page the last recheck found changed says how, in place
		// of its status ("why this source" has both).
		return m.sinceLastRun(s) + flagMark(s) + firstNonEmpty(recheckCell(m.recheckOf(s)), statusWord(s))
	}}
	vsPost := column{"vs post", 12, m.vsPost}
	cols := []column{pub, tier, published, vsPost, rel, status}
	if w >= 100 {
		cols = []column{pub, tier, fact, bias, published, vsPost, rel, status}
	}
	if m.check.Post.PostedAt.IsZero() {
		cols = slices.DeleteFunc(cols, func(c column) bool { return c.title == vsPost.title })
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

// flagMark marks a page with a flag (a look-alike domain, a copied text).
func flagMark(s pipeline.Source) string {
	if len(s.Flags) > 0 {
		return "⚑ "
	}
	return ""
}

func flaggedCount(srcs []pipeline.Source) int {
	n := 0
	for _, s := range srcs {
		if len(s.Flags) > 0 {
			n++
		}
	}
	return n
}

// statusWord is a source's status in a few words: the engine's, with the
// person's drop or boost marked beside it (a boost does not change why a
// page was kept out).
func statusWord(s pipeline.Source) string {
	switch {
	case s.Dropped:
		return "✗ dropped"
	case s.Boosted && (s.Status == pipeline.StatusBoosted || s.Status == pipeline.StatusPending):
		return "↑ boosted"
	case s.Boosted:
		return "↑ " + engineStatusWord(s.Status)
	}
	return engineStatusWord(s.Status)
}

func engineStatusWord(status pipeline.Status) string {
	switch status {
	case pipeline.StatusUsed:
		return "✓ used"
	case pipeline.StatusPending:
		return "not read yet"
	case pipeline.StatusBoosted:
		return "↑ boosted"
	case pipeline.StatusNotNeeded:
		return "not needed"
	case pipeline.StatusNotJudged:
		return "? not judged"
	case pipeline.StatusPartial:
		return "~ partial" // read, but only the opening a wall leaves
	case pipeline.StatusBlocked:
		return "✗ bot wall"
	case pipeline.StatusExcludedRating:
		return "✗ rating"
	case pipeline.StatusExcludedCutoff:
		return "✗ after cutoff"
	case "":
		return ""
	}
	return "✗ " + strings.ReplaceAll(string(status), "_", " ")
}

func (m *Model) sourcesPane(w, h int) string {
	srcs := m.check.Sources
	if len(srcs) == 0 {
		return m.emptyHint(pipeline.StageSources, "Reading and rating pages…", "No pages were read. Edit the queries and search again.")
	}
	cols := m.sourceColumns(w - 2)
	row := func(vals []string) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = pad(safe(vals[i]), c.width)
		}
		return strings.Join(parts, " ")
	}
	titles := make([]string, len(cols))
	for i, c := range cols {
		titles[i] = c.title
	}
	cur := m.cur(pipeline.StageSources)
	var lines []string
	// A fact-check of the post itself, then a published fact-check of the
	// post's claim, come before any page.
	for _, s := range srcs {
		if line := s.OfPostLine(); line != "" && !s.Dropped {
			lines = append(lines, m.st.Ok.Render(truncate("★ "+safe(line), w-2, "…")))
		}
	}
	for _, f := range m.check.FactChecks {
		lines = append(lines, m.st.Ok.Render(truncate(safe(f.String()), w-2, "…")))
	}
	// What became of the search, from the check's own records: the
	// sources' summary line.
	lines = append(lines, m.st.Dim.Render(truncate(safe(m.check.Account().Summary), w-2, "…")))
	if o := m.check.OriginsSummary(); o != "" {
		// Pages that carry one wire story, or one text, are one origin.
		lines = append(lines, m.st.Dim.Render(truncate(safe("quoted: "+o), w-2, "…")))
	}
	if n := flaggedCount(srcs); n > 0 {
		lines = append(lines, m.st.Warn.Render(truncate(fmt.Sprintf("⚑ %s flagged as possibly poisoned: %s on one says why", plural(n, "page"), m.keys.Enter.Help().Key), w-2, "…")))
	}
	if m.rerunMarks() {
		lines = append(lines, m.st.Dim.Render(truncate("+ new in the last run · ± changed by the last run", w-2, "…")))
	}
	lines = append(lines, m.recheckSummary(w-2)...)
	lines = append(lines, m.st.Bold.Render("  "+row(titles)))
	at := 0
	for _, i := range m.order(pipeline.StageSources) {
		s := srcs[i]
		vals := make([]string, len(cols))
		for j, c := range cols {
			vals[j] = c.value(s)
		}
		line := m.marker(i == cur) + row(vals)
		switch {
		case i == cur:
			at = len(lines)
			line = m.st.Cursor.Render(line)
		case !s.Eligible():
			line = m.st.Dim.Render(line)
		case s.Status == pipeline.StatusUsed:
			line = m.st.Ok.Render(line)
		}
		lines = append(lines, line)
	}
	if cur < 0 {
		lines = append(lines, "", m.st.Dim.Render("no source matches the filter"))
	}
	return window(lines, at, h)
}

// sourceDetail is the selected source's full address and why it stands
// where it does: the detail line under the table.
func (m *Model) sourceDetail(s pipeline.Source) string {
	why := firstNonEmpty(s.Reason, statusWord(s))
	if s.Dropped {
		why = "dropped by you — u restores"
	}
	if p := m.recheckOf(s); pageChanged(p) {
		why = "recheck: " + strings.Join(p.Reasons, "; ")
	}
	return safe(firstNonEmpty(s.FinalURL, s.URL) + " — " + why)
}

func (m *Model) currentSource() *pipeline.Source {
	if i := m.cur(pipeline.StageSources); i >= 0 {
		return &m.check.Sources[i]
	}
	return nil
}

func (m *Model) onSourcesKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	if m.why {
		switch {
		case key.Matches(msg, k.Back), key.Matches(msg, k.Enter):
			m.why = false
			return nil
		}
		if n, ok := m.scrollStep(msg); ok {
			m.whyScroll += n
			return nil
		}
	} else if m.moveCursor(msg) {
		return nil
	}
	switch {
	case key.Matches(msg, k.SearchAgain):
		return m.rerun(pipeline.StageSearch)
	case key.Matches(msg, k.EvidenceAgain):
		return m.rerun(pipeline.StageEvidence)
	}
	s := m.currentSource()
	if s == nil {
		return nil
	}
	switch {
	case key.Matches(msg, k.Enter):
		m.why, m.whyScroll = true, 0
		return nil
	case key.Matches(msg, k.Open):
		return m.openURL(firstNonEmpty(s.FinalURL, s.URL))
	case key.Matches(msg, k.PasteText):
		if cmd, ok := m.editable(); !ok {
			return cmd
		}
		// An empty file: what the journalist pastes and saves is the text.
		return writeEditorFileFor("", s.URL, "muse-page-text-*.txt")
	}
	if !key.Matches(msg, k.Drop, k.Boost, k.Restore, k.RememberDrop, k.RememberBoost) {
		return nil
	}
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	i, dom := m.cur(pipeline.StageSources), safe(s.Domain)
	if key.Matches(msg, k.RememberDrop, k.RememberBoost) && m.opts.Remember == nil {
		return m.setStatus("no overrides file configured: drop and boost apply to this check only")
	}
	if key.Matches(msg, k.RememberDrop, k.RememberBoost) {
		// One key would write a rule for every check in the newsroom:
		// asked first.
		ask := msg.String() + " " + s.Domain
		if m.confirmRemember != ask {
			m.confirmRemember = ask
			verb := "drop"
			if key.Matches(msg, k.RememberBoost) {
				verb = "boost"
			}
			return m.setStatus(fmt.Sprintf("%s again to %s %s for every check in the newsroom (the overrides file); any other key cancels", msg.String(), verb, dom))
		}
		m.confirmRemember = ""
	}
	var (
		from pipeline.Stage
		err  error
	)
	boost := key.Matches(msg, k.Boost, k.RememberBoost)
	switch {
	case key.Matches(msg, k.Restore):
		from, err = m.check.RestoreSource(i)
	case boost:
		from, err = m.check.BoostSource(i)
	default:
		from, err = m.check.DropSource(i)
	}
	var status string
	switch {
	case err != nil && !(errors.Is(err, pipeline.ErrKeptOut) && key.Matches(msg, k.RememberBoost)):
		return m.setFailure(safe(err.Error()))
	case key.Matches(msg, k.RememberDrop, k.RememberBoost):
		// The newsroom's choice is about the publisher: it is kept even
		// when this page stays out for what it is.
		note := ""
		if err != nil {
			note = "; this page stays out: " + safe(err.Error())
		}
		return tea.Batch(m.edited(), m.remember(s.Domain, boost, note))
	case key.Matches(msg, k.Restore):
		status = "restored " + dom + " for this check"
	case boost:
		status = "boosted " + dom + ": it goes first"
	default:
		status = "dropped " + dom + " for this check"
	}
	again := ""
	if w := rerunWords(from); w != "" {
		again = " — " + w
	}
	cmds := []tea.Cmd{m.edited(), m.setStatus(status + again)}
	if f := m.opts.NewsroomChoice; f != nil && key.Matches(msg, k.Restore) {
		// The overrides file still decides every other check: said, not
		// undone. It is read outside Update.
		domain := s.Domain
		cmds = append(cmds, func() tea.Msg {
			choice, file := f(domain)
			if choice == "" {
				return nil
			}
			return resultMsg{what: "restore", text: fmt.Sprintf("%s; the newsroom's overrides file still %ss it for every other check (%s): edit that file to undo it there%s",
				status, choice, safe(file), again)}
		})
	}
	return tea.Batch(cmds...)
}

// pasteSourceText makes the text the journalist pasted in $EDITOR the
// text of the source at url (pipeline.Check.PasteSourceText).
func (m *Model) pasteSourceText(url, text string) tea.Cmd {
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	i := slices.IndexFunc(m.check.Sources, func(s pipeline.Source) bool { return s.URL == url })
	if i < 0 {
		return m.setStatus("the page is no longer among the sources: nothing pasted")
	}
	if strings.TrimSpace(text) == "" {
		return m.setStatus("nothing pasted: the page's text is unchanged")
	}
	from, err := m.check.PasteSourceText(i, text, time.Now())
	if err != nil {
		return m.setFailure(safe(err.Error()))
	}
	s := m.check.Sources[i]
	status := fmt.Sprintf("%d words pasted as the text of %s", s.Words, safe(firstNonEmpty(s.Domain, s.URL)))
	if again := rerunWords(from); again != "" {
		status += " — " + again
	}
	return tea.Batch(m.edited(), m.setStatus(status))
}

// rerunWords says which key reruns the check so that an edit counting from
// stage s (the engine's word on it) takes effect.
func rerunWords(s pipeline.Stage) string {
	switch s {
	case pipeline.StageEvidence:
		return "s searches again, r finds evidence again"
	case pipeline.StageSources:
		return "s reads the pages again"
	}
	return ""
}

// remember writes a newsroom-wide drop or boost to the overrides file;
// note says what it did not change in this check.
func (m *Model) remember(domain string, boost bool, note string) tea.Cmd {
	f := m.opts.Remember
	return func() tea.Msg {
		err := f(domain, boost)
		verb := "dropped"
		if boost {
			verb = "boosted"
		}
		return resultMsg{what: "remember " + domain, err: err, text: verb + " " + domain + " for the newsroom (overrides file)" + note}
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
			body := indent(wrap(safe(v), max(w-12, 10)), strings.Repeat(" ", 12))[12:]
			lines = append(lines, m.st.Bold.Render(fmt.Sprintf("%-11s", label))+" "+body)
		}
	}
	lines = append(lines, m.st.Bold.Render(wrap(safe(firstNonEmpty(s.Title, s.URL)), w)))
	add("page", firstNonEmpty(s.FinalURL, s.URL))
	add("publisher", s.Label())
	rating := strings.TrimSpace(fmt.Sprintf("%s tier · factuality %s · bias %s", s.Tier, firstNonEmpty(s.Factuality, "unknown"), firstNonEmpty(s.Bias, "unknown")))
	add("rating", rating)
	add("rated by", firstNonEmpty(s.RatingOrigin, "no rating found"))
	add("domain", s.FirstReadText(m.check.CreatedAt))
	add("published", m.publishedWords(*s))
	add("vs post", m.timingWords(*s))
	if line := s.OfPostLine(); line != "" {
		how := "its fact-check (ClaimReview) names the post's address"
		if s.OfPost == pipeline.OfPostLinks {
			how = "it links to or embeds the post"
		}
		add("this post", line+" — "+how+", so it is read first")
	}
	if scored(*s) {
		add("relevance", fmt.Sprintf("%.2f", s.Relevance))
	}
	status := statusWord(*s)
	if s.Reason != "" {
		status += " — " + s.Reason
	}
	add("status", status)
	if f := s.FlagsText(); f != "" {
		add("⚑ flagged", f+" — its quotes are shown, but it never counts toward the verdict or the stop rule")
	}
	add("rechecked", strings.Join(m.recheckWhy(*s), "\n"))
	a := m.check.Account()
	for _, p := range a.Pages {
		if p.URL == s.URL {
			add("became", strings.ReplaceAll(string(p.Fate), "_", " "))
		}
	}
	add("of all", a.Summary)
	if len(s.FoundBy) > 0 {
		add("found by", strings.Join(s.FoundBy, "; "))
	}
	if s.Wall != nil {
		add("wall", s.Wall.String()+" — only the opening was read; "+m.keys.Open.Help().Key+" opens the page in your browser")
	}
	add("text from", s.TextFrom)
	if s.Words > 0 {
		add("length", fmt.Sprintf("%d words", s.Words))
	}
	if s.Sent != nil {
		// What the model was shown: so that "quoted nothing" is read as
		// said of the whole page or of the part sent.
		add("sent", s.Sent.Line())
	}
	var quotes, inPage []string
	for _, e := range m.check.Evidence {
		if e.SourceURL != s.URL && e.SourceURL != s.FinalURL {
			continue
		}
		// What the page holds apart from what the model and the person
		// did with it: a quote not on the page is marked so.
		q := "• " + string(e.Kind) + ": “" + safe(e.Quote) + "”"
		switch {
		case !e.Verified:
			q = m.st.Warn.Render(wrap("✗ not on this page: "+string(e.Kind)+": “"+safe(e.Quote)+"” ("+safe(firstNonEmpty(e.Reason, "not found"))+")", w))
		case !e.Included:
			q = wrap(q+" (left out by you)", w)
		default:
			q = wrap(q, w)
		}
		quotes = append(quotes, q)
		if e.Verified {
			if ctx := quoteInPage(s.Paragraphs, e.Quote); ctx != "" {
				inPage = append(inPage, wrap(safe(ctx), w))
			}
		}
	}
	if len(quotes) > 0 {
		lines = append(lines, "", m.st.Bold.Render("Quotes taken"))
		lines = append(lines, quotes...)
	}
	if len(inPage) > 0 {
		// Each quote in its page: the paragraph before it, and the quote
		// between » « in its own paragraph.
		lines = append(lines, "", m.st.Bold.Render("In the page"))
		for _, p := range inPage {
			lines = append(lines, p, "")
		}
	}
	if s.Sent != nil && len(s.Sent.Passages) > 0 {
		lines = append(lines, "", m.st.Bold.Render("Passages sent"))
		text := strings.Join(s.Paragraphs, "\n")
		for _, p := range s.Sent.Passages {
			if p.Offset+p.Bytes <= len(text) {
				lines = append(lines, wrap(fmt.Sprintf("• ranked %d: “%s”", p.Rank, safe(export.Clip(text[p.Offset:p.Offset+p.Bytes], 160))), w))
			}
		}
	}
	if len(s.Paragraphs) > 0 {
		lines = append(lines, "", m.st.Bold.Render("Text"))
		preview := strings.Join(s.Paragraphs, "\n\n")
		preview = export.Clip(preview, 1200)
		lines = append(lines, m.st.Dim.Render(wrap(safe(preview), w)))
	}
	lines = splitLines(lines)
	room := max(h-1, 1)
	m.whyScroll = clamp(m.whyScroll, 0, max(len(lines)-room, 0))
	end := min(len(lines), m.whyScroll+room)
	k := m.keys
	hint := m.hints(k.Back, k.Open, k.Drop, k.Boost, k.Restore)
	if end < len(lines) || m.whyScroll > 0 {
		hint = fmt.Sprintf("lines %d–%d of %d · ", m.whyScroll+1, end, len(lines)) + hint
	}
	lines = append(lines[m.whyScroll:end], m.st.Dim.Render(truncate(hint, w, "…")))
	return strings.Join(lines, "\n")
}

// publishedWords is a source's date against the cutoff, or the year or
// month alone when that is all its page states: never compared.
func (m *Model) publishedWords(s pipeline.Source) string {
	if s.Published.IsZero() && !s.PublishedPartial.IsZero() {
		return s.PublishedPartial.String() + " only: the page states no day, so it is not compared with the cutoff or the post"
	}
	return m.dateVsCutoff(s.Published)
}

func (m *Model) dateVsCutoff(t time.Time) string {
	if t.IsZero() {
		return "no date found"
	}
	out := formatWhen(t)
	cut := m.check.Cutoff
	if cut.IsZero() {
		return out + " (no cutoff: every page up to now counts)"
	}
	d := cut.Sub(t)
	switch days := int(d.Hours() / 24); {
	case d <= 0:
		return fmt.Sprintf("%s — not before the cutoff %s, so it cannot count", out, formatWhen(cut))
	case d < time.Hour:
		return fmt.Sprintf("%s — less than an hour before the cutoff %s", out, formatWhen(cut))
	case days == 0:
		return fmt.Sprintf("%s — %s before the cutoff %s", out, plural(int(d.Hours()), "hour"), formatWhen(cut))
	default:
		return fmt.Sprintf("%s — %s before the cutoff %s", out, plural(days, "day"), formatWhen(cut))
	}
}

// plural is "1 day", "3 days".
func plural(n int, unit string) string {
	if n == 1 {
		return "1 " + unit
	}
	return fmt.Sprintf("%d %ss", n, unit)
}

// scored says whether the relevance gate scored s: a page it kept out
// scored 0 is shown as 0.00, not as a page never scored.
func scored(s pipeline.Source) bool {
	return s.Relevance != 0 || s.Status == pipeline.StatusIrrelevant
}

// quoteInPage is a verified quote in its page: the end of the paragraph
// before it, then its paragraph with the quote between » and «; "" when
// no one paragraph holds it.
func quoteInPage(paras []string, quote string) string {
	for i, p := range paras {
		at := strings.Index(p, quote)
		if at < 0 {
			continue
		}
		var b strings.Builder
		if i > 0 {
			prev := []rune(paras[i-1])
			if len(prev) > 240 {
				prev = append([]rune("…"), prev[len(prev)-240:]...)
			}
			b.WriteString(string(prev) + "\n")
		}
		b.WriteString(fmt.Sprintf("¶%d  %s»%s«%s", i+1, p[:at], quote, p[at+len(quote):]))
		return b.String()
	}
	return ""
}

// sinceLastRun marks a source new ("+") or changed ("±", another status,
// or dropped or boosted since) against the sources as they were when the
// latest run started; nothing after a first run.
func (m *Model) sinceLastRun(s pipeline.Source) string {
	if m.lastRunSources == nil || m.running {
		return ""
	}
	was, ok := m.lastRunSources[sources.Key(s.URL)]
	switch {
	case !ok:
		return "+"
	case was != sourceState(s):
		return "±"
	}
	return ""
}

// rerunMarks reports whether any source is marked by sinceLastRun.
func (m *Model) rerunMarks() bool {
	return slices.ContainsFunc(m.check.Sources, func(s pipeline.Source) bool { return m.sinceLastRun(s) != "" })
}

// sourceState is what sinceLastRun compares: the engine's status and the
// person's choice.
func sourceState(s pipeline.Source) string {
	return fmt.Sprintf("%s %v %v", s.Status, s.Dropped, s.Boosted)
}
