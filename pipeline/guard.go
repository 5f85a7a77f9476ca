package pipeline

import (
	"cmp"
	"fmt"
	"html"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/links"
	"golang.org/x/text/unicode/norm"
)

// The guards are what makes a correction checkable: a quote counts only when
// it is really on the page, and a correction may cite only pages whose
// quotes were kept. Both run on whatever a model returns, so neither trusts
// its input.

// normaliseForMatch folds the differences a faithful copy of a paragraph
// may still show: Unicode compatibility forms, curly and straight quotes,
// the dash family, and runs of white space. Case and wording are kept, so a
// paraphrase does not match.
func normaliseForMatch(s string) string {
	s = norm.NFKC.String(s)
	var b strings.Builder
	b.Grow(len(s))
	space := false
	for _, r := range s {
		switch r {
		case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '`', '\u00b4':
			r = '\''
		case '\u201c', '\u201d', '\u201e', '\u201f', '\u2033', '\u00ab', '\u00bb':
			r = '"'
		case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2e3a', '\u2e3b':
			r = '-'
		case '\u00ad', '\u200b', '\u200c', '\u200d', '\ufeff':
			continue // invisible: soft hyphen, zero-width characters
		}
		if unicode.IsSpace(r) {
			space = true
			continue
		}
		if space && b.Len() > 0 {
			b.WriteByte(' ')
		}
		space = false
		b.WriteRune(r)
	}
	return b.String()
}

// cleanQuote removes what models wrap around a quote (surrounding quotation
// marks, a leading list marker) without touching the words.
func cleanQuote(q string) string {
	q = strings.TrimSpace(q)
	for range 3 {
		before := q
		q = strings.TrimLeft(q, "-*•> \t")
		if len(q) >= 2 {
			first, last := []rune(q)[0], []rune(q)[len([]rune(q))-1]
			if isQuoteMark(first) && isQuoteMark(last) {
				r := []rune(q)
				q = strings.TrimSpace(string(r[1 : len(r)-1]))
			}
		}
		if q == before {
			break
		}
	}
	return q
}

func isQuoteMark(r rune) bool {
	return strings.ContainsRune("\"'\u2018\u2019\u201c\u201d\u00ab\u00bb", r)
}

// GuardCorrection removes from text every link, in whatever form it is
// written (sources/links), that is not one of allowed (compared by
// sources.Key) and returns the cleaned text, the allowed URLs it cites
// (in order of appearance, as given in allowed) and a warning naming each
// link removed.
func GuardCorrection(text string, allowed []string) (string, []string, []string) {
	allow := map[string]string{}
	for _, u := range allowed {
		allow[sources.Key(u)] = u
	}
	for _, u := range allowed {
		if k := pageKey(u); allow[k] == "" {
			allow[k] = u
		}
	}
	page := func(u string) (string, bool) {
		if orig, ok := allow[sources.Key(u)]; ok {
			return orig, true
		}
		orig, ok := allow[pageKey(u)]
		return orig, ok
	}
	keep := func(u string) bool {
		_, ok := page(u)
		return ok
	}
	// X's own link pattern: a bare "evil.com" is a link on X, so it is one
	// here.
	clean, removed := links.RemoveLinked(text, keep)
	clean, tags := StripHTML(htmlToMarkdown(clean, page))
	if len(tags) > 0 {
		// Taking a tag out may join text into a new link.
		var more []string
		clean, more = links.RemoveLinked(clean, keep)
		for _, u := range more {
			if !slices.Contains(removed, u) {
				removed = append(removed, u)
			}
		}
	}
	clean = toEvidenceURLs(clean, page)
	var cited, warnings []string
	for _, l := range links.FindLinked(clean) {
		if orig, ok := page(l.URL); ok && !slices.Contains(cited, orig) {
			cited = append(cited, orig)
		}
	}
	for _, u := range removed {
		// Defanged: a warning is shown and exported, and must not be a
		// link a renderer follows.
		warnings = append(warnings, fmt.Sprintf("removed %s: not one of the evidence pages", links.Defang(u)))
	}
	if len(tags) > 0 {
		warnings = append(warnings, fmt.Sprintf("removed HTML markup: %s", strings.Join(tags, ", ")))
	}
	return strings.TrimSpace(clean), cited, warnings
}

