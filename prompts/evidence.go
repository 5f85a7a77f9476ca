package prompts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/musecheck/muse/sources/llm"
)

// Page is one web page offered for evidence extraction.
type Page struct {
	URL       string
	Title     string
	Publisher string
	Published time.Time // zero when unknown
	// Paragraphs of the extracted main text, in order.
	Paragraphs []string
}

// Kind is what a quote does to the post; the pipeline's Check uses it.
type Kind string

// Evidence kinds: a quote's stance on the claim it bears on.
const (
	KindRefutes  Kind = "refutes"
	KindSupports Kind = "supports"
	KindContext  Kind = "context"
)

// Rank orders kinds: refutations (0), then confirmations (1), then
// context (2).
func (k Kind) Rank() int {
	switch k {
	case KindRefutes:
		return 0
	case KindSupports:
		return 1
	}
	return 2
}

// ParseStance folds the words a model uses for a quote's stance into a
// Kind: "supports", "supporting", "confirms", "true" are KindSupports;
// "refutes", "contradicts", "debunks", "false", "does not support" are
// KindRefutes; "context", "missing context", "misleading", "partly" are
// KindContext. ok is false for a word it does not know.
func ParseStance(s string) (k Kind, ok bool) {
	t := strings.ToLower(strings.TrimSpace(s))
	has := func(words ...string) bool {
		return slices.ContainsFunc(words, func(w string) bool { return strings.Contains(t, w) })
	}
	switch {
	case t == "" || has("unverif", "unclear", "neutral", "unrelated", "irrelevant", "none"):
		return "", false
	case has("context", "implicit", "mislead", "partial", "partly", "cherry", "nuance", "mixed", "background", "caveat"):
		return KindContext, true
	case has("refut", "contradict", "debunk", "false", "deny", "denies", "disput", "against", "explicit", "not support",
		"unsupport", "disprove", "oppos", "incorrect", "inaccurate", "untrue", "wrong"):
		return KindRefutes, true
	case has("support", "confirm", "agree", "corroborat", "consistent", "verif", "true", "accurate", "correct", "in favo"):
		return KindSupports, true
	}
	return "", false
}

// Evidence builds the evidence-extraction prompt for one page, its text cut
// to MaxArticleChars. Send it with EvidenceSchema().
func Evidence(p Post, page Page) ([]llm.Message, error) {
	return EvidenceWithLimit(p, page, MaxArticleChars)
}

// EvidenceWithLimit is Evidence with the article cut to maxChars; use a
// smaller limit to retry after llm.ErrContextLength. The paper's cap still
// holds: a limit above MaxArticleChars (or below 1) means MaxArticleChars.
func EvidenceWithLimit(p Post, page Page, maxChars int) ([]llm.Message, error) {
	if maxChars <= 0 || maxChars > MaxArticleChars {
		maxChars = MaxArticleChars
	}
	cp := cleanPage(page.Truncate(maxChars))
	if len(cp.Paragraphs) == 0 {
		return nil, fmt.Errorf("prompts: evidence prompt for %s: the page has no text", page.URL)
	}
	return messages("evidence", map[string]any{"Post": cleanPost(p), "Page": cp})
}

// MaxPagesPerCall bounds the articles of one EvidencePages prompt, so that
// the answer (up to four paragraphs per article) stays within what a model
// writes in one go.
const MaxPagesPerCall = 10

// EvidencePages builds one evidence-extraction prompt for several pages:
// the post, the instructions and the system message are sent once instead
// of once per page. The articles are fenced and numbered 1…len(pages) in
// the given order, each cut to maxChars (the rules of EvidenceWithLimit);
// the answer is keyed by that number. Send it with EvidencePagesSchema()
// and read it with ParseEvidencePages.
func EvidencePages(p Post, pages []Page, maxChars int) ([]llm.Message, error) {
	if len(pages) == 0 || len(pages) > MaxPagesPerCall {
		return nil, fmt.Errorf("prompts: evidence prompt for %d pages: want 1 to %d", len(pages), MaxPagesPerCall)
	}
	if maxChars <= 0 || maxChars > MaxArticleChars {
		maxChars = MaxArticleChars
	}
	var cps []Page
	for _, page := range pages {
		cp := cleanPage(page.Truncate(maxChars))
		if len(cp.Paragraphs) == 0 {
			return nil, fmt.Errorf("prompts: evidence prompt for %s: the page has no text", page.URL)
		}
		cps = append(cps, cp)
	}
	return messages("evidence_pages", map[string]any{"Post": cleanPost(p), "Pages": cps})
}

