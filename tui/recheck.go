package tui

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources"
)

// What the last recheck of the case shown found (`muse cases recheck`,
// `muse worker --recheck-every`): a banner over the panes when cited
// pages changed, each such page marked in the Sources pane and in "why
// this source", all read from the recheck's stored rows. The revision
// draft the recheck kept is among the versions (v), where a accepts it as
// `muse cases recheck --accept` does.

type recheckMsg struct {
	id  string
	r   cases.CaseRecheck
	ok  bool // the case was rechecked
	err error
}

// loadRecheck reads the last recheck of the case shown.
func (m *Model) loadRecheck() tea.Cmd {
	r := m.caseReader()
	if r == nil || m.check == nil || m.check.ID == "" {
		return nil
	}
	ctx, id := m.appCtx, m.check.ID
	return func() tea.Msg {
		rs, err := r.Rechecks(ctx, id)
		got, ok := rs[id]
		return recheckMsg{id: id, r: got, ok: ok, err: err}
	}
}

func (m *Model) onRecheck(msg recheckMsg) tea.Cmd {
	if m.check == nil || msg.id != m.check.ID {
		return nil
	}
	m.recheck = nil
	defer m.layout() // the banner takes a line from the panes
	if msg.err != nil {
		return m.setFailure("reading the case's last recheck failed: " + msg.err.Error())
	}
	if msg.ok {
		r := msg.r
		m.recheck = &r
	}
	return nil
}

// recheckOf is the last recheck's reading of the page behind s, nil when
// the recheck did not read it (it is not cited, or there was none).
func (m *Model) recheckOf(s pipeline.Source) *cases.PageRecheck {
	if m.recheck == nil {
		return nil
	}
	keys := []string{sources.Key(s.URL)}
	if s.FinalURL != "" {
		keys = append(keys, sources.Key(s.FinalURL))
	}
	for i := range m.recheck.Pages {
		p := &m.recheck.Pages[i]
		for _, k := range keys {
			if sources.Key(p.URL) == k {
				return p
			}
		}
	}
	return nil
}

// pageChanged reports whether the recheck found the page changed, and the
// change is not yet answered by an accepted revision.
func pageChanged(p *cases.PageRecheck) bool {
	return p != nil && len(p.Reasons) > 0 && !p.Acknowledged
}

// findingLabels is what changed on the page in a few words: "gone (410),
// quote lost".
func findingLabels(p cases.PageRecheck) string {
	var out []string
	for _, f := range p.Findings() {
		if l := f.Label(p.Status); !slices.Contains(out, l) {
			out = append(out, l)
		}
	}
	return strings.Join(out, ", ")
}

// recheckCell is a changed page's status cell in the Sources table:
// "Δ gone (410)".
func recheckCell(p *cases.PageRecheck) string {
	if !pageChanged(p) {
		return ""
	}
	return "Δ " + findingLabels(*p)
}

// hasBanner reports whether the recheck's banner is over the panes.
func (m *Model) hasBanner() bool { return !m.zoom && m.recheck != nil && m.recheck.Changed() }

// recheckBanner is the line over the panes of a case whose cited pages
// changed since it was made; "" otherwise.
func (m *Model) recheckBanner() string {
	r := m.recheck
	if r == nil || !r.Changed() {
		return ""
	}
	var kinds []string
	for _, p := range r.Pages {
		if pageChanged(&p) {
			for _, f := range p.Findings() {
				if l := f.Label(p.Status); !slices.Contains(kinds, l) {
					kinds = append(kinds, l)
				}
			}
		}
	}
	// The count and the key always show; what changed, the pages not
	// read and the date as the width allows.
	count := fmt.Sprintf("%d of %s changed", r.ChangedPages(), plural(len(r.Pages), "cited page"))
	what := " (" + strings.Join(kinds, ", ") + ")"
	unread := ""
	if n := unreadPages(*r); n > 0 {
		unread = fmt.Sprintf(", %d not read now", n)
	}
	when := " " + r.CheckedAt().Local().Format("01-02 15:04")
	hint := " · " + m.keys.Versions.Help().Key + ": revision draft"
	line := ""
	for _, l := range []string{
		"Δ recheck" + when + ": " + count + what + unread + hint,
		"Δ recheck: " + count + what + unread + hint,
		"Δ recheck: " + count + what + hint,
		"Δ " + count + what + hint,
		"Δ " + count + hint,
	} {
		if line = l; cells(l) <= m.width {
			break
		}
	}
	return m.st.Warn.Render(truncate(safe(line), m.width, "…"))
}

func unreadPages(r cases.CaseRecheck) int {
	n := 0
	for _, p := range r.Pages {
		if p.Error != "" {
			n++
		}
	}
	return n
}

// recheckSummary is the Sources pane's lines on the recheck: how many
// cited pages changed or could not be read, and the cited pages that are
// not among the sources (a link of the correction's own).
func (m *Model) recheckSummary(w int) []string {
	r := m.recheck
	if r == nil {
		return nil
	}
	var lines []string
	when := "recheck " + r.CheckedAt().Local().Format("01-02 15:04") + ": "
	if n := r.ChangedPages(); n > 0 {
		line := fmt.Sprintf("Δ %s%s changed — %s on one says what", when, plural(n, "cited page"), m.keys.Enter.Help().Key)
		lines = append(lines, m.st.Warn.Render(truncate(line, w, "…")))
		when = ""
	}
	if n := unreadPages(*r); n > 0 {
		line := fmt.Sprintf("%s%s could not be read now: not counted as a change", when, plural(n, "cited page"))
		lines = append(lines, m.st.Dim.Render(truncate(line, w, "…")))
	}
	for _, p := range r.Pages {
		if !pageChanged(&p) || m.sourceOf(p.URL) {
			continue
		}
		lines = append(lines, m.st.Warn.Render(truncate(safe("Δ "+p.URL+" (cited, not a source): "+strings.Join(p.Reasons, "; ")), w, "…")))
	}
	return lines
}

