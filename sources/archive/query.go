package archive

import (
	"html"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"
)

// Query text is never handed to FTS5 MATCH as written: a stray quote,
// asterisk, colon or bare AND/OR/NOT/NEAR would be a syntax error or change
// the meaning. It is cut into plain terms here and each term is quoted.

var (
	urlRe     = regexp.MustCompile(`(?i)\b(?:https?://|www\.)\S+`)
	handleRe  = regexp.MustCompile(`(^|[^\w])@\w+`)
	hashtagRe = regexp.MustCompile(`#(\w+)`)
	// camelRe finds the words inside a CamelCase hashtag: "#CrookedHillary"
	// is "crooked hillary", "#MAGA" stays one word.
	camelRe = regexp.MustCompile(`[A-Z]+[a-z]+|[A-Z]+(?:[^a-zA-Z]|$)|[a-z]+|[0-9]+`)
)

// cleanPostText strips what identifies a social-media post rather than what
// it says: links, @handles, the "RT" marker and HTML entities; hashtags
// become their words.
//
// Each pattern runs only on a text holding what it needs (a link's "://"
// or "www.", an "@", a "#"): on a long post with none of them the
// patterns were a tenth of a search.
func cleanPostText(s string) string {
	s = html.UnescapeString(s)
	if strings.Contains(s, "://") || strings.Contains(strings.ToLower(s), "www.") {
		s = urlRe.ReplaceAllString(s, " ")
	}
	if strings.Contains(s, "@") {
		s = handleRe.ReplaceAllString(s, "$1 ")
	}
	if strings.Contains(s, "#") {
		s = hashtagRe.ReplaceAllStringFunc(s, func(tag string) string {
			return " " + strings.Join(camelRe.FindAllString(tag[1:], -1), " ") + " "
		})
	}
	return s
}

// tokens returns text's content words in order, repeats included,
// lower-cased: words are cut at anything that is neither letter, digit nor
// mark, and one-letter words, words too long to be words (OCR runs, hashes)
// and, in English, stop words are left out.
func tokens(text, lang string) []string {
	var out []string
	eachWord(strings.ToLower(text), lang, false, func(w string, _ bool) { out = append(out, w) })
	return out
}

// eachWord calls fn with each content word of text, lower-cased (see
// tokens). With salience it also says whether the word looks like a name
// or a number: a digit in it, or a capital letter that does not start a
// sentence, in a text that is not written in capitals throughout (OCR of a
// meme often is).
func eachWord(text, lang string, salience bool, fn func(w string, salient bool)) {
	stop := lang == "en"
	shouting := salience && mostlyUpper(text)
	sentenceStart := true
	for i := 0; i < len(text); {
		r, n := rune(text[i]), 1
		if r >= utf8.RuneSelf {
			r, n = utf8.DecodeRuneInString(text[i:])
		}
		if !isWordRune(r) {
			if strings.ContainsRune(".!?:;\n\"“”", r) {
				sentenceStart = true
			}
			i += n
			continue
		}
		j := i + n
		for j < len(text) {
			r2, n2 := rune(text[j]), 1
			if r2 >= utf8.RuneSelf {
				r2, n2 = utf8.DecodeRuneInString(text[j:])
			}
			if !isWordRune(r2) {
				break
			}
			j += n2
		}
		raw := text[i:j]
		i = j
		start := sentenceStart
		sentenceStart = false
		lower := raw
		if salience {
			lower = strings.ToLower(raw)
		}
		if c := utf8.RuneCountInString(lower); c < 2 || c > 30 || stop && stopWords[lower] {
			continue
		}
		salient := salience && (strings.ContainsAny(raw, "0123456789") || !shouting && !start && unicode.IsUpper(r))
		fn(lower, salient)
	}
}

func mostlyUpper(s string) bool {
	var up, low int
	for _, r := range s {
		if unicode.IsUpper(r) {
			up++
		} else if unicode.IsLower(r) {
			low++
		}
	}
	return up > low
}

