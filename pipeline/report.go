package pipeline

import (
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"
)

// ForOutput is the Check as `muse check --json` and `muse batch` print it:
// a copy without the pages' extracted text, which is kept for quoting and
// verification but is not part of the contract.
func (c *Check) ForOutput() *Check {
	d := c.Clone()
	for i := range d.Sources {
		d.Sources[i].Paragraphs = nil
	}
	return d
}

// WriteMarkdown writes the check for a reader: the correction (or digest),
// its warnings, the sources with tier, status and why, the evidence, the
// queries and what it cost.
func WriteMarkdown(w io.Writer, c *Check) error {
	var b strings.Builder
	if c.NoLLM {
		b.WriteString("# Sources that address this post\n\n")
	} else {
		b.WriteString("# Correction\n\n")
	}
	b.WriteString(cmp.Or(strings.TrimSpace(c.Correction.Text), "_No correction was written._"))
	b.WriteString("\n")
	if len(c.Correction.Warnings) > 0 {
		b.WriteString("\n**Warnings**\n\n")
		for _, w := range c.Correction.Warnings {
			fmt.Fprintf(&b, "- %s\n", w)
		}
	}
	fmt.Fprintf(&b, "\n## Post\n\n%s\n", quoteBlock(c.Post.Text))
	var meta []string
	if c.Post.Author != "" || c.Post.Handle != "" {
		meta = append(meta, strings.TrimSpace(c.Post.Author+" "+c.Post.Handle))
	}
	if !c.Post.PostedAt.IsZero() {
		meta = append(meta, "posted "+c.Post.PostedAt.Format(time.RFC3339))
	}
	if !c.Cutoff.IsZero() {
		meta = append(meta, "sources published before "+c.Cutoff.Format(time.RFC3339))
	}
	if len(meta) > 0 {
		fmt.Fprintf(&b, "\n%s\n", strings.Join(meta, " · "))
	}

	b.WriteString("\n## Sources\n\n")
	if len(c.Sources) == 0 {
		b.WriteString("No pages were found.\n")
	} else {
		b.WriteString("| # | Publisher | Tier | Published | Status | Why | URL |\n|---|---|---|---|---|---|---|\n")
		for i, s := range c.Sources {
			pub := ""
			if !s.Published.IsZero() {
				pub = s.Published.Format(time.DateOnly)
			}
			fmt.Fprintf(&b, "| %d | %s | %s | %s | %s | %s | %s |\n", i+1, cell(cmp.Or(s.Publisher, s.Domain)),
				cell(s.Tier), pub, s.Status, cell(s.Reason), s.URL)
		}
	}

	b.WriteString("\n## Evidence\n\n")
	if len(c.Evidence) == 0 {
		b.WriteString("No quotes.\n\n")
	}
	for _, e := range c.Evidence {
		state := ""
		switch {
		case !e.Verified:
			state = " — *not found on the page; left out*"
		case !e.Included:
			state = " — *left out by you*"
		}
		name := e.SourceURL
		if s := c.SourceByURL(e.SourceURL); s != nil {
			name = cmp.Or(s.Publisher, s.Domain)
		}
		fmt.Fprintf(&b, "- **%s**, %s (%s)%s\n\n%s\n\n", e.Kind, name, e.SourceURL, state, indent(quoteBlock(e.Quote)))
	}

	b.WriteString("## Queries\n\n")
	for _, q := range c.Queries {
		off := ""
		if !q.Enabled {
			off = " (off)"
		}
		fmt.Fprintf(&b, "- %s _(%s)_%s\n", q.Text, q.Origin, off)
	}
	u := c.Usage
	fmt.Fprintf(&b, "\n---\n%d model calls, %d prompt and %d completion tokens", u.LLMCalls, u.PromptTokens, u.CompletionTokens)
	if u.CostUSD > 0 {
		fmt.Fprintf(&b, ", $%.4f", u.CostUSD)
	}
	fmt.Fprintf(&b, ", %.1f s.\n", u.Seconds)
	_, err := io.WriteString(w, b.String())
	return err
}

func quoteBlock(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight("> "+l, " ")
	}
	return strings.Join(lines, "\n")
}

func indent(s string) string {
	return "  " + strings.ReplaceAll(s, "\n", "\n  ")
}

// cell makes text safe inside a Markdown table cell.
func cell(s string) string {
	s = strings.Join(strings.Fields(s), " ")
	return strings.ReplaceAll(s, "|", "\\|")
}

// ProgressLine is the one-line description of an event that the headless
// commands print on stderr, or "" for events not worth a line (items,
// token deltas).
func ProgressLine(ev Event) string {
	switch ev.Kind {
	case EventStageStarted:
		return fmt.Sprintf("%s…", ev.Stage)
	case EventStageFinished:
		return ev.Message
	case EventStageFailed:
		return fmt.Sprintf("%s failed: %s", ev.Stage, ev.Err)
	case EventWarning:
		return "warning: " + ev.Message
	case EventProgress:
		return ev.Message
	}
	return ""
}
