package extract

import (
	"cmp"
	"regexp"
	"strings"

	"github.com/PuerkitoBio/goquery"
)

// Syndication is where a page declares its story comes from: another
// publisher's original (its address, its name or both), and how it says
// so. A page that declares nothing has none.
type Syndication struct {
	// URL is the original's address: a syndication-source or
	// original-source tag, or schema.org isBasedOn.
	URL string `json:"url,omitempty"`
	// Name is the original publisher or agency: schema.org
	// sourceOrganization, an organisation named in isBasedOn, an
	// organisation that is the article's author while another publishes
	// it, or an "Originally published by …" line.
	Name string `json:"name,omitempty"`
	// Why says how the page declares it: "its syndication-source tag",
	// "schema.org isBasedOn", "schema.org sourceOrganization", "its author
	// is the organisation …", "“Originally published …”".
	Why string `json:"why"`
}

// originallyPublished finds the lines by which a republished article names
// its original: "Originally published by ProPublica", "This article was
// originally published at https://…", "This story first appeared in The
// Conversation", "Republished from …", "Reprinted with permission from …".
var originallyPublished = regexp.MustCompile(`(?i)\b(?:originally (?:published|appeared)|first (?:published|appeared)|republished|reprinted(?: with permission)?)\s+(?:by|at|on|in|from)\s+(?:the website of\s+)?(https?://[^\s"'<>)]+|[^.,;:\n()]{2,60})`)

// syndicationOf reads what the page declares of its origin; nil when it
// declares nothing. publisher is the page's own publisher, to tell an
// agency as author from the house name.
func syndicationOf(doc *goquery.Document, nodes []node, pageURL, publisher, text string) *Syndication {
	for _, tag := range []struct{ sel, why string }{
		{`meta[name="syndication-source"]`, "its syndication-source tag"},
		{`meta[name="original-source"]`, "its original-source tag"},
		{`link[rel="syndication-source"]`, "its syndication-source link"},
		{`link[rel="original-source"]`, "its original-source link"},
	} {
		v := metaContent(doc, tag.sel)
		if v == "" {
			v, _ = doc.Find(tag.sel).First().Attr("href")
		}
		if u := absURL(unescapedURL(v), pageURL); u != "" {
			return &Syndication{URL: u, Why: tag.why}
		}
	}
	if main := mainNode(nodes); main != nil {
		if b := main["isBasedOn"]; b != nil {
			s := &Syndication{Why: "schema.org isBasedOn"}
			if u := absURL(asString(b), pageURL); u != "" {
				s.URL = u
			}
			if o := main.obj("isBasedOn"); o != nil {
				s.URL = cmp.Or(absURL(o.str("url"), pageURL), s.URL)
				if o.hasType("Organization", "NewsMediaOrganization") {
					s.Name = o.str("name")
				} else if p := o.obj("publisher"); p != nil {
					s.Name = p.str("name")
				}
			}
			if s.URL != "" || s.Name != "" {
				return s
			}
		}
		if name := main.str("sourceOrganization"); name != "" && !strings.Contains(name, "://") {
			return &Syndication{Name: name, Why: "schema.org sourceOrganization"}
		}
		if a := main.obj("author"); a != nil && a.hasType("Organization", "NewsMediaOrganization") {
			if name := a.str("name"); name != "" && !sameOrg(name, publisher) {
				return &Syndication{Name: name, Why: "its author is the organisation " + name}
			}
		}
	}
	if m := originallyPublished.FindStringSubmatch(text); m != nil {
		ref := strings.TrimSpace(m[1])
		if u := absURL(strings.TrimRight(ref, ".,;"), pageURL); strings.HasPrefix(strings.ToLower(ref), "http") && u != "" {
			return &Syndication{URL: u, Why: "“" + strings.TrimSpace(m[0]) + "”"}
		}
		return &Syndication{Name: ref, Why: "“" + strings.TrimSpace(m[0]) + "”"}
	}
	return nil
}

// sameOrg says whether two names name one organisation, case and a
// leading "The" aside.
func sameOrg(a, b string) bool {
	norm := func(s string) string {
		s = strings.ToLower(strings.Join(strings.Fields(s), " "))
		return strings.TrimPrefix(s, "the ")
	}
	return norm(a) == norm(b)
}