func cleanPage(page Page) Page {
	cp := Page{URL: clean(page.URL), Title: clean(page.Title), Publisher: clean(page.Publisher), Published: page.Published}
	for _, para := range page.Paragraphs {
		if s := strings.TrimSpace(clean(para)); s != "" {
			cp.Paragraphs = append(cp.Paragraphs, s)
		}
	}
	return cp
}

// Truncate keeps whole paragraphs up to maxChars characters (runes) in all;
// a first paragraph longer than that is cut at a word boundary.
func (pg Page) Truncate(maxChars int) Page {
	if maxChars <= 0 {
		return pg
	}
	out := pg
	out.Paragraphs = nil
	used := 0
	for _, para := range pg.Paragraphs {
		n := len([]rune(para))
		if used+n > maxChars {
			if len(out.Paragraphs) == 0 {
				out.Paragraphs = append(out.Paragraphs, cutWords(para, maxChars))
			}
			break
		}
		out.Paragraphs = append(out.Paragraphs, para)
		used += n
	}
	return out
}

// Chars is the number of characters (runes) of the page's paragraphs.
func (pg Page) Chars() int {
	n := 0
	for _, para := range pg.Paragraphs {
		n += len([]rune(para))
	}
	return n
}

// EvidenceSchema is {"refutes": [string], "context": [string]}: verbatim
// paragraphs that refute the post explicitly, and ones that give refuting
// context. Its fallback asks for the paper's two-part list.
func EvidenceSchema() *llm.Schema {
	return &llm.Schema{
		Name:     SchemaEvidence,
		JSON:     stringArrays("refutes", "context"),
		Fallback: fallback("evidence_format.tmpl", nil),
	}
}

// EvidencePagesSchema is {"articles": [{"article": n, "quotes": [{"quote":
// string, "stance": "supports"|"refutes"|"context", "claim": n}]}]}: for
// each numbered article of an EvidencePages prompt, its verbatim paragraphs
// that confirm, refute or give context to a claim of the post, each with
// its stance and the claim's number (1 for a post of one claim). Its name
// is the task's, "evidence", like EvidenceSchema's.
func EvidencePagesSchema() *llm.Schema {
	quote := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"quote":  map[string]any{"type": "string"},
			"stance": map[string]any{"type": "string", "enum": []string{string(KindSupports), string(KindRefutes), string(KindContext)}},
			"claim":  map[string]any{"type": "integer"},
		},
		"required":             []string{"quote", "stance", "claim"},
		"additionalProperties": false,
	}
	item := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"article": map[string]any{"type": "integer"},
			"quotes":  map[string]any{"type": "array", "items": quote},
		},
		"required":             []string{"article", "quotes"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"articles": map[string]any{"type": "array", "items": item}},
		"required":             []string{"articles"},
		"additionalProperties": false,
	})
	return &llm.Schema{
		Name:     SchemaEvidence,
		JSON:     b,
		Fallback: fallback("evidence_pages_format.tmpl", nil),
	}
}

