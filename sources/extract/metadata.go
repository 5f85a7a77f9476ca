package extract

import (
	"cmp"
	"net/url"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/PuerkitoBio/goquery"
	dps "github.com/markusmobius/go-dateparser"
	"github.com/markusmobius/go-htmldate"
	"github.com/markusmobius/go-trafilatura"
	"github.com/musecheck/muse/sources"
	"golang.org/x/net/html"
)

// articleTypes are the schema.org types whose dates and publisher describe
// the page's own story (not a breadcrumb, logo or author profile).
var articleTypes = []string{
	"Article", "NewsArticle", "ReportageNewsArticle", "AnalysisNewsArticle", "OpinionNewsArticle",
	"BackgroundNewsArticle", "ReviewNewsArticle", "BlogPosting", "LiveBlogPosting", "SocialMediaPosting",
	"ScholarlyArticle", "TechArticle", "Report", "ClaimReview", "WebPage", "CreativeWork", "VideoObject",
}

// mainNode returns the JSON-LD object that describes the page itself: the
// first article-like object, preferring specific article types to WebPage.
func mainNode(nodes []node) node {
	for _, want := range [][]string{articleTypes[:len(articleTypes)-3], articleTypes[len(articleTypes)-3:]} {
		for _, n := range nodes {
			if n.hasType(want...) {
				return n
			}
		}
	}
	return nil
}

// publishedDate combines go-htmldate's search for the original
// publication date with the date the page declares in structured data, as
// rules.date says.
//
// Overriding go-htmldate with the declared datePublished whenever the two
// disagree (dateDeclaredFirst) loses accuracy on htmldate-eval: pages often
// show a re-publication date to readers while their metadata keeps the
// first one, and the former is what people cite.
func (o Options) publishedDate(doc *html.Node, gq *goquery.Document, nodes []node, pageURL string) (time.Time, sources.PartialDate) {
	r := o.rules()
	lang := ""
	if r.dateLanguage {
		lang = declaredLanguage(gq)
	}
	restore := nativeDates(doc)
	found := o.htmldate(doc, pageURL, r.dateParserConfig(lang, o.Now))
	restore()
	day := r.date.pick(found.day(r), func() time.Time { return o.declaredPublished(nodes, gq) })
	if !day.IsZero() || !r.dayStated {
		return day, sources.PartialDate{}
	}
	return day, found.partial()
}

// pick chooses between go-htmldate's date and the declared one, which it
// reads only when the rule looks at it (about ten searches of the page).
func (d dateRule) pick(library time.Time, declared func() time.Time) time.Time {
	switch d {
	case dateDeclaredFirst:
		if t := declared(); !t.IsZero() {
			return t
		}
	case dateLibraryThenDeclared:
		if library.IsZero() {
			return declared()
		}
	}
	return library
}

// htmldate runs go-htmldate's extensive search for the original
// publication date (zero when it finds none) with cfg for go-dateparser
// (nil: go-htmldate's own), and says how much of it the page states.
func (o Options) htmldate(doc *html.Node, pageURL string, cfg *dps.Configuration) foundDate {
	opts := htmldate.Options{
		UseOriginalDate:     true,
		ExtractTime:         true, // the cutoff check wants the hour when the page gives it
		URL:                 pageURL,
		SkipExtensiveSearch: o.FastDate,
		DateParserConfig:    cfg,
	}
	if !o.Now.IsZero() {
		opts.MaxDate = o.Now
	}
	res, err := htmldate.FromDocument(doc, opts)
	if err != nil || res.IsZero() {
		return foundDate{}
	}
	return foundDate{t: res.DateTime, prec: statedPrecision(res.SrcString, res.DateTime, cfg)}
}

// foundDate is go-htmldate's answer, always a day, and how much of it the
// page states.
type foundDate struct {
	t    time.Time
	prec precision
}

// day is the date found, zero when the rules want the day stated and the
// page does not state it.
func (f foundDate) day(r rules) time.Time {
	if r.dayStated && f.prec < precDay {
		return time.Time{}
	}
	return f.t
}

