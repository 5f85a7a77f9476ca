// Package extract turns a web page into an Article: its main text split into
// paragraphs, title, publisher, author, original publication and
// modification dates, language, lead image, canonical URL and any
// ClaimReview markup a fact-checker embedded in it.
//
// Main text and most metadata come from go-trafilatura (with its readability
// and dom-distiller fallbacks), the publication date from go-htmldate's
// extensive search for the original date, and ClaimReview from the page's
// JSON-LD read with goquery. Where those libraries leave a gap (a modified
// date, a publisher distinct from the site name, a page whose date is only in
// its URL) this package reads the page's own structured data.
package extract

import (
	"bytes"
	"cmp"
	"errors"
	"fmt"
	"math"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	"github.com/markusmobius/go-htmldate"
	"github.com/markusmobius/go-trafilatura"
	"golang.org/x/net/html"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
)

// Article is what muse keeps of a web page.
type Article struct {
	URL          string `json:"url,omitempty"`
	CanonicalURL string `json:"canonical_url,omitempty"`
	Title        string `json:"title"`
	Text         string `json:"text"`
	// Paragraphs is Text split into paragraphs; Text is them joined by
	// blank lines. The engine quotes evidence from these.
	Paragraphs []string `json:"paragraphs,omitempty"`
	Author     string   `json:"author,omitempty"`
	Publisher  string   `json:"publisher,omitempty"`
	SiteName   string   `json:"site,omitempty"`
	Language   string   `json:"language,omitempty"`
	Image      string   `json:"image,omitempty"`
	// Published is the original publication date, zero when unknown or
	// when the page states less than its day.
	Published time.Time `json:"published,omitzero"`
	// PublishedPartial is the year, or the year and month, of the
	// original publication when that is all the page states ("since
	// 2008", "03/2020"): JSON "2008" or "2008-03". Zero when Published
	// is set or nothing is known.
	PublishedPartial sources.PartialDate `json:"published_partial,omitzero"`
	// Modified is the last modification date the page declares, zero when
	// it declares none.
	Modified     time.Time             `json:"modified,omitzero"`
	ClaimReviews []sources.ClaimReview `json:"claim_reviews,omitempty"`
	Words        int                   `json:"words"`
	// Wall is the paywall or registration wall the page shows, nil when
	// it shows none: then Text is only what the wall leaves readable.
	Wall *Wall `json:"wall,omitempty"`
	// AMPURL is the page's AMP version (link rel="amphtml"), "" when it
	// names none.
	AMPURL string `json:"amp_url,omitempty"`
	// Syndication is where the page declares its story comes from
	// (another publisher's original, an agency), nil when it declares
	// nothing; the canonical link is CanonicalURL.
	Syndication *Syndication `json:"syndication,omitempty"`
}

// Options tunes extraction. The zero value is what muse uses.
type Options struct {
	// Now is the latest date a page may claim (dates after it are ignored
	// as typos or countdowns). Zero means the current time.
	Now time.Time
	// FastDate skips go-htmldate's extensive search (free-text date
	// parsing), trading accuracy for speed.
	FastDate bool
	// Raw keeps trafilatura's paragraphs as they are, without dropping a
	// repeated headline, bare links or trailing site furniture.
	Raw bool
	// MaxBytes, MaxElements and MaxText (bytes of text outside scripts and
	// styles) bound the page, TimeBudget the time to read it; past any of
	// them Extract fails with ErrTooLarge. Zero means the defaults in
	// visible.go (8 MiB, 50,000, 256 KiB, 10 s). After a timeout the page's
	// bytes are still read in the background: do not reuse them.
	MaxBytes, MaxElements, MaxText int
	TimeBudget                     time.Duration
	timed                          bool // inside withinTime

	// ruleSet replaces chosenRules, for the tests that measure them.
	ruleSet *rules
	// pdfBudget replaces the time budget of one PDF document, for tests.
	pdfBudget time.Duration
}

// ErrNotHTML is returned for input that is empty, binary or has no HTML
// markup at all.
var ErrNotHTML = errors.New("not an HTML document")

// Extract extracts an article from a UTF-8 HTML page with default options.
// pageURL is where the page was fetched from and may be "".
func Extract(htmlBytes []byte, pageURL string) (*Article, error) {
	return Options{}.Extract(htmlBytes, pageURL)
}

