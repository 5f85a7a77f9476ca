package archive

import (
	"html"
	"regexp"
	"strings"
	"unicode"
)

// Query text is never handed to FTS5 MATCH as written: a stray quote,
// asterisk, colon or bare AND/OR/NOT/NEAR would be a syntax error or change
// the meaning. It is cut into plain terms here and each term is quoted.

var (
	urlRe     = regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`)
	handleRe  = regexp.MustCompile(`(^|[^\w])@\w+`)
	hashtagRe = regexp.MustCompile(`#(\w+)`)
	// camelRe finds the words inside a CamelCase hashtag: "#CrookedHillary"
	// is "crooked hillary", "#MAGA" stays one word.
	camelRe = regexp.MustCompile(`[A-Z]+[a-z]+|[A-Z]+(?:[^a-zA-Z]|$)|[a-z]+|[0-9]+`)
)

// cleanPostText strips what identifies a social-media post rather than what
// it says: links, @handles, the "RT" marker and HTML entities; hashtags
// become their words.
func cleanPostText(s string) string {
	s = html.UnescapeString(s)
	s = urlRe.ReplaceAllString(s, " ")
	s = handleRe.ReplaceAllString(s, "$1 ")
	s = hashtagRe.ReplaceAllStringFunc(s, func(tag string) string {
		return " " + strings.Join(camelRe.FindAllString(tag[1:], -1), " ") + " "
	})
	return s
}

// terms returns the distinct search terms of query, lower-cased, in order
// of first appearance, without stop words, one-letter tokens or tokens too
// long to be words (OCR runs, hashes). Tokens are cut where FTS5's unicode61
// tokenizer cuts them: at anything that is not a letter or a digit.
func terms(query string) []string {
	words := tokens(cleanPostText(query))
	seen := make(map[string]bool, len(words))
	out := words[:0]
	for _, w := range words {
		if seen[w] {
			continue
		}
		seen[w] = true
		out = append(out, w)
	}
	return out
}

// tokens returns query's content words in order, repeats included.
func tokens(query string) []string {
	fields := strings.FieldsFunc(strings.ToLower(query), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	out := fields[:0]
	for _, f := range fields {
		n := len([]rune(f))
		if n < 2 || n > 30 || stopWords[f] {
			continue
		}
		out = append(out, f)
	}
	return out
}

// quote makes a term an FTS5 string: inside double quotes everything is
// literal, and a double quote is written twice.
func quote(t string) string {
	return `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
}

// orQuery matches documents holding any of the terms.
func orQuery(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = quote(t)
	}
	return strings.Join(q, " OR ")
}

// stopWords are English function words and the social-media filler
// ("rt", "via", "amp") that carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn
it its itself just let ll me more most mustn my myself no nor not now of off on once only or other ought our
ours ourselves out over own re same shan she should shouldn so some such than that the their theirs them
themselves then there these they this those through to too under until up ve very was wasn we were weren
what when where which while who whom why will with won would wouldn you your yours yourself yourselves
also get got go going gonna just like make made many much one said say says see still thing things think
u ur us im rt via amp http https www com t co`) {
		m[w] = true
	}
	return m
}()
