package tui

import (
	"fmt"
	"regexp"
	"strings"

	"github.com/charmbracelet/bubbles/key"
	tea "github.com/charmbracelet/bubbletea"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/sergi/go-diff/diffmatchpatch"

	"github.com/musecheck/muse/pipeline/cases"
)

// versionsState is the list of the correction's versions (`v`): every
// draft the case keeps, the model's and the person's, oldest first.
type versionsState struct {
	list   []cases.Draft
	cursor int
	mark   int // the version the selected one is compared with (-1: none)
	diff   string
}

type versionsMsg struct {
	list []cases.Draft
	err  error
}

// openVersions reads the case's versions of the correction.
func (m *Model) openVersions() tea.Cmd {
	if !m.saving() {
		return m.setStatus("versions are kept with cases: this check is not kept as a case")
	}
	st, ctx, id := m.opts.Cases, m.appCtx, m.check.ID
	return func() tea.Msg {
		list, err := st.Drafts(ctx, id)
		return versionsMsg{list, err}
	}
}

func (m *Model) onVersions(msg versionsMsg) tea.Cmd {
	if msg.err != nil {
		return m.setFailure("reading the versions failed: " + msg.err.Error())
	}
	if len(msg.list) == 0 {
		return m.setStatus("no version of the correction is kept yet")
	}
	m.versions = versionsState{list: msg.list, cursor: len(msg.list) - 1, mark: -1}
	if i := cases.LatestRevision(msg.list); i >= 0 && m.revisionPending() {
		// The recheck's revision draft, compared with the correction now.
		m.versions.cursor = i
	} else {
		// The model's latest draft is the natural thing to compare with.
		for i := len(msg.list) - 1; i >= 0; i-- {
			if !msg.list[i].Edited && i != m.versions.cursor {
				m.versions.mark = i
				break
			}
		}
	}
	m.overlay = overlayVersions
	m.helpScroll = 0
	return nil
}

func (m *Model) onVersionsKey(msg tea.KeyMsg) tea.Cmd {
	v := &m.versions
	k := m.keys
	switch {
	case key.Matches(msg, k.Up):
		v.cursor, v.diff = clamp(v.cursor-1, 0, len(v.list)-1), ""
	case key.Matches(msg, k.Down):
		v.cursor, v.diff = clamp(v.cursor+1, 0, len(v.list)-1), ""
	case key.Matches(msg, k.Mark):
		v.mark, v.diff = v.cursor, ""
	case key.Matches(msg, k.Diff):
		other := m.check.Correction.Text
		if v.mark >= 0 && v.mark != v.cursor {
			other = v.list[v.mark].Text
		}
		v.diff = wordDiff(other, v.list[v.cursor].Text)
	case key.Matches(msg, k.RestoreVersion):
		d := v.list[v.cursor]
		m.overlay = overlayNone
		if d.Text == m.check.Correction.Text {
			return m.setStatus("that version is the correction already")
		}
		m.check.SetCorrection(d.Text, d.Edited)
		m.dirty = true
		return tea.Batch(m.setStatus(fmt.Sprintf("restored version %d of the correction", v.cursor+1)),
			m.scheduleDraft(), m.saveCase(), m.saveVersion(d.Text, d.Edited))
	case key.Matches(msg, k.AcceptRevision) && m.revisionSelected():
		return m.acceptRevision("")
	case key.Matches(msg, k.ReviseVersion):
		return m.reviseVersion(v.list[v.cursor].Text, fmt.Sprintf("version %d", v.cursor+1))
	case key.Matches(msg, k.Close):
		m.overlay = overlayNone
	}
	return nil
}

// reviseVersion opens the editor on text (the selected version: the
// recheck's draft, the correction) as the checker's revision of a case
// whose cited pages changed; ctrl+s accepts it through the store as a
// accepts the draft, esc keeps it as the correction, not accepted.
func (m *Model) reviseVersion(text, which string) tea.Cmd {
	if acc, refused := m.revisionStore(); acc == nil {
		return refused
	}
	m.overlay = overlayNone
	m.revising = true
	cmd := m.startInlineEdit()
	m.editor.SetValue(safe(text))
	return tea.Batch(cmd, m.scheduleDraft(), m.scheduleSupport(), m.setStatus("editing "+which+" as your revision"))
}

// revisionPending reports whether the case's last recheck found cited
// pages changed and no revision was accepted since.
func (m *Model) revisionPending() bool { return m.recheck != nil && m.recheck.Changed() }

// revisionSelected reports whether the selected version is the latest
// revision draft and it waits to be accepted.
func (m *Model) revisionSelected() bool {
	v := m.versions
	return m.revisionPending() && len(v.list) > 0 && cases.LatestRevision(v.list) == v.cursor
}

