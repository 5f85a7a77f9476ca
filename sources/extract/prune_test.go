package extract

import (
	"strings"
	"testing"

	"golang.org/x/net/html"
)

// TestPruneDropsOnlyLayoutSpace checks that the whitespace removed between
// blocks is never a space between words: between inline elements, inside
// <pre> and around text it stays.
func TestPruneDropsOnlyLayoutSpace(t *testing.T) {
	page := "<html>\n <head>\n  <title>T</title>\n </head>\n <body>\n  <div>\n   <p>one <a>two</a> <b>three</b></p>\n  </div>\n" +
		"  <pre><span>a</span>\n<span>b</span>\n  x<code>\n<i>c</i></code></pre>\n  <ul>\n   <li>item</li>\n   <li><em>x</em> <em>y</em></li>\n  </ul>\n </body>\n</html>"
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	prune(doc)
	var b strings.Builder
	if err := html.Render(&b, doc); err != nil {
		t.Fatal(err)
	}
	want := "<html><head><title>T</title></head><body><div><p>one <a>two</a> <b>three</b></p></div>" +
		"<pre><span>a</span>\n<span>b</span>\n  x<code>\n<i>c</i></code></pre><ul><li>item</li><li><em>x</em> <em>y</em></li></ul></body></html>"
	if got := b.String(); got != want {
		t.Errorf("pruned page\n got %s\nwant %s", got, want)
	}
	var spaces int
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode && strings.TrimSpace(n.Data) == "" {
			spaces++
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if spaces != 4 { // two between inline elements, two in <pre>
		t.Errorf("%d whitespace text nodes left, want 4", spaces)
	}
}

// TestHTMLMarkersInAnyCase checks the marker search at each '<' against
// upper- and mixed-case tags and near-misses.
func TestHTMLMarkersInAnyCase(t *testing.T) {
	for in, want := range map[string]bool{
		"<HTML><BODY>x":        true,
		"text then <DiV class": true,
		"a < b and <P>x":       true,
		"<!DOCTYPE html>":      true,
		"<pa>no</pa> <ab":      false,
		"x <":                  false,
		"<<<":                  false,
		"1 <a2 3":              false,
		"hello <A HREF=x>":     true,
	} {
		if got := hasMarker([]byte(in)); got != want {
			t.Errorf("hasMarker(%q) = %v, want %v", in, got, want)
		}
	}
}
