package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/sentence"
)

// The support map says of each sentence of the correction whether the
// quotes it cites say it. It is derived from the correction's text and
// evidence as they are whenever it is read (Check.SupportMap): a lexical
// check, always computed afresh, names the figures, names and dates a
// sentence states that no quote it cites (nor the post) holds; a model's
// judgement, asked in one call for every cited sentence not yet judged
// (JudgeSupport), is kept only under a hash of the sentence and the
// quotes it cites (Check.SupportJudgements), so an edited sentence, or one
// whose citation moved, is judged again and never inherits a judgement.

// Support statuses of a sentence.
const (
	SupportSupported   = prompts.SupportSupported
	SupportPartly      = prompts.SupportPartly
	SupportUnsupported = prompts.SupportUnsupported
	// SupportUncited: the sentence cites no page (context, or the
	// verdict's opening, stated without a source: honest, but unsourced).
	SupportUncited = "uncited"
	// SupportNotJudged: it cites pages, but no model has judged whether
	// they say it (none configured, the call failed, or the answer left
	// it out).
	SupportNotJudged = "not judged"
)

// SentenceSupport is one sentence of the correction and what its cited
// quotes say of it.
type SentenceSupport struct {
	N    int    `json:"n"`
	Text string `json:"text"`
	// Cites are the evidence pages the sentence links to.
	Cites  []string `json:"cites"`
	Status string   `json:"status"`
	Reason string   `json:"reason,omitempty"`
	// NotSaying are the cited pages the model found do not say what the
	// sentence states.
	NotSaying []string `json:"not_saying,omitempty"`
	// Unheld are the figures, names and dates of the sentence that no
	// quote it cites, nor the post, holds (the lexical check; for an
	// uncited sentence, no quote the correction rests on).
	Unheld []string `json:"unheld,omitempty"`
	// Model is the model that judged it.
	Model string `json:"model,omitempty"`
}

// SupportJudgement is a model's judgement of one sentence against the
// quotes it cites, kept under SentenceSupport's key.
type SupportJudgement struct {
	Status    string   `json:"status"`
	Reason    string   `json:"reason,omitempty"`
	NotSaying []string `json:"not_saying,omitempty"`
	Model     string   `json:"model,omitempty"`
}

// citedSentence is a sentence of the correction with the evidence pages
// it links to and the quotes of them it rests on.
type citedSentence struct {
	text    string
	cites   []string   // URLs as written
	quotes  [][]string // per cite
	foreign bool       // it links only to pages that are not evidence
	key     string
}

// correctionSentences splits the correction into sentences, each with
// what it cites.
func (c *Check) correctionSentences() []citedSentence {
	text := strings.Join(strings.Fields(c.Correction.Text), " ")
	if text == "" || c.Correction.Unsourced() {
		return nil
	}
	evidence := c.evidencePages()
	var out []citedSentence
	for _, s := range gluedCitations(sentence.Split(text)) {
		cs := citedSentence{text: s}
		seen := map[string]bool{}
		other := false
		for _, l := range links.Find(s) {
			k := sources.Key(l.URL)
			switch {
			case evidence[k] && !seen[k]:
				seen[k] = true
				cs.cites = append(cs.cites, l.URL)
				cs.quotes = append(cs.quotes, c.pageQuotes(k))
			case c.Post.URL != "" && k == sources.Key(c.Post.URL):
			case !evidence[k]:
				other = true
			}
		}
		cs.foreign = other && len(cs.cites) == 0
		cs.key = supportKey(cs)
		out = append(out, cs)
	}
	return out
}

// gluedCitations moves links that open a sentence ("… in Genoa.
// <https://reuters…> Edited by the desk.") to the sentence before, which
// they cite.
func gluedCitations(ss []string) []string {
	var out []string
	for _, s := range ss {
		end := 0
		for _, l := range links.Find(s) {
			if strings.TrimLeft(s[end:l.Start], " <>()[],;.。") != "" {
				break
			}
			end = l.End
		}
		if end > 0 && len(out) > 0 {
			end += len(s[end:]) - len(strings.TrimLeft(s[end:], ">)]"))
			out[len(out)-1] += " " + strings.TrimSpace(s[:end])
			s = strings.TrimSpace(s[end:])
		}
		if s != "" {
			out = append(out, s)
		}
	}
	return out
}

