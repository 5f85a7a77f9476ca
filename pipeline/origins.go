package pipeline

import (
	"cmp"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"unicode"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"

	"github.com/musecheck/muse/sources"
)

// Two pages share an origin when one holds at least copyShare of the
// other's shingles (at least minCopyShingles of them): a story carried
// whole or nearly whole. Fixed, not tuned on data.
const (
	copyShare        = 0.5
	minCopyShingles  = 40
	wireCreditWindow = 600 // characters of a page's opening searched for a wire credit
)

// wireCredits find the news agency a page credits in its dateline or
// byline: "SPRINGFIELD, March 1 (Reuters) -", "(AP) —", "PARIS (AFP) -",
// "By The Associated Press", "Agence France-Presse".
var wireCredits = []struct {
	agency string
	re     *regexp.Regexp
}{
	{"AP", regexp.MustCompile(`\(AP\)\s*[-–—]|(?i:\bby the associated press\b)|\bAssociated Press\b\s*[-–—]|^\s*AP\s*[-–—]`)},
	{"Reuters", regexp.MustCompile(`\(Reuters\)\s*[-–—]|(?i:\breporting by\b[^.]{0,80}\bReuters\b)|^\s*Reuters\s*[-–—]|\bThomson Reuters\b`)},
	{"AFP", regexp.MustCompile(`\(AFP\)\s*[-–—]|\bAgence France-Presse\b|^\s*AFP\s*[-–—]`)},
	{"UPI", regexp.MustCompile(`\(UPI\)\s*[-–—]`)},
	{"dpa", regexp.MustCompile(`\(dpa\)\s*[-–—]`)},
	{"EFE", regexp.MustCompile(`\(EFE\)\s*[-–—]`)},
	{"PA", regexp.MustCompile(`\(PA\)\s*[-–—]|\bPA Media\b`)},
}

// WireCredit is the news agency a page's opening credits (a dateline such
// as "(AP) —" or a byline), "" when none.
func WireCredit(s Source) string {
	text := strings.Join(s.Paragraphs, "\n")
	if len(text) > wireCreditWindow {
		text = text[:wireCreditWindow]
	}
	for _, w := range wireCredits {
		if w.re.MatchString(text) {
			return w.agency
		}
	}
	return ""
}

// wireNames are the names a page may give a news agency as its source or
// author (schema.org sourceOrganization, an organisation as author,
// "Originally published by …"), by agency.
var wireNames = map[string]string{
	"associated press": "AP", "the associated press": "AP", "ap": "AP",
	"reuters": "Reuters", "thomson reuters": "Reuters",
	"agence france-presse": "AFP", "agence france presse": "AFP", "afp": "AFP",
	"united press international": "UPI", "upi": "UPI",
	"deutsche presse-agentur": "dpa", "dpa": "dpa", "agencia efe": "EFE", "efe": "EFE",
	"pa media": "PA", "press association": "PA",
}

// wireSites are the news agencies' own sites: a page there, or one whose
// canonical link or syndication metadata points there, is the agency's
// story.
var wireSites = map[string]string{
	"apnews.com": "AP", "ap.org": "AP", "reuters.com": "Reuters", "afp.com": "AFP", "upi.com": "UPI",
	"dpa.com": "dpa", "efe.com": "EFE", "pamediagroup.com": "PA",
}

// agencyOf is the agency whose site u is on, "" for any other.
func agencyOf(u string) string {
	return wireSites[sources.RegistrableDomain(sources.HostOf(u))]
}

// agencyOfPage is the news agency a page is the story of: the one its
// opening credits, else the one it declares as its source, else the one
// whose site it is on; "" when none.
func agencyOfPage(s Source) string {
	return cmp.Or(WireCredit(s), declaredOrigin(s).agency, agencyOf(cmp.Or(s.FinalURL, s.URL)))
}

// declared is the origin a page declares for its story: a news agency it
// names as source or author, another site its canonical link, syndication
// tag or isBasedOn points to, or an organisation it names; zero when it
// declares none (or points at itself).
type declared struct {
	key, label, why, agency string
}

