package extract

import (
	"bytes"
	"crypto/sha256"
	"fmt"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/markusmobius/go-htmldate"
	"golang.org/x/net/html"

	"github.com/musecheck/muse/internal/testkit"
)

// The rules in rules.go are chosen here, by 5-fold cross-validation: the
// folds are fixed by the first byte of the SHA-256 of each page's file name
// (modulo 5), each fold's rules are chosen on the other four folds alone,
// and the figure reported is over every page scored by the rules chosen
// without it (out of fold). The library baseline is scored on the same
// pages. chosenRules must be what the same choice makes on all pages.

const folds = 5

// foldOf is the cross-validation fold of a benchmark file.
func foldOf(file string) int {
	h := sha256.Sum256([]byte(filepath.Base(file)))
	return int(h[0]) % folds
}

// fallbackGates are the candidate ways of deciding that trafilatura's
// first pass is unsure: every value of rules.fallbackBelow with every value
// of rules.fallbackParagraph, and the library's way (always).
func fallbackGates() []rules {
	out := []rules{{fallbackBelow: math.MaxInt}}
	for _, below := range []int{0, 250, 500, 1000, 2000} {
		for _, para := range []int{0, 300, 400, 500, 600, 800, 1000, 2000} {
			out = append(out, rules{fallbackBelow: below, fallbackParagraph: para})
		}
	}
	return out
}

// bodyPage holds what the body rules choose between on one page.
type bodyPage struct {
	id, gold      string
	fold          int
	firstLen      int      // runes of text trafilatura's first pass found
	first, backup []string // paragraphs without and with the fallbacks
	title, host   string
	library       string // go-trafilatura's own text, fallbacks on
	// scores[fallback][cleaning] is the page's shingle score of each text
	// the rules can give: without and with the fallbacks, by cleaning bits.
	scores [2][8]shingles
}

type shingles struct{ tp, fp, fn float64 }

func cleaningBits(r rules) int {
	b := 0
	for i, on := range []bool{r.dropRepeats, r.dropSelfLinks, r.trimFurniture} {
		if on {
			b |= 1 << i
		}
	}
	return b
}

func bitsRules(b int) rules {
	return rules{dropRepeats: b&1 != 0, dropSelfLinks: b&2 != 0, trimFurniture: b&4 != 0}
}

func (p bodyPage) usesFallback(r rules) bool {
	return r.unsure(p.firstLen, len(p.first))
}

func (p *bodyPage) score() {
	for fb, paras := range [][]string{p.first, p.backup} {
		for b := range 8 {
			text := strings.Join(bitsRules(b).clean(slices.Clone(paras), p.title, p.host), "\n\n")
			tp, fp, fn := shingleScore(p.gold, text)
			p.scores[fb][b] = shingles{tp, fp, fn}
		}
	}
}

func (p bodyPage) scoreOf(r rules) shingles {
	fb := 0
	if p.usesFallback(r) {
		fb = 1
	}
	return p.scores[fb][cleaningBits(r)]
}

