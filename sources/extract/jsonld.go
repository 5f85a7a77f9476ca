package extract

import (
	"encoding/json"
	"maps"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/PuerkitoBio/goquery"
	"github.com/musecheck/muse/sources"
)

// node is one JSON-LD object (anything with an @type).
type node map[string]any

// readJSONLD decodes every JSON-LD block of the page and returns all typed
// objects in it, wherever they sit: top level, in arrays, in @graph, or nested
// as property values (a ClaimReview inside an Article's "review", say).
// Blocks that are not valid JSON even after light repair are skipped: one
// broken block must not hide the others.
func readJSONLD(doc *goquery.Document) []node {
	var out []node
	doc.Find("script").Each(func(_ int, s *goquery.Selection) {
		typ, _ := s.Attr("type")
		if !strings.Contains(strings.ToLower(typ), "ld+json") {
			return
		}
		var v any
		if err := json.Unmarshal(repairJSON(s.Text()), &v); err != nil {
			return
		}
		collectNodes(v, &out, 0)
	})
	resolveRefs(out)
	return out
}

// resolveRefs replaces each property that only points at another object of
// the page ({"@id": "https://site.example/#organization"}, Yoast's and most
// CMSs' way to name a publisher or author once in an @graph) with the object
// it points at, so that its name is read rather than its identifier.
func resolveRefs(nodes []node) {
	// Each reference becomes a copy of its object as the page wrote it, so
	// an object that points back at the one pointing at it (or at itself)
	// cannot make a cycle that reading a name would walk forever.
	byID := map[string]map[string]any{}
	for _, n := range nodes {
		if id, ok := n["@id"].(string); ok && id != "" {
			if _, seen := byID[id]; !seen {
				byID[id] = maps.Clone(map[string]any(n))
			}
		}
	}
	if len(byID) == 0 {
		return
	}
	target := func(v any) (map[string]any, bool) {
		m, ok := v.(map[string]any)
		if !ok || len(m) != 1 {
			return nil, false
		}
		id, _ := m["@id"].(string)
		t, ok := byID[id]
		return t, ok
	}
	for _, n := range nodes {
		for k, v := range n {
			if t, ok := target(v); ok {
				n[k] = t
				continue
			}
			if list, ok := v.([]any); ok {
				// A new list: the copies in byID share the page's lists,
				// which must stay as written.
				var resolved []any
				for i, e := range list {
					if t, ok := target(e); ok {
						if resolved == nil {
							resolved = slices.Clone(list)
						}
						resolved[i] = t
					}
				}
				if resolved != nil {
					n[k] = resolved
				}
			}
		}
	}
}

// collectNodes walks a decoded JSON value depth-first; the depth limit guards
// against pathological nesting.
func collectNodes(v any, out *[]node, depth int) {
	if depth > 12 {
		return
	}
	switch x := v.(type) {
	case []any:
		for _, e := range x {
			collectNodes(e, out, depth+1)
		}
	case map[string]any:
		if _, ok := x["@type"]; ok {
			*out = append(*out, node(x))
		}
		for k, e := range x {
			if k == "@context" {
				continue
			}
			collectNodes(e, out, depth+1)
		}
	}
}

// repairJSON undoes what CMSs commonly do to JSON-LD: wrap it in HTML
// comments or CDATA markers and put raw line breaks or tabs inside strings,
// which encoding/json rightly refuses.
func repairJSON(s string) []byte {
	s = strings.TrimSpace(s)
	for _, p := range []string{"<!--", "//<![CDATA[", "<![CDATA["} {
		s = strings.TrimPrefix(strings.TrimSpace(s), p)
	}
	for _, p := range []string{"-->", "//]]>", "]]>"} {
		s = strings.TrimSuffix(strings.TrimSpace(s), p)
	}
	b := []byte(s)
	inString, escaped := false, false
	for i, c := range b {
		switch {
		case escaped:
			escaped = false
		case inString && c == '\\':
			escaped = true
		case c == '"':
			inString = !inString
		case inString && c < 0x20:
			b[i] = ' '
		}
	}
	return b
}

// hasType reports whether a node's @type (a string or a list) is one of want.
func (n node) hasType(want ...string) bool {
	for _, t := range n.types() {
		for _, w := range want {
			if strings.EqualFold(t, w) {
				return true
			}
		}
	}
	return false
}

func (n node) types() []string {
	switch t := n["@type"].(type) {
	case string:
		return []string{trimSchema(t)}
	case []any:
		var out []string
		for _, e := range t {
			if s, ok := e.(string); ok {
				out = append(out, trimSchema(s))
			}
		}
		return out
	}
	return nil
}

// trimSchema turns "http://schema.org/NewsArticle" or "schema:NewsArticle"
// into "NewsArticle".
func trimSchema(t string) string {
	if i := strings.LastIndexAny(t, "/:"); i >= 0 {
		return t[i+1:]
	}
	return t
}

// str returns a property as text: a string, the first string of a list, or
// the name / @value / url of an object.
func (n node) str(key string) string {
	return asString(n[key])
}

func asString(v any) string {
	switch x := v.(type) {
	case string:
		return strings.TrimSpace(x)
	case float64:
		return strconv.FormatFloat(x, 'f', -1, 64)
	case []any:
		for _, e := range x {
			if s := asString(e); s != "" {
				return s
			}
		}
	case map[string]any:
		for _, k := range []string{"name", "@value", "url", "@id"} {
			if s := asString(x[k]); s != "" {
				return s
			}
		}
	}
	return ""
}

// obj returns a property as an object, or the first object of a list.
func (n node) obj(key string) node {
	switch x := n[key].(type) {
	case map[string]any:
		return node(x)
	case []any:
		for _, e := range x {
			if m, ok := e.(map[string]any); ok {
				return node(m)
			}
		}
	}
	return nil
}

// names returns the names of a property that may hold one or several
// people or organisations, as strings or objects.
func (n node) names(key string) []string {
	var out []string
	add := func(v any) {
		if s := asString(v); s != "" {
			out = append(out, s)
		}
	}
	if l, ok := n[key].([]any); ok {
		for _, e := range l {
			add(e)
		}
	} else {
		add(n[key])
	}
	return out
}

// date returns a property parsed as a date, zero when absent or unreadable.
func (n node) date(key string) time.Time {
	return sources.ParseDate(n.str(key))
}