// agencyInName is the news agency a name names ("Associated Press",
// "Le Monde with AFP"), "" when none.
func agencyInName(name string) string {
	words := " " + strings.Join(strings.FieldsFunc(strings.ToLower(name), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '-'
	}), " ") + " "
	for n, a := range wireNames {
		if strings.Contains(words, " "+n+" ") {
			return a
		}
	}
	return ""
}

// siteName is the name a host's site goes by under any suffix or subdomain:
// its registrable domain without the public suffix, in ASCII
// ("edition.cnn.com" and "cnn.com" are "cnn"; "x.blogspot.de" and
// "x.blogspot.com" are "x"); "" for a host that is no name.
func siteName(host string) string {
	h, err := idna.Lookup.ToASCII(strings.TrimSuffix(host, "."))
	if err != nil || h == "" || strings.HasPrefix(h, ".") {
		return ""
	}
	d := sources.RegistrableDomain(h)
	suffix, _ := publicsuffix.PublicSuffix(d)
	return strings.TrimSuffix(strings.TrimSuffix(d, suffix), ".")
}

// otherSite is u's host when u is on another site than the page at own
// (see siteName), else "".
func otherSite(u, own string) string {
	h := sources.HostOf(u)
	if site := siteName(h); site == "" || site == siteName(own) {
		return ""
	}
	return h
}

// declaredOrigin reads the origin s declares (Source.Syndication, a
// canonical link to another site). An organisation the page names as its
// author is an origin only when it is a news agency: otherwise it is
// nearly always the house itself under another name (a sister paper, the
// publishing group).
func declaredOrigin(s Source) declared {
	own := sources.HostOf(cmp.Or(s.FinalURL, s.URL))
	if y := s.Syndication; y != nil {
		if a := agencyInName(y.Name); a != "" {
			return declared{key: "agency " + a, label: a, agency: a, why: "declares " + a + " as its source (" + y.Why + ")"}
		}
		if h := otherSite(y.URL, own); h != "" {
			why := "declares " + h + " as its source (" + y.Why + ")"
			if a := agencyOf(y.URL); a != "" {
				return declared{key: "agency " + a, label: a, agency: a, why: why}
			}
			return declared{key: h, label: h, why: why}
		}
		if n := strings.TrimSpace(y.Name); n != "" && !strings.HasPrefix(y.Why, "its author is") {
			return declared{key: "organisation " + strings.ToLower(n), label: n, why: "declares " + n + " as its source (" + y.Why + ")"}
		}
	}
	if h := otherSite(s.CanonicalURL, own); h != "" {
		why := "its canonical link points to " + h
		if a := agencyOf(s.CanonicalURL); a != "" {
			return declared{key: "agency " + a, label: a, agency: a, why: why}
		}
		return declared{key: h, label: h, why: why}
	}
	return declared{}
}

// Origin is a group of pages that tell one story from one origin: the
// same wire story, or the same text on several sites.
type Origin struct {
	// Label names the origin: the agency ("AP") when the pages credit
	// one, else the origin the pages declare (the site their canonical
	// link points to), else the publisher of the page published first.
	Label string `json:"label"`
	// Agency is the wire agency credited, "" when none is.
	Agency string   `json:"agency,omitempty"`
	URLs   []string `json:"urls"`
	// Why says what ties the pages: "credits AP", "the same text", "its
	// canonical link points to apnews.com".
	Why []string `json:"why,omitempty"`
}

// Origins groups the pages the correction may rest on (each page with a
// quote the person kept, not dropped) by origin: pages that credit the
// same news agency, pages that declare the same origin (a canonical link,
// syndication metadata, "Originally published by …") or are that origin,
// and pages whose texts are near copies of each other (see copyShare) are
// one origin. Independent confirmation is one origin per group, whatever
// the number of pages.
func (c *Check) Origins() []Origin {
	return originsOf(c.quotedPages())
}

// quotedPages are the pages with a quote the person kept, not dropped, in
// the order the evidence names them.
func (c *Check) quotedPages() []*Source {
	var pages []*Source
	seen := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Included {
			continue
		}
		s := c.SourceByURL(e.SourceURL)
		if s == nil || s.Dropped || seen[sources.Key(s.URL)] {
			continue
		}
		seen[sources.Key(s.URL)] = true
		pages = append(pages, s)
	}
	return pages
}

