package lang

import (
	"math"
	"slices"
	"sync"
	"unicode"
	"unicode/utf8"
	_ "unsafe" // go:linkname, for whatlanggo's trigram profiles

	"github.com/RadhiFadlillah/whatlanggo"
)

// whatlanggo's trigram profiles: for each language of a script, its 300
// most frequent trigrams, most frequent first. They are the library's own
// tables, read where it keeps them rather than copied here, so an update
// of the module updates them (and a renamed table fails the build).
//
//go:linkname latinLangs github.com/RadhiFadlillah/whatlanggo.latinLangs
var latinLangs map[whatlanggo.Lang][]string

//go:linkname cyrillicLangs github.com/RadhiFadlillah/whatlanggo.cyrillicLangs
var cyrillicLangs map[whatlanggo.Lang][]string

//go:linkname arabicLangs github.com/RadhiFadlillah/whatlanggo.arabicLangs
var arabicLangs map[whatlanggo.Lang][]string

//go:linkname devanagariLangs github.com/RadhiFadlillah/whatlanggo.devanagariLangs
var devanagariLangs map[whatlanggo.Lang][]string

//go:linkname ethiopicLangs github.com/RadhiFadlillah/whatlanggo.ethiopicLangs
var ethiopicLangs map[whatlanggo.Lang][]string

//go:linkname hebrewLangs github.com/RadhiFadlillah/whatlanggo.hebrewLangs
var hebrewLangs map[whatlanggo.Lang][]string

// maxTrigramDistance is whatlanggo's: a profile's i-th trigram weighs
// maxTrigramDistance - i.
const maxTrigramDistance = 300

type trigram [3]rune

// profiles are one script's profiles turned inside out: for each
// trigram, the languages whose profile holds it and at what rank. A
// text's score for every language is then the sum over its own few
// trigrams, where whatlanggo looks up every trigram of every profile
// (some 15,000 map lookups for a Latin text, whatever its length).
type profiles struct {
	langs []whatlanggo.Lang // sorted
	ranks map[trigram][]rank
}

type rank struct {
	lang int // index in langs
	at   int // position in the profile
}

func invert(list map[whatlanggo.Lang][]string) *profiles {
	p := &profiles{ranks: map[trigram][]rank{}}
	for l := range list {
		p.langs = append(p.langs, l)
	}
	slices.Sort(p.langs)
	for li, l := range p.langs {
		for i, s := range list[l] {
			// whatlanggo compares a profile's string with the text's
			// trigrams, which are always three valid runes: any other
			// string never matches.
			if !utf8.ValidString(s) || utf8.RuneCountInString(s) != 3 {
				continue
			}
			var t trigram
			copy(t[:], []rune(s))
			p.ranks[t] = append(p.ranks[t], rank{li, i})
		}
	}
	return p
}

var scriptProfiles = sync.OnceValue(func() map[*unicode.RangeTable]*profiles {
	return map[*unicode.RangeTable]*profiles{
		unicode.Latin:      invert(latinLangs),
		unicode.Cyrillic:   invert(cyrillicLangs),
		unicode.Arabic:     invert(arabicLangs),
		unicode.Devanagari: invert(devanagariLangs),
		unicode.Ethiopic:   invert(ethiopicLangs),
		unicode.Hebrew:     invert(hebrewLangs),
	}
})

// distance is how near a text is to a language's profile: the sum of
// its trigrams' weights in the profile, and how many it holds.
type distance struct{ lang, dist, trigrams int }

// distances are text's distances to each language of p, in p's order.
func (p *profiles) distances(text string) []distance {
	ds := make([]distance, len(p.langs))
	for i := range ds {
		ds[i].lang = i
	}
	for t, w := range countTrigrams(text) {
		for _, r := range p.ranks[t] {
			ds[r.lang].dist += (maxTrigramDistance - r.at) * w
			ds[r.lang].trigrams++
		}
	}
	return ds
}

// trigramDetect is whatlanggo.Detect(text), computed from the inverted
// profiles: the same script, trigrams, distances and confidence. Where
// two languages tie for first (then the confidence is 0), whatlanggo's
// pick depends on the order a map is walked in, which Go randomises; here
// the language first in whatlanggo's numbering wins.
func trigramDetect(text string) whatlanggo.Info {
	script := whatlanggo.DetectScript(text)
	p, ok := scriptProfiles()[script]
	if !ok {
		// no profiles to score: the script says the language
		return whatlanggo.Detect(text)
	}
	ds := p.distances(text)
	info := whatlanggo.Info{Lang: -1, Script: script}
	switch len(ds) {
	case 0:
		return info
	case 1:
		info.Lang, info.Confidence = p.langs[0], 1
		return info
	}
	slices.SortStableFunc(ds, func(a, b distance) int { return b.dist - a.dist })
	first, second := ds[0], ds[1]
	switch {
	case first.dist == 0:
		return info
	case second.dist == 0:
		info.Lang, info.Confidence = p.langs[first.lang], min(float64(first.dist/500), 1)
		return info
	}
	rate := float64(first.dist-second.dist) / float64(second.dist)
	confident := 12/float64(first.trigrams) + 0.05
	conf := 1.0
	if rate <= confident {
		conf = rate / confident
	}
	info.Lang = p.langs[first.lang]
	info.Confidence = math.Round(conf*100) / 100
	return info
}

// countTrigrams is whatlanggo's count: the trigrams of text lower-cased,
// with punctuation, symbols, digits and spaces as a space, a space added
// at each end, and no trigram of a space between two spaces or at a
// word's edge beside the padding.
func countTrigrams(text string) map[trigram]int {
	out := make(map[trigram]int, len(text))
	r1, r2 := ' ', rune(-1)
	step := func(r3 rune) {
		if r2 == -1 {
			r2 = r3
			return
		}
		if !(r2 == ' ' && (r1 == ' ' || r3 == ' ')) {
			out[trigram{r1, r2, r3}]++
		}
		r1, r2 = r2, r3
	}
	for _, r := range text {
		if isStopChar(r) {
			r = ' '
		}
		step(unicode.ToLower(r))
	}
	step(' ')
	return out
}

// isStopChar is whatlanggo's: space, punctuation, a symbol or a digit.
func isStopChar(r rune) bool {
	return unicode.IsSymbol(r) || unicode.IsSpace(r) || unicode.IsPunct(r) || unicode.IsDigit(r)
}