// reHTML is an HTML tag, comment or declaration as a browser reads one
// ("<script>", "</svg>", "<meta http-equiv=refresh …>", "<!-- … -->"),
// and a script or style element with its content.
var reHTML = regexp.MustCompile(`(?is)<(script|style)\b[^>]*>.*?</(?:script|style)\s*>|<!--.*?(?:-->|$)|<[!?][^>]*>|</?([a-z][a-z0-9-]*)(?:[\s/][^>]*)?>`)

// stripHTML removes every HTML tag from a correction whole, with a script
// or style element's content: a correction is text, and a tag is markup a
// renderer would act on. It returns the text and the tags' names, each
// once.
func StripHTML(text string) (string, []string) {
	var names []string
	out := reHTML.ReplaceAllStringFunc(text, func(tag string) string {
		m := reHTML.FindStringSubmatch(tag)
		name := strings.ToLower(cmp.Or(m[1], m[2], "!"))
		if name == "!" {
			name = "comment"
		}
		name = "<" + name + ">"
		if !slices.Contains(names, name) {
			names = append(names, name)
		}
		return ""
	})
	if len(names) == 0 {
		return text, nil
	}
	return strings.TrimSpace(doubleBlank.ReplaceAllString(out, " ")), names
}

var doubleBlank = regexp.MustCompile(`[ \t]{2,}`)

// htmlToMarkdown writes an HTML link to an evidence page as the Markdown
// link it is ("<a href=URL>Reuters</a>" → "[Reuters](URL)"), or the URL
// alone when it has no text, so that taking the tags out keeps the
// citation.
func htmlToMarkdown(text string, page func(string) (string, bool)) string {
	var b strings.Builder
	last := 0
	for _, l := range links.Find(text) {
		orig, ok := page(l.URL)
		if l.Kind != links.KindHTML || !ok {
			continue
		}
		b.WriteString(text[last:l.Start])
		if l.Label != "" {
			b.WriteString("[" + l.Label + "](" + orig + ")")
		} else {
			b.WriteString(orig)
		}
		last = l.End
	}
	if last == 0 {
		return text
	}
	return b.String() + text[last:]
}

// toEvidenceURLs writes the evidence page's own URL in place of a link to
// another form of it (pageKey: its AMP or mobile page, a tracking query).
func toEvidenceURLs(text string, page func(string) (string, bool)) string {
	var b strings.Builder
	last := 0
	for _, l := range links.Find(text) {
		orig, ok := page(l.URL)
		if !ok || sources.Key(l.URL) == sources.Key(orig) {
			continue
		}
		var with string
		switch l.Kind {
		case links.KindURL, links.KindBare, links.KindRelative:
			with = orig
		case links.KindAutolink:
			with = "<" + orig + ">"
		case links.KindMarkdown:
			if strings.HasPrefix(text[l.Start:l.End], "!") {
				continue
			}
			with = "[" + l.Label + "](" + orig + ")"
		default:
			continue
		}
		b.WriteString(text[last:l.Start])
		b.WriteString(with)
		last = l.End
	}
	if last == 0 {
		return text
	}
	return b.String() + text[last:]
}