// queryModel is a query cut into what the ranker uses.
type queryModel struct {
	lang     string
	stems    []string // content words' stems in order, repeats included
	distinct []string // each stem once, in order of first appearance
	words    []string // the first word of each stem, lower-cased, for snippets
	qtf      map[string]int
	salient  map[string]bool // stems of names and numbers
	pairs    [][2]int        // distinct pairs of adjacent words, as indices into distinct
	phrases  [][]int         // quoted phrases of two or more words, as indices into distinct
	posted   int64           // when the text was posted, Unix seconds; zero: unknown
}

// quotedRe finds phrases in straight or typographic double quotes.
var quotedRe = regexp.MustCompile(`"([^"\n]{3,200})"|“([^”\n]{3,200})”`)

// parseQuery reads a post (or any query text): links, handles and the like
// are dropped (cleanPostText), names, numbers and quoted phrases noted.
func parseQuery(query, lang string) *queryModel {
	text := cleanPostText(query)
	q := &queryModel{lang: lang, qtf: map[string]int{}, salient: map[string]bool{}}
	eachWord(text, lang, true, func(w string, salient bool) {
		st := stem(w, lang)
		q.stems = append(q.stems, st)
		if q.qtf[st] == 0 {
			q.distinct = append(q.distinct, st)
			q.words = append(q.words, w)
		}
		q.qtf[st]++
		if salient {
			q.salient[st] = true
		}
	})
	idx := make(map[string]int, len(q.distinct))
	for k, t := range q.distinct {
		idx[t] = k
	}
	seen := map[[2]int]bool{}
	for i := 0; i+1 < len(q.stems); i++ {
		pr := [2]int{idx[q.stems[i]], idx[q.stems[i+1]]}
		if pr[0] != pr[1] && !seen[pr] {
			seen[pr] = true
			q.pairs = append(q.pairs, pr)
		}
	}
	var quoted [][]string
	if strings.Contains(text, `"`) || strings.Contains(text, "“") {
		quoted = quotedRe.FindAllStringSubmatch(text, -1)
	}
	for _, m := range quoted {
		var ph []int
		for _, t := range stemsOf(m[1]+m[2], lang) {
			if k, ok := idx[t]; ok {
				ph = append(ph, k)
			}
		}
		if len(ph) >= 2 {
			q.phrases = append(q.phrases, ph)
		}
	}
	return q
}

// weights gives each distinct stem (by index) its query weight: its
// count, capped, raised for names and numbers.
func (q *queryModel) weights(p params) []float64 {
	w := make([]float64, len(q.distinct))
	for k, t := range q.distinct {
		x := float64(min(q.qtf[t], max(p.qtfCap, 1)))
		if q.salient[t] {
			x *= 1 + p.entity
		}
		w[k] = x
	}
	return w
}

// quote makes a term an FTS5 string: inside double quotes everything is
// literal, and a double quote is written twice.
func quote(t string) string {
	return `"` + strings.ReplaceAll(t, `"`, `""`) + `"`
}

// orQuery matches documents holding any of the terms.
func orQuery(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = quote(t)
	}
	return strings.Join(q, " OR ")
}

// stopWords are English function words and the social-media filler
// ("rt", "via", "amp") that carry no topic.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`
a about above after again against all am an and any are aren as at be because been before being below
between both but by can cannot could couldn did didn do does doesn doing don down during each few for from
further had hadn has hasn have haven having he her here hers herself him himself his how i if in into is isn
it its itself just let ll me more most mustn my myself no nor not now of off on once only or other ought our
ours ourselves out over own re same shan she should shouldn so some such than that the their theirs them
themselves then there these they this those through to too under until up ve very was wasn we were weren
what when where which while who whom why will with won would wouldn you your yours yourself yourselves
also get got go going gonna just like make made many much one said say says see still thing things think
u ur us im rt via amp http https www com t co`) {
		m[w] = true
	}
	return m
}()
