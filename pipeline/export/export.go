// Package export turns a Check into what a newsroom publishes: Markdown for
// editors, the Check as JSON, a Community Notes-ready note, and schema.org
// ClaimReview JSON-LD for fact-checkers who publish it. Exports read only
// the Check: no network, no store; Options.Secrets are redacted from
// every format.
package export

import (
	"bytes"
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/sanitize"
)

// Formats lists the export formats by the names the CLI and the TUI use.
var Formats = []string{"md", "json", "note", "claimreview"}

// JSON is the Check as indented JSON with snake_case keys, URLs unescaped:
// the one JSON shape of a Check, which `muse check --json`, the app's and
// `muse cases export`'s json format all print (Check.ForOutput: without the
// pages' extracted text).
func JSON(c *pipeline.Check) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("export JSON: no check given")
	}
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(c.ForOutput()); err != nil {
		return nil, fmt.Errorf("export JSON of case %s: %w", c.ID, err)
	}
	return b.Bytes(), nil
}

// Markdown renders the check for an editor: the correction (and whether a
// person edited it), the quotes it rests on with links and the date each
// page was read, the quotes left out (not found on their page, or
// unticked) and why, so what the model proposed is never hidden, every
// source with its tier and why it was used or not, the post, the queries
// and the cost.
func Markdown(c *pipeline.Check) string { return sanitize.String(markdown(c, true)) }

// Report is Markdown as `muse check` prints it: the same document.
func Report(c *pipeline.Check) string { return Markdown(c) }

func markdown(c *pipeline.Check, leftOut bool) string {
	if c == nil {
		return ""
	}
	var b strings.Builder
	for _, f := range c.FactChecks {
		b.WriteString(inline(f.String()) + "\n\n")
	}
	b.WriteString("# Correction\n\n")
	note := c.NotJudgedNote()
	if note != "" && !strings.HasPrefix(strings.TrimSpace(c.Correction.Text), pipeline.NotJudgedLead) {
		// Said before the correction: it rests on fewer pages than were found.
		b.WriteString("> **Not judged:** " + inline(note) + ".\n\n")
	}
	if c.Post.Language != "" {
		b.WriteString("_The post is in " + lang.Label(c.Post.Language) + "._\n\n")
	}
	if t := strings.TrimSpace(c.Correction.Text); t != "" {
		b.WriteString(t + "\n\n")
		var notes []string
		notes = append(notes, fmt.Sprintf("%d/%d characters as a note (each link counts as 1)", NoteLength(t), NoteLimit))
		if c.Correction.Edited {
			notes = append(notes, "edited by a person")
		} else if c.Correction.Model != "" {
			notes = append(notes, "written by "+c.Correction.Model)
		}
		if c.NoLLM {
			notes = append(notes, "extractive digest made without a language model, not a verdict")
		}
		b.WriteString("_" + strings.Join(notes, "; ") + "._\n\n")
	} else {
		b.WriteString("_No correction was written._\n\n")
	}
	for _, w := range c.CorrectionWarnings() {
		b.WriteString("> **Warning:** " + inline(w) + "\n\n")
	}
	writeEvidence(&b, c)
	if leftOut {
		writeLeftOut(&b, c)
	}
	writeSources(&b, c)
	writePost(&b, c)
	if qs := c.EnabledQueries(); len(qs) > 0 {
		b.WriteString("## Searches\n\n")
		for _, q := range qs {
			b.WriteString("- " + inline(q) + "\n")
		}
		b.WriteString("\n")
	}
	u := c.Usage
	prompt := fmt.Sprintf("%d prompt", u.PromptTokens)
	if u.CachedPromptTokens > 0 {
		prompt = fmt.Sprintf("%d prompt tokens (%d of them from the server's prompt cache)", u.PromptTokens+u.CachedPromptTokens, u.CachedPromptTokens)
	}
	fmt.Fprintf(&b, "## Cost\n\n%d model calls, %s and %d completion tokens, %s, %.0f s.\n",
		u.LLMCalls, prompt, u.CompletionTokens, u.CostText(), u.Seconds)
	if c.ID != "" {
		fmt.Fprintf(&b, "\nCase %s, checked %s.\n", c.ID, day(c.CreatedAt))
	}
	return b.String()
}

func writeEvidence(b *strings.Builder, c *pipeline.Check) {
	var ev []pipeline.Evidence
	for _, e := range c.Evidence {
		if e.Included {
			ev = append(ev, e)
		}
	}
	if len(ev) == 0 {
		return
	}
	b.WriteString("## Evidence\n\n")
	for _, e := range ev {
		src := c.SourceByURL(e.SourceURL)
		name, link, read := e.SourceURL, e.SourceURL, "date read unknown"
		if src != nil {
			name = cmp.Or(src.Publisher, src.Domain, src.URL)
			if !src.FetchedAt.IsZero() {
				read = "read " + day(src.FetchedAt)
			}
		}
		mark := ""
		if !e.Verified {
			mark = " (not found word for word in the page)"
		}
		fmt.Fprintf(b, "- **%s**%s: “%s” — [%s](%s), %s\n", e.Kind, mark, inline(e.Quote), inline(name), link, read)
	}
	b.WriteString("\n")
}

