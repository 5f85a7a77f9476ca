package tui

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/charmbracelet/bubbles/key"
	"github.com/charmbracelet/bubbles/textinput"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// The case list (ctrl+o, from the compose form or a check): the saved
// cases as `muse cases` lists them, those whose cited pages changed since
// they were made first (CHANGED n), then newest first; enter opens one
// here as `muse cases open` does, esc goes back.

// CaseReader reads the saved cases for the case list and a case's last
// recheck (*cases.Store, also when opened read-only).
type CaseReader interface {
	List(ctx context.Context, o cases.ListOptions) ([]cases.Summary, error)
	Get(ctx context.Context, id string) (*pipeline.Check, error)
	Rechecks(ctx context.Context, ids ...string) (map[string]cases.CaseRecheck, error)
}

// ListStamper says cheaply whether the case list may have changed
// (*cases.Store's ListStamp): the list shown is read again only when the
// stamp moved.
type ListStamper interface {
	ListStamp(ctx context.Context) (string, error)
}

// caseListEvery is how often the list shown looks for cases changed
// meanwhile (a recheck by muse worker or muse cases recheck, a save by
// another checker); caseListFull is how many looks at an unmoved stamp
// may pass before the list is read whole anyway.
const (
	caseListEvery = 3 * time.Second
	caseListFull  = 10
)

// caseListLimit is how many cases the list reads: the changed ones and
// the newest; `muse cases --offset` pages through the rest.
const caseListLimit = 500

// caseListState is the case list as last read.
type caseListState struct {
	rows      []cases.Summary
	loaded    bool
	err       string
	cursor    int // index into shown()
	filter    textinput.Model
	filtering bool // typing the filter
	// seq counts the list's openings: a look scheduled for an earlier
	// one is dropped. stamp is the store's ListStamp when the rows were
	// read; looks counts the looks that found it unmoved since.
	seq     int
	stamp   string
	looks   int
	lookErr string // the last look's failure, said once
}

// caseListMsg is the list read (or, unchanged, the stamp found unmoved)
// for the opening seq; refresh: a look while it was shown.
type caseListMsg struct {
	seq       int
	refresh   bool
	unchanged bool
	rows      []cases.Summary
	stamp     string
	err       error
}

// caseListTickMsg is the time for the list shown to look again.
type caseListTickMsg struct{ seq int }

// caseOpenedMsg is a case read from the store to be shown.
type caseOpenedMsg struct {
	c   *pipeline.Check
	err error
}

// caseReader is where the case list reads: CaseList, else the case store
// when it can list.
func (m *Model) caseReader() CaseReader {
	if m.opts.CaseList != nil {
		return m.opts.CaseList
	}
	if r, ok := m.opts.Cases.(CaseReader); ok {
		return r
	}
	return nil
}

// openCaseList shows the case list and reads it.
func (m *Model) openCaseList() tea.Cmd {
	r := m.caseReader()
	if r == nil {
		return m.setStatus("no case store here: checks are not kept as cases, so there is no list of them")
	}
	if m.running {
		return m.setStatus("stop the run first (esc)")
	}
	if m.caseList.filter.Prompt == "" {
		in := textinput.New()
		in.Prompt = "/ "
		in.Placeholder = "words of the post or the correction"
		in.PlaceholderStyle = m.st.Dim
		m.caseList.filter = in
	}
	m.overlay = overlayCases
	m.caseList.seq++
	return readCaseList(m.appCtx, r, m.caseList.seq, false, "")
}

// readCaseList reads the list off the UI loop; given the stamp of the
// rows shown, it reads the list only when the store's stamp moved.
func readCaseList(ctx context.Context, r CaseReader, seq int, refresh bool, shown string) tea.Cmd {
	return func() tea.Msg {
		stamp := ""
		if s, ok := r.(ListStamper); ok {
			var err error
			if stamp, err = s.ListStamp(ctx); err != nil {
				return caseListMsg{seq: seq, refresh: refresh, err: err}
			}
			if refresh && shown != "" && stamp == shown {
				return caseListMsg{seq: seq, refresh: true, unchanged: true, stamp: stamp}
			}
		}
		rows, err := r.List(ctx, cases.ListOptions{Limit: caseListLimit})
		return caseListMsg{seq: seq, refresh: refresh, rows: rows, stamp: stamp, err: err}
	}
}

// caseListShown reports whether the list is on screen, or under the help
// opened from it.
func (m *Model) caseListShown() bool {
	return m.overlay == overlayCases || m.overlay == overlayHelp && m.helpBack == overlayCases
}