// Extract extracts an article from a UTF-8 HTML page.
func (o Options) Extract(htmlBytes []byte, pageURL string) (*Article, error) {
	if !o.timed {
		o.timed = true
		return o.withinTime(func() (*Article, error) { return o.Extract(htmlBytes, pageURL) })
	}
	if err := checkHTML(htmlBytes, true); err != nil {
		return nil, fmt.Errorf("extract %s: %w", describe(pageURL), err)
	}
	doc, err := o.parse(htmlBytes)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", describe(pageURL), err)
	}
	gq := goquery.NewDocumentFromNode(doc)
	ld := readJSONLD(gq)
	md := readMicrodata(gq) // before pruning, which drops <meta> properties

	a := &Article{URL: pageURL}
	dateURL := pageURL
	if dateURL == "" {
		dateURL = canonicalLink(gq, "")
	}
	if dateURL == "" {
		// A relative canonical link still has a date in its path to give.
		dateURL, _ = gq.Find(`link[rel="canonical"]`).First().Attr("href")
	}
	a.Published, a.PublishedPartial = o.publishedDate(doc, gq, ld, dateURL)
	wall := readWallSigns(gq, ld, pageURL) // before pruning, which drops the hidden parts a wall hides

	prune(doc)
	res, paras := o.mainText(doc, pageURL, a.Published)
	a.Paragraphs = paras
	if !o.Raw {
		a.Paragraphs = o.rules().clean(a.Paragraphs, res.Metadata.Title, hostOf(pageURL, res.Metadata.URL))
	}
	wall.apply(a)
	a.Text = strings.Join(a.Paragraphs, "\n\n")
	a.Words = lang.Words(a.Text)

	fillMetadata(a, res.Metadata, ld, gq)
	a.Syndication = syndicationOf(gq, ld, cmp.Or(pageURL, a.CanonicalURL), a.Text, a.Publisher, a.SiteName, hostOf(pageURL, a.CanonicalURL))
	a.Modified = modifiedDate(ld, gq, a.Published, o.now())
	a.ClaimReviews = claimReviews(append(ld, md...))
	for i := range a.ClaimReviews { // a review is in its page's language unless it says otherwise
		a.ClaimReviews[i].Language = cmp.Or(a.ClaimReviews[i].Language, lang.Normalise(a.Language))
	}
	sanitizeArticle(a)
	return a, nil
}

// mainText runs go-trafilatura on the parsed page and splits its text into
// paragraphs. Its readability and dom-distiller fallbacks run only when its
// own pass is unsure (rules.unsure): they cost as much CPU as all the rest.
// published is the date already found, handed over so that trafilatura
// does not run go-htmldate a second time.
func (o Options) mainText(doc *html.Node, pageURL string, published time.Time) (*trafilatura.ExtractResult, []string) {
	topts := trafilatura.Options{
		ExcludeComments:  true,
		HtmlDateOverride: &htmldate.Result{DateTime: published},
	}
	if u, err := url.Parse(pageURL); err == nil && u.IsAbs() {
		topts.OriginalURL = u
	}
	r := o.rules()
	topts.EnableFallback = r.fallbackBelow == math.MaxInt
	var detached []detachedNode
	if !topts.EnableFallback && r.detachCleaned {
		// The first pass needs no more than trafilatura keeps; the
		// fallbacks, which read the page as it is, get it all back.
		detached = detachCleaned(doc)
	}
	res, err := trafilatura.ExtractDocument(doc, topts)
	restore(detached)
	if detached != nil && (err != nil || utf8.RuneCountInString(res.ContentText) < minExtracted) {
		// Too little text: trafilatura may have rescued it from the page
		// as it was (its baseline), which needs what was taken out.
		res, err = trafilatura.ExtractDocument(doc, topts)
	}
	var paras []string
	if err == nil {
		paras = paragraphs(res.ContentNode)
	}
	if !topts.EnableFallback && (err != nil || r.unsure(utf8.RuneCountInString(res.ContentText), len(paras))) {
		// trafilatura works on its own copies, so doc is still the page.
		topts.EnableFallback = true
		if res, err = trafilatura.ExtractDocument(doc, topts); err == nil {
			paras = paragraphs(res.ContentNode)
		}
	}
	if err != nil {
		// No main text is not fatal: the metadata is still worth having.
		return &trafilatura.ExtractResult{}, nil
	}
	return res, paras
}

// minExtracted is the length of text (in runes) under which trafilatura
// rescues the main text from the whole page (its baseline).
var minExtracted = trafilatura.DefaultConfig().MinExtractedSize

