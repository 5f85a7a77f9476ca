package pipeline

import (
	"context"
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/search"
)

// A wire story as publishers carry it, and an unrelated local report.
const (
	wireStory = `SPRINGFIELD, Ill. (AP) — Springfield's city council voted 7-2 on Tuesday to add protected bicycle lanes on Main Street, ` +
		`rejecting a proposal that would have barred bicycles from the downtown stretch during rush hour. ` +
		`Mayor Dana Ruiz said the lanes would be built over the summer and that no ban on cycling had ever been drafted. ` +
		`Council member Pat Okafor, who voted against the plan, said merchants worried about losing parking spaces in front of their shops. ` +
		`The city's transportation department estimated the project would cost $1.2 million, paid largely from a state grant awarded last year. ` +
		`Construction is expected to close one lane of traffic at a time, the department said in a statement released after the vote.`
	localStory = `The Springfield Gazette asked riders on Main Street what they made of the council's decision this week. ` +
		`Most of the two dozen cyclists we spoke to on Wednesday morning welcomed the protected lanes, though several said the work should start sooner. ` +
		`A bakery owner near Fifth Street said she had been told that the lanes would take away four parking spaces outside her door, ` +
		`and that she would ask the council to move the loading zone around the corner. Nobody we met had heard of any plan to ban bicycles, ` +
		`and a spokesman for the mayor said the rumour had started with a post on social media that misread the agenda of an earlier meeting.`
)

// uncredited is s without its dateline's credit: a page that copies the
// wire story and hides whose it is.
func uncredited(s string) string { return strings.Replace(s, "SPRINGFIELD, Ill. (AP) — ", "", 1) }

func flagWorld() credibleWorld {
	w := newWorld()
	add := func(u, title, date, text string) {
		w.pages[u] = fakePage{title: title, date: date, paras: []string{text}}
		w.results[5] = append(w.results[5], u)
	}
	add("https://www.reuters-news.example/springfield", "Springfield bicycle ban", "2024-01-04",
		"Springfield banned bicycles on Main Street, officials confirmed. "+filler("bicycles on Main Street", 6))
	add("https://www.sfgate.example/ap-springfield", "Springfield adds bike lanes", "2024-01-03", wireStory)
	add("https://www.wtop.example/ap-springfield", "Springfield adds bike lanes", "2024-01-03", wireStory)
	add("https://www.copied-news.example/springfield", "Riders on Main Street", "2024-01-05", localStory)
	add("https://www.gazette.example/riders", "What riders think", "2024-01-04", localStory)
	return credibleWorld{w}
}