// nextCaseListLook schedules the list's next look while it is shown.
func (m *Model) nextCaseListLook() tea.Cmd {
	if !m.caseListShown() {
		return nil
	}
	seq := m.caseList.seq
	return tea.Tick(caseListEvery, func(time.Time) tea.Msg { return caseListTickMsg{seq} })
}

// onCaseListTick looks at the store again while the list is shown: the
// stamp, and the list when it moved (or after caseListFull looks).
func (m *Model) onCaseListTick(msg caseListTickMsg) tea.Cmd {
	l := &m.caseList
	r := m.caseReader()
	if msg.seq != l.seq || !m.caseListShown() || r == nil {
		return nil // closed, or opened again since: that opening looks on its own
	}
	shown := l.stamp
	if l.looks >= caseListFull {
		shown = "" // read whole now and then: a change the stamp cannot see
	}
	return readCaseList(m.appCtx, r, l.seq, true, shown)
}

func (m *Model) onCaseList(msg caseListMsg) tea.Cmd {
	l := &m.caseList
	if msg.seq != l.seq {
		return nil // read for an earlier opening
	}
	next := m.nextCaseListLook()
	switch {
	case msg.refresh && msg.err != nil:
		// The rows shown stay; each failure is said once.
		if e := msg.err.Error(); e != l.lookErr {
			l.lookErr = e
			return tea.Batch(next, m.setFailure("refreshing the case list failed: "+e))
		}
		return next
	case msg.unchanged:
		l.looks++
		l.lookErr = ""
		return next
	}
	l.lookErr = ""
	l.loaded = true
	if msg.err != nil {
		l.err = msg.err.Error()
		return next
	}
	id, was := "", l.cursor
	if sm := m.selectedSummary(); sm != nil {
		id = sm.ID
	}
	l.rows, l.err, l.stamp, l.looks = msg.rows, "", msg.stamp, 0
	l.cursor = -1
	for i, sm := range m.shownCases() { // the cursor stays on its case
		if sm.ID == id || id == "" && !msg.refresh && m.check != nil && sm.ID == m.check.ID {
			l.cursor = i
		}
	}
	if l.cursor < 0 { // its case is gone: the row in its place
		l.cursor = 0
		if msg.refresh {
			l.cursor = clamp(was, 0, len(m.shownCases())-1)
		}
	}
	return next
}

// shownCases are the rows the filter keeps, in the store's order.
func (m *Model) shownCases() []cases.Summary {
	f := strings.TrimSpace(m.caseList.filter.Value())
	if f == "" {
		return m.caseList.rows
	}
	var out []cases.Summary
	for _, sm := range m.caseList.rows {
		if matches(sm.ID+" "+sm.PostExcerpt+" "+sm.CorrectionLine+" "+sm.PostURL, f) {
			out = append(out, sm)
		}
	}
	return out
}

func (m *Model) selectedSummary() *cases.Summary {
	rows := m.shownCases()
	if c := m.caseList.cursor; c >= 0 && c < len(rows) {
		return &rows[c]
	}
	return nil
}

func (m *Model) onCaseListKey(msg tea.KeyMsg) tea.Cmd {
	l := &m.caseList
	k := m.keys
	if l.filtering {
		switch {
		case key.Matches(msg, k.Cancel):
			l.filter.SetValue("")
			l.filtering = false
			l.filter.Blur()
		case key.Matches(msg, k.Accept):
			l.filtering = false
			l.filter.Blur()
		default:
			var cmd tea.Cmd
			l.filter, cmd = l.filter.Update(msg)
			l.cursor = clamp(l.cursor, 0, len(m.shownCases())-1)
			return cmd
		}
		return nil
	}
	n := len(m.shownCases())
	switch {
	case key.Matches(msg, k.Up):
		l.cursor = clamp(l.cursor-1, 0, n-1)
	case key.Matches(msg, k.Down):
		l.cursor = clamp(l.cursor+1, 0, n-1)
	case key.Matches(msg, k.Top):
		l.cursor = 0
	case key.Matches(msg, k.Bottom):
		l.cursor = max(n-1, 0)
	case key.Matches(msg, k.PageUp):
		l.cursor = clamp(l.cursor-m.caseListRoom(), 0, n-1)
	case key.Matches(msg, k.PageDown):
		l.cursor = clamp(l.cursor+m.caseListRoom(), 0, n-1)
	case key.Matches(msg, k.Filter):
		l.filtering = true
		return l.filter.Focus()
	case key.Matches(msg, k.OpenCase):
		return m.openListedCase()
	case key.Matches(msg, k.Back):
		m.overlay = overlayNone
	case key.Matches(msg, k.Help):
		m.overlay, m.helpScroll, m.helpBack = overlayHelp, 0, overlayCases
	case key.Matches(msg, k.Quit):
		m.overlay = overlayNone
		return m.quit()
	}
	return nil
}

