package pipeline

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/search"
)

// quotedCheck is a Check quoting one passage of each page.
func quotedCheck(pages ...Source) *Check {
	c := &Check{Sources: pages}
	for _, s := range pages {
		c.Evidence = append(c.Evidence, Evidence{SourceURL: s.URL, Included: true, Verified: true})
	}
	return c
}

// TestDeclaredOrigins: pages that declare another site or an agency as
// their story's origin (a canonical link, syndication metadata, an agency
// as author) are one origin with it, named after it, and count once for
// the stop rule; a page declaring nothing stays on its own.
func TestDeclaredOrigins(t *testing.T) {
	day := func(d int) time.Time { return time.Date(2024, 1, d, 9, 0, 0, 0, time.UTC) }
	ap := Source{URL: "https://apnews.com/article/springfield-bike-lanes", Domain: "apnews.com", Publisher: "AP News", PublisherRated: true,
		Published: day(2), Paragraphs: []string{"Springfield's council voted 7-2 to add protected bicycle lanes."}}
	star := Source{URL: "https://www.springfieldstar.example/news/bike-lanes", Domain: "springfieldstar.example", Published: day(3),
		CanonicalURL: "https://apnews.com/article/springfield-bike-lanes", Paragraphs: []string{"The council voted for bicycle lanes, rejecting a ban."}}
	courier := Source{URL: "https://www.courier.example/lanes", Domain: "courier.example", Published: day(3),
		Syndication: &extract.Syndication{Name: "The Associated Press", Why: "its author is the organisation The Associated Press"},
		Paragraphs:  []string{"Council members approved the lanes after a long debate."}}
	pro := Source{URL: "https://www.propublica.org/article/lanes", Domain: "propublica.org", Publisher: "ProPublica", PublisherRated: true,
		Published: day(1), Paragraphs: []string{"Records show the lanes were planned for years."}}
	republished := Source{URL: "https://www.localnews.example/lanes", Domain: "localnews.example", Published: day(4),
		Syndication: &extract.Syndication{URL: "https://www.propublica.org/article/lanes", Why: "its original-source tag"},
		Paragraphs:  []string{"Records show the lanes were planned for years, according to documents."}}
	own := Source{URL: "https://www.gazette.example/riders", Domain: "gazette.example", Published: day(4),
		CanonicalURL: "https://www.gazette.example/riders?page=1", Paragraphs: []string{"Riders welcomed the lanes."}}
	c := quotedCheck(ap, star, courier, pro, republished, own)
	os := c.Origins()
	if len(os) != 3 {
		t.Fatalf("origins %+v, want 3 (AP, ProPublica, the gazette)", os)
	}
	if os[0].Label != "AP" || len(os[0].URLs) != 3 || !slices.Contains(os[0].Why, "its canonical link points to apnews.com") ||
		!slices.ContainsFunc(os[0].Why, func(w string) bool { return strings.HasPrefix(w, "declares AP as its source") }) {
		t.Errorf("AP origin %+v", os[0])
	}
	if os[1].Label != "ProPublica" || len(os[1].URLs) != 2 || !slices.Contains(os[1].Why, "declares propublica.org as its source (its original-source tag)") {
		t.Errorf("ProPublica origin %+v", os[1])
	}
	if len(os[2].URLs) != 1 || os[2].URLs[0] != own.URL {
		t.Errorf("the gazette's own canonical link made it another's copy: %+v", os[2])
	}
	if got := c.OriginsSummary(); got != "6 pages, 3 origins (AP: 3 pages; ProPublica: 2 pages)" {
		t.Errorf("summary %q", got)
	}
	if independenceKey(star) != independenceKey(ap) || independenceKey(courier) != "agency AP" ||
		independenceKey(republished) != independenceKey(pro) || independenceKey(own) == independenceKey(ap) {
		t.Errorf("stop-rule keys: ap %q star %q courier %q pro %q republished %q own %q", independenceKey(ap), independenceKey(star),
			independenceKey(courier), independenceKey(pro), independenceKey(republished), independenceKey(own))
	}
}