// pageQuotes are the quotes the correction may rest on of the evidence
// page with key k: its included, verified quotes, or a published
// fact-check's claim and rating.
func (c *Check) pageQuotes(k string) []string {
	var out []string
	for _, e := range c.Evidence {
		if !e.Included || !e.Verified {
			continue
		}
		if s := c.SourceByURL(e.SourceURL); s != nil && s.Eligible() && (sources.Key(s.URL) == k || s.FinalURL != "" && sources.Key(s.FinalURL) == k) {
			out = append(out, e.Quote)
		}
	}
	for _, f := range c.FactChecks {
		if f.URL != "" && f.Rating != "" && sources.Key(f.URL) == k {
			out = append(out, fmt.Sprintf("%s rated the claim %q %s.", f.Reviewer, f.Claim, f.Rating))
		}
	}
	return out
}

// supportKey hashes a sentence with the quotes it cites: a judgement is
// reused only for the same words resting on the same quotes.
func supportKey(cs citedSentence) string {
	h := sha256.New()
	h.Write([]byte(cs.text))
	type page struct{ k, q string }
	var ps []page
	for i, u := range cs.cites {
		ps = append(ps, page{sources.Key(u), strings.Join(cs.quotes[i], "\x1f")})
	}
	slices.SortFunc(ps, func(a, b page) int { return cmp.Compare(a.k, b.k) })
	for _, p := range ps {
		h.Write([]byte("\x00" + p.k + "\x00" + p.q))
	}
	return hex.EncodeToString(h.Sum(nil)[:16])
}

// SupportMap is the support of each sentence of the correction as it is
// now: the lexical check computed afresh, the model's judgement where one
// is kept for the sentence's words and cited quotes.
func (c *Check) SupportMap() []SentenceSupport {
	var out []SentenceSupport
	var all heldSet // every quote's terms, gathered once an uncited sentence needs them
	for i, cs := range c.correctionSentences() {
		ss := SentenceSupport{N: i + 1, Text: cs.text, Cites: cs.cites}
		if all.words == nil && len(cs.cites) == 0 {
			all = c.heldTerms(nil)
		}
		held := all
		if len(cs.cites) > 0 {
			held = c.heldTerms(cs.quotes)
			for _, u := range cs.cites {
				if s := c.SourceByURL(u); s != nil {
					held.addWords(s.Label() + " " + s.Title)
				}
			}
		}
		ss.Unheld = held.unheld(cs.text)
		switch j, ok := c.SupportJudgements[cs.key]; {
		case cs.foreign:
			ss.Status, ss.Reason = SupportUnsupported, "it links only to pages that hold none of the quotes the correction rests on"
		case len(cs.cites) == 0:
			ss.Status = SupportUncited
		case ok:
			ss.Status, ss.Reason, ss.Model = j.Status, j.Reason, j.Model
			for _, u := range j.NotSaying {
				if slices.ContainsFunc(cs.cites, func(v string) bool { return sources.Key(v) == sources.Key(u) }) {
					ss.NotSaying = append(ss.NotSaying, u)
				}
			}
		case c.NoLLM:
			ss.Status, ss.Reason = SupportNotJudged, "made without a language model: only the lexical check ran"
		default:
			ss.Status, ss.Reason = SupportNotJudged, "no model has judged it yet"
		}
		out = append(out, ss)
	}
	return out
}

// SupportWarnings are the correction's warnings about what its quotes do
// not say: each figure no quote it rests on holds (unheldFigures), then
// each cited sentence its quotes do not say (supportWarnings). They are
// part of CorrectionWarnings; an export with no room for warnings (a
// note, a ClaimReview) has them said beside it.
func (c *Check) SupportWarnings() []string {
	text := strings.TrimSpace(c.Correction.Text)
	if text == "" || c.Correction.Unsourced() {
		return nil
	}
	figs, warned := c.unheldFigures(text)
	return append(figs, c.supportWarnings(warned)...)
}

