package tui

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/lipgloss"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources/lang"
)

// exportChoice is one line of the export menu. The formats themselves are
// package export's, which `muse cases export` renders too, so a file
// exported here is byte for byte what the CLI writes.
type exportChoice struct {
	format, key, ext, what string
}

var exportDetails = map[string]exportChoice{
	"md":          {key: "m", ext: ".md", what: "Markdown for editors: correction, quotes, sources, post"},
	"json":        {key: "j", ext: ".json", what: "the whole check as JSON"},
	"note":        {key: "n", ext: ".note.txt", what: "Community Notes note: ≤280 characters, each link 1"},
	"note-json":   {key: "o", ext: ".note.json", what: "the note as X's API takes it: classification, tags, pre-flight"},
	"claimreview": {key: "c", ext: ".claimreview.json", what: "ClaimReview JSON-LD (asks who reviews and the verdict)"},
	"pack":        {key: "p", ext: ".pack.zip", what: "evidence pack: report, JSON, each page as read, SHA-256s"},
}

// packStore is a case store that gives back the pages it kept (as
// *cases.Store does): the evidence pack is offered only with one.
type packStore interface {
	Snapshots(ctx context.Context, id string) ([]cases.Snapshot, error)
}

// exportChoices lists export.Formats with their menu keys, and the
// evidence pack when withPack; a format this menu does not know yet is
// still offered, by its number.
func exportChoices(withPack bool) []exportChoice {
	formats := export.Formats
	if withPack {
		formats = append(slices.Clone(formats), "pack")
	}
	var out []exportChoice
	for i, f := range formats {
		c, ok := exportDetails[f]
		if !ok {
			c = exportChoice{key: fmt.Sprint(i + 1), ext: "." + f, what: f}
		}
		c.format = f
		out = append(out, c)
	}
	return out
}

// packable says whether the check's case store can give back its pages
// for an evidence pack.
func (m *Model) packable() bool {
	_, ok := m.opts.Cases.(packStore)
	return ok && m.saving()
}

// askExport opens the export menu.
func (m *Model) askExport() tea.Cmd {
	if m.check == nil {
		return nil
	}
	m.overlay = overlayExport
	return nil
}

func (m *Model) exportView() string {
	var b strings.Builder
	for i, c := range exportChoices(m.packable()) {
		fmt.Fprintf(&b, "%s %s  %-11s %s\n", m.st.Bold.Render(c.key), m.st.Dim.Render(fmt.Sprint(i+1)), c.format, m.st.Dim.Render(c.what))
	}
	b.WriteString("\nesc cancel")
	w := min(m.width-4, 76)
	box := m.st.Box.Width(w).Render(m.st.Bold.Render("Export the check as…") + "\n\n" + b.String())
	return lipgloss.Place(m.width, m.height, lipgloss.Center, lipgloss.Center, box)
}

func (m *Model) onExportKey(msg tea.KeyMsg) tea.Cmd {
	k := msg.String()
	if k == "enter" {
		k = "m" // the editors' format unless another is picked
	}
	m.overlay = overlayNone
	for i, c := range exportChoices(m.packable()) {
		if k == c.key || k == fmt.Sprint(i+1) {
			if c.format == "claimreview" {
				return m.askClaimReview(c)
			}
			return m.askExportPath(c, export.Options{Format: c.format})
		}
	}
	return nil // esc or any other key closes the menu
}

// askClaimReview asks what ClaimReview needs and muse cannot know: who
// reviews, where the review is published, the claim in a sentence (the
// post's first, offered) and the verdict (muse writes a correction, never
// a rating). The answers are offered again next time.
func (m *Model) askClaimReview(c exportChoice) tea.Cmd {
	return m.ask("ClaimReview — reviewing organisation:", m.reviewer.Name, func(m *Model, name string) tea.Cmd {
		name = strings.TrimSpace(name)
		if name == "" {
			return m.setFailure("ClaimReview not exported: it needs the reviewing organisation's name")
		}
		m.reviewer.Name = name
		page := firstNonEmpty(m.reviewer.ReviewURL, m.reviewer.URL)
		return m.ask("URL where the review is published:", page, func(m *Model, page string) tea.Cmd {
			m.reviewer.ReviewURL = strings.TrimSpace(page)
			return m.ask("The claim reviewed, in one sentence:", firstNonEmpty(m.claimFor[m.check.ID], firstSentence(m.check.Post.Text)), func(m *Model, claim string) tea.Cmd {
				m.claimFor[m.check.ID] = strings.TrimSpace(claim)
				return m.askVerdict(c)
			})
		})
	})
}

// askVerdict asks the ClaimReview's verdict, then where to write it.
func (m *Model) askVerdict(c exportChoice) tea.Cmd {
	// The checker's note choice, else the check's verdict, is offered,
	// unless a rating was typed before.
	offer := firstNonEmpty(m.verdict, export.CheckRating(m.check).AlternateName)
	return m.ask("Verdict (false, misleading, missing context…):", offer, func(m *Model, v string) tea.Cmd {
		rating, err := export.ParseRating(v)
		if err != nil {
			return m.setFailure("ClaimReview not exported: " + err.Error())
		}
		m.verdict = strings.TrimSpace(v)
		rev := m.reviewer
		rev.Published, rev.Claim = m.now(), m.claimFor[m.check.ID]
		return tea.Batch(saveReviewer(m.opts.ReviewerFile, m.reviewer),
			m.askExportPath(c, export.Options{Format: c.format, Reviewer: rev, Rating: rating}))
	})
}

// firstSentence is the first sentence of text, offered as the claim a
// ClaimReview reviews.
func firstSentence(text string) string {
	if ss := lang.Sentences(strings.TrimSpace(text)); len(ss) > 0 {
		return ss[0]
	}
	return strings.TrimSpace(text)
}

