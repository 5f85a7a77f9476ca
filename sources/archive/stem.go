package archive

import (
	"strings"
	"unicode"
	"unicode/utf8"

	langs "github.com/musecheck/muse/sources/lang"
)

// Documents and queries are cut into words here, in Go, and each word is
// reduced to its Snowball stem in the document's (or query's) language
// (sources/lang, the house's one stemmer). The index stores that stream of
// stems, one ASCII-space-separated token each, so FTS5 matches, counts and
// positions exactly what the second stage scores; FTS5's own porter
// tokenizer knows only English.

// normLang returns the language code documents and queries are stemmed
// under (langs.Base).
func normLang(lang string) string { return langs.Base(lang) }

// stem returns w's stem in lang (a normLang code); w is lower case.
func stem(w, lang string) string { return langs.Stem(w, lang) }

// stemsOf returns the stems of text's content words in order.
func stemsOf(text, lang string) []string {
	ws := tokens(text, lang)
	for i, w := range ws {
		ws[i] = stem(w, lang)
	}
	return ws
}

// tokenStream is text's stems as stored in the index: one token per
// content word, separated by single spaces, which FTS5's ascii tokenizer
// splits back into exactly those tokens.
func tokenStream(text, lang string) (stream string, n int) {
	ss := stemsOf(text, lang)
	return strings.Join(ss, " "), len(ss)
}

// splitStems cuts a token stream back into its stems: tokenStream joins
// them with single spaces, which strings.Split finds several times faster
// than strings.Fields looks for any space; a stream written otherwise
// (an empty stem would make a double space) is cut as FTS5's ascii
// tokenizer would, by strings.Fields.
func splitStems(stream string) []string {
	if stream == "" {
		return nil
	}
	if stream[0] == ' ' || stream[len(stream)-1] == ' ' || strings.Contains(stream, "  ") {
		return strings.Fields(stream)
	}
	return strings.Split(stream, " ")
}

// isWordRune says what words are made of: letters, digits and the marks
// that belong to letters in many scripts.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}