func (o Options) now() time.Time {
	if o.Now.IsZero() {
		return time.Now()
	}
	return o.Now
}

func describe(pageURL string) string {
	if pageURL == "" {
		return "page"
	}
	return pageURL
}

// checkHTML refuses input that cannot be a web page, so that a PDF or an
// image handed in by mistake fails with a clear reason instead of yielding
// an empty article. utf8 says the input is meant to be UTF-8 already, so
// that many invalid sequences also mark it as binary.
func checkHTML(b []byte, utf8Input bool) error {
	trimmed := bytes.TrimSpace(b)
	if len(trimmed) == 0 {
		return fmt.Errorf("%w: the input is empty", ErrNotHTML)
	}
	head := trimmed[:min(len(trimmed), 4096)]
	if looksBinary(head) || (utf8Input && invalidShare(head[:validPrefix(head)]) > 0.1) {
		return fmt.Errorf("%w: the input is binary", ErrNotHTML)
	}
	if hasMarker(trimmed[:min(len(trimmed), 1<<16)]) {
		return nil
	}
	return fmt.Errorf("%w: no HTML markup found", ErrNotHTML)
}

// hasMarker reports whether one of htmlMarkers, in any ASCII case, starts
// at one of b's '<' (without lowering a copy of b).
func hasMarker(b []byte) bool {
	for i := bytes.IndexByte(b, '<'); i >= 0; {
		rest := b[i:]
		for _, tag := range htmlMarkers {
			if len(rest) >= len(tag) && asciiFoldPrefix(rest, tag) {
				return true
			}
		}
		j := bytes.IndexByte(rest[1:], '<')
		if j < 0 {
			break
		}
		i += 1 + j
	}
	return false
}

// asciiFoldPrefix reports whether b starts with the lower-case ASCII tag,
// ignoring the case of b's letters.
func asciiFoldPrefix(b []byte, tag string) bool {
	for k := 0; k < len(tag); k++ {
		c := b[k]
		if 'A' <= c && c <= 'Z' {
			c += 'a' - 'A'
		}
		if c != tag[k] {
			return false
		}
	}
	return true
}

// htmlMarkers are tags of which any HTML page, even a fragment, has one
// (lower case).
var htmlMarkers = []string{
	"<html", "<body", "<head", "<p>", "<p ", "<div", "<article", "<!doctype", "<title", "<meta",
	"<span", "<a ", "<h1", "<h2", "<section", "<main", "<br", "<table", "<ul", "<script",
}

// looksBinary reports NUL bytes or more than 1% control characters other
// than the whitespace ones, which text in any encoding does not have.
func looksBinary(b []byte) bool {
	ctrl := 0
	for _, c := range b {
		if c == 0 {
			return true
		}
		if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f') || c == 0x7f {
			ctrl++
		}
	}
	return ctrl*100 > len(b)
}

// validPrefix drops a multi-byte rune cut off by the 4 KiB window so that it
// is not mistaken for invalid UTF-8.
func validPrefix(b []byte) int {
	for i := len(b) - 1; i >= 0 && i >= len(b)-utf8.UTFMax; i-- {
		if utf8.RuneStart(b[i]) {
			if !utf8.FullRune(b[i:]) {
				return i
			}
			break
		}
	}
	return len(b)
}

// invalidShare is the share of bytes that are not part of valid UTF-8. A
// page in a legacy encoding has a few; compressed or binary data has many.
func invalidShare(b []byte) float64 {
	if len(b) == 0 {
		return 0
	}
	total, bad := len(b), 0
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		if r == utf8.RuneError && n == 1 {
			bad++
		}
		b = b[n:]
	}
	return float64(bad) / float64(total)
}

// dateOnly runs just the publication-date part of Extract, formatted as
// YYYY-MM-DD ("" when unknown), for evaluation.
func (o Options) dateOnly(htmlBytes []byte, pageURL string) string {
	if checkHTML(htmlBytes, true) != nil {
		return ""
	}
	doc, err := html.Parse(bytes.NewReader(htmlBytes))
	if err != nil {
		return ""
	}
	gq := goquery.NewDocumentFromNode(doc)
	t, _ := o.publishedDate(doc, gq, readJSONLD(gq), pageURL)
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

// hostOf returns the host of the first of the URLs that has one.
func hostOf(urls ...string) string {
	for _, s := range urls {
		if u, err := url.Parse(s); err == nil && u.Hostname() != "" {
			return u.Hostname()
		}
	}
	return ""
}
