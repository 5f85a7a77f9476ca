package lang

import (
	"slices"
	"sync"

	"github.com/blevesearch/bleve/v2/analysis"
	"github.com/blevesearch/bleve/v2/analysis/lang/ar"
	"github.com/blevesearch/bleve/v2/analysis/lang/bg"
	"github.com/blevesearch/bleve/v2/analysis/lang/ca"
	"github.com/blevesearch/bleve/v2/analysis/lang/cs"
	"github.com/blevesearch/bleve/v2/analysis/lang/da"
	"github.com/blevesearch/bleve/v2/analysis/lang/de"
	"github.com/blevesearch/bleve/v2/analysis/lang/el"
	"github.com/blevesearch/bleve/v2/analysis/lang/en"
	"github.com/blevesearch/bleve/v2/analysis/lang/es"
	"github.com/blevesearch/bleve/v2/analysis/lang/eu"
	"github.com/blevesearch/bleve/v2/analysis/lang/fa"
	"github.com/blevesearch/bleve/v2/analysis/lang/fi"
	"github.com/blevesearch/bleve/v2/analysis/lang/fr"
	"github.com/blevesearch/bleve/v2/analysis/lang/ga"
	"github.com/blevesearch/bleve/v2/analysis/lang/gl"
	"github.com/blevesearch/bleve/v2/analysis/lang/hi"
	"github.com/blevesearch/bleve/v2/analysis/lang/hr"
	"github.com/blevesearch/bleve/v2/analysis/lang/hu"
	"github.com/blevesearch/bleve/v2/analysis/lang/hy"
	"github.com/blevesearch/bleve/v2/analysis/lang/id"
	"github.com/blevesearch/bleve/v2/analysis/lang/it"
	"github.com/blevesearch/bleve/v2/analysis/lang/nl"
	"github.com/blevesearch/bleve/v2/analysis/lang/no"
	"github.com/blevesearch/bleve/v2/analysis/lang/pt"
	"github.com/blevesearch/bleve/v2/analysis/lang/ro"
	"github.com/blevesearch/bleve/v2/analysis/lang/ru"
	"github.com/blevesearch/bleve/v2/analysis/lang/sv"
	"github.com/blevesearch/bleve/v2/analysis/lang/tr"
)

// Stop words are bleve's lists (github.com/blevesearch/bleve/v2/analysis/
// lang/*): the Snowball project's and Lucene's, kept with bleve, in 28
// languages. Neither bbalet/stopwords nor orsinium-labs/stopwords is served
// by the module proxy; bleve is, and its Snowball stemmers are muse's.
// (Polish is left out: its package brings a 2 MB stemmer table with it.)
var stopLists = map[string][]byte{
	"ar": ar.ArabicStopWords, "bg": bg.BulgarianStopWords, "ca": ca.CatalanStopWords, "cs": cs.CzechStopWords,
	"da": da.DanishStopWords, "de": de.GermanStopWords, "el": el.GreekStopWords, "en": en.EnglishStopWords,
	"es": es.SpanishStopWords, "eu": eu.BasqueStopWords, "fa": fa.PersianStopWords, "fi": fi.FinnishStopWords,
	"fr": fr.FrenchStopWords, "ga": ga.IrishStopWords, "gl": gl.GalicianStopWords, "hi": hi.HindiStopWords,
	"hr": hr.CroatianStopWords, "hu": hu.HungarianStopWords, "hy": hy.ArmenianStopWords,
	"id": id.IndonesianStopWords, "it": it.ItalianStopWords, "nl": nl.DutchStopWords,
	"no": no.NorwegianStopWords, "nb": no.NorwegianStopWords,
	"pt": pt.PortugueseStopWords, "ro": ro.RomanianStopWords, "ru": ru.RussianStopWords,
	"sv": sv.SwedishStopWords, "tr": tr.TurkishStopWords,
}

// stopListCodes are the languages with a stop list, in a fixed order so
// that a tie goes the same way every time ("nb" is "no"'s list again).
var stopListCodes = func() []string {
	var codes []string
	for code := range stopLists {
		if code != "nb" {
			codes = append(codes, code)
		}
	}
	slices.Sort(codes)
	return codes
}()

// stopSets holds each list parsed, on first use: code → *stopSet.
var stopSets sync.Map

type stopSet struct {
	once sync.Once
	m    analysis.TokenMap
}

// IsStopWord says whether w (lower case) is a function word of the
// language (a Base code): one that says nothing about what a text is
// about. A language without a list has none.
func IsStopWord(w, code string) bool {
	return stopWords(code)[w]
}

// stopWords is the language's stop list (nil when it has none).
func stopWords(code string) analysis.TokenMap {
	data := stopLists[code]
	if data == nil {
		return nil
	}
	v, _ := stopSets.LoadOrStore(code, &stopSet{})
	s := v.(*stopSet)
	s.once.Do(func() {
		s.m = analysis.NewTokenMap()
		_ = s.m.LoadBytes(data) // reads from memory: it cannot fail
	})
	return s.m
}

// stopListsOf says, for each word of a stop list, which lists hold it: bit
// i stands for stopListCodes[i]. One look-up of a word then counts it for
// every language.
var stopListsOf = sync.OnceValue(func() map[string]uint64 {
	if len(stopListCodes) > 64 {
		panic("lang: more stop lists than bits")
	}
	out := map[string]uint64{}
	for i, code := range stopListCodes {
		for w, ok := range stopWords(code) {
			if ok {
				out[w] |= 1 << i
			}
		}
	}
	return out
})
