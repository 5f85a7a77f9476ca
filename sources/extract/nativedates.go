package extract

import (
	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/musecheck/muse/sources"
)

// nativeDates rewrites, for the date search only, the dates of doc's text
// that go-htmldate would misread or miss (sources.NativeDates: Japanese
// eras, Thai Buddhist-era years, 2023年2月14日, full-width and other native
// digits, Hijri dates beside Gregorian ones) as ISO dates, and returns how
// to put the page's own text back: the main text is read from the page as
// it is written.
func nativeDates(doc *html.Node) (restore func()) {
	type saved struct {
		n    *html.Node
		data string
	}
	var changed []saved
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.ElementNode && (n.DataAtom == atom.Script || n.DataAtom == atom.Style) {
			return
		}
		if n.Type == html.TextNode {
			if s, ok := sources.NativeDates(n.Data); ok {
				changed = append(changed, saved{n, n.Data})
				n.Data = s
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	return func() {
		for _, s := range changed {
			s.n.Data = s.data
		}
	}
}