// supportWarnings name each cited sentence whose quotes do not say it:
// the terms no quote it cites holds (those no quote at all holds are
// warned of by unheldFigures), the model's unsupported or partly, and each
// cited page the model found does not say it.
func (c *Check) supportWarnings(nowhere map[string]bool) []string {
	var out []string
	for _, ss := range c.SupportMap() {
		if len(ss.Cites) == 0 {
			continue
		}
		var terms []string
		for _, t := range ss.Unheld {
			if !nowhere[t] {
				terms = append(terms, t)
			}
		}
		if len(terms) > 0 {
			out = append(out, fmt.Sprintf("sentence %d states %s, which no quote it cites holds (it cites %s)", ss.N, strings.Join(terms, ", "), strings.Join(ss.Cites, ", ")))
		}
		switch ss.Status {
		case SupportUnsupported, SupportPartly:
			w := fmt.Sprintf("sentence %d is %s by the quotes it cites", ss.N, map[string]string{SupportUnsupported: "not supported", SupportPartly: "only partly supported"}[ss.Status])
			if ss.Reason != "" {
				w += ": " + strings.TrimSuffix(ss.Reason, ".")
			}
			out = append(out, w)
		}
		for _, u := range ss.NotSaying {
			out = append(out, fmt.Sprintf("sentence %d cites %s, but %s does not say it", ss.N, u, u))
		}
	}
	return out
}

// SupportRequest is what a model is asked about the correction as it
// is: its cited sentences that no judgement is kept for.
type SupportRequest struct {
	Post      Post
	Sentences []prompts.SupportSentence
	keys      []string
	pages     []string // page n of the prompt is pages[n-1]
	// all are the keys of every sentence of the text asked about: the
	// judgements kept for them stay when the result is added.
	all []string
}

// SupportRequest lists the cited sentences to judge.
func (c *Check) SupportRequest() SupportRequest {
	req := SupportRequest{Post: c.Post}
	pageN := map[string]int{}
	for i, cs := range c.correctionSentences() {
		req.all = append(req.all, cs.key)
		if len(cs.cites) == 0 {
			continue
		}
		if _, ok := c.SupportJudgements[cs.key]; ok {
			continue
		}
		ps := prompts.SupportSentence{N: i + 1, Text: cs.text}
		for j, u := range cs.cites {
			k := sources.Key(u)
			if pageN[k] == 0 {
				req.pages = append(req.pages, u)
				pageN[k] = len(req.pages)
			}
			p := prompts.SupportPage{N: pageN[k], Quotes: cs.quotes[j]}
			if s := c.SourceByURL(u); s != nil {
				p.Publisher = s.Label()
			}
			ps.Pages = append(ps.Pages, p)
		}
		req.Sentences = append(req.Sentences, ps)
		req.keys = append(req.keys, cs.key)
	}
	return req
}

// SupportJudge is a Model that judges the support map (LLMModel).
type SupportJudge interface {
	JudgeSupport(ctx context.Context, post Post, sentences []prompts.SupportSentence) ([]prompts.SupportJudgement, CallUsage, error)
	ModelName(task string) string
}

// SupportResult is a model's answer to a SupportRequest.
type SupportResult struct {
	Judgements map[string]SupportJudgement
	Usage      CallUsage
	// Left is how many sentences asked about the answer did not judge.
	Left int
	keep []string
}

// JudgeSupport asks m, in one call, about every sentence of req.
func JudgeSupport(ctx context.Context, m SupportJudge, req SupportRequest) (SupportResult, error) {
	res := SupportResult{Judgements: map[string]SupportJudgement{}, keep: req.all}
	if len(req.Sentences) == 0 {
		return res, nil
	}
	js, u, err := m.JudgeSupport(ctx, req.Post, req.Sentences)
	res.Usage = u
	if err != nil {
		res.Left = len(req.Sentences)
		return res, err
	}
	name := m.ModelName(TaskSupport)
	for i, s := range req.Sentences {
		k := slices.IndexFunc(js, func(j prompts.SupportJudgement) bool { return j.N == s.N })
		if k < 0 {
			res.Left++
			continue
		}
		j := SupportJudgement{Status: js[k].Status, Reason: js[k].Reason, Model: name}
		for _, n := range js[k].NotSaying {
			if n >= 1 && n <= len(req.pages) && slices.ContainsFunc(s.Pages, func(p prompts.SupportPage) bool { return p.N == n }) {
				j.NotSaying = append(j.NotSaying, req.pages[n-1])
			}
		}
		res.Judgements[req.keys[i]] = j
	}
	return res, nil
}