// partial is the year, or the year and month, of a date whose day the page
// does not state; zero when it states the day or gives no date.
func (f foundDate) partial() sources.PartialDate {
	switch {
	case f.t.IsZero() || f.prec == precDay:
		return sources.PartialDate{}
	case f.prec == precMonth:
		return sources.PartialDate{Year: f.t.Year(), Month: f.t.Month()}
	}
	return sources.PartialDate{Year: f.t.Year()}
}

// dateParserConfig is go-htmldate's own go-dateparser configuration (nil
// when the rules change nothing in it), with the rules' changes: lang (the
// page's declared language, "" when unknown or when go-dateparser does not
// know it) and English tried instead of every locale, and words around a
// date ("Publicado el 14 de febrero de 2023") skipped.
func (r rules) dateParserConfig(lang string, now time.Time) *dps.Configuration {
	if lang != "" && !dps.IsKnownLocale(lang) {
		lang = ""
	}
	if lang == "" && !r.dateSurrounding {
		return nil
	}
	cfg := &dps.Configuration{
		PreferredDateSource:   dps.Past,
		StrictParsing:         true,
		IgnoreSurroundingText: r.dateSurrounding,
		CurrentTime:           now,
	}
	if lang != "" {
		cfg.Languages = []string{lang}
		if lang != "en" {
			cfg.Languages = append(cfg.Languages, "en")
		}
	}
	return cfg
}

// declaredPublished is the publication date the page declares, zero when
// it declares none or one more than a day after now (a template or a
// countdown, not a publication).
func (o Options) declaredPublished(nodes []node, gq *goquery.Document) time.Time {
	t := declaredPublished(nodes, gq)
	if t.After(o.now().Add(24 * time.Hour)) {
		return time.Time{}
	}
	return t
}

// modifiedDate reads the modification date the page declares in JSON-LD or
// meta tags. It is kept only when it is no earlier than the publication date
// and not in the future, which filters out template dates.
func modifiedDate(nodes []node, doc *goquery.Document, published, now time.Time) time.Time {
	t := declaredModified(nodes, doc)
	if t.IsZero() || t.After(now.Add(24*time.Hour)) {
		return time.Time{}
	}
	if !published.IsZero() && t.Before(truncateDay(published)) {
		return time.Time{}
	}
	return t
}

// declaredModified is the modification date the page states in its
// article's JSON-LD or in a well-known meta tag.
func declaredModified(nodes []node, doc *goquery.Document) time.Time {
	return declaredDate(nodes, doc, "dateModified", []string{
		`meta[property="article:modified_time"]`, `meta[property="og:updated_time"]`,
		`meta[itemprop="dateModified"]`, `meta[name="last-modified"]`, `meta[name="dcterms.modified"]`,
		`meta[name="DC.date.modified"]`,
	})
}

// declaredDate is the date under key in the article's JSON-LD, else in the
// first of the meta tags (selectors) that holds a readable one.
func declaredDate(nodes []node, doc *goquery.Document, key string, metas []string) time.Time {
	if n := mainNode(nodes); n != nil {
		if t := n.date(key); !t.IsZero() {
			return t
		}
	}
	for _, sel := range metas {
		if t := sources.ParseDate(metaContent(doc, sel)); !t.IsZero() {
			return t
		}
	}
	return time.Time{}
}

func truncateDay(t time.Time) time.Time {
	y, m, d := t.Date()
	return time.Date(y, m, d, 0, 0, 0, 0, t.Location())
}

