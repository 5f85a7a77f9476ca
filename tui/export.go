package tui

import (
	"fmt"
	"strings"

	"github.com/musecheck/muse/pipeline"
)

// Markdown renders a check for a newsroom's notes: the correction first,
// then the evidence it rests on, the sources and the post.
func Markdown(c *pipeline.Check) string {
	var b strings.Builder
	b.WriteString("# Correction\n\n")
	if t := strings.TrimSpace(c.Correction.Text); t != "" {
		b.WriteString(t + "\n\n")
		fmt.Fprintf(&b, "_%d/%d characters, each link counted as 1", noteLength(t), NoteLimit)
		if c.Correction.Edited {
			b.WriteString("; edited by a person")
		}
		b.WriteString("._\n\n")
	} else {
		b.WriteString("_No correction was written._\n\n")
	}
	for _, w := range c.Correction.Warnings {
		b.WriteString("> **Warning:** " + w + "\n\n")
	}
	if len(c.Evidence) > 0 {
		b.WriteString("## Evidence\n\n")
		for _, e := range c.Evidence {
			if !e.Included {
				continue
			}
			mark := ""
			if !e.Verified {
				mark = " (not found verbatim in the page)"
			}
			fmt.Fprintf(&b, "- %s%s: “%s” — <%s>\n", e.Kind, mark, strings.TrimSpace(e.Quote), e.SourceURL)
		}
		b.WriteString("\n")
	}
	var used []pipeline.Source
	for _, s := range c.Sources {
		if s.Status == pipeline.StatusUsed || s.Status == pipeline.StatusBoosted {
			used = append(used, s)
		}
	}
	if len(used) > 0 {
		b.WriteString("## Sources\n\n")
		for _, s := range used {
			date := ""
			if !s.Published.IsZero() {
				date = ", " + s.Published.Format("2006-01-02")
			}
			fmt.Fprintf(&b, "- [%s](%s) — %s tier%s\n", firstNonEmpty(s.Title, s.Publisher, s.Domain), firstNonEmpty(s.FinalURL, s.URL), s.Tier, date)
		}
		b.WriteString("\n")
	}
	b.WriteString("## Post\n\n")
	for _, line := range strings.Split(strings.TrimSpace(c.Post.Text), "\n") {
		b.WriteString("> " + line + "\n")
	}
	var who []string
	if c.Post.Author != "" {
		who = append(who, c.Post.Author)
	}
	if c.Post.Handle != "" {
		who = append(who, c.Post.Handle)
	}
	if !c.Post.PostedAt.IsZero() {
		who = append(who, formatWhen(c.Post.PostedAt))
	}
	if c.Post.URL != "" {
		who = append(who, "<"+c.Post.URL+">")
	}
	if len(who) > 0 {
		b.WriteString("\n— " + strings.Join(who, ", ") + "\n")
	}
	return b.String()
}