func (m *Model) versionsView() string {
	v := m.versions
	w := min(m.width, readWidth)
	var lines []string
	for i, d := range v.list {
		who := "model"
		switch {
		case d.Edited:
			who = "yours"
		case d.IsRevision():
			who = "recheck"
		}
		mark := "  "
		if i == v.mark {
			mark = "◆ "
		}
		// Each row shows what sets it apart: a restore names the version it
		// brought back; other rows start where they differ from the one
		// before, not with the opening every version shares.
		what := strings.Join(strings.Fields(safe(d.Text)), " ")
		if j := sameAs(v.list[:i], d.Text); j >= 0 && v.list[j].IsRevision() && d.Edited {
			what = fmt.Sprintf("= version %d, the revision accepted", j+1)
		} else if j >= 0 {
			what = fmt.Sprintf("= version %d, restored", j+1)
		} else if i > 0 {
			what = fromFirstChange(v.list[i-1].Text, d.Text)
		}
		line := fmt.Sprintf("%s%s%2d  %s  %-7s  %3d ch  %s", m.marker(i == v.cursor), mark, i+1,
			d.Time.Local().Format("01-02 15:04"), who, export.NoteLength(d.Text), what)
		line = truncate(line, w, "…")
		if i == v.cursor {
			line = m.st.Cursor.Render(line)
		}
		lines = append(lines, line)
	}
	k := m.keys
	switch {
	case m.revisionSelected():
		lines = append(lines, "", m.st.Warn.Render(wrap("This is the revision draft the recheck kept: cited pages changed since the correction was written. "+
			m.hints(k.AcceptRevision)+" (as muse cases recheck --accept does, noted in the case's trail); "+
			k.ReviseVersion.Help().Key+" edits it first, "+k.AcceptEdited.Help().Key+" then accepts your text.", w)))
	case m.revisionPending():
		lines = append(lines, "", m.st.Warn.Render(wrap("Cited pages changed since the correction was written: "+m.hints(k.ReviseVersion)+".", w)))
	}
	lines = append(lines, "", m.st.Dim.Render(wrap("◆ marks the version d compares with (the correction now when none is marked) · "+m.hints(k.Mark, k.Diff, k.RestoreVersion, k.Close), w)))
	if v.diff != "" {
		lines = append(lines, "", m.st.Bold.Render("[-removed-] {+added+}, from ◆ to the selected version"))
		lines = append(lines, strings.Split(m.colourDiff(wrap(v.diff, w)), "\n")...)
	} else if len(v.list) > 0 {
		lines = append(lines, "", m.st.Bold.Render(fmt.Sprintf("Version %d", v.cursor+1)))
		lines = append(lines, strings.Split(wrap(safe(v.list[v.cursor].Text), w), "\n")...)
	}
	return m.scrollView("versions of the correction", lines, "esc closes")
}

// wordDiff shows, word by word, how b differs from a: [-removed-] and
// {+added+}, readable without colour; b's line breaks are kept.
func wordDiff(a, b string) string {
	dmp := diffmatchpatch.New()
	ca, cb, words := dmp.DiffLinesToChars(wordLines(safe(a)), wordLines(safe(b)))
	diffs := dmp.DiffCharsToLines(dmp.DiffMain(ca, cb, false), words)
	var out strings.Builder
	for _, d := range diffs {
		text := strings.ReplaceAll(strings.ReplaceAll(d.Text, "\n", ""), lineBreak, "\n")
		switch d.Type {
		case diffmatchpatch.DiffDelete:
			out.WriteString("[-" + strings.TrimSpace(strings.ReplaceAll(text, "\n", " ")) + "-] ")
		case diffmatchpatch.DiffInsert:
			body := strings.TrimLeft(text, " \n")
			out.WriteString(text[:len(text)-len(body)] + "{+" + strings.TrimSpace(body) + "+} ") // line breaks before it stay outside
		default:
			out.WriteString(text)
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(out.String(), " \n", "\n"))
}

// lineBreak stands for a line break among the words of wordLines.
const lineBreak = "\u2028"

// wordLines puts each word (with the space after it) on a line of its own,
// so the line diff compares words; a line break is a word of its own.
func wordLines(s string) string {
	var b strings.Builder
	for i, line := range strings.Split(s, "\n") {
		if i > 0 {
			b.WriteString(lineBreak + "\n")
		}
		for _, w := range strings.Fields(line) {
			b.WriteString(w + " \n")
		}
	}
	return b.String()
}

// colourDiff colours a wordDiff's removals and additions; the markers stay,
// so it reads the same without colour.
func (m *Model) colourDiff(s string) string {
	return diffMark.ReplaceAllStringFunc(s, func(x string) string {
		if strings.HasPrefix(x, "[-") {
			return m.st.Fail.Render(x)
		}
		return m.st.Ok.Render(x)
	})
}

var diffMark = regexp.MustCompile(`(?s)\[-.*?-\]|\{\+.*?\+\}`)

// sameAs is the earliest of earlier holding text, -1 when none does.
func sameAs(earlier []cases.Draft, text string) int {
	for j, d := range earlier {
		if d.Text == text {
			return j
		}
	}
	return -1
}

// fromFirstChange is b from a little before its first word that differs
// from a ("…" before it), or b whole when they differ from the start.
func fromFirstChange(a, b string) string {
	aw, bw := strings.Fields(safe(a)), strings.Fields(safe(b))
	i := 0
	for i < len(aw) && i < len(bw) && aw[i] == bw[i] {
		i++
	}
	if i <= 3 {
		return strings.Join(bw, " ")
	}
	return "…" + strings.Join(bw[i-2:], " ")
}