// sourceOf reports whether u is the page of one of the check's sources.
func (m *Model) sourceOf(u string) bool {
	k := sources.Key(u)
	for _, s := range m.check.Sources {
		if sources.Key(s.URL) == k || s.FinalURL != "" && sources.Key(s.FinalURL) == k {
			return true
		}
	}
	return false
}

// recheckWhy is what "why this source" says of the page's last recheck:
// each change found, or that the page could not be read (not a change),
// or that it was read unchanged.
func (m *Model) recheckWhy(s pipeline.Source) []string {
	p := m.recheckOf(s)
	if p == nil {
		return nil
	}
	var out []string
	for _, f := range p.Findings() {
		line := "Δ " + f.Label(p.Status) + ": " + f.Text
		if p.Acknowledged {
			line += " (the revision draft was accepted)"
		}
		out = append(out, line)
	}
	switch {
	case p.Error != "" && len(p.Reasons) > 0:
		out = append(out, "could not be read now ("+p.Error+"): what an earlier recheck found stands")
	case p.Error != "":
		out = append(out, "could not be read now ("+p.Error+"): not a change of the evidence")
	case len(p.Reasons) == 0:
		out = append(out, "unchanged: the page still says what the case quotes")
	}
	return append([]string{p.CheckedAt.Local().Format("2006-01-02 15:04")}, out...)
}

// revisionAcceptedMsg is the case as the store has it once the revision
// draft was accepted, or why it was not.
type revisionAcceptedMsg struct {
	id  string
	c   *pipeline.Check
	err error
}

// revisionAcceptor is the case store's side of accepting a revision
// (*cases.Store).
type revisionAcceptor interface {
	AcceptRevision(ctx context.Context, id, text string) error
	Get(ctx context.Context, id string) (*pipeline.Check, error)
}

// revisionStore is the store that can accept a revision of the case
// shown, or nil with the status saying why not.
func (m *Model) revisionStore() (revisionAcceptor, tea.Cmd) {
	acc, ok := m.opts.Cases.(revisionAcceptor)
	if !ok || !m.saving() {
		return nil, m.setStatus("read-only: the revision draft cannot be accepted here; muse cases recheck --accept " + m.check.ID + " where the case store can be written")
	}
	if !m.revisionPending() {
		return nil, m.setStatus("no change of the cited pages waits for a revision: nothing to accept")
	}
	return acc, nil
}

// acceptRevision makes the recheck's revision draft (text "") or the
// checker's own revision (text) the case's correction through the store
// (cases.Store.AcceptRevision, as `muse cases recheck --accept` does, with
// its guards and its entry in the trail), after saving the case as it
// stands here, then shows the case as the store has it.
func (m *Model) acceptRevision(text string) tea.Cmd {
	acc, refused := m.revisionStore()
	if acc == nil {
		return refused
	}
	m.overlay = overlayNone
	m.revision = text // in the draft until the store has it
	m.accepting = true
	m.caseSaving = true
	m.casePending = false
	m.caseSeq++
	seq, c, st, saver, ctx, id := m.caseSeq, cloneCheck(m.check), m.opts.Cases, m.saver, m.appCtx, m.check.ID
	return func() tea.Msg {
		var conflict *cases.ConflictError
		if err := saver.save(ctx, st, seq, c); err != nil && !errors.As(err, &conflict) {
			return revisionAcceptedMsg{id: id, err: err}
		}
		if err := acc.AcceptRevision(ctx, id, text); err != nil {
			return revisionAcceptedMsg{id: id, err: err}
		}
		got, err := acc.Get(ctx, id)
		return revisionAcceptedMsg{id: id, c: got, err: err}
	}
}

func (m *Model) onRevisionAccepted(msg revisionAcceptedMsg) tea.Cmd {
	m.accepting, m.caseSaving = false, false
	text := m.revision
	m.revision = ""
	if msg.err != nil {
		var cmds []tea.Cmd
		if m.casePending {
			cmds = append(cmds, m.saveCaseNow())
		}
		what := "the revision draft"
		if text != "" {
			what = "your revision"
			if m.check != nil && m.check.ID == msg.id && !m.editing && m.overlay == overlayNone {
				// Back in the editor: nothing typed is lost.
				m.revising = true
				cmds = append(cmds, m.startInlineEdit())
				m.editor.SetValue(text)
				what += " (back in the editor: esc keeps it as the correction, not accepted)"
			}
		}
		return tea.Batch(append(cmds, m.setFailure("accepting "+what+" failed: "+msg.err.Error()))...)
	}
	m.casePending = false
	if m.check == nil || m.check.ID != msg.id {
		return nil
	}
	msg.c.MarkStopped(nil)
	m.check = msg.c
	m.dirty = false
	m.sel = stageIndex(pipeline.StageCorrection)
	status := "the revision draft is the correction now; the change of the cited pages is marked accepted"
	if text != "" {
		status = "your revision is the correction now; the change of the cited pages is marked accepted"
	}
	// The draft now matches the case; the support map judges the new text.
	return tea.Batch(m.setStatus(status), m.loadRecheck(), m.scheduleDraft(), m.scheduleSupport())
}