// pageKey is sources.Key of the page a URL is a form of: the page behind
// Google's AMP cache (https://www-reuters-com.cdn.ampproject.org/c/s/www.reuters.com/…),
// an AMP page ("amp." host, an "/amp" path segment, "?amp=1",
// "outputType=amp"), a mobile page ("m." or "mobile." host). Tracking
// parameters (utm_*) go in sources.Key.
func pageKey(raw string) string {
	u, err := sources.ParseHTTP(raw)
	if err != nil {
		return sources.Key(raw)
	}
	if strings.HasSuffix(strings.ToLower(u.Hostname()), ".cdn.ampproject.org") {
		for _, pre := range []struct{ path, scheme string }{{"/c/s/", "https"}, {"/v/s/", "https"}, {"/i/s/", "https"},
			{"/c/", "http"}, {"/v/", "http"}, {"/i/", "http"}} {
			if rest, ok := strings.CutPrefix(u.Path, pre.path); ok {
				if inner, err := sources.ParseHTTP(pre.scheme + "://" + rest + queryOf(u)); err == nil {
					u = inner
				}
				break
			}
		}
	}
	host := strings.ToLower(u.Hostname())
	for _, pre := range []string{"amp.", "m.", "mobile."} {
		if rest, ok := strings.CutPrefix(host, pre); ok && strings.Contains(rest, ".") {
			host = rest
			break
		}
	}
	var segs []string
	for _, s := range strings.Split(u.Path, "/") {
		if !strings.EqualFold(s, "amp") {
			segs = append(segs, s)
		}
	}
	q := u.Query()
	q.Del("amp")
	if strings.EqualFold(q.Get("outputType"), "amp") {
		q.Del("outputType")
	}
	v := url.URL{Scheme: u.Scheme, Host: host, Path: strings.Join(segs, "/"), RawQuery: q.Encode()}
	if p := u.Port(); p != "" {
		v.Host += ":" + p
	}
	return sources.Key(v.String())
}

