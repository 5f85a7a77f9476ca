package prompts

import (
	"regexp"
	"strings"

	"github.com/musecheck/muse/sources/llm"
)

// NumQueries is the paper's number of queries: 3, or 5 when the post has images.
func NumQueries(p Post) int {
	if len(p.ImageDescriptions) > 0 || strings.TrimSpace(p.Video) != "" {
		return QueriesWithImage
	}
	return QueriesText
}

// Queries builds the query-generation prompt asking for n queries (n < 1
// means NumQueries(p)). A post in another language than English (a
// Language label) gets its n queries in that language, plus one in English
// when the claim is international: MaxQueries(p, n) in all. Send it with
// QueriesSchema(p, n).
func Queries(p Post, n int) ([]llm.Message, error) {
	if n < 1 {
		n = NumQueries(p)
	}
	return messages("queries", map[string]any{"Post": cleanPost(p), "N": n})
}

// MaxQueries is how many queries the prompt for n allows: n, and the
// English one besides for a post in another language.
func MaxQueries(p Post, n int) int {
	if n < 1 {
		n = NumQueries(p)
	}
	if oneLine(p.Language) != "" {
		return n + 1
	}
	return n
}

// QueriesSchema is {"queries": [string], "claims": [string]}: an empty
// list of queries means the post is not informative; the claims are the
// post's checkable claims (ParseClaims). Its fallback asks for the
// paper's numbered list of n queries (and the English one of a post in
// another language), and no claims.
func QueriesSchema(p Post, n int) *llm.Schema {
	if n < 1 {
		n = NumQueries(p)
	}
	return &llm.Schema{
		Name:     SchemaQueries,
		JSON:     stringArrays("queries", "claims"),
		Fallback: fallback("queries_format.tmpl", map[string]any{"N": n, "English": oneLine(p.Language) != ""}),
	}
}

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

// MaxClaims bounds the claims a post is split into.
const MaxClaims = 5

// ParseClaims reads the claims of a query-generation answer: its
// "claims" list, each on one line, without duplicates, at most MaxClaims;
// nil when the answer has none (the paper's plain list, or a model that
// left them out), which means the post is one claim.
func ParseClaims(text string) []string {
	body, err := prepare("queries", text)
	if err != nil {
		return nil
	}
	obj, ok := jsonObject(body)
	if !ok {
		return nil
	}
	var out []string
	seen := map[string]bool{}
	for key, raw := range obj {
		switch strings.ToLower(key) {
		case "claims", "claim", "checkable_claims":
			for _, c := range jsonStrings(raw) {
				c = strings.TrimSpace(unwrapQuote(oneLine(c)))
				if c == "" || isNone(c) || seen[strings.ToLower(c)] || len(out) == MaxClaims {
					continue
				}
				seen[strings.ToLower(c)] = true
				out = append(out, c)
			}
		}
	}
	return out
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

func mentionsNotInformative(s string) bool {
	l := strings.ToLower(s)
	return strings.Contains(l, "not informative") || strings.Contains(l, "not enough information")
}
