package prompts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/sources/llm"
)

// Parsers accept the JSON the schemas ask for, the same JSON wrapped in a
// Markdown code fence or surrounded by chatter, and the paper's plain-text
// formats. They never panic; an answer that fits no form is an error
// wrapping llm.ErrMalformed (llm.ErrRefusal for an apology, llm.ErrEmpty for
// nothing at all), so callers can tell the cases apart with errors.Is.

// ParseQueries reads a query-generation answer. informative is false when
// the model answered that the post has nothing to search for ("NONE", or an
// empty list); queries are then nil and err is nil.
func ParseQueries(text string) (queries []string, informative bool, err error) {
	body, err := prepare("queries", text)
	if err != nil {
		return nil, false, err
	}
	if obj, ok := jsonObject(body); ok {
		for _, key := range []string{"queries", "query", "search_queries"} {
			if raw, ok := obj[key]; ok {
				qs := cleanQueries(jsonStrings(raw))
				return qs, len(qs) > 0, nil
			}
		}
		return nil, false, malformed("queries", text, "JSON without a \"queries\" list")
	}
	if arr, ok := jsonArray(body); ok {
		qs := cleanQueries(arr)
		return qs, len(qs) > 0, nil
	}
	if isNone(body) {
		return nil, false, nil
	}
	var items []string
	for _, line := range strings.Split(body, "\n") {
		if item, ok := listItem(line); ok {
			items = append(items, item)
		}
	}
	if qs := cleanQueries(items); len(qs) > 0 {
		return qs, true, nil
	}
	if items != nil || mentionsNotInformative(body) {
		return nil, false, nil // a list of NONE, or prose saying there is nothing to search
	}
	return nil, false, malformed("queries", text, "neither JSON nor a numbered list")
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
		if !found {
			return nil, nil, malformed("evidence", text, "JSON without \"refutes\" or \"context\"")
		}
		refutes, context = finishQuotes(refutes, context)
		return refutes, context, nil
	}
	if isNone(body) {
		return nil, nil, nil
	}
	refutes, context, ok := evidenceSections(body)
	if !ok {
		return nil, nil, malformed("evidence", text, "no \"Explicit refutation\" or \"Implicit refutation\" section")
	}
	refutes, context = finishQuotes(refutes, context)
	return refutes, context, nil
}

// PageQuotes are the quotes an EvidencePages answer gives for one article.
type PageQuotes struct {
	// Article is the article's number in the prompt (1-based); 0 means the
	// answer did not say which article the quotes come from, so the caller
	// must find their page by itself.
	Article          int
	Refutes, Context []string
}