func queryOf(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// minQuoteRunes is the shortest quote worth keeping: anything shorter
// ("The", "Yes.") matches almost any page and proves nothing. It is
// counted in characters of a spaced script (quoteLength): a character of
// a script without spaces carries a word's worth of text in two
// (lang.CharsPerWord), as six of English do with the space. minPartWords
// is the shortest part of a quote around an ellipsis, so "The … was" cannot
// stitch a sentence out of scattered words.
const (
	minQuoteRunes = 20
	minPartWords  = 3
	// maxElided is the most page text an ellipsis may stand for: a
	// fact-checker elides within a passage, not across a page.
	maxElided = 1200
)

// quoteLength is a quote's length in characters of a spaced script: a
// character of a script without spaces counts as three (a word of two of
// them holds what six characters of English do).
func quoteLength(s string) int {
	n := 0
	for _, r := range s {
		if lang.Unspaced(r) {
			n += 6 / lang.CharsPerWord
		} else {
			n++
		}
	}
	return n
}

// QuoteMatch is what LocateQuote found for a model's quote on a page.
type QuoteMatch struct {
	// Verified is true when the quote is the page's text up to form.
	Verified bool
	// PageQuote is the page's own wording of the quote (its parts joined
	// with " … " when the model elided a middle); set when Verified.
	PageQuote string
	// Reason says why a quote was not verified; Closest is the page
	// passage that shares most words with it.
	Reason, Closest string
}

// VerifyQuote reports whether quote is text's own wording up to form (see
// LocateQuote).
func VerifyQuote(quote, text string) bool { return LocateQuote(quote, text).Verified }

// ellipsisPattern finds the marks a quote uses for an elided middle.
var ellipsisPattern = regexp.MustCompile(`\s*(?:\[\s*(?:\.\s*){3}\]|\(\s*(?:\.\s*){3}\)|\[…\]|\(…\)|…|\.\s?\.\s?\.)\s*`)

// leadInPattern finds what a model puts before a quote instead of quoting:
// "According to the article,", "The article states that", "Reuters reports:".
var leadInPattern = regexp.MustCompile(`^\s*(?:(?i:according to|as (?:reported|stated|noted|written) (?:by|in)|per) [\w .'’-]{0,40}?[,:]\s*|(?:(?i:the |this )?(?i:article|page|report|story|text|source|fact[- ]check)|[A-Z][\w.]*(?: [A-Z][\w.]*){0,2}) (?i:says|said|states|stated|notes|noted|reports|reported|writes|wrote|explains|explained)(?i: that)?[,:]?\s+)`)

// LocateQuote finds a model's quote in a page's text the way a
// fact-checker reads a quotation: it is the page's text when the two differ
// only in form — case, quote and dash styles, HTML entities, white space and
// line breaks, a lead-in such as "According to the article,", a trailing
// period, number formatting (100,000 or 100000), or an ellipsis standing
// for an elided middle whose parts are each verbatim and in order. A changed
// word, a flipped negation, a changed number or an invented sentence is
// never the page's text. The match returns the page's own wording.
func LocateQuote(quote, text string) QuoteMatch {
	q := cleanQuote(html.UnescapeString(quote))
	if m := listMarkerPattern.FindString(q); m != "" {
		// "1. The council…", "(2) No order…": the model's numbering, not
		// the page's, unless the page has it too.
		full := locateQuote(q, text)
		if !full.Verified {
			if stripped := locateQuote(cleanQuote(q[len(m):]), text); stripped.Verified {
				return stripped
			}
		}
		return full
	}
	return locateQuote(q, text)
}

// listMarkerPattern finds a list item's number or bullet at the start of a
// quote: "1. ", "2) ", "(3) ", "- ", "• ".
var listMarkerPattern = regexp.MustCompile(`^\s*(?:\(\d{1,2}\)|\d{1,2}[.)]|[-*•·–])\s+`)

// locateQuote is LocateQuote of a cleaned quote.
func locateQuote(q, text string) QuoteMatch {
	if stripped := leadInPattern.ReplaceAllString(q, ""); stripped != q && LocateQuote(stripped, text).Verified {
		return LocateQuote(stripped, text)
	}
	page := foldForm(text)
	parts := splitEllipsis(q)
	if len(parts) == 0 {
		return QuoteMatch{Reason: "the quote is empty"}
	}
	total := 0
	for _, p := range parts {
		total += quoteLength(p.folded)
	}
	if total < minQuoteRunes {
		return QuoteMatch{Reason: fmt.Sprintf("the quote is shorter than %d characters, too short to show where it is from", minQuoteRunes)}
	}
	if len(parts) > 1 {
		for _, p := range parts {
			if lang.Words(p.folded) < minPartWords {
				return failed(q, text, fmt.Sprintf("a part around the ellipsis has fewer than %d words", minPartWords))
			}
		}
	}
	spans, why := matchParts(page, parts)
	if spans == nil {
		return failed(q, text, why)
	}
	var words []string
	for k, sp := range spans {
		end := page.end[sp[1]-1]
		if k == len(spans)-1 {
			end += sentenceEnd(text[end:])
		}
		words = append(words, strings.TrimSpace(text[page.start[sp[0]]:end]))
	}
	return QuoteMatch{Verified: true, PageQuote: strings.Join(words, " … ")}
}

// sentenceEnd is the length of the sentence-ending punctuation (and the
// closing quotation mark after it) at the start of s, which belongs to a
// quote that ends where the page's sentence does.
func sentenceEnd(s string) int {
	n := 0
	for i, r := range s {
		switch {
		case i == 0 && unicode.Is(unicode.Sentence_Terminal, r):
		case i > 0 && n > 0 && (strings.ContainsRune("\"'", r) || unicode.In(r, unicode.Pf, unicode.Pe)):
		default:
			return n
		}
		n = i + utf8.RuneLen(r)
	}
	return n
}

func failed(q, text, why string) QuoteMatch {
	return QuoteMatch{Reason: why, Closest: closestPassage(q, text)}
}

// quotePart is one stretch of a quote between ellipses, folded.
type quotePart struct{ folded string }

// splitEllipsis cuts a quote at its ellipses and folds each part, with the
// punctuation a model adds at a part's ends removed.
func splitEllipsis(q string) []quotePart {
	var out []quotePart
	for _, p := range ellipsisPattern.Split(q, -1) {
		f := strings.TrimFunc(foldForm(p).s, func(r rune) bool {
			return unicode.Is(unicode.Sentence_Terminal, r) || strings.ContainsRune(" ,;:-\"、，；：", r)
		})
		if f != "" {
			out = append(out, quotePart{folded: f})
		}
	}
	return out
}

// matchParts finds the parts in the page in order, each at word boundaries,
// with at most maxElided characters between two parts and no negation left
// out. It returns the spans in the folded page, or nil and why not.
func matchParts(page folded, parts []quotePart) ([][2]int, string) {
	from := 0
	var spans [][2]int
	for k, p := range parts {
		i := indexAtWords(page.s, p.folded, from)
		if i < 0 {
			if k == 0 {
				return nil, "not on the page"
			}
			return nil, "the part after the ellipsis is not on the page after the part before it"
		}
		j := i + len(p.folded)
		if k > 0 {
			gap := page.s[from:i]
			if len(gap) > maxElided {
				return nil, "the ellipsis stands for more than a passage of the page"
			}
			if g := norm.NFC.String(gap); negation.MatchString(g) || negationInWords.MatchString(g) {
				return nil, "the ellipsis leaves out a negation"
			}
		}
		spans = append(spans, [2]int{i, j})
		from = j
	}
	return spans, ""
}

// negation finds the words whose omission would flip what a passage says,
// in the languages muse is tested in (English, Spanish, Portuguese,
// German, French, Hindi, Arabic, Greek, Russian, Ukrainian), in lower case
// and NFC. Words are cut at
// anything that is not a letter, mark or digit (RE2's \b knows only
// ASCII).
var negation = regexp.MustCompile(norm.NFC.String(`(?:^|[^\p{L}\p{M}\p{N}])(?:` +
	`not|no|never|none|nor|neither|nobody|nothing|without|cannot|false|untrue|denied|denies|deny|` +
	`nunca|jamás|ningún|ninguna|ninguno|nadie|nada|ni|sin|falso|falsa|negó|niega|desmintió|desmiente|` +
	`não|jamais|nenhum|nenhuma|ninguém|nem|sem|negou|nega|desmentiu|` +
	`nicht|kein|keine|keinen|keinem|keiner|keines|nie|niemals|niemand|nichts|weder|ohne|falsch|bestritt|bestreitet|dementierte|` +
	`ne|pas|aucun|aucune|rien|sans|faux|fausse|` +
	`नहीं|न|मत|बिना|ग़लत|गलत|झूठ|झूठा|खंडन|` +
	`لا|لم|لن|ليس|ليست|غير|بدون|أبدا|نفى|ينفي|كاذب|خاطئ|ولا|ولم|ولن|وليس|` +
	`δεν|μην|όχι|ούτε|μηδέ|χωρίς|ψευδής|ψευδές|ψευδή|διέψευσε|διαψεύδει|` +
	`не|нет|ни|без|никогда|ложь|фейк|опроверг|ні|немає|ніколи|неправда` +
	`)(?:[^\p{L}\p{M}\p{N}]|$)|n't(?:[^\p{L}\p{M}\p{N}]|$)`))

// negationInWords finds the negations of the languages whose words are not
// cut apart by spaces, or whose negation is part of a word (Chinese,
// Japanese, Thai, Korean), anywhere: an ellipsis that leaves out a
// character such as 不 in 非常 is refused too, which costs a quote, never
// its meaning.
var negationInWords = regexp.MustCompile(norm.NFC.String(
	`不|没|沒|未|非|无|無|否|假|ない|なかった|ません|ず|誤り|偽|ไม่|มิได้|ปฏิเสธ|เท็จ|않|없|아니|못|거짓`))

// indexAtWords finds needle in hay at or after from, starting and ending
// at word boundaries (so "000 people" is not found in "100000 people").
func indexAtWords(hay, needle string, from int) int {
	for from <= len(hay) {
		i := strings.Index(hay[from:], needle)
		if i < 0 {
			return -1
		}
		i += from
		j := i + len(needle)
		if boundary(hay, i, true) && boundary(hay, j, false) {
			return i
		}
		from = i + 1
	}
	return -1
}

func boundary(s string, i int, start bool) bool {
	if start {
		if i == 0 {
			return true
		}
		r, _ := utf8.DecodeLastRuneInString(s[:i])
		first, _ := utf8.DecodeRuneInString(s[i:])
		return !isWordRune(r) || !isWordRune(first) || unspacedBreak(r, first)
	}
	if i >= len(s) {
		return true
	}
	r, _ := utf8.DecodeRuneInString(s[i:])
	last, _ := utf8.DecodeLastRuneInString(s[:i])
	return !isWordRune(r) || !isWordRune(last) || unspacedBreak(last, r)
}

// unspacedBreak says whether a word may end between before and after in a
// script written without spaces (Chinese, Japanese, Thai…), where any two
// characters may be two words, as UAX #29 cuts them; never before a
// combining mark.
func unspacedBreak(before, after rune) bool {
	return !unicode.IsMark(after) && (lang.Unspaced(before) || lang.Unspaced(after))
}

// isWordRune says what words are made of: letters, digits and the marks
// that belong to letters (Devanagari vowel signs, Arabic vowels, the
// accents of decomposed Latin letters).
func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) }

