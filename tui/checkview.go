package tui

import (
	"fmt"
	"strings"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"
	"github.com/charmbracelet/x/ansi"

	"github.com/musecheck/muse/pipeline"
)

const stageListWidth = 22

var stageTitles = map[pipeline.Stage]string{
	pipeline.StageImages:     "Images",
	pipeline.StageQueries:    "Queries",
	pipeline.StageSearch:     "Search",
	pipeline.StageSources:    "Sources",
	pipeline.StageEvidence:   "Evidence",
	pipeline.StageCorrection: "Correction",
}

func (m *Model) selected() pipeline.Stage { return pipeline.Stages[m.sel] }

// paneSize is the detail pane's inner width and height.
func (m *Model) paneSize() (int, int) {
	w := max(m.width-stageListWidth-3, 20)
	h := max(m.height-4, 3) // header, status bar, help line, pane title
	return w, h
}

// layout resizes the widgets that keep their own size.
func (m *Model) layout() {
	w, h := m.paneSize()
	m.editor.SetWidth(w)
	m.editor.SetHeight(max(h-2, 3))
	m.help.Width = m.width
	if m.overlay == overlayPrompt {
		m.prompt.input.Width = max(m.width-lipgloss.Width(m.prompt.title)-4, 10)
	}
}

func (m *Model) checkView() string {
	header := m.headerLine()
	foot := m.footer(m.checkHelp())
	bodyH := max(m.height-lipgloss.Height(header)-lipgloss.Height(foot), 3)
	w, _ := m.paneSize()
	list := fill(m.stageList(), bodyH)
	sep := fill(strings.TrimSuffix(strings.Repeat(m.st.Divider.Render("│")+"\n", bodyH), "\n"), bodyH)
	pane := fill(m.paneView(w, bodyH), bodyH)
	body := lipgloss.JoinHorizontal(lipgloss.Top,
		lipgloss.NewStyle().Width(stageListWidth).MaxWidth(stageListWidth).Render(list), " ", sep, " ",
		lipgloss.NewStyle().MaxWidth(w).Render(pane))
	return header + "\n" + body + "\n" + foot
}

func (m *Model) headerLine() string {
	p := m.check.Post
	subject := firstNonEmpty(strings.Join(strings.Fields(p.Text), " "), p.URL)
	who := ""
	if p.Handle != "" {
		who = " " + p.Handle
	} else if p.Author != "" {
		who = " " + p.Author
	}
	right := ""
	if !m.check.Cutoff.IsZero() {
		right = "cutoff " + formatWhen(m.check.Cutoff)
	}
	left := m.st.Title.Render("muse") + m.st.Dim.Render(who+" ·") + " "
	room := m.width - lipgloss.Width(left) - lipgloss.Width(right) - 1
	subject = ansi.Truncate(subject, max(room, 5), "…")
	gap := max(m.width-lipgloss.Width(left)-lipgloss.Width(subject)-lipgloss.Width(right), 1)
	return left + subject + strings.Repeat(" ", gap) + m.st.Dim.Render(right)
}