// fillMetadata fills the article's descriptive fields from trafilatura's
// metadata, completing it from JSON-LD and meta tags where it is silent.
func fillMetadata(a *Article, md trafilatura.Metadata, nodes []node, doc *goquery.Document) {
	main := mainNode(nodes)
	a.Title = strings.TrimSpace(md.Title)
	if a.Title == "" && main != nil {
		a.Title = firstNonEmpty(main.str("headline"), main.str("name"))
	}
	a.Author = strings.TrimSpace(md.Author)
	if a.Author == "" && main != nil {
		var names []string
		for _, name := range main.names("author") {
			if !strings.Contains(name, "://") { // a profile link left unresolved is not a name
				names = append(names, name)
			}
		}
		a.Author = strings.Join(names, "; ")
	}
	// og:site_name is what the site calls itself; trafilatura's site name
	// may be the JSON-LD publisher, a company rather than a masthead.
	a.SiteName = firstNonEmpty(metaContent(doc, `meta[property="og:site_name"]`), md.Sitename)
	if main != nil {
		a.Publisher = main.str("publisher")
	}
	if strings.Contains(a.Publisher, "://") {
		// An identifier the page never resolves to a name names nobody.
		a.Publisher = ""
	}
	if a.Publisher == "" {
		a.Publisher = firstNonEmpty(orgName(nodes), a.SiteName)
	}
	if a.SiteName == "" {
		a.SiteName = a.Publisher
	}
	// trafilatura falls back on the host name; that names no publisher, and
	// the domain is known to every caller anyway.
	if h := hostOf(a.URL, md.URL); h != "" {
		for _, p := range []*string{&a.Publisher, &a.SiteName} {
			name := strings.TrimPrefix(strings.ToLower(*p), "www.")
			if i := strings.LastIndexByte(name, ':'); i >= 0 {
				name = name[:i] // trafilatura keeps the port
			}
			if name == strings.TrimPrefix(strings.ToLower(h), "www.") {
				*p = ""
			}
		}
	}
	a.Image = absURL(firstNonEmpty(md.Image, metaContent(doc, `meta[property="og:image"]`)), a.URL)
	a.CanonicalURL = firstNonEmpty(canonicalLink(doc, a.URL), absURL(md.URL, a.URL))
	docTitle := strings.TrimSpace(doc.Find("head > title").First().Text())
	host := hostOf(a.URL, a.CanonicalURL, md.URL)
	a.SiteName = siteNotTitle(a.SiteName, a.Title, docTitle, host)
	a.Publisher = siteNotTitle(a.Publisher, a.Title, docTitle, host)
	a.Language = language(md.Language, doc, a.Text)
}

// siteNotTitle keeps a site's name from being its page's title. Some sites
// write the title into og:site_name or application-name (where trafilatura
// finds a site name), alone or beside the real name ("Achtsam durch die
// Krise | Die FURCHE"): what is left beside the title is the name, and a
// name that is just the title gives way to what the <title> element has
// beside it when that is shorter than the title ("Zähne zusammenbeißen: …
// | Exxpress"). A title that is itself
// the site's host name ("Disfunctions.de") is the site's name, and a name
// the page gives nothing else for is kept as it is.
func siteNotTitle(site, title, docTitle, host string) string {
	if site == "" || title == "" || sameName(title, host) {
		return site
	}
	rest, ok := besideTitle(site, title)
	if !ok || rest != "" {
		return cmp.Or(rest, site)
	}
	// A headline is longer than a name: what is beside the title in the
	// <title> element and longer than it is another headline.
	if rest, ok := besideTitle(docTitle, title); ok && rest != "" && utf8.RuneCountInString(rest) < utf8.RuneCountInString(title) {
		return rest
	}
	return site
}

// besideTitle is what s has beside title, without the separators between
// them; ok says whether s has title at all (in any case).
func besideTitle(s, title string) (rest string, ok bool) {
	ls, lt := strings.ToLower(s), strings.ToLower(title)
	if len(ls) != len(s) || len(lt) != len(title) { // lowering changed the offsets
		ls, lt = s, title
	}
	i := strings.Index(ls, lt)
	if i < 0 {
		return "", false
	}
	const seps = " \t\u00a0|-–—»«:·•/"
	before, after := strings.Trim(s[:i], seps), strings.Trim(s[i+len(title):], seps)
	return strings.Join(strings.Fields(before+" "+after), " "), true
}

// sameName says whether a title is the host's name ("Disfunctions.de" for
// www.disfunctions.de).
func sameName(title, host string) bool {
	host = strings.TrimPrefix(strings.ToLower(host), "www.")
	return host != "" && strings.EqualFold(strings.TrimPrefix(strings.TrimSpace(title), "www."), host)
}

// orgName is the name of the page's NewsMediaOrganization or Organization
// object, the usual place a publisher names itself when the article object
// does not.
func orgName(nodes []node) string {
	for _, types := range [][]string{{"NewsMediaOrganization"}, {"Organization"}} {
		for _, n := range nodes {
			if n.hasType(types...) {
				if s := n.str("name"); s != "" {
					return s
				}
			}
		}
	}
	return ""
}