// folded is text in the form quotes are compared in, with the span of the
// original text each byte came from.
type folded struct {
	s          string
	start, end []int // byte i of s came from text[start[i]:end[i]]
}

// foldForm folds what a faithful quotation may change: Unicode
// compatibility forms, case, quote marks (single and double alike), the dash
// family and runs of dashes ("--" for "—"), white space (and the space
// around a dash), invisible characters, and digit-group separators
// (100,000 is 100000). Wording, digits and word order are kept.
func foldForm(text string) folded {
	var f folded
	var b strings.Builder
	emit := func(r rune, o, e int) {
		n := b.Len()
		b.WriteRune(r)
		for range b.Len() - n {
			f.start = append(f.start, o)
			f.end = append(f.end, e)
		}
	}
	last := func() rune {
		r, _ := utf8.DecodeLastRuneInString(b.String())
		return r
	}
	space := false
	for o, r := range text {
		e := o + utf8.RuneLen(r)
		if r == utf8.RuneError {
			e = o + 1
		}
		// Decomposed (NFKD), a rune folds alone into the same runes whether
		// the page wrote "é" as one character or as "e" and an accent; the
		// accent stays, so "café" is not "cafe".
		for _, x := range norm.NFKD.String(string(r)) {
			x = unicode.ToLower(x)
			switch x {
			case '\u2018', '\u2019', '\u201a', '\u201b', '\u2032', '`', '\u00b4', '\'', '\u201c', '\u201d', '\u201e', '\u201f', '\u2033', '\u00ab', '\u00bb':
				x = '"'
			case '\u2010', '\u2011', '\u2012', '\u2013', '\u2014', '\u2015', '\u2212', '\u2e3a', '\u2e3b':
				x = '-'
			case '\u00ad', '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u0640':
				continue // invisible, or the Arabic tatweel that only stretches a line
			}
			if x == ',' || x == '\u202f' || x == '\u2009' {
				if next, _ := utf8.DecodeRuneInString(text[e:]); unicode.IsDigit(last()) && unicode.IsDigit(next) {
					continue // a digit-group separator
				}
			}
			if unicode.IsSpace(x) {
				space = true
				continue
			}
			if x == '-' && last() == '-' {
				space = false
				continue
			}
			if space && b.Len() > 0 && x != '-' && last() != '-' {
				emit(' ', o, o)
			}
			space = false
			emit(x, o, e)
		}
	}
	f.s = b.String()
	return f
}

