package pipeline

import (
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources/links"
)

// figureRe finds the figures of a text: 12, 7-2, 1.2, 1,200, 40%.
var figureRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// figures are the numbers in text, thousands separators dropped, links
// left out (their digits are addresses, not claims).
func figures(text string) []string {
	for _, l := range slices.Backward(links.Find(text)) {
		text = text[:l.Start] + " " + text[l.End:]
	}
	var out []string
	for _, f := range figureRe.FindAllString(text, -1) {
		out = append(out, strings.ReplaceAll(f, ",", ""))
	}
	return out
}

// unheldFigures warns of each figure in the correction that neither a
// quote it may rest on (included, verified, on a page not dropped) nor
// the post holds: a lexical check before any model judges support, so
// that an edit adding a number no page gave is named.
func (c *Check) unheldFigures(text string) []string {
	held := map[string]bool{}
	for _, f := range figures(c.Post.Text) {
		held[f] = true
	}
	for _, e := range c.Evidence {
		if !e.Included || !e.Verified {
			continue
		}
		if s := c.SourceByURL(e.SourceURL); s != nil && s.Dropped {
			continue
		}
		for _, f := range figures(e.Quote) {
			held[f] = true
		}
	}
	var out []string
	seen := map[string]bool{}
	for _, f := range figures(text) {
		if held[f] || seen[f] {
			continue
		}
		seen[f] = true
		out = append(out, fmt.Sprintf(unheldF, f))
	}
	return out
}

// unheldF is the warning for a figure no quote holds.
const unheldF = "the figure %s is in no quote the correction rests on, nor in the post: check it against the pages"