// writeLeftOut lists the quotes the correction does not rest on, each with
// why it was left out.
func writeLeftOut(b *strings.Builder, c *pipeline.Check) {
	var ev []pipeline.Evidence
	for _, e := range c.Evidence {
		if !e.Included {
			ev = append(ev, e)
		}
	}
	if len(ev) == 0 {
		return
	}
	b.WriteString("## Left out\n\n")
	for _, e := range ev {
		name := e.SourceURL
		if src := c.SourceByURL(e.SourceURL); src != nil {
			name = cmp.Or(src.Publisher, src.Domain, src.URL)
		}
		why := "left out by you"
		if !e.Verified {
			why = "not found on the page"
		}
		if e.Reason != "" {
			why += ": " + e.Reason
		}
		fmt.Fprintf(b, "- **%s**: “%s” — [%s](%s); %s\n", e.Kind, inline(e.Quote), inline(name), e.SourceURL, inline(why))
	}
	b.WriteString("\n")
}

func writeSources(b *strings.Builder, c *pipeline.Check) {
	if len(c.Sources) == 0 {
		return
	}
	srcs := slices.Clone(c.Sources)
	used := func(s pipeline.Source) bool {
		return s.Status == pipeline.StatusUsed || s.Status == pipeline.StatusBoosted
	}
	// Used pages first; otherwise keep the engine's ranking.
	slices.SortStableFunc(srcs, func(x, y pipeline.Source) int {
		if used(x) == used(y) {
			return 0
		}
		if used(x) {
			return -1
		}
		return 1
	})
	b.WriteString("## Sources\n\n")
	// What became of the search, from the check's accounting.
	b.WriteString("_" + inline(c.Account().Summary) + "._\n\n")
	for _, s := range srcs {
		title := cmp.Or(s.Title, s.Publisher, s.Domain, s.URL)
		fmt.Fprintf(b, "- [%s](%s) — %s", inline(title), cmp.Or(s.FinalURL, s.URL), inline(cmp.Or(s.Publisher, s.Domain)))
		tier := cmp.Or(s.Tier, pipeline.TierUnrated)
		fmt.Fprintf(b, "; %s tier", tier)
		if s.Factuality != "" || s.Bias != "" {
			fmt.Fprintf(b, " (factuality %s, bias %s)", cmp.Or(s.Factuality, "unknown"), cmp.Or(s.Bias, "unknown"))
		}
		fmt.Fprintf(b, "; %s", strings.ReplaceAll(string(cmp.Or(s.Status, "unknown")), "_", " "))
		if s.Reason != "" {
			fmt.Fprintf(b, ": %s", inline(s.Reason))
		}
		if !s.Published.IsZero() {
			fmt.Fprintf(b, "; published %s", day(s.Published))
		}
		if !s.FetchedAt.IsZero() {
			fmt.Fprintf(b, "; read %s", day(s.FetchedAt))
		}
		b.WriteString("\n")
	}
	b.WriteString("\n")
}

func writePost(b *strings.Builder, c *pipeline.Check) {
	b.WriteString("## Post\n\n")
	for _, line := range strings.Split(strings.TrimSpace(c.Post.Text), "\n") {
		b.WriteString("> " + line + "\n")
	}
	var who []string
	for _, s := range []string{c.Post.Author, c.Post.Handle, c.Post.Platform} {
		if s != "" {
			who = append(who, inline(s))
		}
	}
	if !c.Post.PostedAt.IsZero() {
		who = append(who, c.Post.PostedAt.Format("2006-01-02 15:04 MST"))
	}
	if c.Post.URL != "" {
		who = append(who, "<"+c.Post.URL+">")
	}
	if len(who) > 0 {
		b.WriteString("\n— " + strings.Join(who, ", ") + "\n")
	}
	for _, im := range c.Images {
		if d := cmp.Or(im.Description, im.Caption, im.AltText); d != "" {
			fmt.Fprintf(b, "\nImage %s: %s\n", inline(im.Source), inline(d))
		}
	}
	b.WriteString("\n")
}

// inline makes text safe inside one Markdown line: no line breaks, and the
// characters that would start a link, emphasis or HTML escaped.
func inline(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.NewReplacer(`\`, `\\`, "[", `\[`, "]", `\]`, "*", `\*`, "_", `\_`, "`", "\\`", "<", `\<`, ">", `\>`).Replace(s)
}

func day(t time.Time) string { return t.Format(time.DateOnly) }

// Options picks an export format for Render; Reviewer and Rating are used
// by "claimreview" only.
type Options struct {
	Format   string // one of Formats
	Reviewer Reviewer
	Rating   Rating
	// Secrets are replaced by "[redacted]" in the export (sources.Redactor):
	// a key a model echoed into the correction never reaches a file.
	Secrets []string
}

// Render exports the check in o.Format, so the CLI and the TUI share one
// switch. Text formats end with a newline.
func Render(c *pipeline.Check, o Options) ([]byte, error) {
	b, err := render(c, o)
	return sources.NewRedactor(o.Secrets...).Bytes(b), err
}

func render(c *pipeline.Check, o Options) ([]byte, error) {
	if c == nil {
		return nil, fmt.Errorf("export %s: no check given", o.Format)
	}
	switch strings.ToLower(strings.TrimSpace(o.Format)) {
	case "md", "markdown":
		return []byte(Markdown(c)), nil
	case "json":
		return JSON(c)
	case "note":
		n, err := Note(c)
		if err != nil {
			return nil, err
		}
		return []byte(n + "\n"), nil
	case "claimreview":
		return ClaimReview(c, o.Reviewer, o.Rating)
	default:
		return nil, fmt.Errorf("export: unknown format %q; use one of %s", o.Format, strings.Join(Formats, ", "))
	}
}