// TestSourcesFlagged: a domain imitating a rated publisher's and a page
// copying another domain's text with no credit are flagged with the
// reason, in the Check's JSON; syndicated copies crediting their agency
// and the original a later page copies are not. Flags change no status.
func TestSourcesFlagged(t *testing.T) {
	w := flagWorld()
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	flags := func(u string) []SourceFlag {
		s := c.SourceByURL(u)
		if s == nil {
			t.Fatalf("%s is not a source", u)
		}
		return s.Flags
	}
	if f := flags("https://www.reuters-news.example/springfield"); len(f) != 1 || f[0].Kind != FlagLookalike || f[0].Of != "reuters.com" ||
		f[0].Reason != "its domain looks like reuters.com (extra words)" {
		t.Errorf("look-alike: %+v", f)
	}
	if f := flags("https://www.copied-news.example/springfield"); len(f) != 1 || f[0].Kind != FlagCopy || f[0].Of != "https://www.gazette.example/riders" ||
		!strings.Contains(f[0].Reason, "gazette.example's page") {
		t.Errorf("copy: %+v", f)
	}
	for _, u := range []string{"https://www.sfgate.example/ap-springfield", "https://www.wtop.example/ap-springfield", "https://www.gazette.example/riders", "https://www.reuters.com/a", "https://apnews.com/b"} {
		if f := flags(u); len(f) != 0 {
			t.Errorf("%s flagged: %+v", u, f)
		}
	}
	if s := c.SourceByURL("https://www.reuters-news.example/springfield"); s.Status == StatusExcludedRating || s.Status == StatusDuplicate {
		t.Errorf("a flag changed the status: %s", s.Status)
	}
	b, err := json.Marshal(c.ForOutput())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"flags":[{"kind":"lookalike","reason":"its domain looks like reuters.com (extra words)","of":"reuters.com"}]`) {
		t.Error("the JSON does not carry the look-alike flag")
	}
}

func TestCopyFlagsSpareVouchedAndSameDomain(t *testing.T) {
	a := Source{URL: "https://www.reuters.com/x", Tier: TierHigh, Paragraphs: []string{uncredited(wireStory)}}
	b := Source{URL: "https://copy.example/x", Tier: TierUnrated, Paragraphs: []string{uncredited(wireStory)}}
	if fa, fb := copyFlags(a, b); fa != nil || fb == nil || fb.Of != a.URL {
		t.Errorf("vouched original, unrated copy: %v, %+v", fa, fb)
	}
	c := Source{URL: "https://blog.copy.example/y", Paragraphs: b.Paragraphs}
	if fb, fc := copyFlags(b, c); fb != nil || fc != nil {
		t.Error("two pages of one domain flagged as copies of each other")
	}
}

func TestWireCredit(t *testing.T) {
	for text, want := range map[string]string{
		wireStory: "AP",
		"LONDON, March 1 (Reuters) - Britain's economy grew 0.2% in the fourth quarter.":     "Reuters",
		"PARIS (AFP) - French farmers blocked roads around the capital on Monday.":           "AFP",
		"By The Associated Press\nThe storm moved east overnight.":                           "AP",
		"Reporting by Jane Doe; Editing by John Roe. Our Standards: The Thomson Reuters ...": "Reuters",
		localStory: "",
		"The AP style guide says numbers under ten are spelled out.": "",
		"Reuters reported earlier that talks had stalled.":           "",
	} {
		if got := WireCredit(Source{Paragraphs: []string{text}}); got != want {
			t.Errorf("WireCredit(%.50q) = %q, want %q", text, got, want)
		}
	}
}

func TestOrigins(t *testing.T) {
	c := &Check{Sources: []Source{
		{URL: "https://www.sfgate.example/a", Domain: "sfgate.example", Paragraphs: []string{wireStory}},
		{URL: "https://www.wtop.example/b", Domain: "wtop.example", Paragraphs: []string{strings.Replace(wireStory, "7-2", "seven to two", 1)}},
		{URL: "https://copy.example/c", Domain: "copy.example", Paragraphs: []string{uncredited(wireStory)}},
		{URL: "https://www.gazette.example/d", Domain: "gazette.example", Publisher: "Springfield Gazette", PublisherRated: true, Paragraphs: []string{localStory}},
		{URL: "https://unquoted.example/e", Paragraphs: []string{wireStory}},
	}}
	for _, u := range []string{"https://www.sfgate.example/a", "https://www.wtop.example/b", "https://copy.example/c", "https://www.gazette.example/d"} {
		c.Evidence = append(c.Evidence, Evidence{SourceURL: u, Included: true, Verified: true})
	}
	c.Evidence = append(c.Evidence, Evidence{SourceURL: "https://unquoted.example/e", Included: false})
	os := c.Origins()
	if len(os) != 2 {
		t.Fatalf("origins %+v, want 2", os)
	}
	if os[0].Label != "AP" || os[0].Agency != "AP" || len(os[0].URLs) != 3 || !slices.Contains(os[0].Why, "credits AP") || !slices.Contains(os[0].Why, "the same text") {
		t.Errorf("wire origin %+v", os[0])
	}
	if os[1].Label != "Springfield Gazette" || len(os[1].URLs) != 1 || os[1].Agency != "" {
		t.Errorf("local origin %+v", os[1])
	}
	if got := c.OriginsSummary(); got != "4 pages, 2 origins (AP: 3 pages)" {
		t.Errorf("summary %q", got)
	}
	b, err := json.Marshal(c.ForOutput())
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(b), `"origins":[{"label":"AP","agency":"AP","urls":["https://www.sfgate.example/a","https://www.wtop.example/b","https://copy.example/c"]`) {
		t.Errorf("the JSON does not carry the origins: %.300s", b[strings.Index(string(b), `"origins"`)+0:])
	}
	c.Sources[0].Dropped = true
	if got := c.OriginsSummary(); got != "3 pages, 2 origins (AP: 2 pages)" {
		t.Errorf("summary with a page dropped %q", got)
	}
	c.Sources[0].Dropped = false
	c.Evidence = c.Evidence[:2]
	if got := c.OriginsSummary(); got != "2 pages, 1 origin (AP)" {
		t.Errorf("summary %q", got)
	}
	c.Evidence = nil
	if got := c.OriginsSummary(); got != "" {
		t.Errorf("summary with no quote %q", got)
	}
}

// A page of an unrated publisher whose domain was registered weeks before
// the post is flagged with the date; rated publishers' domains are not
// asked about, and a failure to learn the date flags nothing.
func TestNewDomainFlagged(t *testing.T) {
	w := flagWorld()
	var asked []string
	var mu sync.Mutex
	registered := func(_ context.Context, domain string) (time.Time, error) {
		mu.Lock()
		asked = append(asked, domain)
		mu.Unlock()
		switch domain {
		case "copied-news.example":
			return time.Date(2024, 1, 12, 8, 0, 0, 0, time.UTC), nil // 19 days and 16 hours before the post
		case "reuters-news.example":
			return time.Date(2019, 5, 1, 0, 0, 0, 0, time.UTC), nil // years old
		}
		return time.Time{}, errors.New("rdap: no RDAP server for the domain's top-level domain")
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w,
		DomainRegistered: registered}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	s := c.SourceByURL("https://www.copied-news.example/springfield")
	var f *SourceFlag
	for i := range s.Flags {
		if s.Flags[i].Kind == FlagNewDomain {
			f = &s.Flags[i]
		}
	}
	if f == nil || f.Reason != "its domain copied-news.example was registered on 2024-01-12, 19 days before the post" {
		t.Errorf("new domain: %+v", s.Flags)
	}
	if old := c.SourceByURL("https://www.reuters-news.example/springfield"); slices.ContainsFunc(old.Flags, func(f SourceFlag) bool { return f.Kind == FlagNewDomain }) ||
		old.DomainRegistered.Year() != 2019 {
		t.Errorf("an old domain: %+v, registered %v", old.Flags, old.DomainRegistered)
	}
	for _, d := range asked {
		if d == "reuters.com" || d == "apnews.com" {
			t.Errorf("a rated publisher's domain %s was asked about", d)
		}
	}
	if len(asked) == 0 {
		t.Fatal("no domain asked about")
	}
	// After the post, too.
	if f, ok := newDomainFlag(Source{URL: "https://fresh.example/a", DomainRegistered: time.Date(2024, 2, 3, 0, 0, 0, 0, time.UTC)},
		time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)); !ok || !strings.HasSuffix(f.Reason, "2024-02-03, after the post") {
		t.Errorf("registered after the post: %+v", f)
	}
	if _, ok := newDomainFlag(Source{URL: "https://x.example/a", DomainRegistered: time.Date(2023, 10, 1, 0, 0, 0, 0, time.UTC)},
		time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)); ok {
		t.Error("a domain four months old flagged")
	}
}