// ParseEvidence reads an evidence-extraction answer: paragraphs that refute
// the post explicitly, and context paragraphs that refute it implicitly,
// each list at most MaxQuotesPerKind long, quotes kept verbatim (only
// surrounding quotation marks and list markers are removed). "NONE" gives
// two empty lists and no error.
func ParseEvidence(text string) (refutes, context []string, err error) {
	body, err := prepare("evidence", text)
	if err != nil {
		return nil, nil, err
	}
	if obj, ok := jsonObject(body); ok {
		var found bool
		for key, raw := range obj {
			switch strings.ToLower(key) {
			case "refutes", "refute", "refutations", "explicit", "explicit_refutation":
				refutes, found = append(refutes, jsonStrings(raw)...), true
			case "context", "implicit", "implicit_refutation":
				context, found = append(context, jsonStrings(raw)...), true
			}
		}
		if found {
			refutes, context = finishQuotes(refutes, context)
			return refutes, context, nil
		}
		if _, ok := evidenceSections(body); !ok {
			return nil, nil, malformed("evidence", text, "JSON without \"refutes\" or \"context\"")
		}
	}
	if isNone(body) {
		return nil, nil, nil
	}
	pq, ok := evidenceSections(body)
	if !ok {
		return nil, nil, malformed("evidence", text, "no \"Explicit refutation\" or \"Implicit refutation\" section")
	}
	refutes, context = finishQuotes(pq.Refutes, pq.Context)
	return refutes, context, nil
}

// PageQuotes are the quotes an EvidencePages answer gives for one article.
type PageQuotes struct {
	// Article is the article's number in the prompt (1-based); 0 means the
	// answer did not say which article the quotes come from, so the caller
	// must find their page by itself.
	Article                    int
	Refutes, Supports, Context []string
	// Claims is the number of the post's claim each quote bears on (from
	// 1), keyed by the quote; a quote not in it bears on claim 1.
	Claims map[string]int
}

// setClaim records that quote q bears on claim n (from 1).
func (pq *PageQuotes) setClaim(q string, n int) {
	if n <= 0 {
		return
	}
	if pq.Claims == nil {
		pq.Claims = map[string]int{}
	}
	pq.Claims[q] = n
}

// add puts quote q in the list of its stance, with its claim.
func (pq *PageQuotes) add(k Kind, q string, claim int) {
	switch k {
	case KindRefutes:
		pq.Refutes = append(pq.Refutes, q)
	case KindSupports:
		pq.Supports = append(pq.Supports, q)
	default:
		pq.Context = append(pq.Context, q)
	}
	pq.setClaim(q, claim)
}

// ParseEvidencePages reads an EvidencePages answer: the schema's JSON (a
// quote without a stance, or with one ParseStance does not know, is
// context: it neither confirms nor refutes), the older JSON of "refutes",
// "supports" and "context" lists, either keyed by article number ({"1":
// {...}}), the paper's format under "Article N:" headings with a "Support"
// section, or, from a model that ignored the numbering, one unkeyed answer
// (Article 0). Quotes are cleaned as by ParseEvidence,
// at most MaxQuotesPerKind of each kind per article; "NONE" gives nil and
// no error. The article numbers are the model's: the caller checks them.
func ParseEvidencePages(text string) ([]PageQuotes, error) {
	body, err := prepare("evidence", text)
	if err != nil {
		return nil, err
	}
	if obj, ok := jsonObject(body); ok {
		if pqs, ok := articlesJSON(obj); ok {
			return mergeArticles(pqs), nil
		}
		if _, ok := articleSections(body); !ok {
			return nil, malformed("evidence", text, "JSON without \"articles\", \"refutes\" or \"context\"")
		}
	}
	if isNone(body) {
		return nil, nil
	}
	pqs, ok := articleSections(body)
	if !ok {
		return nil, malformed("evidence", text, "no \"Explicit refutation\" or \"Implicit refutation\" section")
	}
	return mergeArticles(pqs), nil
}

