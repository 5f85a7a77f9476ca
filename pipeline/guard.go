package pipeline

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"github.com/musecheck/muse/sources"
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

// urlPattern finds http(s) URLs in prose and Markdown.
var urlPattern = regexp.MustCompile(`https?://[^\s<>"'\x60\]\[(){}]+`)

// mdLinkPattern finds Markdown links so an invented link keeps its label.
var mdLinkPattern = regexp.MustCompile(`\[([^\]]*)\]\((https?://[^)\s]+)\)`)

// trimURL drops punctuation that ends a sentence rather than the URL.
func trimURL(u string) string {
	return strings.TrimRight(u, ".,;:!?*_")
}

// GuardCorrection removes from text every URL that is not one of allowed
// (compared in sources.Canonical form) and returns the cleaned text, the
// allowed URLs it cites (first appearance order, as given in allowed) and a
// warning naming each URL removed.
func GuardCorrection(text string, allowed []string) (string, []string, []string) {
	allow := map[string]string{}
	for _, u := range allowed {
		allow[sources.Key(u)] = u
	}
	var cited, warnings []string
	cite := func(u string) {
		if !slices.Contains(cited, u) {
			cited = append(cited, u)
		}
	}
	removed := func(u string) {
		w := fmt.Sprintf("removed %s: not one of the evidence pages", u)
		if !slices.Contains(warnings, w) {
			warnings = append(warnings, w)
		}
	}
	// Removing a URL and tidying the hole can join text into a new URL
	// ("https ://evil…" loses its space), so repeat until nothing changes.
	// Every pass that changes the text shortens it, so this ends.
	for {
		before := text
		text = removeUninvited(text, allow, cite, removed)
		if len(warnings) > 0 {
			text = tidyAfterRemoval(text)
		}
		if text == before {
			break
		}
	}
	// Cite in order of appearance in what is left.
	cited = nil
	for _, m := range urlPattern.FindAllString(text, -1) {
		if orig, ok := allow[sources.Key(trimURL(m))]; ok {
			cite(orig)
		}
	}
	return strings.TrimSpace(text), cited, warnings
}

// removeUninvited takes out every link and bare URL that is not an allowed
// evidence page, keeping a Markdown link's label.
func removeUninvited(text string, allow map[string]string, cite, removed func(string)) string {
	// Markdown links first, so an invented target leaves its label behind.
	text = mdLinkPattern.ReplaceAllStringFunc(text, func(m string) string {
		sub := mdLinkPattern.FindStringSubmatch(m)
		label, u := sub[1], trimURL(sub[2])
		if orig, ok := allow[sources.Key(u)]; ok {
			cite(orig)
			return m
		}
		removed(u)
		if strings.TrimSpace(label) == "" || urlPattern.MatchString(label) {
			return ""
		}
		return label
	})
	text = urlPattern.ReplaceAllStringFunc(text, func(m string) string {
		u := trimURL(m)
		tail := m[len(u):]
		if orig, ok := allow[sources.Key(u)]; ok {
			cite(orig)
			return m
		}
		removed(u)
		return tail
	})
	return text
}

var (
	emptyParens  = regexp.MustCompile(`\(\s*[,;]?\s*\)|\[\s*\]`)
	spaceBefore  = regexp.MustCompile(`[ \t]+([.,;:!?])`)
	doubleSpaces = regexp.MustCompile(`[ \t]{2,}`)
)

// tidyAfterRemoval cleans the holes a removed URL leaves: "()" and
// "see  ." become nothing and "see.".
func tidyAfterRemoval(s string) string {
	s = emptyParens.ReplaceAllString(s, "")
	s = spaceBefore.ReplaceAllString(s, "$1")
	s = doubleSpaces.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	return strings.TrimSpace(strings.Join(lines, "\n"))
}
