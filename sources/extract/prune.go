package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// prune removes, in one walk of doc, the elements a browser does not show
// (invisible) and what no extractor reads as text and trafilatura throws
// away anyway, but only after copying the page three times and searching
// all of it for metadata (inert): scripts (other than JSON-LD, which its
// metadata reads), style sheets, SVG drawings, noscript fallbacks and
// comments. On a news page they are often most of the nodes. It runs after
// go-htmldate, which reads dates in scripts.
//
// It also removes the whitespace between blocks (the source's indentation,
// often a third of a page's nodes), which no browser renders: every node
// trafilatura copies three times and every selector it runs visits.
func prune(n *html.Node) { pruneIn(n, false) }

// pruneIn is prune below n; inPre says n is inside <pre> or <textarea>,
// where whitespace is text.
func pruneIn(n *html.Node, inPre bool) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if inert(c) || c.Type == html.ElementNode && invisible(c) || !inPre && layoutSpace(c) {
			n.RemoveChild(c)
		} else {
			pruneIn(c, inPre || c.DataAtom == atom.Pre || c.DataAtom == atom.Textarea)
		}
		c = next
	}
}

func inert(n *html.Node) bool {
	switch n.Type {
	case html.CommentNode:
		return true
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Style, atom.Svg, atom.Noscript:
			return true
		case atom.Script:
			for _, a := range n.Attr {
				if a.Key == "type" && strings.Contains(strings.ToLower(a.Val), "ld+json") {
					return false
				}
			}
			return true
		}
	}
	return false
}

// layoutSpace reports a whitespace-only text node that does not separate
// two pieces of inline content: one next to a block, at the edge of its
// parent, or inside <head> (prune keeps all of it inside <pre>).
func layoutSpace(n *html.Node) bool {
	if n.Type != html.TextNode || strings.TrimLeft(n.Data, " \t\n\r\f") != "" {
		return false
	}
	return !inline(n.PrevSibling) || !inline(n.NextSibling)
}

// inline reports text, or an element that is not a paragraph boundary
// (blockTags) nor part of <head>: whitespace next to it may be a space
// between words.
func inline(n *html.Node) bool {
	if n == nil {
		return false
	}
	switch n.Type {
	case html.TextNode:
		return true
	case html.ElementNode:
		switch n.DataAtom {
		case atom.Head, atom.Meta, atom.Link, atom.Title, atom.Base, atom.Script, atom.Style:
			return false
		}
		return !blockTags[n.DataAtom]
	}
	return false
}

// cleanedFirst are elements go-trafilatura's cleaning deletes, with
// everything in them and the text right after them (its tagsToClean,
// removed with their tails), before it looks for the main text: but only
// after it has searched the whole page for metadata and copied it three
// times. About 28% of a page's nodes are inside them (navigation, forms,
// form controls, media). Left out of its list: head (metadata), time, ins,
// which it unwraps instead, and footer and aside, where its author search
// finds bylines (taking them out too changed the author on 26 of the 930
// benchmark pages); a figure that holds a table it keeps as a div
// (figureWithTable).
var cleanedFirst = map[string]bool{
	"embed": true, "form": true, "iframe": true, "menu": true, "object": true,
	"applet": true, "audio": true, "canvas": true, "figure": true, "map": true, "picture": true, "video": true,
	"area": true, "blink": true, "button": true, "datalist": true, "dialog": true, "frame": true,
	"frameset": true, "fieldset": true, "input": true, "label": true, "legend": true,
	"marquee": true, "math": true, "menuitem": true, "nav": true, "optgroup": true, "option": true,
	"output": true, "param": true, "progress": true, "rp": true, "rt": true, "rtc": true, "select": true,
	"source": true, "track": true, "textarea": true,
}

// detachedNode is a node taken out of the tree, with where it goes back.
type detachedNode struct{ n, parent, next *html.Node }

// detachCleaned takes out of doc's body the elements go-trafilatura's
// cleaning deletes before it reads the content (cleanedFirst) with the
// text nodes that follow them, so that its first pass copies and searches
// only what it can keep. restore puts them back; until then doc is not the
// page.
func detachCleaned(doc *html.Node) []detachedNode {
	var out []detachedNode
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		for c := n.FirstChild; c != nil; {
			next := c.NextSibling
			switch {
			case c.Type == html.ElementNode && c.DataAtom == atom.Head:
			case c.Type == html.ElementNode && cleanedFirst[c.Data] && !figureWithTable(c):
				for next != nil && next.Type == html.TextNode { // its tail
					after := next.NextSibling
					out = append(out, detachedNode{next, n, after})
					n.RemoveChild(next)
					next = after
				}
				out = append(out, detachedNode{c, n, next})
				n.RemoveChild(c)
			default:
				walk(c)
			}
			c = next
		}
	}
	walk(doc)
	return out
}

// restore puts back what detachCleaned took out, last first, so that
// every node's next sibling is in place when it goes back.
func restore(ds []detachedNode) {
	for i := len(ds) - 1; i >= 0; i-- {
		d := ds[i]
		d.parent.InsertBefore(d.n, d.next)
	}
}

// figureWithTable reports a figure that holds a table, which go-trafilatura
// turns into a div instead of deleting.
func figureWithTable(n *html.Node) bool {
	if n.Data != "figure" {
		return false
	}
	var has func(*html.Node) bool
	has = func(n *html.Node) bool {
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.Data == "table" || has(c)) {
				return true
			}
		}
		return false
	}
	return has(n)
}