// ParseEvidencePages reads an EvidencePages answer: the schema's JSON, the
// same keyed by article number ({"1": {...}}), the paper's two-part format
// under "Article N:" headings, or, from a model that ignored the numbering,
// one unkeyed answer (Article 0). Quotes are cleaned as by ParseEvidence,
// at most MaxQuotesPerKind of each kind per article; "NONE" gives nil and
// no error. The article numbers are the model's: the caller checks them.
func ParseEvidencePages(text string) ([]PageQuotes, error) {
	body, err := prepare("evidence", text)
	if err != nil {
		return nil, err
	}
	if obj, ok := jsonObject(body); ok {
		pqs, ok := articlesJSON(obj)
		if !ok {
			return nil, malformed("evidence", text, "JSON without \"articles\", \"refutes\" or \"context\"")
		}
		return mergeArticles(pqs), nil
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
			case "context", "implicit", "implicit_refutation":
				pq.Context, found = append(pq.Context, jsonStrings(raw)...), true
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

var articleKeyRe = regexp.MustCompile(`(?i)^\s*(?:article|page)?\s*#?\s*(\d{1,2})\s*$`)

// articleNumber reads 3, "3", "Article 3"; 0 when it is none of these.
func articleNumber(raw json.RawMessage) int {
	var n int
	if json.Unmarshal(raw, &n) == nil && n > 0 {
		return n
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return 0
	}
	if m := articleKeyRe.FindStringSubmatch(s); m != nil {
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
		r, c, ok := evidenceSections(text)
		if !ok {
			if sec.n == 0 {
				continue // chatter before the first heading
			}
			return nil, false
		}
		seen = true
		out = append(out, PageQuotes{Article: sec.n, Refutes: r, Context: c})
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
		m.Context = append(m.Context, pq.Context...)
	}
	slices.Sort(order)
	var out []PageQuotes
	for _, n := range order {
		m := byN[n]
		m.Refutes, m.Context = finishQuotes(m.Refutes, m.Context)
		if len(m.Refutes)+len(m.Context) > 0 {
			out = append(out, *m)
		}
	}
	return out
}

// ParseImageDescription reads an image-description answer: {"description"}
// JSON or plain text (the paper's answers come wrapped in braces).
func ParseImageDescription(text string) (string, error) {
	body, err := prepare("image description", text)
	if err != nil {
		return "", err
	}
	if obj, ok := jsonObject(body); ok {
		for _, key := range []string{"description", "image_description"} {
			if raw, ok := obj[key]; ok {
				if d := strings.Join(jsonStrings(raw), " "); strings.TrimSpace(d) != "" {
					return strings.TrimSpace(d), nil
				}
				return "", fmt.Errorf("prompts: parse image description answer: %w", llm.ErrEmpty)
			}
		}
		return "", malformed("image description", text, "JSON without \"description\"")
	}
	d := strings.TrimSpace(body)
	d = labelRe.ReplaceAllString(d, "")
	d = strings.TrimSpace(unwrapQuote(d))
	if d == "" || isNone(d) {
		return "", fmt.Errorf("prompts: parse image description answer: %w", llm.ErrEmpty)
	}
	return d, nil
}

var labelRe = regexp.MustCompile(`(?i)^\**\s*(?:informative\s+)?(?:image\s+)?description\s*\**\s*:\s*`)

// prepare trims the answer, unwraps a Markdown code fence and recognises
// empty answers and refusals.
func prepare(what, text string) (string, error) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	body := strings.TrimSpace(strings.ReplaceAll(text, "\r\n", "\n"))
	body = unfence(body)
	if body == "" {
		return "", fmt.Errorf("prompts: parse %s answer: %w", what, llm.ErrEmpty)
	}
	if isRefusal(body) {
		return "", fmt.Errorf("prompts: parse %s answer %q: %w", what, snippet(body), llm.ErrRefusal)
	}
	return body, nil
}

var fenceRe = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \\t]*\\n(.*?)\\n?```")

func unfence(s string) string {
	if m := fenceRe.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return s
}

// jsonObject finds a JSON object in s: the whole of s, or the span from the
// first "{" to the last "}" (answers that talk around their JSON).
func jsonObject(s string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		return obj, true
	}
	i, j := strings.IndexByte(s, '{'), strings.LastIndexByte(s, '}')
	if i < 0 || j <= i {
		return nil, false
	}
	if json.Unmarshal([]byte(s[i:j+1]), &obj) == nil && obj != nil {
		return obj, true
	}
	return nil, false
}

// jsonArray accepts an answer that is a bare JSON array of strings.
func jsonArray(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var arr []string
	if json.Unmarshal([]byte(s), &arr) != nil {
		return nil, false
	}
	return arr, true
}

// jsonStrings reads a list of strings, a single string, or a list of objects
// with a "quote"/"text"/"query" field.
func jsonStrings(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	var out []string
	for _, m := range many {
		if json.Unmarshal(m, &one) == nil {
			out = append(out, one)
			continue
		}
		var obj map[string]any
		if json.Unmarshal(m, &obj) == nil {
			for _, k := range []string{"quote", "text", "query", "paragraph"} {
				if s, ok := obj[k].(string); ok {
					out = append(out, s)
					break
				}
			}
		}
	}
	return out
}

var listRe = regexp.MustCompile(`^\s*(?:\d{1,2}\s*[.):]|[-*•–])\s+(.*)$`)

// listItem recognises "1. text", "2) text", "- text", "* text", "• text".
func listItem(line string) (string, bool) {
	line = strings.ReplaceAll(line, "**", "")
	m := listRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

var queryLabelRe = regexp.MustCompile(`(?i)^(?:query[ _]?\d*|q\d+)\s*[:.-]\s*`)

func cleanQueries(items []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, q := range items {
		q = oneLine(q)
		q = queryLabelRe.ReplaceAllString(q, "")
		q = strings.TrimSpace(unwrapQuote(q))
		// The paper's queries carry no quotation marks: a quoted phrase
		// would make the search engine demand that exact wording.
		q = oneLine(strings.NewReplacer(`"`, "", "“", "", "”", "").Replace(q))
		if q == "" || isNone(q) {
			continue
		}
		key := strings.ToLower(q)
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, q)
	}
	return out
}

