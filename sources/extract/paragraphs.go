package extract

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// blockTags end a paragraph where they open and where they close.
var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true,
	atom.H5: true, atom.H6: true, atom.Li: true, atom.Ul: true, atom.Ol: true, atom.Dl: true,
	atom.Dt: true, atom.Dd: true, atom.Blockquote: true, atom.Pre: true, atom.Table: true,
	atom.Tr: true, atom.Td: true, atom.Th: true, atom.Figure: true, atom.Figcaption: true,
	atom.Section: true, atom.Article: true, atom.Header: true, atom.Footer: true, atom.Aside: true,
	atom.Hr: true, atom.Br: true, atom.Main: true, atom.Details: true, atom.Summary: true,
	atom.Address: true, atom.Caption: true, atom.Body: true,
}

// paragraphs splits extracted content into paragraphs: text between block
// boundaries, whitespace collapsed, empty pieces dropped.
func paragraphs(root *html.Node) []string {
	if root == nil {
		return nil
	}
	var out []string
	var cur strings.Builder
	flush := func() {
		if s := strings.Join(strings.Fields(cur.String()), " "); s != "" {
			out = append(out, s)
		}
		cur.Reset()
	}
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.TextNode:
			// trafilatura's own text joins text nodes with a space: its
			// output often splits words from what followed them in the
			// source (list items or link lists flattened into one <p>).
			cur.WriteByte(' ')
			cur.WriteString(n.Data)
			return
		case html.ElementNode:
			switch n.DataAtom {
			case atom.Script, atom.Style, atom.Noscript, atom.Template:
				return
			}
		}
		block := n.Type == html.ElementNode && blockTags[n.DataAtom]
		if block {
			flush()
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
		if block {
			flush()
		}
	}
	walk(root)
	flush()
	return out
}