// closestPassage is the sentence of text that shares most content words
// with q, clipped, so the checker sees what the page says instead.
func closestPassage(q, text string) string {
	code := lang.Detect(text).Code
	want := termSet(words(q, code))
	best, bestScore := "", 0
	for _, para := range strings.Split(text, "\n") {
		for _, sent := range lang.Sentences(para) {
			score := 0
			for w := range termSet(words(sent, code)) {
				if want[w] {
					score++
				}
			}
			if score > bestScore {
				best, bestScore = strings.TrimSpace(sent), score
			}
		}
	}
	return clip(best, 240)
}

// The correction prompt names its sources by id (prompts.SourceID: S1,
// S2…) instead of by URL, which costs a model's tokens several times over;
// ResolveSourceIDs puts the URLs back. Models write ids in several ways:
// "[S1]", "[S1, S2]", "[S1][S2]", "[1]", "[Source 1]", "(S1)", "source 1",
// a bare "S1", a Markdown link "[Reuters](S1)" or "[S1](https://…)";
// models trained on Chinese text bracket them 【S1】, 【1】 or ［S1］,
// DeepSeek writes "[citation:1]", others a Markdown footnote marker "[^1]",
// and a run of sources may be a range, "[S1–S3]".
const (
	idAny   = `(?:(?:[Ss]ources?\s*[:#]?\s*|[Ss]\s?|[Cc]itation\s*:\s*|\^)?\d{1,3})` // in square brackets a number alone is an id
	idNamed = `(?:(?:[Ss]ources?\s*[:#]?\s*|[Ss]\s?)\d{1,3})`                        // in parentheses an id needs its S or "source"
	idSep   = `\s*(?:[,;&、，；\-–—]|\band\b)?\s*`
	idGroup = `(?:[\[【［]\s*` + idAny + `(?:` + idSep + idAny + `)*\s*[\]】］]|[(（]\s*` + idNamed + `(?:` + idSep + idNamed + `)*\s*[)）])`
	// idTarget is a Markdown link's target after an id in brackets: the
	// id says which source, so the target goes.
	idTarget = `\(\s*<?[A-Za-z][A-Za-z0-9+.-]*:[^\s()]*>?\s*\)`
)