var headerRe = regexp.MustCompile(`(?i)^\s*#*\s*(?:\d{1,2}\s*[.)]\s*)?\**\s*(explicit(?:ly)?|implicit(?:ly)?|refut\w*|context\w*)\b([^:\n]{0,40}):\**\s*(.*)$`)

// evidenceSections reads the paper's format: an "Explicit refutation:"
// header and a "- QUOTE" line per quote, then an "Implicit refutation:"
// header and its quotes (headers may be numbered, bold or Markdown headings).
// ok is false when no section header is found.
func evidenceSections(body string) (refutes, context []string, ok bool) {
	var cur *[]string
	open := false // the last item may continue on the next line
	add := func(s string) {
		if cur != nil {
			*cur = append(*cur, s)
			open = true
		}
	}
	for _, line := range strings.Split(body, "\n") {
		if m := headerRe.FindStringSubmatch(line); m != nil && !strings.HasPrefix(strings.TrimSpace(line), "-") {
			kw := strings.ToLower(m[1])
			if strings.HasPrefix(kw, "implicit") || strings.HasPrefix(kw, "context") {
				cur = &context
			} else {
				cur = &refutes
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
	return refutes, context, ok
}

// finishQuotes unwraps, drops NONE and duplicates (a quote in both lists
// stays a refutation) and keeps at most MaxQuotesPerKind of each.
func finishQuotes(refutes, context []string) ([]string, []string) {
	seen := map[string]bool{}
	clean := func(list []string) []string {
		var out []string
		for _, q := range list {
			q = strings.TrimSpace(queryLabelQuoteRe.ReplaceAllString(strings.TrimSpace(q), ""))
			q = strings.TrimSpace(unwrapQuote(q))
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
	return r, clean(context)
}

var queryLabelQuoteRe = regexp.MustCompile(`(?i)^quote[ _]?\d\s*:\s*`)

// unwrapQuote removes one pair of surrounding quotation marks or braces.
func unwrapQuote(s string) string {
	s = strings.TrimSpace(s)
	pairs := [][2]string{{`"`, `"`}, {"“", "”"}, {"'", "'"}, {"‘", "’"}, {"«", "»"}, {"{", "}"}, {"`", "`"}}
	for _, p := range pairs {
		if len(s) >= len(p[0])+len(p[1]) && strings.HasPrefix(s, p[0]) && strings.HasSuffix(s, p[1]) {
			inner := s[len(p[0]) : len(s)-len(p[1])]
			// Don't unwrap "a" and "b" into a" and "b.
			if p[0] == p[1] && strings.Contains(inner, p[0]) {
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

func mentionsNotInformative(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "not informative") || strings.Contains(l, "not enough information")
}

var refusalRe = regexp.MustCompile(`(?i)^(?:i['’]m sorry|i am sorry|sorry,|i can(?:['’]t|not) (?:help|assist|comply|do that|provide)|i won['’]t|as an ai\b)`)

func isRefusal(s string) bool { return refusalRe.MatchString(strings.TrimSpace(s)) }

func malformed(what, text, why string) error {
	return fmt.Errorf("prompts: parse %s answer %q: %s: %w", what, snippet(text), why, llm.ErrMalformed)
}

func snippet(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