// articlesJSON reads {"articles": [...]}, {"1": {...}, "2": {...}} or one
// unkeyed {"refutes": [...], "context": [...]}.
func articlesJSON(obj map[string]json.RawMessage) ([]PageQuotes, bool) {
	one := func(o map[string]json.RawMessage, n int) (PageQuotes, bool) {
		pq := PageQuotes{Article: n}
		found := false
		for key, raw := range o {
			switch strings.ToLower(key) {
			case "refutes", "refute", "refutations", "explicit", "explicit_refutation":
				pq.Refutes, found = append(pq.Refutes, jsonStrings(raw)...), true
			case "supports", "support", "supporting", "confirms", "confirmations", "confirm":
				pq.Supports, found = append(pq.Supports, jsonStrings(raw)...), true
			case "context", "implicit", "implicit_refutation":
				pq.Context, found = append(pq.Context, jsonStrings(raw)...), true
			case "quotes", "evidence", "paragraphs":
				stanceQuotes(&pq, raw)
				found = true
			case "article", "page", "number", "id":
				pq.Article = articleNumber(raw)
			}
		}
		return pq, found
	}
	for key, raw := range obj {
		switch strings.ToLower(key) {
		case "articles", "pages", "results":
			var items []map[string]json.RawMessage
			if json.Unmarshal(raw, &items) != nil {
				return nil, false
			}
			var out []PageQuotes
			for _, it := range items {
				if pq, ok := one(it, 0); ok {
					out = append(out, pq)
				}
			}
			return out, true
		}
	}
	if pq, ok := one(obj, 0); ok {
		return []PageQuotes{pq}, true
	}
	if _, ok := obj["quote"]; ok {
		// One quote object on its own.
		var pq PageQuotes
		b, _ := json.Marshal([]map[string]json.RawMessage{obj})
		stanceQuotes(&pq, b)
		return []PageQuotes{pq}, true
	}
	var out []PageQuotes
	for key, raw := range obj {
		n := articleNumber(json.RawMessage(strconv.Quote(key)))
		var it map[string]json.RawMessage
		if n == 0 || json.Unmarshal(raw, &it) != nil {
			return nil, false
		}
		if pq, ok := one(it, n); ok {
			out = append(out, pq)
		}
	}
	return out, len(out) > 0
}

// stanceQuotes reads a list of quotes with their stance and claim,
// [{"quote": "…", "stance": "supports", "claim": 1}], into pq; a quote given
// as a bare string, without a stance or with one ParseStance does not know
// is context.
func stanceQuotes(pq *PageQuotes, raw json.RawMessage) {
	var items []json.RawMessage
	if json.Unmarshal(raw, &items) != nil {
		return
	}
	for _, it := range items {
		var s string
		if json.Unmarshal(it, &s) == nil {
			pq.add(KindContext, s, 0)
			continue
		}
		var obj map[string]json.RawMessage
		if json.Unmarshal(it, &obj) != nil {
			continue
		}
		var quote, stance string
		claim := 0
		for key, v := range obj {
			switch strings.ToLower(key) {
			case "quote", "text", "paragraph", "passage":
				_ = json.Unmarshal(v, &quote)
			case "stance", "kind", "label", "type", "relation", "verdict":
				_ = json.Unmarshal(v, &stance)
			case "claim", "claim_id", "claim_number", "claim_index":
				claim = claimNumber(v)
			}
		}
		if strings.TrimSpace(quote) == "" {
			continue
		}
		k, ok := ParseStance(stance)
		if !ok {
			k = KindContext
		}
		pq.add(k, quote, claim)
	}
}

var claimKeyRe = regexp.MustCompile(`(?i)^\s*(?:claim)?\s*#?\s*(\d{1,2})\s*$`)

// claimNumber reads 2, "2", "Claim 2"; 0 when it is none of these.
func claimNumber(raw json.RawMessage) int { return keyedNumber(raw, claimKeyRe) }

var articleKeyRe = regexp.MustCompile(`(?i)^\s*(?:article|page)?\s*#?\s*(\d{1,2})\s*$`)

// articleNumber reads 3, "3", "Article 3"; 0 when it is none of these.
func articleNumber(raw json.RawMessage) int { return keyedNumber(raw, articleKeyRe) }

