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
// stems, one ASCII-space-separated token each, so the postings (and the
// claims' FTS5 index) hold exactly what the second stage scores; FTS5's
// own porter tokenizer knows only English.

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

// eachStem calls fn with each stem of a token stream (tokenStream) and
// its index, in order, reading the stream in place; empty tokens (an
// empty stem would make a double space) are skipped, as FTS5's ascii
// tokenizer skips them. It returns the number of stems.
func eachStem(stream string, fn func(i int, st string)) int {
	i := 0
	for stream != "" {
		st := stream
		if j := strings.IndexByte(stream, ' '); j >= 0 {
			st, stream = stream[:j], stream[j+1:]
		} else {
			stream = ""
		}
		if st != "" {
			fn(i, st)
			i++
		}
	}
	return i
}

// stemCount is the number of stems in a token stream.
func stemCount(stream string) int {
	if stream == "" {
		return 0
	}
	if stream[0] != ' ' && stream[len(stream)-1] != ' ' && !strings.Contains(stream, "  ") {
		return strings.Count(stream, " ") + 1
	}
	return eachStem(stream, func(int, string) {})
}

// isWordRune says what words are made of: letters, digits and the marks
// that belong to letters in many scripts.
func isWordRune(r rune) bool {
	if r < utf8.RuneSelf {
		return 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z' || '0' <= r && r <= '9'
	}
	return unicode.IsLetter(r) || unicode.IsNumber(r) || unicode.IsMark(r)
}