func originsOf(pages []*Source) []Origin {
	n := len(pages)
	parent := make([]int, n)
	for i := range parent {
		parent[i] = i
	}
	var find func(int) int
	find = func(i int) int {
		if parent[i] != i {
			parent[i] = find(parent[i])
		}
		return parent[i]
	}
	why := make([][]string, n)
	union := func(i, j int, reason string) {
		a, b := find(i), find(j)
		if a != b {
			parent[max(a, b)] = min(a, b)
		}
		why[i] = appendNew(why[i], reason)
		why[j] = appendNew(why[j], reason)
	}
	agency := make([]string, n)
	decl := make([]declared, n)
	sets := make([]shingleSet, n)
	for i, p := range pages {
		decl[i] = declaredOrigin(*p)
		agency[i] = agencyOfPage(*p)
		sets[i] = shingles(strings.Join(p.Paragraphs, "\n"))
	}
	for i := range n {
		for j := i + 1; j < n; j++ {
			if agency[i] != "" && agency[i] == agency[j] {
				union(i, j, "credits "+agency[i])
			}
			for _, d := range [][2]int{{i, j}, {j, i}} {
				a, b := d[0], d[1]
				if k := decl[a].key; k != "" && (k == decl[b].key || k == publisherKey(*pages[b])) {
					union(a, b, decl[a].why)
				}
			}
			if nearCopy(sets[i], sets[j]) {
				union(i, j, "the same text")
			}
		}
	}
	var out []Origin
	var members [][]int
	at := map[int]int{}
	for i, p := range pages {
		r := find(i)
		k, ok := at[r]
		if !ok {
			k = len(out)
			at[r] = k
			out = append(out, Origin{})
			members = append(members, nil)
		}
		o := &out[k]
		members[k] = append(members[k], i)
		o.URLs = append(o.URLs, p.URL)
		o.Agency = cmp.Or(o.Agency, agency[i])
		for _, w := range why[i] {
			o.Why = appendNew(o.Why, w)
		}
	}
	for k := range out {
		out[k].Label = originLabel(pages, decl, members[k], out[k].Agency)
	}
	return out
}

// originLabel names a group of pages: its agency; else the page in it the
// others declare as their origin, or the origin they declare when it is
// not among them; else the publisher of the page published first (of
// near copies, the earliest is the likeliest original; undated pages
// count as the latest, the first named among equals).
func originLabel(pages []*Source, decl []declared, group []int, agency string) string {
	if agency != "" {
		return agency
	}
	for _, i := range group {
		if k := decl[i].key; k != "" {
			for _, j := range group {
				if publisherKey(*pages[j]) == k {
					return pages[j].Label()
				}
			}
			return decl[i].label
		}
	}
	first := group[0]
	for _, i := range group[1:] {
		p, f := pages[i].Published, pages[first].Published
		if !p.IsZero() && (f.IsZero() || p.Before(f)) {
			first = i
		}
	}
	return pages[first].Label()
}

// nearCopy: one text holds most of the other's passages.
func nearCopy(a, b shingleSet) bool {
	return min(len(a), len(b)) >= minCopyShingles && containment(a, b) >= copyShare
}

func appendNew(list []string, s string) []string {
	if slices.Contains(list, s) {
		return list
	}
	return append(list, s)
}

// OriginsSummary says how many pages and origins the correction rests
// on, naming the origins shared by several pages: "3 pages, 1 origin
// (AP)"; "" when no page is quoted.
func (c *Check) OriginsSummary() string {
	return originsSummary(c.Origins())
}

func originsSummary(groups []Origin) string {
	pages := 0
	var shared []string
	for _, o := range groups {
		pages += len(o.URLs)
		if len(o.URLs) > 1 {
			shared = append(shared, fmt.Sprintf("%s: %d pages", o.Label, len(o.URLs)))
		}
	}
	if pages == 0 {
		return ""
	}
	s := fmt.Sprintf("%d page%s, %d origin%s", pages, plural(pages), len(groups), plural(len(groups)))
	switch {
	case len(groups) == 1 && pages > 1:
		s += " (" + groups[0].Label + ")"
	case len(shared) > 0:
		s += " (" + strings.Join(shared, "; ") + ")"
	}
	return s
}