// keyedNumber reads a positive number, or a string re matches with the
// number as its first group; 0 otherwise.
func keyedNumber(raw json.RawMessage, re *regexp.Regexp) int {
	var n int
	if json.Unmarshal(raw, &n) == nil && n > 0 {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0
	}
	if m := re.FindStringSubmatch(s); m != nil {
		n, _ = strconv.Atoi(m[1])
	}
	return n
}

var articleHeadRe = regexp.MustCompile(`(?i)^\s*[#*]*\s*(?:article|page)\s*#?\s*(\d{1,2})\b[^:\n]{0,60}?[*]*\s*:?\s*[*]*\s*(.*)$`)

// articleSections splits the paper's format by "Article N:" headings; an
// answer without headings is one unkeyed section.
func articleSections(body string) ([]PageQuotes, bool) {
	type section struct {
		n     int
		lines []string
	}
	var secs []section
	cur := section{}
	for _, line := range strings.Split(body, "\n") {
		if m := articleHeadRe.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			secs = append(secs, cur)
			n, _ := strconv.Atoi(m[1])
			cur = section{n: n}
			if rest := strings.TrimSpace(m[2]); rest != "" {
				cur.lines = append(cur.lines, rest)
			}
			continue
		}
		cur.lines = append(cur.lines, line)
	}
	secs = append(secs, cur)
	var out []PageQuotes
	seen := false
	for _, sec := range secs {
		text := strings.TrimSpace(strings.Join(sec.lines, "\n"))
		if text == "" || isNone(text) {
			seen = seen || sec.n > 0
			continue
		}
		pq, ok := evidenceSections(text)
		if !ok {
			if sec.n == 0 {
				continue // chatter before the first heading
			}
			return nil, false
		}
		seen = true
		pq.Article = sec.n
		out = append(out, pq)
	}
	return out, seen
}

// mergeArticles joins the entries of one article, cleans and caps their
// quotes, and drops entries left without any, in article order.
func mergeArticles(pqs []PageQuotes) []PageQuotes {
	byN := map[int]*PageQuotes{}
	var order []int
	for _, pq := range pqs {
		m, ok := byN[pq.Article]
		if !ok {
			m = &PageQuotes{Article: pq.Article}
			byN[pq.Article] = m
			order = append(order, pq.Article)
		}
		m.Refutes = append(m.Refutes, pq.Refutes...)
		m.Supports = append(m.Supports, pq.Supports...)
		m.Context = append(m.Context, pq.Context...)
		for q, c := range pq.Claims {
			m.setClaim(cleanQuoteText(q), c)
		}
	}
	slices.Sort(order)
	var out []PageQuotes
	for _, n := range order {
		m := byN[n]
		m.Refutes, m.Supports, m.Context = finishStances(m.Refutes, m.Supports, m.Context)
		if len(m.Refutes)+len(m.Supports)+len(m.Context) > 0 {
			out = append(out, *m)
		}
	}
	return out
}

var headerRe = regexp.MustCompile(`(?i)^[\s#*_]*(?:\d{1,2}\s*[.)]\s*)?[*_]*\s*(explicit(?:ly)?|implicit(?:ly)?|refut\w*|context\w*|support\w*|confirm\w*)\b([^:\n]{0,40}):[*_]*\s*(.*)$`)

var claimPrefixRe = regexp.MustCompile(`(?i)^[(\[]\s*claim\s*#?\s*(\d{1,2})\s*[)\]]\s*:?\s*`)