func (m *Model) stageList() string {
	var b strings.Builder
	for i, s := range pipeline.Stages {
		sv := m.stages[s]
		icon, detail, style := m.stageMark(sv)
		name := fmt.Sprintf("%-10s", strings.ToLower(stageTitles[s]))
		line := icon + " " + name + " " + detail
		if i == m.sel {
			line = m.st.Cursor.Render(ansi.Truncate("▸"+line, stageListWidth, "…"))
		} else {
			line = " " + style.Render(line)
		}
		b.WriteString(ansi.Truncate(line, stageListWidth, "…") + "\n")
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
		b.WriteString("\n" + m.st.Fail.Render(wrap("✗ "+m.runErr, stageListWidth)) + "\n")
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
		tok := u.PromptTokens + u.CompletionTokens
		if !ok || (tok == 0 && u.CostUSD == 0) {
			continue
		}
		rows = append(rows, fmt.Sprintf("%-10s %4s %6s", s, shortCount(tok), shortCost(u.CostUSD)))
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
func (m *Model) stageMark(sv *stageView) (string, string, lipgloss.Style) {
	switch sv.state {
	case pipeline.StateRunning:
		return m.spin.View(), fmt.Sprintf("%.0fs", m.now().Sub(sv.started).Seconds()), m.st.Running
	case pipeline.StateDone:
		return "✓", fmt.Sprintf("%d %s", sv.count, secs(sv.seconds)), m.st.Ok
	case pipeline.StateSkipped:
		return "–", "skipped", m.st.Dim
	case pipeline.StateFailed:
		if sv.err == "stopped" {
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

// paneView draws the selected stage's detail pane, title first.
func (m *Model) paneView(w, h int) string {
	s := m.selected()
	sv := m.stages[s]
	title := m.st.Bold.Render(stageTitles[s])
	switch sv.state {
	case pipeline.StateFailed:
		title += " " + m.st.Fail.Render(wrap("— "+sv.err, max(w-12, 10)))
	case pipeline.StateStale:
		title += " " + m.st.Stale.Render("— out of date after your edit; "+rerunHint(s))
	case pipeline.StateRunning:
		title += " " + m.st.Running.Render(m.spin.View()+" "+firstNonEmpty(m.progress[s], "working…"))
	}
	title = ansi.Truncate(title, w, "…")
	warn := m.warningBlock(s, w)
	bodyH := max(h-lipgloss.Height(title)-lineCount(warn), 1)
	if warn == "" {
		bodyH = max(h-lipgloss.Height(title), 1)
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
	if warn != "" {
		body = fill(body, bodyH) + "\n" + warn
	}
	return title + "\n" + body
}

// warningBlock shows the engine's warnings for a stage, the latest two
// in full and a count of the rest.
func (m *Model) warningBlock(s pipeline.Stage, w int) string {
	ws := m.warnings[s]
	if len(ws) == 0 {
		return ""
	}
	var lines []string
	if len(ws) > 2 {
		lines = append(lines, fmt.Sprintf("⚠ %d warnings, the latest:", len(ws)))
		ws = ws[len(ws)-2:]
	}
	for _, x := range ws {
		lines = append(lines, ansi.Truncate("⚠ "+x, w, "…"))
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

// statusLine shows model, elapsed time, tokens, cost and the last message.
func (m *Model) statusLine() string {
	u := m.check.Usage
	var parts []string
	parts = append(parts, firstNonEmpty(m.opts.Model, "no model"))
	switch {
	case m.running:
		parts = append(parts, clock(m.now().Sub(m.runStart).Seconds()))
	case m.lastRun > 0:
		parts = append(parts, clock(m.lastRun.Seconds()))
	}
	if t := u.PromptTokens + u.CompletionTokens; t > 0 {
		parts = append(parts, fmt.Sprintf("%s tokens", thousands(t)))
	}
	if u.CostUSD > 0 {
		parts = append(parts, fmt.Sprintf("$%.4f", u.CostUSD))
	}
	left := m.st.StatusBar.Render(strings.Join(parts, " · "))
	if m.status == "" {
		return ansi.Truncate(left, m.width, "…")
	}
	if !m.statusFailure {
		return ansi.Truncate(left+m.st.Dim.Render(" │ ")+m.st.StatusMsg.Render(m.status), m.width, "…")
	}
	// Why something failed keeps its room; the model and cost give way.
	msg := m.st.Fail.Render(ansi.Truncate(m.status, m.width, "…"))
	room := m.width - lipgloss.Width(msg) - 3
	if room < 12 {
		return msg
	}
	return ansi.Truncate(left, room, "…") + m.st.Dim.Render(" │ ") + msg
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

// footer is the status bar (on the check screen) or the prompt, then the help line.
func (m *Model) footer(keys helpKeys) string {
	var top string
	switch {
	case m.overlay == overlayPrompt:
		top = m.st.Focused.Render(m.prompt.title) + " " + m.prompt.input.View()
	case m.screen == screenCheck:
		top = m.statusLine()
	default:
		top = m.st.StatusBar.Render(firstNonEmpty(m.opts.Model, "no model")) + m.statusSuffix()
	}
	m.help.Width = m.width
	// help adds a binding that overflows when not even its ellipsis fits
	return top + "\n" + ansi.Truncate(m.help.View(keys), m.width, "…")
}

func (m *Model) statusSuffix() string {
	if m.status == "" {
		return ""
	}
	return m.st.Dim.Render(" │ ") + m.st.StatusMsg.Render(m.status)
}

func (m *Model) onCheckKey(msg tea.KeyMsg) tea.Cmd {
	if m.editing {
		return m.onEditorKey(msg)
	}
	k := msg.String()
	switch k {
	case "?":
		m.overlay = overlayHelp
		return nil
	case "q":
		return m.quit()
	case "tab", "right", "l":
		m.moveStage(m.sel + 1)
		return nil
	case "shift+tab", "left", "h":
		m.moveStage(m.sel - 1)
		return nil
	case "1", "2", "3", "4", "5", "6":
		m.moveStage(int(k[0] - '1'))
		return nil
	case "n":
		if m.running {
			return m.setStatus("stop the run first (esc)")
		}
		m.screen = screenCompose
		return m.compose.setFocus(fieldText)
	case "y", "c":
		return m.copyCorrection()
	case "x":
		return m.askExport()
	}
	switch m.selected() {
	case pipeline.StageQueries:
		return m.onQueriesKey(k)
	case pipeline.StageSearch:
		return m.onSearchKey(k)
	case pipeline.StageSources:
		return m.onSourcesKey(k)
	case pipeline.StageEvidence:
		return m.onEvidenceKey(k)
	case pipeline.StageCorrection:
		return m.onCorrectionKey(k)
	case pipeline.StageImages:
		return m.onImagesKey(k)
	}
	return nil
}

func (m *Model) moveStage(i int) {
	n := len(pipeline.Stages)
	m.sel = (i%n + n) % n
	m.why = false
	if m.running {
		m.userMoved = true
	}
}

// moveCursor moves the selected stage's list cursor within n items.
func (m *Model) moveCursor(k string, n int) bool {
	s := m.selected()
	c := m.cursor[s]
	switch k {
	case "up", "k":
		c--
	case "down", "j":
		c++
	case "home", "g":
		c = 0
	case "end", "G":
		c = n - 1
	case "pgup":
		c -= 10
	case "pgdown":
		c += 10
	default:
		return false
	}
	m.cursor[s] = clamp(c, 0, n-1)
	return true
}

func clamp(v, lo, hi int) int {
	if hi < lo {
		return lo
	}
	return min(max(v, lo), hi)
}

func (m *Model) checkHelp() helpKeys {
	k := m.keys
	nav := []keyBinding{k.NextStage, k.PrevStage, k.Up, k.Down}
	var pane []keyBinding
	switch m.selected() {
	case pipeline.StageImages:
		if len(m.check.Images) > 0 {
			pane = []keyBinding{k.EditDescription, k.QueriesAgain, k.Open}
		}
	case pipeline.StageQueries:
		pane = []keyBinding{k.Toggle, k.Edit, k.Add, k.Delete, k.SearchAgain}
	case pipeline.StageSearch:
		pane = []keyBinding{k.Open, k.SearchAgain}
	case pipeline.StageSources:
		enter := k.Enter
		if m.why {
			enter = k.Back
		}
		pane = []keyBinding{enter, k.Drop, k.Boost, k.Restore, k.Open, k.SearchAgain, k.EvidenceAgain}
		if m.opts.Remember != nil {
			pane = append(pane, k.RememberDrop, k.RememberBoost)
		}
	case pipeline.StageEvidence:
		pane = []keyBinding{k.Toggle, k.Open, k.WriteAgain}
	case pipeline.StageCorrection:
		if m.editing {
			return helpKeys{short: []keyBinding{k.Save}, full: [][]keyBinding{{k.Save}}}
		}
		pane = []keyBinding{k.EditInline, k.EditExternal, k.WriteAgain}
	}
	global := []keyBinding{k.Copy, k.Export, k.New, k.Quit, k.Help}
	if m.running {
		global = append([]keyBinding{k.Stop}, global...)
	}
	short := append(append([]keyBinding{}, pane...), k.Copy, k.Help)
	if m.running {
		short = append([]keyBinding{k.Stop}, short...)
	}
	return helpKeys{short: short, full: [][]keyBinding{nav, pane, global}}
}

// helpView is every key, grouped: `?` opens it, any key closes it. Groups
// flow down columns like a newspaper so all of them fit at 80×24.
func (m *Model) helpView() string {
	k := m.keys
	nb := newBinding
	groups := []struct {
		title string
		keys  []keyBinding
	}{
		{"Everywhere", []keyBinding{k.Stop, k.Quit, k.Help, k.Copy, k.Export, k.New}},
		{"Compose", []keyBinding{nb("tab/S-tab", "next/prev field"), k.Submit}},
		{"Stages", []keyBinding{nb("tab/S-tab", "next/prev stage"), nb("←/→ 1…6", "pick a stage"), nb("↑/↓ j/k", "move")}},
		{"Images", []keyBinding{k.EditDescription, k.QueriesAgain, k.Open}},
		{"Queries", []keyBinding{k.Toggle, k.Edit, k.Add, k.Delete, k.SearchAgain}},
		{"Sources", []keyBinding{k.Enter, k.Drop, k.Boost, k.Restore, k.Open, nb("D/B", "drop/boost for newsroom"), k.SearchAgain, k.EvidenceAgain}},
		{"Evidence", []keyBinding{k.Toggle, k.Open, k.WriteAgain}},
		{"Correction", []keyBinding{k.EditInline, k.EditExternal, nb("ctrl+s/esc", "finish editing"), k.WriteAgain}},
	}
	colW := 38
	if m.width < 120 {
		colW = max(m.width/3, 24)
	}
	avail := max(m.height-3, 8)
	var cols []string
	var cur []string
	for _, g := range groups {
		block := []string{m.st.Bold.Render(g.title)}
		for _, kb := range g.keys {
			h := kb.Help()
			block = append(block, ansi.Truncate(fmt.Sprintf("%-10s %s", h.Key, m.st.Dim.Render(h.Desc)), colW-1, "…"))
		}
		if len(cur) > 0 && len(cur)+1+len(block) > avail {
			cols = append(cols, lipgloss.NewStyle().Width(colW).Render(strings.Join(cur, "\n")))
			cur = nil
		}
		if len(cur) > 0 {
			cur = append(cur, "")
		}
		cur = append(cur, block...)
	}
	cols = append(cols, lipgloss.NewStyle().Width(colW).Render(strings.Join(cur, "\n")))
	body := m.st.Title.Render("muse keys") + m.st.Dim.Render(" · any key closes") + "\n\n" + lipgloss.JoinHorizontal(lipgloss.Top, cols...)
	return fill(body, m.height)
}

func key1to6() keyBinding {
	return newBinding("1…6", "jump to a stage", "1")
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

// wrap word-wraps text to w columns at spaces only, so dates and links
// stay whole; a word wider than w is cut into w-wide pieces.
func wrap(s string, w int) string {
	if w <= 0 {
		return s
	}
	var out []string
	for _, para := range strings.Split(s, "\n") {
		line, lineW := "", 0
		for _, word := range strings.Fields(para) {
			ww := ansi.StringWidth(word)
			if lineW > 0 && lineW+1+ww > w {
				out = append(out, line)
				line, lineW = "", 0
			}
			for ww > w && lineW == 0 {
				out = append(out, ansi.Cut(word, 0, w))
				word = ansi.Cut(word, w, ww)
				ww = ansi.StringWidth(word)
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
