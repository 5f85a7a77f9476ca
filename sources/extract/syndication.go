package extract

import (
	"cmp"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

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
// "Reprinted on Wired" or "republished by" name where the story went, not
// where it came from, and are not read.
var originallyPublished = regexp.MustCompile(`(?i)\b(?:(?:originally|first) (?:published|appeared)\s+(?:by|at|on|in)|(?:republished|reprinted)(?: with permission)?\s+from)\s+(?:the website of\s+)?(https?://[^\s"'<>)]+|[^.,;:\n()]{2,60})`)

// syndicationOf reads what the page declares of its origin; nil when it
// declares nothing. own are the page's own names (its publisher, site
// name, host), to tell an agency as author, or an "Originally published
// on …" line, from the house's name for itself.
func syndicationOf(doc *goquery.Document, nodes []node, pageURL, text string, own ...string) *Syndication {
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
		if name := main.str("sourceOrganization"); name != "" && !strings.Contains(name, "://") && !ownName(name, own) {
			return &Syndication{Name: name, Why: "schema.org sourceOrganization"}
		}
		if a := main.obj("author"); a != nil && a.hasType("Organization", "NewsMediaOrganization") {
			if name := a.str("name"); name != "" && !ownName(name, own) {
				return &Syndication{Name: name, Why: "its author is the organisation " + name}
			}
		}
	}
	for _, para := range strings.Split(text, "\n") {
		// A note of its own: a short paragraph that opens with it ("This
		// article was originally published by …"), naming a name or an
		// address; the same words inside reporting ("the virus first
		// appeared in 2014") are no note.
		if len(strings.Fields(para)) > noteWords {
			continue
		}
		loc := originallyPublished.FindStringSubmatchIndex(para)
		if loc == nil || loc[0] > noteLead {
			continue
		}
		ref, line := strings.TrimSpace(para[loc[2]:loc[3]]), "“"+strings.TrimSpace(para[loc[0]:loc[1]])+"”"
		if u := absURL(strings.TrimRight(ref, ".,;"), pageURL); strings.HasPrefix(strings.ToLower(ref), "http") && u != "" {
			return &Syndication{URL: u, Why: line}
		}
		if r, _ := utf8.DecodeRuneInString(ref); unicode.IsUpper(r) && !ownName(ref, own) {
			return &Syndication{Name: ref, Why: line}
		}
	}
	return nil
}

// A syndication note is a paragraph of at most noteWords words whose note
// starts within its first noteLead bytes ("This story was originally
// published by …").
const (
	noteWords = 30
	noteLead  = 60
)

// ownName says whether name is one of the page's own names (case, spaces,
// punctuation and a leading "The" aside: "Live Science" is LiveScience,
// "POLYGRAPH.info" is polygraph.info), or its host's name ("Snopes" on
// www.snopes.com).
func ownName(name string, own []string) bool {
	letters := func(s string) string {
		s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "the ")
		return strings.Map(func(r rune) rune {
			if unicode.IsLetter(r) || unicode.IsDigit(r) {
				return r
			}
			return -1
		}, s)
	}
	n := letters(name)
	if n == "" {
		return true
	}
	for _, o := range own {
		o = strings.TrimPrefix(strings.ToLower(o), "www.")
		if o == "" {
			continue
		}
		if letters(o) == n {
			return true
		}
		if label, _, ok := strings.Cut(o, "."); ok && !strings.Contains(o, " ") && letters(label) == n {
			return true // the host's first label: snopes.com
		}
	}
	return false
}
