// Package lang says what language a post or a page is written in, and
// names languages the way prompts and people need them ("Spanish (es)").
//
// Detection is whatlanggo's trigram model (github.com/RadhiFadlillah/
// whatlanggo, the fork go-trafilatura already uses, so muse carries no
// second model). On the short social-media posts of testdata/posts.tsv —
// ten languages, ten posts each, written for these tests — it is right on
// 95 of 100 (lingua-go, which would add 124 MB of models to the binary,
// is right on 97); its misses are near neighbours (es→pt, nl→af, id→jv), so
// the checker can always set the language by hand.
package lang

import (
	"cmp"
	"math/bits"
	"strings"
	"sync"
	"unicode"

	"github.com/RadhiFadlillah/whatlanggo"
	"golang.org/x/text/language"
	"golang.org/x/text/language/display"

	"github.com/musecheck/muse/sources/links"
)

// Detection is what Detect found.
type Detection struct {
	Code       string  // ISO 639-1; "" when the text says too little
	Confidence float64 // whatlanggo's, from 0 to 1
	Reliable   bool    // whatlanggo's own judgement of the margin
}

// Detect guesses the language of text (a post with the text read from its
// images, or a page). Links, @handles and the # of hashtags are left out
// first: they are not written in any language. Text with fewer than two
// words of letters gives "".
func Detect(text string) Detection {
	t := prose(text)
	if words(t) < 2 {
		return Detection{}
	}
	info := whatlanggo.Detect(t)
	code := info.Lang.Iso6391()
	if code == "" {
		return Detection{}
	}
	d := Detection{Code: code, Confidence: info.Confidence, Reliable: info.IsReliable()}
	if !d.Reliable {
		d.Code = byFunctionWords(t, d.Code)
	}
	d.Code = cyrillicLetters(t, d.Code)
	if d.Code == "zh" && kana(t) {
		// Chinese is never written with kana; Japanese always is, and a
		// post heavy with kanji reads as Chinese to the trigrams.
		d.Code = "ja"
	}
	return d
}

// cyrillicLetters corrects a guess among the Cyrillic languages by the
// letters each alphabet has alone, which trigrams of a short post can
// miss: ы and э are Russian or Belarusian, never Bulgarian, Macedonian,
// Serbian or Ukrainian; ў and a Cyrillic і beside ы are Belarusian; є, ї
// and ґ are Ukrainian.
func cyrillicLetters(text, guess string) string {
	switch guess {
	case "ru", "uk", "be", "bg", "mk", "sr":
	default:
		return guess
	}
	has := func(letters string) bool { return strings.ContainsAny(strings.ToLower(text), letters) }
	switch {
	case has("ў") || has("ы") && has("і"):
		return "be"
	case has("ыэ"):
		return "ru"
	case has("єїґ"):
		return "uk"
	}
	return guess
}

// kana says whether text holds a run of Japanese kana (hiragana or
// katakana) of at least two characters, or three kana in all.
func kana(text string) bool {
	n, run := 0, 0
	for _, r := range text {
		if unicode.In(r, unicode.Hiragana, unicode.Katakana) && r != 'ー' && r != '・' {
			n, run = n+1, run+1
			if run >= 2 || n >= 3 {
				return true
			}
		} else {
			run = 0
		}
	}
	return false
}

// byFunctionWords settles a detection the trigram profiles are unsure of:
// in a few words they take German for Danish ("Der Impfgipfel wurde
// abgesagt, sagt Lindner"), where the function words are plain. The
// language whose stop-word list holds more of the text's words than the
// guess's own, and at least two, replaces the guess.
func byFunctionWords(text, guess string) string {
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool {
		return !unicode.IsLetter(r) && !unicode.Is(unicode.Mn, r) && r != '\''
	})
	own, counts := 0, make([]int, len(stopListCodes))
	lists := stopListsOf()
	for _, w := range words {
		if IsStopWord(w, guess) {
			own++
		}
		for m := lists[w]; m != 0; m &= m - 1 {
			counts[bits.TrailingZeros64(m)]++
		}
	}
	best, most := guess, own
	for i, code := range stopListCodes {
		if n := counts[i]; n > most && n >= 2 {
			best, most = code, n
		}
	}
	return best
}

// prose keeps the words of text that are written in a language.
func prose(text string) string {
	var b strings.Builder
	prev := 0
	for _, l := range links.Find(text) {
		b.WriteString(text[prev:l.Start])
		b.WriteString(" " + l.Label + " ")
		prev = l.End
	}
	b.WriteString(text[prev:])
	var out []string
	for _, w := range strings.Fields(b.String()) {
		if strings.HasPrefix(w, "@") {
			continue
		}
		out = append(out, strings.TrimLeft(w, "#"))
	}
	return strings.Join(out, " ")
}