// TaskSupport is the model task the support map is judged with: the
// correction's model.
const TaskSupport = llm.TaskCorrection

// AddSupport keeps the judgements of res, and of those kept before the
// ones for the sentences as they are now or as they were asked about (the
// text being typed), and counts the call's usage.
func (c *Check) AddSupport(res SupportResult) {
	if res.Usage != (CallUsage{}) {
		c.Usage.Add(res.Usage)
		if c.Usage.ByStage == nil {
			c.Usage.ByStage = map[string]StageUsage{}
		}
		s := c.Usage.ByStage[stageSupport]
		s.Add(res.Usage)
		c.Usage.ByStage[stageSupport] = s
	}
	keep := map[string]bool{}
	for _, k := range res.keep {
		keep[k] = true
	}
	for _, cs := range c.correctionSentences() {
		keep[cs.key] = true
	}
	kept := map[string]SupportJudgement{}
	for k, j := range c.SupportJudgements {
		if keep[k] {
			kept[k] = j
		}
	}
	maps.Copy(kept, res.Judgements)
	c.SupportJudgements = kept
	if len(kept) == 0 {
		c.SupportJudgements = nil
	}
}

// stageSupport is the usage record of the support map's calls.
const stageSupport = "support"

// SupportJudge is the engine's model when it judges the support map: nil
// without a model (extractive mode) or with one that cannot.
func (e *Engine) SupportJudge() SupportJudge {
	if e.opts.NoLLM {
		return nil
	}
	m, _ := e.deps.Model.(SupportJudge)
	return m
}

// JudgeSupport judges, in one call, the cited sentences of c's correction
// not yet judged, and keeps the judgements in c; without a model it does
// nothing (the support map says those sentences were not judged).
func (e *Engine) JudgeSupport(ctx context.Context, c *Check) error {
	m := e.SupportJudge()
	if m == nil || c.NoLLM {
		return nil
	}
	res, err := JudgeSupport(ctx, m, c.SupportRequest())
	c.AddSupport(res)
	return err
}

// heldSet is what the lexical check finds held: figures (foldText),
// months, and lower-cased words (for names).
type heldSet struct {
	figures map[string]bool
	months  map[int]bool
	words   map[string]bool
}

// heldTerms are the figures, months and words of the quotes given (all
// the quotes the correction may rest on when quotes is nil) and of the
// post.
func (c *Check) heldTerms(quotes [][]string) heldSet {
	h := heldSet{figures: map[string]bool{}, months: map[int]bool{}, words: map[string]bool{}}
	h.add(c.Post.Text)
	h.addWords(c.Post.Author + " " + c.Post.Handle)
	if quotes == nil {
		for _, e := range c.Evidence {
			if s := c.SourceByURL(e.SourceURL); e.Included && e.Verified && (s == nil || !s.Dropped) {
				h.add(e.Quote)
			}
		}
		return h
	}
	for _, qs := range quotes {
		for _, q := range qs {
			h.add(q)
		}
	}
	return h
}

func (h heldSet) add(text string) {
	text = foldText(text)
	for _, f := range figures(text) {
		h.figures[f] = true
	}
	for _, m := range months(text) {
		h.months[m] = true
	}
	h.addWords(text)
}

func (h heldSet) addWords(text string) {
	for _, w := range strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
		h.words[w] = true
	}
}