func loadBodyPages(t *testing.T) []bodyPage {
	dir, gold, urls := loadBench(t)
	ids := make([]string, 0, len(gold))
	for id := range gold {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	var pages []bodyPage
	for _, id := range ids {
		file := id + ".html.gz"
		b, err := readGz(filepath.Join(dir, "html", file))
		if err != nil {
			t.Fatal(err)
		}
		doc, err := html.Parse(bytes.NewReader(b))
		if err != nil {
			t.Fatal(err)
		}
		prune(doc) // as Extract does
		// The first pass as muse runs it.
		first, firstParas := Options{Now: benchNow, ruleSet: &rules{detachCleaned: chosenRules.detachCleaned}}.mainText(doc, urls[id], benchNow)
		backup, backupParas := Options{Now: benchNow, ruleSet: &libraryRules}.mainText(doc, urls[id], benchNow)
		pages = append(pages, bodyPage{
			id: id, gold: gold[id], fold: foldOf(file),
			firstLen: len([]rune(first.ContentText)),
			first:    firstParas, backup: backupParas,
			title: backup.Metadata.Title, host: hostOf(urls[id], backup.Metadata.URL),
			library: backup.ContentText,
		})
		pages[len(pages)-1].score()
	}
	return pages
}

// bodyScore is the benchmark's F1 over pages (as shingleF1 computes it),
// each page scored by the rules rule gives it.
func bodyScore(pages []bodyPage, rule func(bodyPage) rules) prf {
	var sp, sr float64
	var np, nr int
	for _, p := range pages {
		s := p.scoreOf(rule(p))
		if s.tp+s.fp > 0 {
			np++
			sp += ratio(s.tp, s.fp, s.fn, s.fp)
		}
		if s.tp+s.fn > 0 {
			nr++
			sr += ratio(s.tp, s.fp, s.fn, s.fn)
		}
	}
	var m prf
	m.P, m.R = sp/float64(max(1, np)), sr/float64(max(1, nr))
	if m.P+m.R > 0 {
		m.F = 2 * m.P * m.R / (m.P + m.R)
	}
	return m
}

// libraryBodyScore is go-trafilatura's own text scored the same way.
func libraryBodyScore(pages []bodyPage) prf {
	gold, pred := map[string]string{}, map[string]string{}
	for _, p := range pages {
		gold[p.id], pred[p.id] = p.gold, p.library
	}
	return shingleF1(gold, pred)
}

// bodyCandidates are every combination of the body rules: the gates
// running the fallbacks on fewest of pages first, and for each the fewest
// cleaning steps first.
func bodyCandidates(pages []bodyPage) []rules {
	gates := fallbackGates()
	runs := func(g rules) int {
		n := 0
		for _, p := range pages {
			if p.usesFallback(g) {
				n++
			}
		}
		return n
	}
	sort.SliceStable(gates, func(i, j int) bool { return runs(gates[i]) < runs(gates[j]) })
	var out []rules
	for _, g := range gates {
		for _, bits := range []int{0, 1, 2, 4, 3, 5, 6, 7} { // fewest steps first
			c := bitsRules(bits)
			c.fallbackBelow, c.fallbackParagraph = g.fallbackBelow, g.fallbackParagraph
			out = append(out, c)
		}
	}
	return out
}

// tolerance is how much better (in F1) a dearer rule must be to be chosen
// over a cheaper or simpler one that does nearly as well: a fifth of the
// benchmark's own standard error (about 0.01 F1 on these pages), set before
// looking at the folds, so that a rule is kept only for a gain larger than
// what picking the best of many candidates finds by chance.
const tolerance = 0.002

// chooseBody picks, of the candidates whose F1 on pages is within
// tolerance of the best, the first: the gate running the fallbacks on
// fewest pages, then the fewest cleaning steps.
func chooseBody(pages []bodyPage) rules {
	cands := bodyCandidates(pages)
	f := make([]float64, len(cands))
	best := 0.0
	for i, c := range cands {
		f[i] = bodyScore(pages, func(bodyPage) rules { return c }).F
		best = max(best, f[i])
	}
	for i, c := range cands {
		if f[i] >= best-tolerance {
			return c
		}
	}
	return rules{}
}

// datePage holds what the date rules choose between on one page.
type datePage struct {
	url, gold string
	fold      int
	library   string // go-htmldate alone, as its authors evaluate it
	// htmldate as muse runs it, by dateBits, and the declared structured
	// date
	htmldate [4]string
	// coarse says, by dateBits, that the page does not state the day of
	// htmldate's answer (statedPrecision)
	coarse   [4]bool
	declared string
}

// dateBits numbers the combinations of the go-htmldate settings.
func dateBits(r rules) int {
	b := 0
	for i, on := range []bool{r.dateLanguage, r.dateSurrounding} {
		if on {
			b |= 1 << i
		}
	}
	return b
}

func dateBitsRules(b int) rules {
	return rules{dateLanguage: b&1 != 0, dateSurrounding: b&2 != 0}
}

func (p datePage) date(r rules) string {
	lib := p.htmldate[dateBits(r)]
	if r.dayStated && p.coarse[dateBits(r)] {
		lib = ""
	}
	switch {
	case r.date == dateDeclaredFirst && p.declared != "":
		return p.declared
	case r.date != dateLibrary && lib == "":
		return p.declared
	}
	return lib
}

func loadDatePages(t *testing.T) []datePage {
	dir, gold, keys := loadDateEval(t)
	o := Options{Now: benchNow}
	var pages []datePage
	for _, pageURL := range keys {
		g := gold[pageURL]
		p := datePage{url: pageURL, fold: foldOf(g.File)}
		if g.Date != nil {
			p.gold = *g.Date
		}
		page, err := readDatePage(dir, g.File)
		if err == nil && checkHTML(page, true) == nil {
			if doc, err := html.Parse(bytes.NewReader(page)); err == nil {
				gq := goquery.NewDocumentFromNode(doc)
				res, err := htmldate.FromDocument(doc, htmldate.Options{UseOriginalDate: true, URL: pageURL, MaxDate: benchNow})
				if err == nil {
					p.library = dayOf(res.DateTime)
				}
				for b := range 4 {
					r := dateBitsRules(b)
					lang := ""
					if r.dateLanguage {
						lang = declaredLanguage(gq)
					}
					found := o.htmldate(doc, pageURL, r.dateParserConfig(lang, o.Now))
					p.htmldate[b], p.coarse[b] = dayOf(found.t), found.prec < precDay
				}
				p.declared = dayOf(o.declaredPublished(readJSONLD(gq), gq))
			}
		}
		pages = append(pages, p)
	}
	return pages
}

func dayOf(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

// dateCounts is the htmldate-eval confusion count; F is its F-score.
type dateCounts struct{ tp, fp, fn, tn int }

func (c dateCounts) F() float64 { return 2 * float64(c.tp) / float64(max(1, 2*c.tp+c.fp+c.fn)) }
func (c dateCounts) P() float64 { return float64(c.tp) / float64(max(1, c.tp+c.fp)) }
func (c dateCounts) R() float64 { return float64(c.tp) / float64(max(1, c.tp+c.fn)) }

func dateScore(pages []datePage, date func(datePage) string) dateCounts {
	var c dateCounts
	for _, p := range pages {
		switch got := date(p); {
		case got == "" && p.gold == "":
			c.tn++
		case got == "":
			c.fn++
		case got == p.gold:
			c.tp++
		default:
			c.fp++
		}
	}
	return c
}

// dateCandidates are the ways of combining go-htmldate's date with the
// declared one, the library's first. The go-dateparser settings
// (dateLanguage, dateSurrounding) are not chosen on this data but kept as
// chosenRules has them: they are there for pages in other languages
// (TestDatesInThePagesLanguage) and speed, so these pages are out of sample
// for them; TestRulesCrossValidated checks that they cost nothing here.
func dateCandidates() []rules {
	var out []rules
	for _, d := range []dateRule{dateLibrary, dateLibraryThenDeclared, dateDeclaredFirst} {
		r := chosenRules
		r.date = d
		out = append(out, r)
	}
	return out
}

func chooseDate(pages []datePage) rules {
	best, bestF := rules{}, -1.0
	for _, c := range dateCandidates() {
		if f := dateScore(pages, func(p datePage) string { return p.date(c) }).F(); f > bestF+1e-4 {
			best, bestF = c, f
		}
	}
	return best
}

// crossValidate chooses rules on all folds but one and applies them to
// that one; it returns the rules each fold was scored with.
func crossValidate[P any](pages []P, fold func(P) int, choose func([]P) rules) [folds]rules {
	var chosen [folds]rules
	for k := range folds {
		var train []P
		for _, p := range pages {
			if fold(p) != k {
				train = append(train, p)
			}
		}
		chosen[k] = choose(train)
	}
	return chosen
}

func describeRules(r rules, body bool) string {
	if !body {
		return fmt.Sprintf("%s lang=%v surrounding=%v day-stated=%v", r.date, r.dateLanguage, r.dateSurrounding, r.dayStated)
	}
	gate := "fallback always"
	if r.fallbackBelow != math.MaxInt {
		gate = fmt.Sprintf("fallback if text<%d or paragraph mean>=%d", r.fallbackBelow, r.fallbackParagraph)
	}
	return fmt.Sprintf("%s repeats=%v selflinks=%v furniture=%v", gate, r.dropRepeats, r.dropSelfLinks, r.trimFurniture)
}

// TestRulesCrossValidated chooses the body and date rules fold by fold,
// reports the out-of-fold figures next to the libraries' on the same pages,
// and checks that chosenRules is what the same choice makes on all pages
// and that it is no worse than the library out of fold.
func TestRulesCrossValidated(t *testing.T) {
	testkit.Tuning(t)
	if testing.Short() {
		t.Skip("reads both benchmarks twice over")
	}
	t.Run("body", func(t *testing.T) {
		pages := loadBodyPages(t)
		perFold := crossValidate(pages, func(p bodyPage) int { return p.fold }, chooseBody)
		oof := bodyScore(pages, func(p bodyPage) rules { return perFold[p.fold] })
		lib := libraryBodyScore(pages)
		for k, r := range perFold {
			t.Logf("fold %d: %s", k, describeRules(r, true))
		}
		t.Logf("main text, %d pages, out of fold: muse F1 %.3f (P %.3f R %.3f); go-trafilatura %.3f (P %.3f R %.3f)",
			len(pages), oof.F, oof.P, oof.R, lib.F, lib.P, lib.R)
		if os.Getenv("EXTRACT_DEBUG") != "" {
			for _, c := range bodyCandidates(pages) {
				m := bodyScore(pages, func(bodyPage) rules { return c })
				t.Logf("  %-55s F1 %.4f P %.4f R %.4f", describeRules(c, true), m.F, m.P, m.R)
			}
		}
		all := chooseBody(pages)
		in := bodyScore(pages, func(bodyPage) rules { return all })
		t.Logf("chosen on all pages: %s, F1 %.3f in sample", describeRules(all, true), in.F)
		want := rules{
			fallbackBelow: chosenRules.fallbackBelow, fallbackParagraph: chosenRules.fallbackParagraph,
			dropRepeats: chosenRules.dropRepeats, dropSelfLinks: chosenRules.dropSelfLinks, trimFurniture: chosenRules.trimFurniture,
		}
		if all != want {
			t.Errorf("chosenRules body part is %s; the cross-validated choice is %s", describeRules(want, true), describeRules(all, true))
		}
		if oof.F < lib.F {
			t.Errorf("out of fold F1 %.3f is below go-trafilatura's %.3f: the rules hurt", oof.F, lib.F)
		}
	})
	t.Run("date", func(t *testing.T) {
		pages := loadDatePages(t)
		perFold := crossValidate(pages, func(p datePage) int { return p.fold }, chooseDate)
		oof := dateScore(pages, func(p datePage) string { return p.date(perFold[p.fold]) })
		lib := dateScore(pages, func(p datePage) string { return p.library })
		for k, r := range perFold {
			t.Logf("fold %d: %s", k, describeRules(r, false))
		}
		t.Logf("publication date, %d pages, out of fold: muse F %.3f (P %.3f R %.3f %+v); go-htmldate %.3f (P %.3f R %.3f %+v)",
			len(pages), oof.F(), oof.P(), oof.R(), oof, lib.F(), lib.P(), lib.R(), lib)
		for b := range 4 {
			r := dateBitsRules(b)
			m := dateScore(pages, func(p datePage) string { return p.date(r) })
			t.Logf("  go-htmldate as muse runs it, %s: F %.3f %+v", describeRules(r, false), m.F(), m)
			if r.dateLanguage == chosenRules.dateLanguage && r.dateSurrounding == chosenRules.dateSurrounding && m.F() < lib.F() {
				t.Errorf("the go-dateparser settings of chosenRules cost F here: %.3f, go-htmldate alone %.3f", m.F(), lib.F())
			}
		}
		dayStatedReport(t, pages)
		all := chooseDate(pages)
		in := dateScore(pages, func(p datePage) string { return p.date(all) })
		t.Logf("chosen on all pages: %s, F %.3f in sample", describeRules(all, false), in.F())
		if all.date != chosenRules.date {
			t.Errorf("chosenRules date part is %s; the cross-validated choice is %s", describeRules(chosenRules, false), describeRules(all, false))
		}
		if oof.F() < lib.F() {
			t.Errorf("out of fold F %.3f is below go-htmldate's %.3f: the rules hurt", oof.F(), lib.F())
		}
	})
}

// dayStatedReport scores chosenRules with and without rules.dayStated on
// every fold, and how often the year or month kept of an answer whose day
// the page does not state was right. dayStated has no threshold, so nothing
// is tuned: these figures are out of sample for it.
func dayStatedReport(t *testing.T, pages []datePage) {
	on, off := chosenRules, chosenRules
	off.dayStated = false
	for k := range folds {
		var fold []datePage
		for _, p := range pages {
			if p.fold == k {
				fold = append(fold, p)
			}
		}
		a, b := dateScore(fold, func(p datePage) string { return p.date(off) }), dateScore(fold, func(p datePage) string { return p.date(on) })
		t.Logf("  fold %d: day-stated off F %.3f P %.3f %+v; on F %.3f P %.3f %+v", k, a.F(), a.P(), a, b.F(), b.P(), b)
	}
	a, b := dateScore(pages, func(p datePage) string { return p.date(off) }), dateScore(pages, func(p datePage) string { return p.date(on) })
	t.Logf("day-stated off: F %.3f (P %.3f R %.3f %+v); on: F %.3f (P %.3f R %.3f %+v)", a.F(), a.P(), a.R(), a, b.F(), b.P(), b.R(), b)
	var coarse, dayRight, partRight int
	for _, p := range pages {
		b := dateBits(chosenRules)
		if !p.coarse[b] || p.htmldate[b] == "" {
			continue
		}
		coarse++
		if p.htmldate[b] == p.gold {
			dayRight++
		}
		if p.gold != "" && p.htmldate[b][:4] == p.gold[:4] {
			partRight++
		}
		t.Logf("    day not stated: answer %s, gold %q, %s", p.htmldate[b], p.gold, p.url)
	}
	t.Logf("go-htmldate answered a day the page does not state on %d pages: the day right on %d, the year right on %d", coarse, dayRight, partRight)
	if b.fp > a.fp {
		t.Errorf("day-stated gives more wrong days (%d) than without it (%d)", b.fp, a.fp)
	}
}