// TestNearCopiesNamedAfterTheFirst: near copies that credit and declare
// nothing are named after the page published first, wherever it stands.
func TestNearCopiesNamedAfterTheFirst(t *testing.T) {
	text := []string{uncredited(wireStory)}
	c := quotedCheck(
		Source{URL: "https://copy.example/a", Domain: "copy.example", Published: time.Date(2024, 1, 5, 0, 0, 0, 0, time.UTC), Paragraphs: text},
		Source{URL: "https://undated.example/b", Domain: "undated.example", Paragraphs: text},
		Source{URL: "https://www.gazette.example/c", Domain: "gazette.example", Publisher: "Springfield Gazette", PublisherRated: true,
			Published: time.Date(2024, 1, 3, 0, 0, 0, 0, time.UTC), Paragraphs: text},
	)
	os := c.Origins()
	if len(os) != 1 || os[0].Label != "Springfield Gazette" || os[0].Why[0] != "the same text" {
		t.Errorf("origins %+v, want one named after the gazette, published first", os)
	}
}

// TestTemplateIsNotACopy: pages sharing a sentence frame each repeats,
// with their own figures and names filled in, are not copies of each
// other; the same page's text is.
func TestTemplateIsNotACopy(t *testing.T) {
	page := func(site string, base int) string {
		var b strings.Builder
		for i := range 12 {
			b.WriteString(site + " asked " + []string{"riders", "shop owners", "drivers", "parents"}[i%4] + " on Main Street, where " +
				strings.Repeat("x", 0) + time.Duration(base+i*41).String() + " of waiting was counted, what they expect from the council's next round of consultations on the city centre, which is due to open in the spring. ")
		}
		return b.String()
	}
	a, b := shingles(page("The Herald", 1000)), shingles(page("The Blog", 3000))
	if nearCopy(a, b) {
		t.Errorf("a shared template read as a copy (%d and %d shingles, containment %.2f)", len(a), len(b), containment(a, b))
	}
	if !nearCopy(a, shingles(page("The Herald", 1000))) {
		t.Error("a page is not a near copy of itself")
	}
}

// TestCorrectionToldSharedOrigins: the correction is asked with each
// quote of a page sharing its origin naming it (the AP wire copy and AP's
// own page of the flag world), and the other publishers' quotes naming
// none.
func TestCorrectionToldSharedOrigins(t *testing.T) {
	w := flagWorld()
	var got CorrectionInput
	const wireQuote = "Mayor Dana Ruiz said the lanes would be built over the summer and that no ban on cycling had ever been drafted."
	const localQuote = "Nobody we met had heard of any plan to ban bicycles"
	quoteStories := func(ctx context.Context, in EvidenceInput) ([]string, []string, error) {
		text := strings.Join(in.Paragraphs, "\n")
		var ref []string
		for _, q := range []string{wireQuote, localQuote} {
			if strings.Contains(text, q) {
				ref = append(ref, q)
			}
		}
		r, c, err := quoting(ctx, in)
		return append(ref, r...), c, err
	}
	m := &fakeModel{evidence: quoteStories, correction: func(in CorrectionInput) (string, error) {
		got = in
		return "This post is false: " + in.Evidence[0].URL, nil
	}}
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{w}, Fetcher: w, Extract: w.extract, Rater: w}, Options{RefutingPages: 10})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	origin := map[string]string{}
	for _, ev := range got.Evidence {
		origin[ev.URL] = ev.Origin
	}
	if origin["https://www.sfgate.example/ap-springfield"] != "AP" || origin["https://apnews.com/b"] != "AP" {
		t.Errorf("the AP pages are not marked as one origin: %v", origin)
	}
	for _, u := range []string{"https://www.reuters.com/a", "https://www.bbc.co.uk/c", "https://www.copied-news.example/springfield"} {
		if o, ok := origin[u]; !ok || o != "" {
			t.Errorf("%s: origin %q (quoted %v), want its own", u, o, ok)
		}
	}
}
