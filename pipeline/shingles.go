package pipeline

import (
	"hash/fnv"
	"strings"
	"unicode"
)

// shingleWords is how many words make one shingle: eight words in a row
// shared by two pages are a copied passage, not a shared phrase.
const shingleWords = 8

// shingleSet is the set of a text's shingles, hashed.
type shingleSet map[uint64]struct{}

// shingles hashes each run of shingleWords words of text, the words
// normalised as quotes are matched (case, quotes, dashes) and stripped of
// punctuation. A run the text itself repeats is left out: reporting does
// not repeat eight words in a row, a template does (a site's furniture
// left in the text, "Sign up for …" between paragraphs, a sentence frame
// filled in again and again), and two pages sharing a template are not
// copies of each other.
func shingles(text string) shingleSet {
	words := strings.FieldsFunc(strings.ToLower(normaliseForMatch(text)), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.IsNumber(r)
	})
	out := shingleSet{}
	repeated := map[uint64]bool{}
	h := fnv.New64a()
	for i := 0; i+shingleWords <= len(words); i++ {
		h.Reset()
		for _, w := range words[i : i+shingleWords] {
			h.Write([]byte(w))
			h.Write([]byte{0})
		}
		k := h.Sum64()
		if _, ok := out[k]; ok {
			repeated[k] = true
		}
		out[k] = struct{}{}
	}
	for k := range repeated {
		delete(out, k)
	}
	return out
}

// containment is the share of the smaller set's shingles the other holds:
// 1 when one text is copied whole into the other.
func containment(a, b shingleSet) float64 {
	if len(a) > len(b) {
		a, b = b, a
	}
	if len(a) == 0 {
		return 0
	}
	n := 0
	for k := range a {
		if _, ok := b[k]; ok {
			n++
		}
	}
	return float64(n) / float64(len(a))
}
