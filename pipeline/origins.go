package pipeline

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources"
)

// Two pages share an origin when one holds at least copyShare of the
// other's shingles (at least minCopyShingles of them): a story carried
// whole or nearly whole. Fixed, not tuned on data.
const (
	copyShare        = 0.5
	minCopyShingles  = 40
	wireCreditWindow = 600 // characters of a page's opening searched for a wire credit
)

// wireCredits find the news agency a page credits in its dateline or
// byline: "SPRINGFIELD, March 1 (Reuters) -", "(AP) —", "PARIS (AFP) -",
// "By The Associated Press", "Agence France-Presse".
var wireCredits = []struct {
	agency string
	re     *regexp.Regexp
}{
	{"AP", regexp.MustCompile(`\(AP\)\s*[-–—]|(?i:\bby the associated press\b)|\bAssociated Press\b\s*[-–—]|^\s*AP\s*[-–—]`)},
	{"Reuters", regexp.MustCompile(`\(Reuters\)\s*[-–—]|(?i:\breporting by\b[^.]{0,80}\bReuters\b)|^\s*Reuters\s*[-–—]|\bThomson Reuters\b`)},
	{"AFP", regexp.MustCompile(`\(AFP\)\s*[-–—]|\bAgence France-Presse\b|^\s*AFP\s*[-–—]`)},
	{"UPI", regexp.MustCompile(`\(UPI\)\s*[-–—]`)},
	{"dpa", regexp.MustCompile(`\(dpa\)\s*[-–—]`)},
	{"EFE", regexp.MustCompile(`\(EFE\)\s*[-–—]`)},
	{"PA", regexp.MustCompile(`\(PA\)\s*[-–—]|\bPA Media\b`)},
}

// WireCredit is the news agency a page's opening credits (a dateline such
// as "(AP) —" or a byline), "" when none.
func WireCredit(s Source) string {
	text := strings.Join(s.Paragraphs, "\n")
	if len(text) > wireCreditWindow {
		text = text[:wireCreditWindow]
	}
	for _, w := range wireCredits {
		if w.re.MatchString(text) {
			return w.agency
		}
	}
	return ""
}

// Origin is a group of pages that tell one story from one origin: the
// same wire story, or the same text on several sites.
type Origin struct {
	// Label names the origin: the agency ("AP") when the pages credit
	// one, else the first page's publisher.
	Label string `json:"label"`
	// Agency is the wire agency credited, "" when none is.
	Agency string   `json:"agency,omitempty"`
	URLs   []string `json:"urls"`
	// Why says what ties the pages: "credits AP", "the same text".
	Why []string `json:"why,omitempty"`
}

// Origins groups the pages the correction may rest on (each page with a
// quote the person kept, not dropped) by origin: pages that credit the same news agency
// and pages whose texts are near copies of each other (see copyShare) are
// one origin. Independent confirmation is one origin per group, whatever
// the number of pages.
func (c *Check) Origins() []Origin {
	var pages []*Source
	seen := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Included {
			continue
		}
		s := c.SourceByURL(e.SourceURL)
		if s == nil || s.Dropped || seen[sources.Key(s.URL)] {
			continue
		}
		seen[sources.Key(s.URL)] = true
		pages = append(pages, s)
	}
	return originsOf(pages)
}

func originsOf(pages []*Source) []Origin {
	n := len(pages)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	why := make([][]string, n)
	union := func(i, j int, reason string) {
		a, b := find(i), find(j)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
		why[i] = appendNew(why[i], reason)
		why[j] = appendNew(why[j], reason)
	}
	agency := make([]string, n)
	sets := make([]shingleSet, n)
	for i, p := range pages {
		agency[i] = WireCredit(*p)
		sets[i] = shingles(strings.Join(p.Paragraphs, "\n"))
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if agency[i] != "" && agency[i] == agency[j] {
				union(i, j, "credits "+agency[i])
			}
			if nearCopy(sets[i], sets[j]) {
				union(i, j, "the same text")
			}
		}
	}
	var out []Origin
	at := map[int]int{}
	for i, p := range pages {
		r := find(i)
		k, ok := at[r]
		if !ok {
			k = len(out)
			at[r] = k
			out = append(out, Origin{})
		}
		o := &out[k]
		o.URLs = append(o.URLs, p.URL)
		o.Agency = cmp.Or(o.Agency, agency[i])
		for _, w := range why[i] {
			o.Why = appendNew(o.Why, w)
		}
	}
	for k := range out {
		o := &out[k]
		o.Label = o.Agency
		if o.Label == "" {
			for i, p := range pages {
				if p.URL == o.URLs[0] {
					o.Label = pages[i].Label()
				}
			}
		}
	}
	return out
}

// nearCopy: one text holds most of the other's passages.
func nearCopy(a, b shingleSet) bool {
	return min(len(a), len(b)) >= minCopyShingles && containment(a, b) >= copyShare
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// OriginsSummary says how many pages and origins the correction rests
// on, naming the origins shared by several pages: "3 pages, 1 origin
// (AP)"; "" when no page is quoted.
func (c *Check) OriginsSummary() string {
	return originsSummary(c.Origins())
}

func originsSummary(groups []Origin) string {
	pages := 0
	var shared []string
	for _, o := range groups {
		pages += len(o.URLs)
		if len(o.URLs) > 1 {
			shared = append(shared, fmt.Sprintf("%s: %d pages", o.Label, len(o.URLs)))
		}
	}
	if pages == 0 {
		return ""
	}
	s := fmt.Sprintf("%d page%s, %d origin%s", pages, plural(pages), len(groups), plural(len(groups)))
	switch {
	case len(groups) == 1 && pages > 1:
		s += " (" + groups[0].Label + ")"
	case len(shared) > 0:
		s += " (" + strings.Join(shared, "; ") + ")"
	}
	return s
}
