package extract

import (
	"regexp"
	"strings"
	"unicode"
)

// The cleaning below removes what general-purpose extractors leave around a
// story and what muse must never quote as evidence: the headline repeated
// as the first paragraph, links to the page itself, and the run of site
// furniture (related links, copyright and reprint notices) after the last
// paragraph. A standfirst equal to the meta description is kept: as often as
// not it is the story's first paragraph.

// cleanParagraphs trims the extracted paragraphs of a page whose headline
// is title; host is the page's host name ("" when unknown).
func cleanParagraphs(paras []string, title, host string) []string {
	return rules{dropRepeats: true, dropSelfLinks: true, trimFurniture: true}.clean(paras, title, host)
}

// clean applies the cleaning steps the rules keep.
func (r rules) clean(paras []string, title, host string) []string {
	if r.dropRepeats {
		paras = dropLeadingRepeats(paras, title)
	}
	if r.dropSelfLinks && host != "" {
		out := paras[:0:0]
		for _, p := range paras {
			if !selfLink(p, host) {
				out = append(out, p)
			}
		}
		paras = out
	}
	if r.trimFurniture {
		paras = trimTrailingFurniture(paras)
	}
	return paras
}

// titleSep splits "Section | Headline - Site" into its parts.
var titleSep = regexp.MustCompile(`\s+[|\-–—:·•»]+\s+`)

var bareURL = regexp.MustCompile(`^(?i)(https?://|www\.)([^/\s?#]+)\S*$`)

// selfLink reports whether a paragraph is nothing but a link to the site
// itself (a "permalink" or print-view footer); links elsewhere, such as a
// shopping list of product links, are content.
func selfLink(p, host string) bool {
	m := bareURL.FindStringSubmatch(strings.TrimSpace(p))
	if m == nil {
		return false
	}
	h := strings.TrimPrefix(strings.ToLower(m[2]), "www.")
	return h == strings.TrimPrefix(strings.ToLower(host), "www.")
}

// dropLeadingRepeats removes the first paragraphs while they repeat the
// headline, which pages print above the story and also put in <title>,
// often with a section or site name around it.
func dropLeadingRepeats(paras []string, title string) []string {
	t := fold(title)
	parts := map[string]bool{}
	for _, part := range titleSep.Split(title, -1) {
		if f := fold(part); f != "" {
			parts[f] = true
		}
	}
	for len(paras) > 1 {
		p := fold(paras[0])
		if p == "" || parts[p] || (t != "" && strings.Contains(t, p) && len(p)*2 >= len(t)) {
			paras = paras[1:]
			continue
		}
		break
	}
	return paras
}

// furniture matches paragraphs that are site furniture rather than story:
// copyright and reprint notices, and the headings that introduce lists of
// other stories or sharing buttons.
var furniture = regexp.MustCompile(`(?i)^(copyright\b|©|\(c\) ?\d{4}|all rights reserved|this copy is for your personal|` +
	`you (may|might) also like|related( (stories|articles|posts|coverage|content|reading))?\s*:?$|` +
	`(read|see) (more|also)\s*:?$|more (stories|from|on)\b.{0,40}$|recommended( for you)?\s*:?$|` +
	`sign up for\b.{0,80}newsletter|thank you\.?$|this article (has been|was) sent to)`)

// trimTrailingFurniture cuts the story at the first furniture paragraph in
// its last third (so that a copyright line quoted mid-story survives) and
// drops anything after it: what follows such a heading is other stories.
func trimTrailingFurniture(paras []string) []string {
	start := len(paras) * 2 / 3
	for i := start; i < len(paras); i++ {
		if i > 0 && furniture.MatchString(paras[i]) {
			return paras[:i]
		}
	}
	return paras
}

// fold lower-cases a string and keeps only letters and digits separated by
// single spaces, so that punctuation and typography do not defeat matching.
func fold(s string) string {
	var b strings.Builder
	space := false
	for _, r := range s {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r):
			if space && b.Len() > 0 {
				b.WriteByte(' ')
			}
			space = false
			b.WriteRune(unicode.ToLower(r))
		default:
			space = true
		}
	}
	return b.String()
}
