package extract

import (
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// readMicrodata returns the page's schema.org microdata items (itemscope
// with an itemtype) as nodes shaped like JSON-LD objects, so that the
// ClaimReview reader serves both markups. Nested items become nested
// objects; a property given twice becomes a list.
func readMicrodata(doc *goquery.Document) []node {
	var out []node
	doc.Find("[itemscope][itemtype]").Each(func(_ int, s *goquery.Selection) {
		out = append(out, microItem(s, 0))
	})
	return out
}

// microItem reads one item: its type and the properties that belong to it,
// not to an item nested inside it.
func microItem(item *goquery.Selection, depth int) node {
	n := node{}
	if t := strings.Fields(item.AttrOr("itemtype", "")); len(t) > 0 {
		n["@type"] = trimSchema(t[0])
	}
	if depth > 12 {
		return n
	}
	item.Find("[itemprop]").Each(func(_ int, p *goquery.Selection) {
		if owner := p.Parent().Closest("[itemscope]"); owner.Length() == 0 || owner.Get(0) != item.Get(0) {
			return // a property of a nested item
		}
		var v any
		if _, ok := p.Attr("itemscope"); ok {
			v = map[string]any(microItem(p, depth+1))
		} else {
			v = microValue(p)
		}
		for _, name := range strings.Fields(p.AttrOr("itemprop", "")) {
			switch old := n[name].(type) {
			case nil:
				n[name] = v
			case []any:
				n[name] = append(old, v)
			default:
				n[name] = []any{old, v}
			}
		}
	})
	return n
}

// microValue is a property's value as microdata defines it per element.
func microValue(p *goquery.Selection) string {
	attr := ""
	switch goquery.NodeName(p) {
	case "meta":
		attr = "content"
	case "a", "link", "area":
		attr = "href"
	case "img", "audio", "video", "source", "iframe", "embed":
		attr = "src"
	case "time":
		attr = "datetime"
	case "data", "meter":
		attr = "value"
	case "object":
		attr = "data"
	}
	if v, ok := p.Attr("content"); ok && attr != "href" {
		return strings.TrimSpace(v)
	}
	if attr != "" {
		if v, ok := p.Attr(attr); ok {
			return strings.TrimSpace(v)
		}
	}
	return strings.Join(strings.Fields(p.Text()), " ")
}
