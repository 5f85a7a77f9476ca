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
