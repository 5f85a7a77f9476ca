package lang

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/rivo/uniseg"
)

// Text is measured and split as it is written, by Unicode's own rules
// (UAX #29 word and sentence boundaries, rivo/uniseg), not at spaces and
// ". ": a page of Japanese has no spaces between its words, a Hindi
// sentence ends at "।", a Japanese one at "。", an Arabic question at "؟".

// unspacedScripts are the scripts written without spaces between words
// (Chinese, Japanese, Thai, Lao, Khmer, Burmese). UAX #29 finds no words in
// them: each character is a segment of its own (a katakana run excepted).
var unspacedScripts = []*unicode.RangeTable{unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Thai,
	unicode.Lao, unicode.Khmer, unicode.Myanmar}

// Unspaced reports whether r belongs to a script written without spaces
// between words.
func Unspaced(r rune) bool { return r >= 0x0E00 && unicode.In(r, unspacedScripts...) }

// CharsPerWord is how many characters of a script written without spaces
// count as one word in Words. Chinese words are one or two characters
// (about 1.6 characters for an English word in translation), Japanese ones
// two or three with their kana, Thai and Khmer ones longer: two holds a
// page of Chinese to about as much text as the same count of English words
// and judges the others leniently, rather than keeping out a page for a
// length it has.
const CharsPerWord = 2

// Words is how much text there is, in words, the same unit in every
// script: the UAX #29 word segments that hold a letter or a digit, where a
// script written without spaces, in which UAX #29 finds no words, counts
// one word for every CharsPerWord of its characters (grapheme clusters, so
// a Thai vowel sign or a combining mark is not a character of its own).
// English counts as between spaces, except that a hyphenated word counts
// its parts.
func Words(text string) int {
	n, unspaced := 0, 0
	state := -1
	for len(text) > 0 {
		var seg string
		seg, text, state = uniseg.FirstWordInString(text, state)
		r, _ := utf8.DecodeRuneInString(seg)
		switch {
		case Unspaced(r):
			unspaced += uniseg.GraphemeClusterCount(seg)
		case strings.IndexFunc(seg, func(r rune) bool { return unicode.IsLetter(r) || unicode.IsNumber(r) }) >= 0:
			n++
		}
	}
	return n + (unspaced+CharsPerWord-1)/CharsPerWord
}

// Sentences splits text at its sentence ends (UAX #29 sentence
// boundaries: ". ", "! ", "? " and every script's own terminators, "。",
// "।", "؟", "۔", "።"…, with or without a space after them), each sentence
// trimmed of the spaces around it. "3.5", "U.S. officials" and "e.g. a"
// are not ends.
func Sentences(text string) []string {
	var out []string
	state := -1
	for len(text) > 0 {
		var s string
		s, text, state = uniseg.FirstSentenceInString(text, state)
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// SentenceCut is where to cut s to at most n bytes at a sentence end (UAX
// #29, as in Sentences): the end of the last whole sentence within the
// first n bytes, without the spaces after it, or 0 when the first sentence
// is longer than n.
func SentenceCut(s string, n int) int {
	end, pos := 0, 0
	state := -1
	for len(s) > 0 {
		var sent string
		sent, s, state = uniseg.FirstSentenceInString(s, state)
		if pos+len(strings.TrimRightFunc(sent, unicode.IsSpace)) > n {
			break
		}
		pos += len(sent)
		end = pos - (len(sent) - len(strings.TrimRightFunc(sent, unicode.IsSpace)))
	}
	return end
}