// openListedCase reads the selected case to show it. What is open now is
// kept first: a case is saved as it changes; a check kept nowhere is not
// dropped while its correction has changes not copied or exported.
func (m *Model) openListedCase() tea.Cmd {
	sm := m.selectedSummary()
	if sm == nil {
		return nil
	}
	if m.check != nil && m.check.ID == sm.ID && m.screen == screenCheck {
		m.overlay = overlayNone
		return nil
	}
	if m.dirty && !m.saving() && m.screen == screenCheck {
		return m.setStatus("this check is not kept as a case and its correction has changes you have not copied or exported: " +
			m.keys.Copy.Help().Key + " copies it, " + m.keys.Export.Help().Key + " exports it")
	}
	r, ctx, id := m.caseReader(), m.appCtx, sm.ID
	return func() tea.Msg {
		c, err := r.Get(ctx, id)
		return caseOpenedMsg{c, err}
	}
}

// onCaseOpened shows a case read from the list where it was left, as
// `muse cases open` does: nothing runs, the opening goes in its trail,
// a draft left by a crash is offered, its last recheck is read.
func (m *Model) onCaseOpened(msg caseOpenedMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFailure("opening the case failed: " + msg.err.Error())
	}
	if m.running {
		return m.setStatus("stop the run first (esc)")
	}
	var flush tea.Cmd
	if m.saving() && m.screen == screenCheck && (m.casePending || m.caseSaving) {
		flush = m.saveCaseNow() // the case being left, as it is now
	}
	compose, composeDirty := m.compose, m.composeDirty
	m.overlay = overlayNone
	m.resetCheckState()
	m.openCase(msg.c)
	if composeDirty && strings.TrimSpace(compose.text.Value()) != "" {
		m.compose, m.composeDirty = compose, true // the post being composed stays for n
	}
	status := "case " + msg.c.ID + " as it was left; nothing was run"
	if m.opts.Cases == nil {
		status = "read-only: changes to case " + msg.c.ID + " are not kept (the case store cannot be written here)"
	}
	cmds := []tea.Cmd{flush, m.setStatus(status), m.auditCase(cases.ActionOpened, ""), m.loadRecheck()}
	if m.opts.DraftDir != "" {
		cmds = append(cmds, findCaseDraft(m.opts.DraftDir, msg.c))
	}
	return tea.Batch(cmds...)
}

// resetCheckState forgets what belonged to the check shown: cursors,
// filters, the last run, the versions read, the recheck.
func (m *Model) resetCheckState() {
	m.cursor, m.cursorKey, m.filter = map[pipeline.Stage]int{}, map[pipeline.Stage]string{}, map[pipeline.Stage]string{}
	m.why, m.whyScroll, m.scroll, m.zoom = false, 0, 0, false
	m.runErr, m.lastRun, m.stopped = "", 0, false
	m.lastRunSources, m.stream, m.before = nil, "", nil
	m.versions = versionsState{}
	m.recheck = nil
	m.revising = false
	m.dirty, m.caseErr = false, ""
}

// caseListRoom is how many rows the list shows at once.
func (m *Model) caseListRoom() int { return max(m.height-9, 3) }