var (
	idRunRe    = regexp.MustCompile(`([ \t]*)` + idGroup + `(?:` + idTarget + `)?(?:` + idSep + idGroup + `(?:` + idTarget + `)?)*`)
	idLinkRe   = regexp.MustCompile(`\[([^\[\]\n]{1,200})\]\(\s*(` + idNamed + `)\s*\)`)
	idBareRe   = regexp.MustCompile(`[Ss]ources?\s*#?\s*\d{1,3}\b(?:` + idSep + `\d{1,3}\b)*|S\d{1,3}`)
	idHeadRe   = regexp.MustCompile(`^[Ss]ources?\s*#?\s*\d{1,3}`)
	idTargetRe = regexp.MustCompile(idTarget)
	idNumRe    = regexp.MustCompile(`\d{1,3}`)
	idRangeRe  = regexp.MustCompile(`(\d{1,3})\s*[\-–—]\s*(?:[Ss](?:ources?)?\s*)?(\d{1,3})`)
)

// idNumbers are the source numbers ids names, a range "1–3" read as 1, 2, 3.
func idNumbers(ids string) []int {
	var out []int
	for _, m := range idRangeRe.FindAllStringSubmatchIndex(ids, -1) {
		a, _ := strconv.Atoi(ids[m[2]:m[3]])
		b, _ := strconv.Atoi(ids[m[4]:m[5]])
		for i := a; a < b && b-a < 50 && i < b; i++ {
			out = append(out, i) // b itself is counted below
		}
	}
	for _, n := range idNumRe.FindAllString(ids, -1) {
		i, _ := strconv.Atoi(n)
		if !slices.Contains(out, i) {
			out = append(out, i)
		}
	}
	return out
}

