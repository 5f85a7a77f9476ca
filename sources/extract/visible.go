package extract

import (
	"bytes"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/sanitize"
)

// What a reader of the page never sees must not become evidence: text in
// elements a browser does not render is cut from the document before the
// main text is looked for, and a page too big to read in reasonable time
// and memory is refused rather than read for a minute.

// ErrTooLarge is returned (wrapped, with the figure that was over) for a
// page over one of the budgets in Options: too many bytes, elements or
// bytes of text, or more time than Options.TimeBudget.
var ErrTooLarge = errors.New("page too large to read")

// Default budgets. The largest of the 931 pages of the article-extraction
// and htmldate benchmarks has 1.6 MB of HTML, 9,750 elements and 101 KB of
// text; main-text extraction time and garbage grow with the square of the
// text (go-trafilatura concatenates strings), so 256 KiB of text is about
// half a second on one core.
const (
	defaultMaxBytes    = 8 << 20
	defaultMaxElements = 50_000
	defaultMaxText     = 256 << 10
	defaultTimeBudget  = 10 * time.Second
)

func orDefault[T int | time.Duration](v, def T) T {
	if v <= 0 {
		return def
	}
	return v
}

// parse parses a page within the size budget; its errors say which.
func (o Options) parse(htmlBytes []byte) (*html.Node, error) {
	if limit := orDefault(o.MaxBytes, defaultMaxBytes); len(htmlBytes) > limit {
		return nil, fmt.Errorf("%w: %d bytes of HTML (limit %d)", ErrTooLarge, len(htmlBytes), limit)
	}
	doc, err := html.Parse(bytes.NewReader(htmlBytes))
	if err != nil {
		return nil, fmt.Errorf("parse HTML: %w", err)
	}
	elements, text := 0, 0
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		switch n.Type {
		case html.ElementNode:
			elements++
			if n.DataAtom == atom.Script || n.DataAtom == atom.Style {
				return
			}
		case html.TextNode:
			text += len(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(doc)
	if limit := orDefault(o.MaxElements, defaultMaxElements); elements > limit {
		return nil, fmt.Errorf("%w: %d elements (limit %d)", ErrTooLarge, elements, limit)
	}
	if limit := orDefault(o.MaxText, defaultMaxText); text > limit {
		return nil, fmt.Errorf("%w: %d KiB of text (limit %d KiB)", ErrTooLarge, text>>10, limit>>10)
	}
	return doc, nil
}

// withinTime runs extract and gives up waiting after Options.TimeBudget.
// The abandoned extraction still runs to its end in the background (the
// size budgets bound how long that is) and reads the page's bytes until
// then, so a caller must not reuse them after an ErrTooLarge.
func (o Options) withinTime(extract func() (*Article, error)) (*Article, error) {
	budget := orDefault(o.TimeBudget, defaultTimeBudget)
	type result struct {
		a   *Article
		err error
	}
	done := make(chan result, 1)
	go func() {
		a, err := extract()
		done <- result{a, err}
	}()
	t := time.NewTimer(budget)
	defer t.Stop()
	select {
	case r := <-done:
		return r.a, r.err
	case <-t.C:
		return nil, fmt.Errorf("%w: not read within %s", ErrTooLarge, budget)
	}
}

// invisible reports whether a browser hides the element n: the hidden
// attribute, inline styles display:none, visibility:hidden or font-size:0,
// aria-hidden="true" on a block (on an inline element it usually marks a
// visible icon), <template>, and <noscript>, whose content a browser that
// runs scripts does not render. Styles from style sheets and classes are
// not evaluated. prune removes what it reports.
func invisible(n *html.Node) bool {
	switch n.DataAtom {
	case atom.Template, atom.Noscript:
		return true
	case atom.Html, atom.Head, atom.Body:
		return false // never the whole page
	}
	for _, a := range n.Attr {
		if a.Namespace != "" {
			continue
		}
		switch strings.ToLower(a.Key) {
		case "hidden":
			return true
		case "aria-hidden":
			if strings.EqualFold(strings.TrimSpace(a.Val), "true") && blockTags[n.DataAtom] {
				return true
			}
		case "style":
			if hiddenStyle(a.Val) {
				return true
			}
		}
	}
	return false
}

// hiddenStyle reads an inline style's declarations for the ones that hide
// the element's text.
func hiddenStyle(style string) bool {
	for _, decl := range strings.Split(style, ";") {
		prop, val, ok := strings.Cut(decl, ":")
		if !ok {
			continue
		}
		prop = strings.ToLower(strings.TrimSpace(prop))
		val = strings.ToLower(strings.TrimSpace(strings.TrimSuffix(strings.TrimSpace(val), "!important")))
		switch prop {
		case "display":
			if val == "none" {
				return true
			}
		case "visibility":
			if val == "hidden" || val == "collapse" {
				return true
			}
		case "font-size":
			if zeroLength(val) {
				return true
			}
		}
	}
	return false
}

// zeroLength reports a CSS length of zero in any unit ("0", "0px", "0.0em").
func zeroLength(v string) bool {
	num := strings.TrimRight(v, "abcdefghijklmnopqrstuvwxyz%")
	f, err := strconv.ParseFloat(strings.TrimSpace(num), 64)
	return err == nil && f == 0
}

// sanitizeArticle removes control characters and terminal escape
// sequences from every text field, since entities such as &#27; decode to
// them (see sources/sanitize). Paragraphs left empty are dropped.
func sanitizeArticle(a *Article) {
	for _, s := range []*string{&a.Title, &a.Author, &a.Publisher, &a.SiteName, &a.Language, &a.Image, &a.CanonicalURL} {
		*s = sanitize.String(*s)
	}
	if y := a.Syndication; y != nil {
		y.URL, y.Name, y.Why = sanitize.String(y.URL), sanitize.String(y.Name), sanitize.String(y.Why)
	}
	changed := false
	paras := a.Paragraphs[:0]
	for _, p := range a.Paragraphs {
		c := sanitize.String(p)
		changed = changed || c != p
		if strings.TrimSpace(c) != "" {
			paras = append(paras, c)
		}
	}
	a.Paragraphs = paras
	if changed {
		a.Text = strings.Join(a.Paragraphs, "\n\n")
		a.Words = lang.Words(a.Text)
	} else {
		a.Text = sanitize.String(a.Text)
	}
	for i := range a.ClaimReviews {
		cr := &a.ClaimReviews[i]
		for _, s := range []*string{&cr.Claim, &cr.Claimant, &cr.Rating, &cr.Reviewer, &cr.ReviewURL} {
			*s = sanitize.String(*s)
		}
	}
}