// caseListView is the list: a row a case (the recheck's mark, the date,
// whether a correction is written, the post on one line), the selected
// case's correction and who made it under it.
func (m *Model) caseListView() string {
	l := &m.caseList
	w := m.width
	st := m.st
	rows := m.shownCases()
	head := st.Title.Render("muse") + st.Dim.Render(" · saved cases, changed evidence first")
	var lines []string
	switch {
	case l.err != "":
		lines = append(lines, st.Fail.Render(wrap("✗ reading the cases failed: "+safe(l.err), w)))
	case !l.loaded:
		lines = append(lines, st.Dim.Render("reading the cases…"))
	case len(l.rows) == 0:
		lines = append(lines, st.Dim.Render("no case is saved yet: every check is kept as one"))
	default:
		count := plural(len(l.rows), "case")
		if len(l.rows) == caseListLimit {
			count = fmt.Sprintf("the first %d cases (muse cases --offset lists the rest)", caseListLimit)
		}
		if len(rows) != len(l.rows) {
			count = fmt.Sprintf("%d of %s match", len(rows), count)
		}
		if n := changedCount(l.rows); n > 0 {
			count += fmt.Sprintf(" · %d with cited pages changed since (muse cases recheck)", n)
		}
		lines = append(lines, st.Dim.Render(truncate(count, w, "…")))
		lines = append(lines, st.Bold.Render(truncate(fmt.Sprintf("  %-9s  %-10s  %-10s  %s", "evidence", "date", "correction", "post"), w, "…")))
		room := m.caseListRoom()
		start := 0
		if l.cursor >= room {
			start = l.cursor - room + 1
		}
		for i := start; i < len(rows) && i < start+room; i++ {
			sm := rows[i]
			corr := "written"
			if sm.CorrectionLine == "" {
				corr = "none yet"
			}
			line := fmt.Sprintf("%s%-9s  %s  %-10s  %s", m.marker(i == l.cursor), sm.EvidenceCell(), sm.CreatedAt.Local().Format("2006-01-02"),
				corr, oneLine(firstNonEmpty(sm.PostExcerpt, sm.PostURL)))
			line = truncate(line, w, "…")
			switch {
			case i == l.cursor:
				line = st.Cursor.Render(line)
			case sm.EvidenceChanged > 0:
				line = st.Warn.Render(line)
			}
			lines = append(lines, line)
		}
		if len(rows) == 0 {
			lines = append(lines, st.Dim.Render("no case matches the filter"))
		}
	}
	body := head + "\n" + strings.Join(lines, "\n") + "\n"
	var tail []string
	k := m.keys
	if sm := m.selectedSummary(); sm != nil {
		tail = append(tail, st.Divider.Render(strings.Repeat("─", w)))
		corr := firstNonEmpty(sm.CorrectionLine, "(no correction yet)")
		tail = append(tail, truncate(oneLine(corr), w, "…"))
		by := sm.CreatedBy
		if sm.UpdatedBy != "" && sm.UpdatedBy != by {
			by += "→" + sm.UpdatedBy
		}
		info := "case " + sm.ID + " · " + sm.CreatedAt.Local().Format("2006-01-02 15:04")
		if by != "" {
			info += " · by " + oneLine(by)
		}
		tail = append(tail, st.Dim.Render(truncate(info, w, "…")))
		switch {
		case sm.EvidenceChanged > 0:
			tail = append(tail, st.Warn.Render(truncate(fmt.Sprintf("Δ recheck %s: %s changed · revision draft: %s in the case",
				sm.RecheckedAt.Local().Format("01-02 15:04"), plural(sm.EvidenceChanged, "cited page"), k.Versions.Help().Key), w, "…")))
		case !sm.RecheckedAt.IsZero():
			tail = append(tail, st.Dim.Render(truncate("recheck "+sm.RecheckedAt.Local().Format("01-02 15:04")+": no cited page changed", w, "…")))
		}
	}
	var foot string
	if l.filtering {
		l.filter.Width = max(w-4, 10)
		foot = l.filter.View() + "\n" + st.Dim.Render(truncate("as you type · enter keeps the filter · esc clears it", w, "…"))
	} else {
		if f := l.filter.Value(); f != "" {
			tail = append(tail, st.Warn.Render(truncate("filter: "+safe(f)+" (/ to change)", w, "…")))
		}
		foot = m.statusLines(m.caseListStatus()) + "\n" + m.keyLine(helpKeys{short: []key.Binding{k.OpenCase, k.Up, k.Down, k.Filter, k.Back}, always: []key.Binding{k.Help}})
	}
	if len(tail) > 0 {
		foot = strings.Join(tail, "\n") + "\n" + foot
	}
	return fill(body, m.height-lipgloss.Height(foot)) + foot
}

// caseListStatus is the status bar's left part on the list: where a
// case would open.
func (m *Model) caseListStatus() string {
	if m.opts.Cases == nil {
		return "read-only: cases open here are not changed"
	}
	return firstNonEmpty(m.opts.Model, "no model")
}

func changedCount(rows []cases.Summary) int {
	n := 0
	for _, sm := range rows {
		if sm.EvidenceChanged > 0 {
			n++
		}
	}
	return n
}