// ResolveSourceIDs replaces each id a correction cites with the URL of
// that source, urls[i] being the URL of id i+1: a group of ids in brackets
// becomes the URLs in parentheses, "source 2" or a bare "S2" the URL alone,
// "[Reuters](S1)" "Reuters (URL)". A bracketed id, or "source N", that
// names no source is removed and named in a warning, as GuardCorrection
// does with a URL that is not an evidence page. A bare "S9" beyond the
// sources, or one that material (the post, the quotes) has as a word,
// stays: it is a name, as in "Galaxy S9". Links in the text are left alone.
func ResolveSourceIDs(text string, urls []string, material string) (string, []string) {
	var warnings []string
	lookup := func(ids string) []string {
		var out []string
		for _, i := range idNumbers(ids) {
			if i < 1 || i > len(urls) {
				warnings = append(warnings, fmt.Sprintf("removed source %d: not one of the evidence sources", i))
				continue
			}
			if !slices.Contains(out, urls[i-1]) {
				out = append(out, urls[i-1])
			}
		}
		return out
	}
	text = replaceOutsideLinks(text, idLinkRe, func(src string, m []int) string {
		label := src[m[2]:m[3]]
		if u := lookup(src[m[4]:m[5]]); len(u) > 0 {
			return label + " (" + u[0] + ")"
		}
		return label
	})
	text = replaceOutsideLinks(text, idRunRe, func(src string, m []int) string {
		lead, start := src[m[2]:m[3]], m[3] // the spaces before the ids go with them when none is kept
		u := lookup(idTargetRe.ReplaceAllString(src[start:m[1]], ""))
		if lead == "" && start > 0 && strings.HasPrefix(src[start:], "[^") && unicode.IsLetter(rune(src[start-1])) {
			lead = " " // a footnote marker sits on its word: its URL does not
		}
		switch {
		case len(u) == 0:
			return ""
		case start > 0 && src[start-1] == '(' && m[1] < len(src) && src[m[1]] == ')':
			return lead + strings.Join(u, "; ") // already in parentheses
		}
		return lead + "(" + strings.Join(u, "; ") + ")"
	})
	text = replaceOutsideLinks(text, idBareRe, func(src string, m []int) string {
		id := src[m[0]:m[1]]
		if !idBoundary(src, m[0], m[1]) {
			return id
		}
		if n, err := strconv.Atoi(strings.TrimPrefix(id, "S")); err == nil && (n < 1 || n > len(urls) || hasWord(material, id)) {
			return id // a name, not an id
		}
		// "source 1 - 3" names three sources, but "source 3 - 5 people
		// died" one: past the first number, the list stands only when
		// every number it names is a source's.
		rest := ""
		if h := idHeadRe.FindStringIndex(id); h != nil && h[1] < len(id) &&
			slices.ContainsFunc(idNumbers(id), func(n int) bool { return n < 1 || n > len(urls) }) {
			id, rest = id[:h[1]], id[h[1]:]
		}
		if u := lookup(id); len(u) > 0 {
			return strings.Join(u, " ") + rest
		}
		return id + rest // "source 9": named in a warning, the words left
	})
	return text, warnings
}

// replaceOutsideLinks replaces each match of re in text that is not part
// of a link (sources/links) by what f makes of it; a match may hold a
// whole link ("[S1](https://…)", "[Reuters](S1)"). f gets text and the
// match's submatch indexes.
func replaceOutsideLinks(text string, re *regexp.Regexp, f func(src string, m []int) string) string {
	var spans []links.Link
	for _, l := range links.Find(text) {
		if strings.Contains(l.URL, "://") { // "[Reuters](S1)" links to an id, not a page
			spans = append(spans, l)
		}
	}
	var b strings.Builder
	last := 0
	for _, m := range re.FindAllStringSubmatchIndex(text, -1) {
		if slices.ContainsFunc(spans, func(l links.Link) bool {
			return m[0] < l.End && l.Start < m[1] && (l.Start < m[0] || m[1] < l.End)
		}) {
			continue
		}
		b.WriteString(text[last:m[0]])
		b.WriteString(f(text, m))
		last = m[1]
	}
	if last == 0 {
		return text
	}
	b.WriteString(text[last:])
	return b.String()
}

// hasWord says whether w is a word of s.
func hasWord(s, w string) bool {
	for i := 0; ; {
		j := strings.Index(s[i:], w)
		if j < 0 {
			return false
		}
		if idBoundary(s, i+j, i+j+len(w)) {
			return true
		}
		i += j + 1
	}
}

// idBoundary says whether text[start:end] stands alone as a word: "S1"
// but not "S1x", "/S1", "MS1" or "S1-2".
func idBoundary(text string, start, end int) bool {
	before, _ := utf8.DecodeLastRuneInString(text[:start])
	after, _ := utf8.DecodeRuneInString(text[end:])
	return (start == 0 || !isWordRune(before) && !strings.ContainsRune("/_-.@#", before)) &&
		(end == len(text) || !isWordRune(after) && !strings.ContainsRune("/_-@#", after))
}
