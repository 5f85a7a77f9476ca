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
func prune(n *html.Node) {
	for c := n.FirstChild; c != nil; {
		next := c.NextSibling
		if inert(c) || c.Type == html.ElementNode && invisible(c) {
			n.RemoveChild(c)
		} else {
			prune(c)
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