// askExportPath asks where to write the export, offering a name from the
// case ID (or the time) in the export directory.
func (m *Model) askExportPath(c exportChoice, o export.Options) tea.Cmd {
	o.Secrets = m.opts.Secrets
	render := renderExport
	if o.Format == "pack" {
		render = m.renderPack()
	} else if _, err := export.Render(cloneCheck(m.check), o); err != nil {
		// A format that refuses this check (a note that cites no page)
		// says so before a file name is asked for.
		return m.setFailure(c.format + " not exported: " + err.Error())
	}
	name := "muse-" + m.now().Format("2006-01-02-1504")
	if m.check.ID != "" {
		name = "muse-" + m.check.ID
	}
	def := filepath.Join(firstNonEmpty(m.opts.ExportDir, "."), name+c.ext)
	return m.ask("Export "+c.format+" to:", def, func(m *Model, v string) tea.Cmd {
		v = strings.TrimSpace(v)
		if v == "" {
			return nil
		}
		write := func(m *Model) tea.Cmd {
			c := cloneCheck(m.check)
			if (o.Format == "json" || o.Format == "pack") && m.saving() {
				// The correction's versions go with the case's JSON.
				st, ctx := m.opts.Cases, m.appCtx
				return noted(func() tea.Msg {
					ds, err := st.Drafts(ctx, c.ID)
					if err != nil {
						return resultMsg{what: "export " + o.Format, err: err}
					}
					o.Versions = cases.Versions(ds)
					return exportCheck(c, o, v, render)()
				}, m.auditCase(cases.ActionExported, o.Format))
			}
			return noted(exportCheck(c, o, v, render), m.auditCase(cases.ActionExported, o.Format))
		}
		if _, err := os.Lstat(v); err != nil {
			return write(m)
		}
		// An existing file (or a link) is replaced only when the person
		// says so; the rename replaces a link, never writes through it.
		return m.ask(v+" exists; replace it? (y/n)", "n", func(m *Model, a string) tea.Cmd {
			if !strings.HasPrefix(strings.ToLower(strings.TrimSpace(a)), "y") {
				return m.setFailure("not exported: " + v + " exists")
			}
			return write(m)
		})
	})
}

// noted runs audit (nil: none) once the export cmd has succeeded, so that
// the case's trail records the export.
func noted(cmd, audit tea.Cmd) tea.Cmd {
	if audit == nil {
		return cmd
	}
	return func() tea.Msg {
		msg := cmd()
		r, ok := msg.(resultMsg)
		if !ok || r.err != nil {
			return msg
		}
		if a, _ := audit().(resultMsg); a.err != nil {
			r.text += " (not noted in the case's trail: " + a.err.Error() + ")"
		}
		return r
	}
}

// exportCheck renders and writes one export in the background.
// renderExport is a format of package export, as muse cases export
// writes it.
func renderExport(c *pipeline.Check, o export.Options) ([]byte, string, error) {
	b, err := export.Render(c, o)
	return b, "", err
}

// exportCheck writes what render makes of c to path; render's note (the
// pages an evidence pack lacks) goes with the status.
func exportCheck(c *pipeline.Check, o export.Options, path string, render func(*pipeline.Check, export.Options) ([]byte, string, error)) tea.Cmd {
	return func() tea.Msg {
		what := "export " + o.Format
		b, note, err := render(c, o)
		if err != nil {
			return resultMsg{what: what, err: err}
		}
		if err := writeAtomic(path, b); err != nil {
			return resultMsg{what: what, err: err}
		}
		return resultMsg{what: what, saved: true, text: "exported " + o.Format + " to " + path + note}
	}
}

// renderPack writes the check's evidence pack with the pages its case
// kept (export.Pack, as muse cases export --format pack does, without a
// time-stamp: that is the command's --tsa).
func (m *Model) renderPack() func(*pipeline.Check, export.Options) ([]byte, string, error) {
	st, _ := m.opts.Cases.(packStore)
	ctx := m.appCtx
	return func(c *pipeline.Check, o export.Options) ([]byte, string, error) {
		if st == nil {
			return nil, "", errors.New("the evidence pack needs the case store, which keeps the pages")
		}
		snaps, err := st.Snapshots(ctx, c.ID)
		if err != nil {
			return nil, "", err
		}
		var buf bytes.Buffer
		man, err := export.Pack(ctx, &buf, c, export.PackOptions{Options: o, Pages: cases.PackPages(snaps)})
		if err != nil {
			return nil, "", err
		}
		note := ""
		if len(man.Missing) > 0 {
			note = fmt.Sprintf(" (the case kept no copy of %d page(s) it rests on; the manifest lists them as missing)", len(man.Missing))
		}
		return buf.Bytes(), note, nil
	}
}

// loadReviewer reads the ClaimReview answers kept by saveReviewer; a file
// missing or unreadable gives none.
func loadReviewer(path string) export.Reviewer {
	var r export.Reviewer
	if b, err := os.ReadFile(path); err == nil {
		_ = json.Unmarshal(b, &r)
	}
	r.Published = time.Time{}
	return r
}

// saveReviewer keeps the ClaimReview answers for the next session ("" path:
// not kept).
func saveReviewer(path string, r export.Reviewer) tea.Cmd {
	if path == "" || r.Name == "" {
		return nil
	}
	r.Published = time.Time{}
	return func() tea.Msg {
		b, err := json.MarshalIndent(r, "", "  ")
		if err == nil {
			err = os.MkdirAll(filepath.Dir(path), 0o700)
		}
		if err == nil {
			err = writeAtomic(path, b)
		}
		if err != nil {
			return resultMsg{what: "remember the reviewer", err: err}
		}
		return nil
	}
}
