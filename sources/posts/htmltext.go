package posts

import (
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
)

// htmlText turns the small HTML of a Mastodon status or profile note, or
// an oEmbed blockquote paragraph, into plain text: paragraphs become blank
// lines, <br> a newline, everything else its text. Mastodon hides parts of
// long links in spans; their text is kept, so links come out whole.
func htmlText(s string) string {
	nodes, err := html.ParseFragment(strings.NewReader(s), &html.Node{Type: html.ElementNode, Data: "div", DataAtom: atom.Div})
	if err != nil {
		return strings.TrimSpace(s)
	}
	var b strings.Builder
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch {
		case n.Type == html.TextNode:
			b.WriteString(n.Data)
		case n.Type == html.ElementNode && n.DataAtom == atom.Br:
			b.WriteString("\n")
		case n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style):
		default:
			block := n.Type == html.ElementNode && (n.DataAtom == atom.P || n.DataAtom == atom.Blockquote || n.DataAtom == atom.Li)
			if block {
				b.WriteString("\n\n")
			}
			for c := n.FirstChild; c != nil; c = c.NextSibling {
				walk(c)
			}
			if block {
				b.WriteString("\n\n")
			}
		}
	}
	for _, n := range nodes {
		walk(n)
	}
	return tidy(b.String())
}

// tidy trims each line, drops spaces around newlines and keeps at most one
// blank line in a row.
func tidy(s string) string {
	lines := strings.Split(strings.ReplaceAll(s, "\u00a0", " "), "\n")
	var out []string
	blank := false
	for _, l := range lines {
		l = strings.Join(strings.Fields(l), " ")
		if l == "" {
			blank = len(out) > 0
			continue
		}
		if blank {
			out = append(out, "")
			blank = false
		}
		out = append(out, l)
	}
	return strings.Join(out, "\n")
}
