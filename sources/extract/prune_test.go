package extract

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"golang.org/x/net/html"

	"github.com/musecheck/muse/internal/testkit"
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

func render(t testing.TB, n *html.Node) string {
	t.Helper()
	var b strings.Builder
	if err := html.Render(&b, n); err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestDetachCleanedAndRestore checks what detachCleaned takes out for
// trafilatura's first pass (the elements its cleaning deletes, with the
// text right after them, but never <head>, nor a figure holding a table)
// and that restore gives the page back as it was.
func TestDetachCleanedAndRestore(t *testing.T) {
	page := `<html><head><title>T</title><link rel="canonical" href="https://x.test/a"></head><body>` +
		`<nav><a href="/">Home</a></nav>after nav<form><label>Name</label><input name="n"></form><nav>two</nav>` +
		`<article><p>Story <button>Share</button>text<em>on</em></p><figure><table><tr><td>1</td></tr></table></figure>` +
		`<figure><img src="a.jpg"><figcaption>cap</figcaption></figure><p>end</p></article><footer>kept</footer></body></html>`
	doc, err := html.Parse(strings.NewReader(page))
	if err != nil {
		t.Fatal(err)
	}
	before := render(t, doc)
	d := detachCleaned(doc)
	want := `<html><head><title>T</title><link rel="canonical" href="https://x.test/a"/></head><body>` +
		`<article><p>Story <em>on</em></p><figure><table><tbody><tr><td>1</td></tr></tbody></table></figure>` +
		`<p>end</p></article><footer>kept</footer></body></html>`
	if got := render(t, doc); got != want {
		t.Errorf("detached\n got %s\nwant %s", got, want)
	}
	restore(d)
	if got := render(t, doc); got != before {
		t.Errorf("restored\n got %s\nwant %s", got, before)
	}
}

// TestDetachedFirstPassOnRealPages runs the main-text search (mainText,
// with its fallbacks when unsure) on the benchmark pages with and without
// detachCleaned: the paragraphs are the same on every news page, and on all
// but a few of the date set's (4 of 799 when this was written: a ")" after
// a ruby annotation, which trafilatura's unwrapping makes the tail of an
// element it deletes, and pages with so little text that trafilatura
// rescues it from the whole page); and the page is left as it was.
func TestDetachedFirstPassOnRealPages(t *testing.T) {
	without := chosenRules
	without.detachCleaned = false
	if !chosenRules.detachCleaned {
		t.Fatal("chosenRules no longer detach: this test compares them with rules that do not")
	}
	for _, set := range []struct {
		dir, glob string
		maxDiffer int
	}{{"article-extraction-benchmark", "html/*.html.gz", 0}, {"htmldate-eval", "html/*.gz", 8}} {
		t.Run(set.dir, func(t *testing.T) {
			dir := testkit.SharedData(t, set.dir)
			pages, files := loadPages(t, filepath.Join(dir, set.glob))
			urls := benchPageURLs(t, dir)
			differ := 0
			for i, p := range pages {
				doc, err := Options{}.parse(p)
				if err != nil {
					continue
				}
				prune(doc)
				before := render(t, doc)
				_, whole := Options{Now: benchNow, ruleSet: &without}.mainText(doc, urls[files[i]], time.Time{})
				_, part := Options{Now: benchNow}.mainText(doc, urls[files[i]], time.Time{})
				if render(t, doc) != before {
					t.Fatalf("%s: the page is not as it was after mainText", files[i])
				}
				if !slices.Equal(whole, part) {
					differ++
				}
			}
			if differ > set.maxDiffer {
				t.Errorf("main text differs on %d of %d pages, want at most %d", differ, len(pages), set.maxDiffer)
			}
			t.Logf("main text differs on %d of %d pages", differ, len(pages))
		})
	}
}
