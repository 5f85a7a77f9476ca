package pipeline

import (
	"fmt"
	"slices"
	"strings"
	"unicode"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/links"
	"golang.org/x/text/unicode/norm"
)

// The guards are what makes a correction checkable: a quote counts only when
// it is really on the page, and a correction may cite only pages whose
// quotes were kept. Both run on whatever a model returns, so neither trusts
// its input.

// normaliseForMatch folds the differences a faithful copy of a paragraph
// may still show: Unicode compatibility forms, curly and straight quotes,
// the dash family, and runs of white space. Case and wording are kept, so a
// paraphrase does not match.
func normaliseForMatch(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '`', '\u00b4':
			r = '\''
		case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033', '\u00ab', '\u00bb':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2e3a', '\u2e3b':
			r = '-'
		case '\u00ad', '\u200b', '\u200c', '\u200d', '\ufeff':
			continue // invisible: soft hyphen, zero-width characters
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// cleanQuote removes what models wrap around a quote (surrounding quotation
// marks, a leading list marker) without touching the words.
func cleanQuote(q string) string {
	q = strings.TrimSpace(q)
	for range 3 {
		before := q
		q = strings.TrimLeft(q, "-*•> \t")
		if len(q) >= 2 {
			first, last := []rune(q)[0], []rune(q)[len([]rune(q))-1]
			if isQuoteMark(first) && isQuoteMark(last) {
				r := []rune(q)
				q = strings.TrimSpace(string(r[1 : len(r)-1]))
			}
		}
		if q == before {
			break
		}
	}
	return q
}

func isQuoteMark(r rune) bool {
	return strings.ContainsRune("\"'\u2018\u2019\u201c\u201d\u00ab\u00bb", r)
}

// minQuoteRunes is the shortest quote worth keeping: anything shorter
// ("The", "Yes.") matches almost any page and proves nothing.
const minQuoteRunes = 20

// VerifyQuote reports whether quote occurs in text after both are
// normalised (white space, quotes, dashes). Quotes shorter than 20
// characters never verify.
func VerifyQuote(quote, text string) bool {
	q := normaliseForMatch(cleanQuote(quote))
	if len([]rune(q)) < minQuoteRunes {
		return false
	}
	return strings.Contains(normaliseForMatch(text), q)
}

// GuardCorrection removes from text every link, in whatever form it is
// written (sources/links), that is not one of allowed (compared by
// sources.Key) and returns the cleaned text, the allowed URLs it cites
// (in order of appearance, as given in allowed) and a warning naming each
// link removed.
func GuardCorrection(text string, allowed []string) (string, []string, []string) {
	allow := map[string]string{}
	for _, u := range allowed {
		allow[sources.Key(u)] = u
	}
	clean, removed := links.Remove(text, func(u string) bool {
		_, ok := allow[sources.Key(u)]
		return ok
	})
	var cited, warnings []string
	for _, l := range links.Find(clean) {
		if orig, ok := allow[sources.Key(l.URL)]; ok && !slices.Contains(cited, orig) {
			cited = append(cited, orig)
		}
	}
	for _, u := range removed {
		warnings = append(warnings, fmt.Sprintf("removed %s: not one of the evidence pages", u))
	}
	return strings.TrimSpace(clean), cited, warnings
}