// unheld are the terms of text this set does not hold: figures, month
// names, and capitalised words past a sentence's first (names).
func (h heldSet) unheld(text string) []string {
	text = foldText(text)
	var out []string
	add := func(t string) {
		if !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	for _, f := range figures(text) {
		if !h.figures[f] {
			add(f)
		}
	}
	for _, m := range months(text) {
		if !h.months[m] {
			add(monthNames[m-1])
		}
	}
	for _, n := range names(text) {
		if !h.words[strings.ToLower(n)] {
			add(n)
		}
	}
	return out
}

// foldText writes the typographic forms of figures one way: digits of
// any script as ASCII, dashes and minus signs as "-", thousands
// separators (comma, thin and no-break spaces, apostrophes) dropped,
// "per cent" as "%", and "1.2 million" as 1200000. Links are left out.
// The answers are remembered (foldedTexts): every save of a Check folds its
// post and every quote again for its support map and warnings, the same
// texts each time, and the links in them were a twelfth of a queued
// check's CPU.
func foldText(text string) string {
	foldedTexts.Lock()
	f, ok := foldedTexts.m[text]
	foldedTexts.Unlock()
	if ok {
		return f
	}
	f = foldTextOnce(text)
	foldedTexts.Lock()
	if foldedTexts.m == nil || len(foldedTexts.m) >= foldedMax {
		foldedTexts.m = make(map[string]string, foldedMax)
	}
	foldedTexts.m[text] = f
	foldedTexts.Unlock()
	return f
}

// foldedTexts holds foldText's answers, up to foldedMax of them (then
// it starts again).
var foldedTexts struct {
	sync.Mutex
	m map[string]string
}

const foldedMax = 4096

// foldTextOnce is foldText without the memory.
func foldTextOnce(text string) string {
	for _, l := range slices.Backward(links.Find(text)) {
		text = text[:l.Start] + " " + text[l.End:]
	}
	text = strings.Map(func(r rune) rune {
		switch {
		case r >= '0' && r <= '9':
			return r
		case unicode.IsDigit(r):
			return '0' + digitValue(r)
		case r == '‐' || r == '‑' || r == '‒' || r == '–' || r == '—' || r == '−':
			return '-'
		}
		return r
	}, text)
	for {
		t := thousandsRe.ReplaceAllString(text, "$1$2$3")
		if t == text {
			break
		}
		text = t
	}
	text = percentRe.ReplaceAllString(text, "%")
	return scaleRe.ReplaceAllStringFunc(text, func(m string) string {
		sm := scaleRe.FindStringSubmatch(m)
		f, err := strconv.ParseFloat(sm[1], 64)
		if err != nil {
			return m
		}
		mult := map[string]float64{"thousand": 1e3, "million": 1e6, "m": 1e6, "billion": 1e9, "bn": 1e9, "trillion": 1e12}[strings.ToLower(sm[2])]
		return strconv.FormatFloat(f*mult, 'f', -1, 64)
	})
}

var (
	thousandsRe = regexp.MustCompile(`(\d)[,\x{00A0}\x{202F}\x{2009}'’](\d{3})(\D|$)`)
	percentRe   = regexp.MustCompile(`(?i)\s*\b(?:per ?cent|pct)\b`)
	scaleRe     = regexp.MustCompile(`(?i)\b(\d+(?:\.\d+)?)\s*(thousand|million|billion|trillion|bn|m)\b`)
)

// digitValue is the value of a decimal digit of any script: Unicode's
// digits come in runs of ten from zero, some runs back to back.
func digitValue(r rune) rune {
	n := rune(0)
	for n < 100 && unicode.IsDigit(r-n-1) {
		n++
	}
	return n % 10
}

var monthNames = []string{"January", "February", "March", "April", "May", "June", "July", "August", "September", "October", "November", "December"}

var monthRe = regexp.MustCompile(`(?i)\b(jan|feb|mar|apr|may|jun|jul|aug|sept?|oct|nov|dec)(?:[a-z]*)\b\.?|\b\d{4}-(\d{2})-\d{2}\b`)

// months are the months a text names: by name or abbreviation
// ("Mar."), or in an ISO date. "May" counts only capitalised.
func months(text string) []int {
	var out []int
	for _, m := range monthRe.FindAllStringSubmatchIndex(text, -1) {
		if m[4] >= 0 {
			n, _ := strconv.Atoi(text[m[4]:m[5]])
			if n >= 1 && n <= 12 {
				out = append(out, n)
			}
			continue
		}
		word := text[m[0]:m[1]]
		full := strings.TrimSuffix(strings.ToLower(word), ".")
		abbr := strings.ToLower(text[m[2]:m[3]])
		for i, name := range monthNames {
			l := strings.ToLower(name)
			if !strings.HasPrefix(l, abbr[:3]) || (full != l && full != abbr) {
				continue
			}
			if !unicode.IsUpper([]rune(word)[0]) {
				break // "may", "march" as words
			}
			out = append(out, i+1)
		}
	}
	return out
}

var nameRe = regexp.MustCompile(`\p{Lu}[\p{L}\p{M}'’-]+`)

// names are the capitalised words of a text that do not open a sentence,
// a quotation or a clause after a colon, and are not month or day names:
// the names a sentence states.
func names(text string) []string {
	var out []string
	for _, m := range nameRe.FindAllStringIndex(text, -1) {
		before := strings.TrimRight(text[:m[0]], " ")
		if last, _ := utf8.DecodeLastRuneInString(before); before == "" || strings.ContainsRune(".!?:;\"“‘'(«[)]", last) {
			continue
		}
		w := text[m[0]:m[1]]
		if len(months(w)) > 0 || isWeekday(w) {
			continue
		}
		out = append(out, w)
	}
	return out
}

func isWeekday(w string) bool {
	switch strings.ToLower(w) {
	case "monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday":
		return true
	}
	return false
}

// figureRe finds the figures of a folded text: 12, 7-2, 1.2, 1200, 40%.
var figureRe = regexp.MustCompile(`\d+(?:[.,]\d+)*`)

// figures are the numbers in a folded text (foldText), written without
// separators or leading zeros.
func figures(text string) []string {
	var out []string
	for _, f := range figureRe.FindAllString(text, -1) {
		f = strings.ReplaceAll(f, ",", "")
		if t := strings.TrimLeft(f, "0"); t != "" && t[0] != '.' {
			f = t
		}
		out = append(out, f)
	}
	return out
}

// unheldFigures warns of each figure in the correction that neither a
// quote it may rest on (included, verified, on a page not dropped) nor
// the post holds, in any of its typographic forms (foldText): a lexical
// check before any model judges support, so that an edit adding a number
// no page gave is named. warned are the figures it names.
func (c *Check) unheldFigures(text string) (out []string, warned map[string]bool) {
	held := c.heldTerms(nil)
	warned = map[string]bool{}
	for _, f := range figures(foldText(text)) {
		if held.figures[f] || warned[f] {
			continue
		}
		warned[f] = true
		out = append(out, fmt.Sprintf(unheldF, f))
	}
	return out, warned
}

// unheldF is the warning for a figure no quote holds.
const unheldF = "the figure %s is in no quote the correction rests on, nor in the post: check it against the pages"

// SupportMark is a status's mark beside its sentence: ✓ supported, ◐
// partly, ✗ unsupported, ○ uncited, ? not judged.
func SupportMark(status string) string {
	switch status {
	case SupportSupported:
		return "✓"
	case SupportPartly:
		return "◐"
	case SupportUnsupported:
		return "✗"
	case SupportUncited:
		return "○"
	}
	return "?"
}

// Line says a sentence's support in words, after its mark: "unsupported:
// the quote gives 2025 only; https://apnews.com/b does not say it; no
// quote it cites holds 40".
func (s SentenceSupport) Line() string {
	parts := []string{s.Status}
	if s.Reason != "" {
		parts[0] += ": " + strings.TrimSuffix(s.Reason, ".")
	}
	for _, u := range s.NotSaying {
		parts = append(parts, u+" does not say it")
	}
	if len(s.Unheld) > 0 {
		what := "no quote it cites holds "
		if len(s.Cites) == 0 {
			what = "no quote the correction rests on holds "
		}
		parts = append(parts, what+strings.Join(s.Unheld, ", "))
	}
	return strings.Join(parts, "; ")
}

// SupportSummary counts the sentences by status: "4 sentences: 2
// supported, 1 unsupported, 1 uncited"; "" without sentences.
func SupportSummary(ss []SentenceSupport) string {
	if len(ss) == 0 {
		return ""
	}
	n := map[string]int{}
	for _, s := range ss {
		n[s.Status]++
	}
	var parts []string
	for _, st := range []string{SupportSupported, SupportPartly, SupportUnsupported, SupportUncited, SupportNotJudged} {
		if n[st] > 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n[st], st))
		}
	}
	return fmt.Sprintf("%d %s: %s", len(ss), verb(len(ss), "sentence", "sentences"), strings.Join(parts, ", "))
}
