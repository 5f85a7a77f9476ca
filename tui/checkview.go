package tui

import (
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"

	"time"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
)

// Layout: the stage list is stageListWidth columns wide on wide terminals
// and collapses to its glyphs (stageGlyphWidth) under wideWidth; text lines
// stay under readWidth columns however wide the terminal; under
// minWidth×minHeight the app asks for a bigger terminal.
const (
	stageListWidth  = 22
	stageGlyphWidth = 3
	wideWidth       = 100
	readWidth       = 100
	minWidth        = 60
	minHeight       = 16
)

// stageTitle is a stage's name as a pane title ("Sources").
func stageTitle(s pipeline.Stage) string {
	return strings.ToUpper(string(s[:1])) + string(s[1:])
}

// paneName is a stage's name in the stage list and its pane's title: the
// images stage of a post whose media is a video is its Video pane ("media"
// when the post has images too, both read there).
func (m *Model) paneName(s pipeline.Stage) (list, title string) {
	if s == pipeline.StageImages && (m.check.Video != nil || len(m.check.Post.Videos) > 0) {
		if len(m.check.Post.Images) > 0 || len(m.check.Images) > 0 {
			return "media", "Images and video"
		}
		return "video", "Video"
	}
	return string(s), stageTitle(s)
}

func (m *Model) selected() pipeline.Stage { return pipeline.Stages[m.sel] }

// sidebarWidth is the stage list's width now: full, glyphs only, or none.
func (m *Model) sidebarWidth() int {
	switch {
	case m.zoom || m.sidebarHidden:
		return 0
	case m.width < wideWidth:
		return stageGlyphWidth
	}
	return stageListWidth
}

// paneSize is the detail pane's inner width and height.
func (m *Model) paneSize() (int, int) {
	w := m.width
	if sw := m.sidebarWidth(); sw > 0 {
		w -= sw + 3 // " │ "
	}
	w = min(max(w, 20), readWidth)
	h := max(m.height-4, 3) // header, status bar, help line, pane title
	if m.hasBanner() {
		h = max(h-1, 3)
	}
	return w, h
}

// tooSmall says whether the terminal is too small to show the check.
func (m *Model) tooSmall() bool { return m.width < minWidth || m.height < minHeight }

func (m *Model) tooSmallView() string {
	msg := fmt.Sprintf("The terminal is too small (%d×%d): muse needs at least %d×%d.\nq quits.", m.width, m.height, minWidth, minHeight)
	return wrap(msg, max(m.width, 10))
}

// layout resizes the widgets that keep their own size.
func (m *Model) layout() {
	w, h := m.paneSize()
	m.editor.SetWidth(w)
	room := h - 3 // the count and the support map's line below
	if m.revising {
		room-- // the line saying it is a revision, above
	}
	m.editor.SetHeight(max(room, 3))
	if m.overlay == overlayPrompt {
		m.prompt.input.Width = max(min(m.width, readWidth)-cells(m.prompt.title)-4, 10)
	}
}