// language prefers the language detected from the main text, falling back
// to the page's declared lang attribute when there is too little text to
// detect reliably.
func language(detected string, doc *goquery.Document, text string) string {
	declared := declaredLanguage(doc)
	if detected != "" && (len(text) >= 200 || declared == "") {
		return detected
	}
	return declared
}

// declaredLanguage is the ISO 639 code of the language the page declares:
// its html lang attribute, else its og:locale ("pt_BR"), else its
// Content-Language meta tag; "" when it declares none.
func declaredLanguage(doc *goquery.Document) string {
	declared, _ := doc.Find("html").First().Attr("lang")
	for _, sel := range []string{`meta[property="og:locale"]`, `meta[http-equiv="content-language"]`} {
		if strings.TrimSpace(declared) != "" {
			break
		}
		declared = metaContent(doc, sel)
	}
	declared = strings.ToLower(strings.TrimSpace(declared))
	if i := strings.IndexAny(declared, "-_,; "); i >= 0 {
		declared = declared[:i]
	}
	return declared
}

func metaContent(doc *goquery.Document, sel string) string {
	c, _ := doc.Find(sel).First().Attr("content")
	return strings.TrimSpace(c)
}

// canonicalLink is the page's own absolute URL as it declares it: its
// canonical link, else its og:url. A relative link is resolved against the
// page's URL, else its <base href>; a saved page often has neither, and then
// og:url (absolute by that protocol's rules) is the one to take.
func canonicalLink(doc *goquery.Document, pageURL string) string {
	base := pageURL
	if u, err := url.Parse(base); err != nil || !u.IsAbs() {
		base, _ = doc.Find("base[href]").First().Attr("href")
	}
	canonical, _ := doc.Find(`link[rel="canonical"]`).First().Attr("href")
	for _, ref := range []string{canonical, metaContent(doc, `meta[property="og:url"]`)} {
		if u := absURL(unescapedURL(ref), base); u != "" {
			return u
		}
	}
	return ""
}

// unescapedURL undoes a whole URL percent-encoded by mistake
// (https%3A%2F%2Fexample.org%2Fpage), which pages do put in their links.
func unescapedURL(ref string) string {
	ref = strings.TrimSpace(ref)
	if lower := strings.ToLower(ref); strings.HasPrefix(lower, "http%3a%2f%2f") || strings.HasPrefix(lower, "https%3a%2f%2f") {
		if u, err := url.QueryUnescape(ref); err == nil {
			return u
		}
	}
	return ref
}

// absURL resolves a possibly relative URL against the page URL; a URL that
// cannot be resolved to an absolute http(s) URL is dropped rather than
// passed on broken.
func absURL(ref, base string) string {
	if strings.TrimSpace(ref) == "" {
		return ""
	}
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return ""
	}
	if b, err := url.Parse(strings.TrimSpace(base)); err == nil && b.IsAbs() {
		r = b.ResolveReference(r)
	}
	if !r.IsAbs() || (r.Scheme != "http" && r.Scheme != "https") || r.Host == "" {
		return ""
	}
	return r.String()
}

// declaredPublished is the publication date the page states for itself in
// structured form: its article's JSON-LD datePublished, else the first
// well-known publication meta tag or datePublished microdata.
func declaredPublished(nodes []node, doc *goquery.Document) time.Time {
	t := declaredDate(nodes, doc, "datePublished", []string{
		`meta[property="article:published_time"]`, `meta[property="og:article:published_time"]`,
		`meta[name="article:published_time"]`, `meta[itemprop="datePublished"]`,
		`meta[name="parsely-pub-date"]`, `meta[name="pubdate"]`, `meta[name="publishdate"]`,
		`meta[name="dc.date.issued"]`, `meta[name="DC.date.issued"]`, `meta[name="dcterms.created"]`,
	})
	if !t.IsZero() {
		return t
	}
	doc.Find(`[itemprop="datePublished"]`).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		for _, attr := range []string{"content", "datetime"} {
			if v, ok := s.Attr(attr); ok {
				if t = sources.ParseDate(v); !t.IsZero() {
					return false
				}
			}
		}
		return true
	})
	return t
}
