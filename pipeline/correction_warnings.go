package pipeline

import (
	"slices"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/links"
)

// What the correction cites is said of its current text: these warnings
// are derived by CorrectionWarnings every time they are read, never kept
// beside the text (an edit that adds the Reuters link must not leave
// "cites none of the evidence pages" standing).
const (
	citesNone    = "the correction cites none of the evidence pages"
	citesPrefix  = "the correction cites "
	notEvidenceF = "the correction cites %s, which holds none of the quotes it rests on"
	leftOutF     = "the correction cites %s, whose quotes are all left out"
	noneTicked   = "no quote is ticked, so the correction rests on no quoted evidence"
)

// Warnings the run wrote about the model's draft: once the person has
// edited the text they describe a draft that is no longer there.
var draftWarnings = []string{"removed ", "the correction does not start with ", "the correction is written in ",
	"the model's answer reached its length limit"}

// CorrectionWarnings are the correction's warnings as of its current text
// and evidence: what the run that wrote it found (a page not judged, a
// stream cut short, a link removed from the model's draft — the last kinds
// only while the text is the model's), and what the text cites now: none
// of the evidence pages, or a page none of whose quotes is included,
// each figure no quote it rests on holds, and each sentence the quotes it
// cites do not say (SupportMap).
func (c *Check) CorrectionWarnings() []string {
	var out []string
	for _, w := range c.Correction.Warnings {
		switch {
		case strings.HasPrefix(w, citesPrefix):
			continue // derived below, from the text as it is
		case c.Correction.Edited && slices.ContainsFunc(draftWarnings, func(p string) bool { return strings.HasPrefix(w, p) }):
			continue
		}
		out = append(out, w)
	}
	text := strings.TrimSpace(c.Correction.Text)
	if text == "" || c.Correction.Unsourced() || c.NoLLM || c.Stage(StageCorrection).State == StateRunning {
		return out // nothing to cite, or not yet written
	}
	evidence, leftOut := c.evidencePages(), c.leftOutPages()
	cited, foreign := false, []string(nil)
	for _, l := range links.Find(text) {
		switch {
		case evidence[sources.Key(l.URL)]:
			cited = true
		case c.Post.URL != "" && sources.Key(l.URL) == sources.Key(c.Post.URL):
			// The post itself: named, not cited as a source.
		case !slices.Contains(foreign, l.URL):
			foreign = append(foreign, l.URL)
		}
	}
	switch {
	case cited:
	case len(evidence) == 0 && len(leftOut) > 0:
		out = append(out, noneTicked)
	default:
		out = append(out, citesNone)
	}
	for _, u := range foreign {
		f := notEvidenceF
		if leftOut[sources.Key(u)] {
			f = leftOutF
		}
		out = append(out, strings.Replace(f, "%s", u, 1))
	}
	return append(out, c.SupportWarnings()...)
}

// leftOutPages are the pages, by sources.Key, that hold a verified quote
// the person left out and none that is included: what a link to one of
// them rests on is there, but unticked.
func (c *Check) leftOutPages() map[string]bool {
	evidence := c.evidencePages()
	out := map[string]bool{}
	for _, e := range c.Evidence {
		s := c.SourceByURL(e.SourceURL)
		if e.Included || !e.Verified || s == nil || !s.Eligible() {
			continue
		}
		for _, u := range []string{s.URL, s.FinalURL} {
			if k := sources.Key(u); u != "" && !evidence[k] {
				out[k] = true
			}
		}
	}
	return out
}

// CitedPages counts the evidence pages the correction's text cites as it
// is now (the correction stage's count, kept current through edits).
func (c *Check) CitedPages() int {
	evidence := c.evidencePages()
	seen := map[string]bool{}
	for _, l := range links.Find(c.Correction.Text) {
		if k := sources.Key(l.URL); evidence[k] {
			seen[k] = true
		}
	}
	return len(seen)
}

// CitedSources are the evidence pages the correction's text cites as it is
// now, in the order it first links them (a published fact-check it cites
// that is not among the sources is left out).
func (c *Check) CitedSources() []Source {
	evidence := c.evidencePages()
	seen := map[*Source]bool{}
	var out []Source
	for _, l := range links.Find(c.Correction.Text) {
		if !evidence[sources.Key(l.URL)] {
			continue
		}
		if s := c.SourceByURL(l.URL); s != nil && !seen[s] {
			seen[s] = true
			out = append(out, *s)
		}
	}
	return out
}

// evidencePages are the pages a correction may cite, by sources.Key: each
// page (and the address it moved to) with an included, verified quote the
// person has not dropped, and each published fact-check with a rating.
func (c *Check) evidencePages() map[string]bool {
	out := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Included || !e.Verified {
			continue
		}
		s := c.SourceByURL(e.SourceURL)
		if s == nil || !s.Eligible() {
			continue
		}
		out[sources.Key(s.URL)] = true
		if s.FinalURL != "" {
			out[sources.Key(s.FinalURL)] = true
		}
	}
	for _, f := range c.FactChecks {
		if f.URL != "" && f.Rating != "" {
			out[sources.Key(f.URL)] = true
		}
	}
	return out
}