// words counts the words of s: its space-separated fields with a letter,
// where each character of a script written without spaces between words
// (Chinese, Japanese kana, Thai, Lao, Khmer, Myanmar) counts as one, so a
// post of one unbroken line of Chinese is long enough to be detected.
func words(s string) int {
	n := 0
	for _, w := range strings.Fields(s) {
		unspaced := 0
		for _, r := range w {
			if Unspaced(r) {
				unspaced++
			}
		}
		switch {
		case unspaced > 0:
			n += unspaced
		case strings.IndexFunc(w, unicode.IsLetter) >= 0:
			n++
		}
	}
	return n
}

// Normalise returns the ISO 639-1 code for what a person typed ("ES",
// "es-MX", "spa", "Spanish", "Catalan", "català"), or "" when it names no
// language. A language without a 639-1 code that the detector knows
// (Cebuano, say) gives its ISO 639-3 code.
func Normalise(s string) string {
	s = strings.TrimSpace(s)
	if s == "" {
		return ""
	}
	tag, err := language.Parse(s)
	if err == nil {
		if base, conf := tag.Base(); conf != language.No && len(base.String()) == 2 {
			return base.String() // "iw" is "he" now, "spa" "es"
		}
		// CLDR writes Tagalog "fil", which has no 639-1 code; "tl" is the
		// one the detector gives.
		if raw, err := language.Raw.Parse(s); err == nil {
			if base, conf := raw.Base(); conf != language.No && len(base.String()) == 2 {
				return base.String()
			}
		}
	}
	if code, ok := languageNames()[foldName(s)]; ok { // a name, or a detector's 639-3 code ("pes", "ceb")
		return code
	}
	if err == nil { // a 639-3 language of no 639-1 code, known by name
		if base, conf := tag.Base(); conf != language.No && display.English.Languages().Name(base) != "" {
			return base.String()
		}
	}
	return ""
}

// languageNames maps names of languages, folded (foldName), to their codes:
// the stemmers' names ("norwegian"), the English name and the name in
// itself that golang.org/x/text gives each ISO 639-1 language ("catalan",
// "catala"), then whatlanggo's English names and ISO 639-3 codes of the
// languages it detects ("bokmal", "mandarin", "pes"). A name taken keeps
// its first code.
var languageNames = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	add := func(name, code string) {
		if k := foldName(name); k != "" {
			if _, ok := m[k]; !ok {
				m[k] = code
			}
		}
	}
	for code, st := range stemmers {
		add(st.name, code) // no two share a name
	}
	for a := 'a'; a <= 'z'; a++ {
		for b := 'a'; b <= 'z'; b++ {
			code := string([]rune{a, b})
			base, err := language.ParseBase(code)
			if err != nil || base.String() != code {
				continue
			}
			if canon, _ := language.Make(code).Base(); canon.String() != code && len(canon.String()) == 2 {
				continue // a withdrawn code ("iw", "ji"): its language is named under the current one
			}
			if n := display.English.Languages().Name(base); n != "" {
				add(n, code)
				add(display.Self.Name(language.Make(code)), code)
			}
		}
	}
	for l := range whatlanggo.Langs {
		code := cmp.Or(l.Iso6391(), m[foldName(l.String())], l.Iso6393()) // whatlanggo's "ydd" is Yiddish, "yi"
		add(l.String(), code)
		add(l.Iso6393(), code)
		if base, err := language.ParseBase(l.Iso6393()); err == nil {
			add(display.English.Languages().Name(base), code) // "Iloko" for whatlanggo's "Ilocano"
		}
	}
	return m
})

// detectorNames are whatlanggo's English names of the languages it
// detects, by the code Normalise gives them, for the few x/text does not
// name (Saraiki).
var detectorNames = sync.OnceValue(func() map[string]string {
	m := map[string]string{}
	for l := range whatlanggo.Langs {
		m[Normalise(l.Iso6393())] = l.String()
	}
	return m
})

// foldName is a language name as languageNames keys it: lower case,
// without diacritics, single spaces.
func foldName(s string) string {
	return strings.Join(strings.Fields(strings.ToLower(FoldDiacritics(s))), " ")
}

// Name is the language's English name ("Spanish"), or the code itself when
// it is not a language.
func Name(code string) string {
	if st, ok := stemmers[code]; ok {
		return st.name // "no" is Norwegian, which x/text calls Bokmål
	}
	tag, err := language.Parse(code)
	if err != nil {
		return code
	}
	if n := display.English.Languages().Name(tag); n != "" {
		return n
	}
	return cmp.Or(detectorNames()[code], code)
}

// Label is how prompts and the app name a language: "Spanish (es)".
// Small local models follow a named language far better than "the language
// of the post".
func Label(code string) string {
	if code == "" {
		return ""
	}
	return Name(code) + " (" + code + ")"
}