func (m *Model) checkView() string {
	if m.tooSmall() {
		return m.tooSmallView()
	}
	header := ""
	if !m.zoom {
		header = m.headerLine() + "\n"
		if m.hasBanner() {
			header += m.recheckBanner() + "\n"
		}
	}
	foot := m.footer(m.checkHelp())
	bodyH := max(m.height-lipgloss.Height(header)-lipgloss.Height(foot)+boolInt(header == ""), 3)
	w, _ := m.paneSize()
	pane := lipgloss.NewStyle().MaxWidth(w).Render(fill(m.paneView(w, bodyH), bodyH))
	sw := m.sidebarWidth()
	if sw == 0 {
		return header + pane + "\n" + foot
	}
	list := m.stageGlyphs()
	if sw == stageListWidth {
		list = m.stageList()
	}
	sep := strings.TrimSuffix(strings.Repeat(m.st.Divider.Render("│")+"\n", bodyH), "\n")
	body := lipgloss.JoinHorizontal(lipgloss.Top,
		lipgloss.NewStyle().Width(sw).MaxWidth(sw).Render(fill(list, bodyH)), " ", sep, " ", pane)
	return header + body + "\n" + foot
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// stageGlyphs is the collapsed stage list: each stage's mark and number.
func (m *Model) stageGlyphs() string {
	var b strings.Builder
	for i, s := range pipeline.Stages {
		icon, _, style := m.stageMark(s)
		line := style.Render(icon) + fmt.Sprint(i+1)
		if i == m.sel {
			line = m.st.Cursor.Render("▸" + icon + fmt.Sprint(i+1))
		} else {
			line = " " + line
		}
		b.WriteString(line + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

func (m *Model) headerLine() string {
	p := m.check.Post
	subject := safe(firstNonEmpty(strings.Join(strings.Fields(p.Text), " "), p.URL))
	who := ""
	if p.Handle != "" {
		who = " " + safe(p.Handle)
	} else if p.Author != "" {
		who = " " + safe(p.Author)
	}
	var rights []string
	switch {
	case p.Language == "":
	case m.width < wideWidth: // the code alone leaves the post room
		rights = append(rights, p.Language)
	default:
		rights = append(rights, lang.Label(p.Language))
	}
	if !m.check.Cutoff.IsZero() {
		rights = append(rights, "cutoff "+formatWhen(m.check.Cutoff))
	}
	if v := m.verdictLabel(); v != "" {
		rights = append(rights, v)
	}
	right := strings.Join(rights, " · ")
	left := m.st.Title.Render("muse") + m.st.Dim.Render(who+" ·") + " "
	room := m.width - cells(left) - cells(right) - 1
	subject = truncate(subject, max(room, 5), "…")
	gap := max(m.width-cells(left)-cells(subject)-cells(right), 1)
	return left + subject + strings.Repeat(" ", gap) + m.st.Dim.Render(right)
}

// verdictLabel is the post's verdict as the header shows it, "" before
// there is any (no correction yet and none set by the checker, or the
// extractive digest): derived from the check as it is now, so that it
// follows every quote ticked or unticked.
func (m *Model) verdictLabel() string {
	c := m.check
	if c.CheckerVerdict == "" && strings.TrimSpace(c.Correction.Text) == "" {
		return ""
	}
	v := c.Verdicts()
	if v.Post == "" {
		return ""
	}
	s := v.Post.Label()
	if v.By == pipeline.VerdictByChecker {
		s += " (yours)"
	}
	return s
}

// askVerdictOfPost asks the checker's verdict for the post; empty gives
// the verdict back to the evidence.
func (m *Model) askVerdictOfPost() tea.Cmd {
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	if m.check.NoLLM {
		return m.setStatus("a reading list made without a model has no verdict")
	}
	title := "Verdict (supported, refuted, misleading, conflicting, not enough evidence; empty: the evidence's):"
	if n := len(m.check.Claims); n > 1 {
		title = fmt.Sprintf("Verdict of the post, or of claim N as \"N: verdict\" (1…%d); empty: the evidence's:", n)
	}
	return m.ask(title,
		strings.ReplaceAll(string(m.check.CheckerVerdict), "_", " "), func(m *Model, s string) tea.Cmd {
			s = strings.TrimSpace(s)
			claim := 0 // the post
			if mm := claimVerdictRe.FindStringSubmatch(s); mm != nil && len(m.check.Claims) > 1 {
				n, _ := strconv.Atoi(mm[1])
				if n < 1 || n > len(m.check.Claims) {
					return m.setFailure(fmt.Sprintf("there is no claim %d: the post has %d", n, len(m.check.Claims)))
				}
				claim, s = n, strings.TrimSpace(mm[2])
			}
			v, ok := pipeline.ParseVerdict(s)
			if s != "" && !ok {
				return m.setFailure(fmt.Sprintf("%q is not a verdict: use supported, refuted, misleading, conflicting or not enough evidence", safe(s)))
			}
			if claim > 0 {
				m.check.Claims[claim-1].CheckerVerdict = v
				status := fmt.Sprintf("claim %d's verdict is the evidence's", claim)
				if v != "" {
					status = fmt.Sprintf("claim %d's verdict is yours: %s (kept when the check runs again)", claim, v.Label())
				}
				return tea.Batch(m.edited(), m.setStatus(status))
			}
			m.check.CheckerVerdict = v
			status := "the verdict is the evidence's: " + m.check.Verdicts().Post.Label()
			if v != "" {
				status = "the verdict is yours: " + v.Label() + " (kept when the check runs again)"
			}
			return tea.Batch(m.edited(), m.setStatus(status))
		})
}

// claimVerdictRe is "2: refuted", a claim's verdict typed at V.
var claimVerdictRe = regexp.MustCompile(`^(\d{1,2})\s*[:.)]\s*(.*)$`)

// askClaims asks the post's claims, one after another with "|" between
// them: the checker edits, merges, drops or adds one by editing the line;
// then the evidence is found again, since quotes are tied to claims.
func (m *Model) askClaims() tea.Cmd {
	if cmd, ok := m.editable(); !ok {
		return cmd
	}
	if m.check.NoLLM {
		return m.setStatus("a reading list made without a model checks the post whole")
	}
	return m.ask("The post's claims, | between them (one, or none, checks the post whole):",
		strings.Join(m.check.ClaimTexts(), " | "), func(m *Model, s string) tea.Cmd {
			from := m.check.SetClaims(strings.Split(s, "|"))
			n := len(m.check.ClaimTexts())
			status := fmt.Sprintf("%d claims: finding the evidence again…", n)
			if n == 1 {
				status = "the post is checked whole: finding the evidence again…"
			}
			return tea.Batch(m.edited(), m.startRun(from), m.setStatus(status))
		})
}

func (m *Model) stageList() string {
	var b strings.Builder
	for i, s := range pipeline.Stages {
		icon, detail, style := m.stageMark(s)
		list, _ := m.paneName(s)
		name := fmt.Sprintf("%-10s", list)
		line := icon + " " + name + " " + detail
		if i == m.sel {
			line = m.st.Cursor.Render(truncate("▸"+line, stageListWidth, "…"))
		} else {
			line = " " + style.Render(line)
		}
		b.WriteString(truncate(line, stageListWidth, "…") + "\n")
	}
	if u := m.usageBlock(); u != "" {
		b.WriteString("\n" + u + "\n")
	}
	if m.running {
		b.WriteString("\n" + m.st.Dim.Render(wrap("esc stops and keeps what was found", stageListWidth)) + "\n")
	} else if m.stopped {
		b.WriteString("\n" + m.st.Warn.Render(wrap("stopped", stageListWidth)) + "\n")
	}
	if m.runErr != "" {
		b.WriteString("\n" + m.st.Fail.Render(wrap("✗ "+safe(m.runErr), stageListWidth)) + "\n")
	}
	if m.saving() {
		b.WriteString("\n" + m.st.Dim.Render("case "+m.check.ID) + "\n")
	}
	return strings.TrimSuffix(b.String(), "\n")
}

// usageBlock is the model's tokens and cost per stage, as the engine
// accounts them in Usage.ByStage (summed over reruns: what was paid).
func (m *Model) usageBlock() string {
	by := m.check.Usage.ByStage
	var rows []string
	for _, s := range pipeline.Stages {
		u, ok := by[string(s)]
		tok := u.Tokens()
		if !ok || (tok == 0 && u.CostUSD == 0 && u.UnreportedCalls == 0) {
			continue
		}
		cost := shortCost(u.CostUSD)
		switch {
		case u.UnreportedCalls > 0 && u.CostUSD == 0:
			cost = "?" // the server reported no usage: not free
		case u.UnreportedCalls > 0:
			cost += "+?"
		}
		rows = append(rows, fmt.Sprintf("%-10s %4s %6s", s, shortCount(tok), cost))
	}
	if len(rows) == 0 {
		return ""
	}
	return m.st.Dim.Render(fmt.Sprintf("%-10s %4s %6s", "model use", "tok", "cost") + "\n" + strings.Join(rows, "\n"))
}

// shortCount writes a token count in at most 4 columns.
func shortCount(n int) string {
	switch {
	case n < 1000:
		return fmt.Sprint(n)
	case n < 9950:
		return fmt.Sprintf("%.1fk", float64(n)/1000)
	case n < 999500:
		return fmt.Sprintf("%.0fk", float64(n)/1000)
	}
	return fmt.Sprintf("%.1fM", float64(n)/1e6)
}

// shortCost writes dollars in at most 6 columns: $.0006, $1.23, $12.3.
func shortCost(usd float64) string {
	switch {
	case usd <= 0:
		return "$0"
	case usd < 0.99995:
		return "$" + strings.TrimPrefix(fmt.Sprintf("%.4f", usd), "0")
	case usd < 9.995:
		return fmt.Sprintf("$%.2f", usd)
	case usd < 999.5:
		return fmt.Sprintf("$%.0f", usd)
	}
	return fmt.Sprintf("$%.0fk", usd/1000)
}

// stageMark is a stage's icon, its short state, and the style to draw it in.
func (m *Model) stageMark(s pipeline.Stage) (string, string, lipgloss.Style) {
	info := m.stage(s)
	if s == pipeline.StageCorrection && info.State != pipeline.StateRunning {
		info.Count = m.check.CitedPages() // the text as it is now, edits too
	}
	switch info.State {
	case pipeline.StateRunning:
		return m.spin.View(), fmt.Sprintf("%.0fs", m.now().Sub(m.stageStarted(s)).Seconds()), m.st.Running
	case pipeline.StateDone:
		return "✓", fmt.Sprintf("%d %s", info.Count, secs(info.Seconds)), m.st.Ok
	case pipeline.StatePartial:
		return "◐", fmt.Sprintf("%d partial", info.Count), m.st.Warn
	case pipeline.StateSkipped:
		return "–", "skipped", m.st.Dim
	case pipeline.StateFailed:
		if info.Stopped() {
			return "■", "stopped", m.st.Warn
		}
		return "✗", "failed", m.st.Fail
	case pipeline.StateStale:
		return "~", "stale", m.st.Stale
	}
	return "·", "", m.st.Dim
}

func secs(s float64) string {
	if s < 10 {
		return fmt.Sprintf("%.1fs", s)
	}
	return fmt.Sprintf("%.0fs", s)
}

// paneView draws the selected stage's detail pane: title, body, the
// selected row's detail line and the stage's warnings.
func (m *Model) paneView(w, h int) string {
	s := m.selected()
	info := m.stage(s)
	_, name := m.paneName(s)
	title := m.st.Bold.Render(name)
	switch info.State {
	case pipeline.StateFailed:
		if info.Stopped() {
			title += " " + m.st.Warn.Render("— stopped by you; "+rerunHint(s))
		} else {
			title += " " + m.st.Fail.Render(wrap("— "+safe(info.Error), max(w-12, 10)))
		}
	case pipeline.StatePartial:
		title += " " + m.st.Warn.Render(wrap("— "+safe(info.Error), max(w-12, 10)))
	case pipeline.StateStale:
		title += " " + m.st.Stale.Render("— out of date after your edit; "+rerunHint(s))
	case pipeline.StateRunning:
		title += " " + m.st.Running.Render(m.spin.View()+" "+safe(firstNonEmpty(m.stageProgress(s), "working…")))
	}
	if f := m.filterCount(s); f != "" {
		title += " " + m.st.Warn.Render(f)
	}
	title = wrapTitle(title, w)
	var tail []string
	if d := m.detailLine(s); d != "" {
		// A URL wider than the pane breaks after a / or - instead of
		// moving whole to a line of its own.
		tail = append(tail, m.st.Dim.Render(wrapAt("↳ "+d, w, "/-")))
	}
	if warn := m.warningBlock(s, w); warn != "" {
		tail = append(tail, warn)
	}
	tailS := strings.Join(tail, "\n")
	bodyH := max(h-lipgloss.Height(title), 1)
	if tailS != "" {
		bodyH = max(bodyH-lipgloss.Height(tailS), 1)
	}
	var body string
	switch s {
	case pipeline.StageImages:
		body = m.imagesPane(w, bodyH)
	case pipeline.StageQueries:
		body = m.queriesPane(w, bodyH)
	case pipeline.StageSearch:
		body = m.searchPane(w, bodyH)
	case pipeline.StageSources:
		if m.why {
			body = m.whyPane(w, bodyH)
		} else {
			body = m.sourcesPane(w, bodyH)
		}
	case pipeline.StageEvidence:
		body = m.evidencePane(w, bodyH)
	case pipeline.StageCorrection:
		body = m.correctionPane(w, bodyH)
	}
	if tailS != "" {
		body = fill(body, bodyH) + "\n" + tailS
	}
	return title + "\n" + body
}

// wrapTitle keeps a pane title to two lines.
func wrapTitle(title string, w int) string {
	lines := strings.Split(wrap(title, w), "\n")
	if len(lines) > 2 {
		lines = lines[:2]
		lines[1] = truncate(lines[1], w-1, "") + "…"
	}
	return strings.Join(lines, "\n")
}

// detailLine is the selected row's full text — its address, and for a
// source why it stands where it does — which the rows cut at 80 columns.
func (m *Model) detailLine(s pipeline.Stage) string {
	switch s {
	case pipeline.StageSearch, pipeline.StageEvidence, pipeline.StageImages:
		return safe(m.selectedURL())
	case pipeline.StageSources:
		if src := m.currentSource(); src != nil && !m.why {
			return m.sourceDetail(*src)
		}
	case pipeline.StageQueries:
		if i := m.cur(s); i >= 0 {
			return safe(m.check.Queries[i].Text)
		}
	}
	return ""
}

// warningBlock shows the engine's warnings for a stage, the latest two
// in full and a count of the rest (all of them are in the message log).
func (m *Model) warningBlock(s pipeline.Stage, w int) string {
	var ws []string
	for _, x := range m.stageWarnings(s) {
		if s != pipeline.StageCorrection || !slices.Contains(m.check.Correction.Warnings, x) && !strings.HasPrefix(x, "the correction cites ") {
			ws = append(ws, x) // the correction pane lists its own
		}
	}
	if len(ws) == 0 {
		return ""
	}
	var lines []string
	if len(ws) > 2 {
		lines = append(lines, fmt.Sprintf("⚠ %d warnings, the latest (L shows all):", len(ws)))
		ws = ws[len(ws)-2:]
	}
	for _, x := range ws {
		lines = append(lines, truncate("⚠ "+safe(x), w, "…"))
	}
	return m.st.Warn.Render(strings.Join(lines, "\n"))
}

func rerunHint(s pipeline.Stage) string {
	switch s {
	case pipeline.StageSearch, pipeline.StageSources:
		return "s searches again"
	case pipeline.StageEvidence:
		return "r finds evidence again"
	case pipeline.StageCorrection:
		return "w writes again"
	}
	return "rerun to refresh"
}

// statusLeft is the model, elapsed time, tokens and cost. Replies served
// from the response cache cost nothing and are not counted as tokens used.
func (m *Model) statusLeft() string {
	u := m.check.Usage
	var parts []string
	parts = append(parts, firstNonEmpty(m.opts.Model, "no model"))
	switch {
	case m.running:
		parts = append(parts, clock(m.now().Sub(m.runStart).Seconds()))
	case m.lastRun > 0:
		parts = append(parts, clock(m.lastRun.Seconds()))
	}
	if t := u.Tokens(); t > 0 && u.CachedCalls == 0 {
		parts = append(parts, fmt.Sprintf("%s tokens", thousands(t)))
		if u.CachedPromptTokens > 0 {
			// Read from the server's prompt cache: billed at its lower rate.
			parts[len(parts)-1] += fmt.Sprintf(" (%s prompt cached)", thousands(u.CachedPromptTokens))
		}
	} else if t > 0 {
		// The engine counts a replayed reply's tokens; none were used.
		parts = append(parts, fmt.Sprintf("%s tokens, %d of %d replies from the cache (free)", thousands(t), u.CachedCalls, u.LLMCalls))
	}
	switch {
	case u.UnreportedCalls > 0:
		parts = append(parts, u.CostText())
	case u.CostUSD > 0:
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	return strings.Join(parts, " · ")
}

// statusLines is the status bar: the figures and the last message on one
// line when they fit; otherwise the message on a line of its own under
// them, wrapped on up to two lines (the message log, L, keeps it whole).
// Why something failed keeps its room; the figures give way.
func (m *Model) statusLines(left string) string {
	leftR := m.st.StatusBar.Render(truncate(left, m.width, "…"))
	if m.status == "" {
		return leftR
	}
	style := m.st.StatusMsg
	if m.statusFailure {
		style = m.st.Fail
	}
	msg := safe(m.status)
	if cells(left)+3+cells(msg) <= m.width {
		return leftR + m.st.Dim.Render(" │ ") + style.Render(msg)
	}
	lines := strings.Split(wrap(msg, m.width), "\n")
	if len(lines) > 2 {
		lines = lines[:2]
		lines[1] = truncate(lines[1], max(m.width-12, 10), "") + "… (L: all)"
	}
	if m.statusFailure && len(lines) == 2 {
		return style.Render(strings.Join(lines, "\n"))
	}
	return leftR + "\n" + style.Render(strings.Join(lines, "\n"))
}

func clock(s float64) string {
	n := int(s)
	return fmt.Sprintf("%02d:%02d", n/60, n%60)
}

func thousands(n int) string {
	s := fmt.Sprint(n)
	for i := len(s) - 3; i > 0; i -= 3 {
		s = s[:i] + "," + s[i:]
	}
	return s
}

// footer is the status bar (or the open prompt), then the help line.
func (m *Model) footer(keys helpKeys) string {
	var top string
	switch {
	case m.overlay == overlayPrompt:
		top = m.st.Focused.Render(m.prompt.title) + " " + m.prompt.input.View()
		k := m.keys
		keys = helpKeys{always: []key.Binding{k.Accept, k.Cancel}}
	case m.screen == screenCheck:
		top = m.statusLines(m.statusLeft())
	default:
		top = m.statusLines(firstNonEmpty(m.opts.Model, "no model"))
	}
	return top + "\n" + m.keyLine(keys)
}

// keyLine is the footer's key hints, from the same bindings as the help
// screen: the pane's keys first, then the keys that always hold (copy,
// export, help). A pane's keys are never the ones cut: when they and the
// rest do not fit on two lines, the rest gives way to "? more" (the help
// screen lists it), and a pane with many keys takes a third line.
func (m *Model) keyLine(h helpKeys) string {
	items := func(keys []key.Binding) []string {
		var out []string
		for _, kb := range keys {
			if kb.Enabled() {
				out = append(out, m.st.Bold.Render(kb.Help().Key)+" "+m.st.Dim.Render(kb.Help().Desc))
			}
		}
		return out
	}
	pane, always := items(h.short), items(h.always)
	if out, ok := m.flowLine(append(append([]string{}, pane...), always...), 2); ok {
		return out
	}
	more := m.st.Bold.Render(m.keys.Help.Help().Key) + " " + m.st.Dim.Render("more")
	withMore := append(append([]string{}, pane...), more)
	for lines := 2; lines <= 3; lines++ {
		if out, ok := m.flowLine(withMore, lines); ok {
			return out
		}
	}
	// Narrower than any pane's keys: as many as fit, then "… ? more".
	for n := len(pane) - 1; n >= 0; n-- {
		if out, ok := m.flowLine(append(append([]string{}, pane[:n]...), m.st.Dim.Render("…"), more), 3); ok {
			return out
		}
	}
	out, _ := m.flowLine([]string{more}, 1)
	return out
}

// flowLine joins items with • over at most max lines of the width.
func (m *Model) flowLine(items []string, maxLines int) (string, bool) {
	sep := m.st.Dim.Render(" • ")
	var lines []string
	line := ""
	for _, it := range items {
		switch {
		case line == "":
			line = it
		case cells(line+sep+it) <= m.width:
			line += sep + it
		default:
			lines = append(lines, line)
			line = it
		}
	}
	lines = append(lines, line)
	for i := range lines {
		if cells(lines[i]) > m.width {
			return "", false
		}
	}
	return strings.Join(lines, "\n"), len(lines) <= maxLines
}

func (m *Model) onCheckKey(msg tea.KeyMsg) tea.Cmd {
	if m.editing {
		return m.onEditorKey(msg)
	}
	k := m.keys
	switch {
	case key.Matches(msg, k.Help):
		m.overlay, m.helpScroll = overlayHelp, 0
		return nil
	case key.Matches(msg, k.Quit):
		return m.quit()
	case key.Matches(msg, k.Cases):
		return m.openCaseList()
	case m.tooSmall():
		return nil
	case key.Matches(msg, k.NextStage):
		m.moveStage(m.sel + 1)
		return nil
	case key.Matches(msg, k.PrevStage):
		m.moveStage(m.sel - 1)
		return nil
	case key.Matches(msg, k.Jump):
		m.moveStage(int(msg.String()[0] - '1'))
		return nil
	case key.Matches(msg, k.New):
		if m.running {
			return m.setStatus("stop the run first (esc)")
		}
		m.screen = screenCompose
		if m.composeUnsent() {
			// The post typed before esc, not an empty form over it.
			return tea.Batch(m.compose.setFocus(fieldText), m.setStatus("the post you were composing, not checked yet"))
		}
		m.compose = newCompose(m.st, pipeline.Post{}, time.Time{}) // a new post, not the last one's handle and cutoff
		return m.compose.setFocus(fieldText)
	case key.Matches(msg, k.Copy):
		return m.copyCorrection()
	case key.Matches(msg, k.CopyURL):
		return m.copySelectedURL()
	case key.Matches(msg, k.Export):
		return m.askExport()
	case key.Matches(msg, k.Log):
		m.overlay, m.helpScroll = overlayLog, 0
		return nil
	case key.Matches(msg, k.Post):
		m.overlay, m.helpScroll = overlayPost, 0
		return nil
	case key.Matches(msg, k.Filter):
		return m.filterList()
	case key.Matches(msg, k.Sidebar):
		m.sidebarHidden = !m.sidebarHidden
		m.layout()
		return nil
	case key.Matches(msg, k.Zoom):
		m.zoom = !m.zoom
		m.layout()
		return nil
	case key.Matches(msg, k.Language):
		return m.askLanguage()
	case key.Matches(msg, k.Verdict):
		return m.askVerdictOfPost()
	case key.Matches(msg, k.Claims):
		return m.askClaims()
	}
	switch m.selected() {
	case pipeline.StageQueries:
		return m.onQueriesKey(msg)
	case pipeline.StageSearch:
		return m.onSearchKey(msg)
	case pipeline.StageSources:
		return m.onSourcesKey(msg)
	case pipeline.StageEvidence:
		return m.onEvidenceKey(msg)
	case pipeline.StageCorrection:
		return m.onCorrectionKey(msg)
	case pipeline.StageImages:
		return m.onImagesKey(msg)
	}
	return nil
}

// selectedURL is the address of what is selected in the pane shown.
func (m *Model) selectedURL() string {
	switch m.selected() {
	case pipeline.StageImages:
		if i := m.cur(pipeline.StageImages); i >= 0 && i < len(m.check.Images) {
			return m.check.Images[i].Source
		} else if i >= 0 && m.check.Video != nil {
			return m.check.Video.Source
		}
	case pipeline.StageSearch:
		if i := m.cur(pipeline.StageSearch); i >= 0 {
			return m.check.Hits[i].URL
		}
	case pipeline.StageSources:
		if s := m.currentSource(); s != nil {
			return firstNonEmpty(s.FinalURL, s.URL)
		}
	case pipeline.StageEvidence:
		if i := m.cur(pipeline.StageEvidence); i >= 0 {
			return m.check.Evidence[i].SourceURL
		}
	}
	return ""
}

func (m *Model) moveStage(i int) {
	n := len(pipeline.Stages)
	m.sel = (i%n + n) % n
	m.why = false
	if m.running {
		m.userMoved = true
	}
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

// checkHelp is the footer's keys for the pane shown and the full list
// for it; both come from the keymap, as the `?` screen does.
func (m *Model) checkHelp() helpKeys {
	k := m.keys
	if m.editing && m.revising {
		return helpKeys{always: []key.Binding{k.AcceptEdited, k.Copy}}
	}
	if m.editing {
		return helpKeys{always: []key.Binding{k.Save, k.Copy}}
	}
	var pane []key.Binding
	switch m.selected() {
	case pipeline.StageImages:
		if len(m.check.Images) > 0 || m.check.Video != nil {
			pane = []key.Binding{k.EditDescription, k.QueriesAgain, k.Open}
		}
	case pipeline.StageQueries:
		pane = []key.Binding{k.Toggle, k.Edit, k.Add, k.Delete, k.SearchAgain, k.Language}
	case pipeline.StageSearch:
		pane = []key.Binding{k.Open, k.SearchAgain, k.Filter}
	case pipeline.StageSources:
		enter := k.Enter
		if m.why {
			enter = k.Back
		}
		pane = []key.Binding{enter, k.Drop, k.Boost, k.Restore, k.Open, k.SearchAgain, k.EvidenceAgain, k.PasteText}
		if m.opts.Remember != nil {
			pane = append(pane, k.RememberDrop, k.RememberBoost)
		}
		if !m.why {
			pane = append(pane, k.Filter)
		}
	case pipeline.StageEvidence:
		pane = []key.Binding{k.Include, k.Open, k.WriteAgain}
	case pipeline.StageCorrection:
		pane = []key.Binding{k.Copy, k.EditInline, k.EditExternal, k.WriteAgain, k.Versions}
	}
	always := []key.Binding{k.Export, k.Help}
	if m.selected() != pipeline.StageCorrection {
		always = append([]key.Binding{k.Copy}, always...)
	}
	if m.running { // stopping is never hidden while a run goes on
		pane = append([]key.Binding{k.Stop}, pane...)
	}
	return helpKeys{short: pane, always: always}
}

// helpView is every key, grouped as keyGroups lists them: `?` opens it,
// ↑/↓ scroll it when it does not fit, any other key closes it.
func (m *Model) helpView() string {
	var blocks [][]string
	for _, g := range m.keys.keyGroups() {
		block := []string{m.st.Bold.Render(stageTitle(pipeline.Stage(g.title)))}
		for _, kb := range g.keys {
			h := kb.Help()
			desc := strings.Split(wrap(h.Desc, helpColW-13), "\n")
			block = append(block, fmt.Sprintf("%-11s %s", h.Key, m.st.Dim.Render(desc[0])))
			for _, d := range desc[1:] {
				block = append(block, strings.Repeat(" ", 12)+m.st.Dim.Render(d))
			}
		}
		blocks = append(blocks, block)
	}
	return m.scrollView("muse keys", m.columns(blocks), "any other key closes")
}

// columns flows blocks of lines down newspaper columns at least 40 wide,
// as many as the width holds, and returns the lines.
// helpColW is the width of one column of the help screen.
const helpColW = 40

func (m *Model) columns(blocks [][]string) []string {
	const colW = helpColW
	n := clamp(m.width/colW, 1, 4)
	total := 0
	for _, b := range blocks {
		total += len(b) + 1
	}
	perCol := (total + n - 1) / n
	var cols [][]string
	var cur []string
	for _, b := range blocks {
		if len(cur) > 0 && len(cur)+len(b) > perCol && len(cols) < n-1 {
			cols = append(cols, cur)
			cur = nil
		}
		if len(cur) > 0 {
			cur = append(cur, "")
		}
		cur = append(cur, b...)
	}
	cols = append(cols, cur)
	var rendered []string
	for _, c := range cols {
		for i := range c {
			c[i] = truncate(c[i], colW-1, "…")
		}
		rendered = append(rendered, lipgloss.NewStyle().Width(colW).Render(strings.Join(c, "\n")))
	}
	return strings.Split(lipgloss.JoinHorizontal(lipgloss.Top, rendered...), "\n")
}

// scrollView is a full-screen list (help, message log) scrolled with ↑/↓.
func (m *Model) scrollView(title string, lines []string, hint string) string {
	room := max(m.height-3, 3)
	m.helpScroll = clamp(m.helpScroll, 0, max(len(lines)-room, 0))
	end := min(len(lines), m.helpScroll+room)
	if end < len(lines) || m.helpScroll > 0 {
		hint = fmt.Sprintf("%d–%d of %d · ↑/↓ scroll · ", m.helpScroll+1, end, len(lines)) + hint
	}
	body := m.st.Title.Render(title) + m.st.Dim.Render(" · "+hint) + "\n\n" + strings.Join(lines[m.helpScroll:end], "\n")
	return fill(body, m.height)
}

// scrollStep is how many lines a scrolling key moves (ok false: not one).
func (m *Model) scrollStep(msg tea.KeyMsg) (int, bool) {
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		return -1, true
	case key.Matches(msg, k.Down):
		return 1, true
	case key.Matches(msg, k.PageUp):
		return -10, true
	case key.Matches(msg, k.PageDown):
		return 10, true
	}
	return 0, false
}

// onScrollKey scrolls the help or the log; any other key closes it.
func (m *Model) onScrollKey(msg tea.KeyMsg) {
	if n, ok := m.scrollStep(msg); ok {
		m.helpScroll += n
		return
	}
	m.overlay, m.helpBack = m.helpBack, overlayNone
}

// logView is every status message and engine warning of this run of the app,
// whole and wrapped, newest last.
func (m *Model) logView() string {
	var lines []string
	w := min(m.width, readWidth)
	for _, e := range m.log {
		lines = append(lines, strings.Split(wrap(safe(e), w), "\n")...)
	}
	if m.check != nil {
		for _, s := range pipeline.Stages {
			for _, x := range m.stageWarnings(s) {
				lines = append(lines, strings.Split(m.st.Warn.Render(wrap("⚠ "+string(s)+": "+safe(x), w)), "\n")...)
			}
		}
	}
	if len(lines) == 0 {
		lines = []string{m.st.Dim.Render("no messages yet")}
	}
	return m.scrollView("messages", lines, "any other key closes")
}

// postView is the whole post, one key away from every pane: its text,
// who posted it and when, against the cutoff, its address and images.
func (m *Model) postView() string {
	p := m.check.Post
	w := min(m.width, readWidth)
	var lines []string
	add := func(s string) { lines = append(lines, strings.Split(s, "\n")...) }
	if who := strings.TrimSpace(p.Author + " " + p.Handle); who != "" {
		add(m.st.Bold.Render(wrap(safe(who), w)))
	}
	if !p.PostedAt.IsZero() {
		add(m.st.Dim.Render("posted " + formatWhen(p.PostedAt.Local())))
	}
	if !m.check.Cutoff.IsZero() {
		add(m.st.Dim.Render("cutoff " + formatWhen(m.check.Cutoff.Local()) + ": pages published after it are left out"))
	}
	if p.URL != "" {
		add(m.st.Dim.Render(wrap(safe(p.URL), w)))
	}
	ctx := func(kinds ...string) {
		for i, it := range p.Context {
			if !slices.Contains(kinds, it.Kind) {
				continue
			}
			add("")
			add(m.contextItemView(i, w))
		}
	}
	ctx(pipeline.ContextParent) // the thread above, oldest first
	add("")
	add(wrap(safe(p.Text), w))
	ctx(pipeline.ContextQuote, pipeline.ContextLink)
	for _, n := range p.Notes {
		add(m.st.Dim.Render(wrap("! "+safe(n), w)))
	}
	for _, im := range m.check.Images {
		add("")
		add(m.st.Dim.Render(wrap("image "+safe(im.Source)+": "+safe(firstNonEmpty(im.Description, im.AltText, "not described")), w)))
	}
	if tl := m.timeline(); len(tl) > 0 {
		add("")
		add(m.st.Bold.Render("Timeline"))
		for _, l := range tl {
			add(truncate(l, w, "…"))
		}
	}
	hint := "any other key closes"
	if len(p.Context) > 0 {
		hint = "1…" + fmt.Sprint(min(len(p.Context), 9)) + " leaves out or brings back a context item · s queries again · " + hint
	}
	return m.scrollView("the post", lines, hint)
}

// contextItemView is one thing the post points at, marked as context (not
// the author's words), ticked while the queries and the correction see it:
// "[x] 1 context · The post this replies to — City Rumours (@cityrumours), 2024-01-25".
func (m *Model) contextItemView(i, w int) string {
	it := m.check.Post.Context[i]
	box := "[x]"
	if it.Excluded {
		box = "[ ]"
	}
	head := fmt.Sprintf("%s %d context · %s", box, i+1, m.check.Post.ItemLabel(i))
	if who := it.Who(); who != "" {
		head += " — " + who
	}
	if !it.PostedAt.IsZero() {
		head += ", " + it.PostedAt.Local().Format(time.DateOnly)
	}
	body := it.Body()
	if it.TextFrom == "article" {
		body += "\n(read from the article: its card said too little)"
	}
	if it.URL != "" {
		body += "\n" + it.URL
	}
	if it.Excluded {
		body = "left out: the queries and the correction do not see it"
	}
	return m.st.Bold.Render(wrap(safe(head), w)) + "\n" + m.st.Dim.Render(indent(wrap(safe(body), max(w-4, 10)), "    "))
}

// onPostKey answers a key on the whole post: a digit leaves out or brings
// back that context item (the queries and what follows go stale), s makes
// the queries again; ↑/↓ scroll and any other key closes.
func (m *Model) onPostKey(msg tea.KeyMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.ContextItem) && len(m.check.Post.Context) > 0:
		i := int(msg.Runes[0] - '1')
		if i >= len(m.check.Post.Context) {
			return m.setStatus(fmt.Sprintf("the post points at %d items", len(m.check.Post.Context)))
		}
		if cmd, ok := m.editable(); !ok {
			return cmd
		}
		in := m.check.Post.Context[i].Excluded
		if err := m.check.SetContextIncluded(i, in); err != nil {
			return m.setFailure(safe(err.Error()))
		}
		what := "left out"
		if in {
			what = "brought back"
		}
		return tea.Batch(m.edited(), m.setStatus(fmt.Sprintf("context item %d %s — s makes the queries again", i+1, what)))
	case key.Matches(msg, k.QueriesAgain) && len(m.check.Post.Context) > 0:
		m.overlay = overlayNone
		return m.rerun(pipeline.StageQueries)
	}
	m.onScrollKey(msg)
	return nil
}

// timeline lists the posted time, the cutoff and each dated source read,
// oldest first, one line each.
func (m *Model) timeline() []string {
	type event struct {
		at   time.Time
		what string
	}
	var evs []event
	if p := m.check.Post.PostedAt; !p.IsZero() {
		evs = append(evs, event{p, "▶ the post"})
	}
	if c := m.check.Cutoff; !c.IsZero() {
		evs = append(evs, event{c, "✂ the cutoff: pages after it are left out"})
	}
	for _, s := range m.check.Sources {
		if s.Published.IsZero() || s.Dropped {
			continue
		}
		evs = append(evs, event{s.Published, "  " + safe(s.Label()) + " — " + statusWord(s)})
	}
	if len(evs) < 2 {
		return nil
	}
	slices.SortStableFunc(evs, func(a, b event) int { return a.at.Compare(b.at) })
	out := make([]string, len(evs))
	for i, e := range evs {
		out[i] = e.at.Local().Format("2006-01-02 15:04") + "  " + e.what
	}
	return out
}

// boxView centres a small framed message on an otherwise empty screen.
func (m *Model) boxView(title, text string) string {
	w := min(m.width-4, 64)
	box := m.st.Box.Width(w).Render(m.st.Bold.Render(title) + "\n\n" + wrap(text, w-2))
	return lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, box)
}

// fill pads or cuts s to exactly h lines.
func fill(s string, h int) string {
	lines := strings.Split(strings.TrimSuffix(s, "\n"), "\n")
	if len(lines) > h {
		lines = lines[:max(h, 0)]
	}
	for len(lines) < h {
		lines = append(lines, "")
	}
	return strings.Join(lines, "\n")
}

// wrap word-wraps text to w cells at spaces only, so dates and links
// stay whole; a word wider than w is cut into w-wide pieces.
func wrap(s string, w int) string { return wrapAt(s, w, "") }

// wrapAt is wrap where a word wider than w starts on the line it falls on
// and breaks after one of the characters in breaks when it can.
func wrapAt(s string, w int, breaks string) string {
	if w <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, lineW := "", 0
		for _, word := range strings.Fields(para) {
			ww := cells(word)
			if lineW > 0 && lineW+1+ww > w {
				if p := breakPiece(word, w-lineW-1, breaks); ww > w && p != "" {
					line += " " + p
					word = cut(word, cells(p), ww)
					ww = cells(word)
				}
				out = append(out, line)
				line, lineW = "", 0
			}
			for ww > w && lineW == 0 {
				p := breakPiece(word, w, breaks)
				if p == "" {
					p = cut(word, 0, w)
				}
				out = append(out, p)
				word = cut(word, cells(p), ww)
				ww = cells(word)
			}
			if lineW > 0 {
				line += " "
				lineW++
			}
			line += word
			lineW += ww
		}
		out = append(out, line)
	}
	return strings.Join(out, "\n")
}

// breakPiece is the longest start of word that fits in room cells and
// ends with one of breaks ("" when none does).
func breakPiece(word string, room int, breaks string) string {
	if breaks == "" || room <= 0 {
		return ""
	}
	p := cut(word, 0, room)
	if i := strings.LastIndexAny(p, breaks); i > 0 {
		return p[:i+1]
	}
	return ""
}

// window cuts lines to h rows around the cursor line so it stays in view.
func window(lines []string, cursorLine, h int) string {
	if len(lines) <= h {
		return strings.Join(lines, "\n")
	}
	start := clamp(cursorLine-h/2, 0, len(lines)-h)
	end := start + h
	out := append([]string{}, lines[start:end]...)
	if start > 0 {
		out[0] = "↑ more"
	}
	if end < len(lines) {
		out[len(out)-1] = "↓ more"
	}
	return strings.Join(out, "\n")
}
