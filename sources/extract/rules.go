package extract

import "math"

// rules are the choices this package makes on top of go-trafilatura and
// go-htmldate. Each one was chosen by 5-fold cross-validation on the
// benchmark pages, the folds fixed by a hash of each page's file name
// (TestRulesCrossValidated in tuning_test.go): a rule is on only because it
// beat the library alone on pages it was not chosen on, and
// docs/benchmarks.md reports that out-of-fold figure beside the library's on the same pages.
type rules struct {
	// fallbackBelow is the length of main text (in runes) under which
	// trafilatura's first pass is unsure enough to run its readability and
	// dom-distiller fallbacks. They cost as much CPU as everything else
	// together and change little on a page the first pass read well.
	// 0 never runs them, math.MaxInt always does (the library's own way).
	fallbackBelow int
	// fallbackParagraph is the mean paragraph length (in runes) from which
	// the first pass is unsure too: text in few, very long paragraphs is
	// what trafilatura leaves when it lost the page's structure and took a
	// whole column, or one block of a longer story. 0 means no such check.
	fallbackParagraph int
	// detachCleaned takes what trafilatura's cleaning deletes out of the
	// page for its first pass (detachCleaned in prune.go): the same main
	// text for less work, the metadata it finds in the DOM read without
	// navigation and forms.
	detachCleaned bool
	// dropRepeats drops the headline repeated as the first paragraphs.
	dropRepeats bool
	// dropSelfLinks drops paragraphs that are only a link to the site.
	dropSelfLinks bool
	// trimFurniture cuts the related-links and copyright run at the end.
	trimFurniture bool
	// date says how go-htmldate's answer and the page's declared
	// structured date combine.
	date dateRule
	// dateLanguage hands the page's declared language (html lang,
	// og:locale) to go-dateparser, so that dates written in words are read
	// in that language (and English) instead of in every locale.
	dateLanguage bool
	// dateSurrounding lets go-dateparser skip words around a date
	// ("Publicado el 14 de febrero de 2023"), which it otherwise refuses.
	dateSurrounding bool
	// dayStated keeps go-htmldate's date as a day only when the text it
	// read it from states the day (statedPrecision); a year or a month
	// alone is kept as such (Article.PublishedPartial), never as the first
	// of the year or month. It is not chosen on the benchmark but is what
	// muse states: TestRulesCrossValidated reports what it costs there.
	dayStated bool
}

// dateRule orders the two sources of a publication date.
type dateRule int

const (
	// dateLibrary is go-htmldate's answer alone.
	dateLibrary dateRule = iota
	// dateLibraryThenDeclared is go-htmldate's answer, else the date the
	// page declares in JSON-LD, meta tags or microdata.
	dateLibraryThenDeclared
	// dateDeclaredFirst is the declared date when there is one, else
	// go-htmldate's answer.
	dateDeclaredFirst
)

var dateRuleNames = map[dateRule]string{
	dateLibrary: "htmldate", dateLibraryThenDeclared: "htmldate-then-declared", dateDeclaredFirst: "declared-first",
}

func (d dateRule) String() string { return dateRuleNames[d] }

// libraryRules are go-trafilatura and go-htmldate as their authors run them
// (fallbacks on every page, nothing cleaned, go-htmldate's date alone): the
// baseline every rule is measured against.
var libraryRules = rules{fallbackBelow: math.MaxInt, date: dateLibrary}

// chosenRules are the rules muse runs, as the cross-validation chose them
// on all folds together (see tuning_test.go for the figures).
var chosenRules = rules{
	fallbackParagraph: 600,
	detachCleaned:     true,
	dropRepeats:       true,
	dropSelfLinks:     true,
	// trimFurniture no longer gains (F1 equal to four digits) since prune
	// drops the whitespace between blocks, so the choice leaves it off.
	trimFurniture:   false,
	date:            dateLibrary,
	dateLanguage:    true,
	dateSurrounding: true,
	dayStated:       true,
}

// unsure reports whether trafilatura's first pass, which found runes of
// text in paras paragraphs, is unsure enough to run the fallbacks.
func (r rules) unsure(runes, paras int) bool {
	if r.fallbackBelow == math.MaxInt || runes == 0 || runes < r.fallbackBelow {
		return true
	}
	return r.fallbackParagraph > 0 && paras > 0 && runes/paras >= r.fallbackParagraph
}

func (o Options) rules() rules {
	if o.ruleSet != nil {
		return *o.ruleSet
	}
	return chosenRules
}