// evidenceSections reads the paper's format: an "Explicit refutation:"
// header and a "- QUOTE" line per quote, then an "Implicit refutation:"
// header and its quotes, and a "Support:" header and its quotes (headers
// may be numbered, bold or Markdown headings; a quote may open with
// "(claim N)"). ok is false when no section header is found.
func evidenceSections(body string) (pq PageQuotes, ok bool) {
	var cur *[]string
	open := false // the last item may continue on the next line
	add := func(s string) {
		if cur != nil {
			*cur = append(*cur, s)
			open = true
		}
	}
	defer func() {
		for _, list := range []*[]string{&pq.Refutes, &pq.Supports, &pq.Context} {
			for i, q := range *list {
				if m := claimPrefixRe.FindStringSubmatch(q); m != nil {
					(*list)[i] = q[len(m[0]):]
					n, _ := strconv.Atoi(m[1])
					pq.setClaim(cleanQuoteText((*list)[i]), n)
				}
			}
		}
	}()
	for _, line := range strings.Split(body, "\n") {
		if m := headerRe.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			kw := strings.ToLower(m[1])
			switch {
			case strings.HasPrefix(kw, "implicit") || strings.HasPrefix(kw, "context"):
				cur = &pq.Context
			case strings.HasPrefix(kw, "support") || strings.HasPrefix(kw, "confirm"):
				cur = &pq.Supports
			default:
				cur = &pq.Refutes
			}
			ok, open = true, false
			if rest := strings.TrimSpace(m[3]); rest != "" {
				add(rest)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			open = false
			continue
		}
		if item, isItem := listItem(line); isItem {
			add(item)
			continue
		}
		if open && cur != nil && len(*cur) > 0 {
			(*cur)[len(*cur)-1] += " " + strings.TrimSpace(line)
			continue
		}
		add(strings.TrimSpace(line))
	}
	return pq, ok
}

// finishQuotes unwraps, drops NONE and duplicates (a quote in both lists
// stays a refutation) and keeps at most MaxQuotesPerKind of each.
func finishQuotes(refutes, context []string) ([]string, []string) {
	r, _, c := finishStances(refutes, nil, context)
	return r, c
}

// cleanQuoteText takes a "Quote 1:" label and one pair of surrounding
// quotation marks off a quote.
func cleanQuoteText(q string) string {
	q = strings.TrimSpace(queryLabelQuoteRe.ReplaceAllString(strings.TrimSpace(q), ""))
	return strings.TrimSpace(unwrapQuote(q))
}

// finishStances is finishQuotes for the three stances: a quote given
// several stances keeps the first of refutes, supports, context.
func finishStances(refutes, supports, context []string) ([]string, []string, []string) {
	seen := map[string]bool{}
	clean := func(list []string) []string {
		var out []string
		for _, q := range list {
			q = cleanQuoteText(q)
			if q == "" || isNone(q) || seen[q] {
				continue
			}
			seen[q] = true
			if len(out) < MaxQuotesPerKind {
				out = append(out, q)
			}
		}
		return out
	}
	r := clean(refutes)
	s := clean(supports)
	return r, s, clean(context)
}

var queryLabelQuoteRe = regexp.MustCompile(`(?i)^quote[ _]?\d\s*:\s*`)

// unwrapQuote removes one pair of surrounding quotation marks or braces.
func unwrapQuote(s string) string {
	s = strings.TrimSpace(s)
	pairs := [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"‘", "’"}, {"«", "»"}, {"{", "}"}, {"`", "`"}}
	for _, p := range pairs {
		if len(s) >= len(p[0])+len(p[1]) && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
			inner := s[len(p[0]) : len(s)-len(p[1])]
			// Don't unwrap "a" and "b" into a" and "b, but do unwrap
			// "He said "no" today": there the first inner mark opens.
			if i := strings.Index(inner, p[0]); p[0] == p[1] && i >= 0 && (i == 0 || inner[i-1] != ' ') {
				continue
			}
			return strings.TrimSpace(inner)
		}
	}
	return s
}

// isNone recognises the paper's "NONE" answer and its variants.
func isNone(s string) bool {
	t := strings.ToLower(strings.TrimFunc(s, func(r rune) bool {
		return unicode.IsSpace(r) || unicode.IsPunct(r) || r == '*' || r == '`'
	}))
	switch t {
	case "none", "n/a", "na", "nothing", "no queries", "no quotes", "none found", "not informative":
		return true
	}
	return strings.HasPrefix(t, "none") && len(t) < 80 && !strings.Contains(t, "\n")
}
