package pipeline

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/extract"
)

// TestNoSourceTextProperty: over random checks without evidence (pages in
// every status, searches that answer or fail, hits never read), the
// no-evidence correction says "No credible source was found" only when
// every page found was judged or read and found off the subject, none
// bears on the post and the search did not fail; it says a page was not
// judged whenever one was; and otherwise it is the accounting's sentence.
func TestNoSourceTextProperty(t *testing.T) {
	statuses := []struct {
		st     Status
		reason string
	}{
		{StatusNotNeeded, judgedReason + "the model quoted no paragraph of it as confirming, refuting or explaining the post"},
		{StatusNotNeeded, judgedReason + quotesOffPage},
		{StatusNotNeeded, "not read for evidence: the stage stopped early"},
		{StatusIrrelevant, "shares 0% of the key words of the post"},
		{StatusDuplicate, "same text as https://a.example/0"},
		{StatusNotJudged, lostFilter.reason},
		{StatusFetchFailed, "HTTP 403 Forbidden"},
		{StatusTooShort, "12 words of main text; at least 100 needed"},
		{StatusExcludedCutoff, "published 2024-03-06, after the cutoff 2024-03-05"},
		{StatusUndated, "no publication date, so it cannot be shown to predate the cutoff"},
		{StatusExcludedRating, "publisher rated factuality low: not a credible reference"},
		{StatusPending, ""},
		{StatusPartial, "paywalled: only the first 79 words were readable" + partialJudged + "it quoted none of them as confirming, refuting or explaining the post"},
		{StatusPartial, "paywalled: only the first 79 words were readable; not read for evidence: the stage stopped early"},
		{StatusBlocked, "the site's bot protection refused muse (Cloudflare, HTTP 403)"},
	}
	rng := rand.New(rand.NewPCG(48, 2403))
	for i := range 3000 {
		c := &Check{Post: Post{Text: "post", PostedAt: time.Date(2024, 3, 5, 0, 0, 0, 0, time.UTC)}}
		c.Cutoff = c.Post.PostedAt
		for q := range rng.IntN(3) {
			r := SearchRecord{Pass: 1, Query: fmt.Sprint("q", q), Provider: "searxng", Hits: rng.IntN(2)}
			if r.Hits == 0 && rng.IntN(2) == 0 {
				r.Error = "HTTP 429 Too Many Requests"
			}
			c.Searches = append(c.Searches, r)
		}
		for p := range rng.IntN(5) {
			s := statuses[rng.IntN(len(statuses))]
			u := fmt.Sprintf("https://a.example/%d", p)
			src := Source{URL: u, Status: s.st, Reason: s.reason, Dropped: rng.IntN(12) == 0}
			if s.st == StatusPartial {
				src.Words, src.Wall = 79, &extract.Wall{Kind: extract.WallPaywall, Signs: []string{"isAccessibleForFree: false"}}
			}
			c.Sources = append(c.Sources, src)
			c.Hits = append(c.Hits, Hit{URL: u})
		}
		if rng.IntN(6) == 0 {
			c.Hits = append(c.Hits, Hit{URL: "https://unread.example/x"})
		}
		text := NoEvidenceText(c)
		a := c.Account()
		if !(Correction{Text: text}).Unsourced() {
			t.Fatalf("check %d: %q is not one of the unsourced texts", i, text)
		}
		_, lost := c.judging()
		// Pages read partly or refused are named apart, never among the
		// pages read.
		if k := a.Counts[FatePartial]; k > 0 && !strings.Contains(a.Summary, "behind a paywall") && !strings.Contains(a.Summary, "behind paywalls") {
			t.Fatalf("check %d: %d partial pages, summary %q", i, k, a.Summary)
		}
		if k := a.Counts[FateBlocked]; k > 0 && !strings.Contains(a.Summary, "bot protection refused muse (HTTP 403)") {
			t.Fatalf("check %d: %d blocked pages, summary %q", i, k, a.Summary)
		}
		if k := a.Counts[FateNothing]; k != 1 && strings.Contains(a.Summary, "1 page was read and") ||
			k > 1 && !strings.Contains(a.Summary, fmt.Sprintf("%d pages were read and none", k)) {
			t.Fatalf("check %d: %d pages judged, summary %q", i, k, a.Summary)
		}
		switch {
		case len(lost) > 0:
			if !strings.HasPrefix(text, NotJudgedLead) {
				t.Fatalf("check %d: %d pages not judged, correction %q", i, len(lost), text)
			}
		case text == NoSourceText:
			for _, p := range a.Pages {
				if !p.Fate.Judged() && p.Fate != FateOffTopic && p.Fate != FateDuplicate || p.Fate.Bears() {
					t.Fatalf("check %d: no credible source while %s is %s (%s)", i, p.URL, p.Fate, p.Reason)
				}
			}
			if a.searchFailed() {
				t.Fatalf("check %d: no credible source while every search failed", i)
			}
		default:
			if !strings.HasPrefix(text, a.Summary+", so muse cannot write a sourced correction.") {
				t.Fatalf("check %d: correction %q is not the accounting's %q", i, text, a.Summary)
			}
		}
	}
}

// A check on record without any search (no provider set up and an empty
// archive, or every query unticked) checked nothing: it never says that no
// credible source was found.
func TestNothingSearchedIsNotChecked(t *testing.T) {
	c := &Check{Post: Post{Text: "The mayor banned bicycles on Main Street"},
		Queries: []Query{{Text: "mayor bicycle ban", Enabled: true}}}
	a := c.Account()
	if a.Conclusion != ConclusionNotChecked || a.Genuine() || !strings.Contains(strings.ToLower(a.Summary), "no search was made") {
		t.Errorf("accounting %+v", a)
	}
	if txt := NoEvidenceText(c); txt == NoSourceText || !strings.Contains(txt, "nothing was checked") {
		t.Errorf("correction %q", txt)
	}
	// A search on record that found nothing is checked, and found nothing.
	c.Searches = []SearchRecord{{Pass: 1, Query: "mayor bicycle ban", Provider: "searxng"}}
	if a := c.Account(); a.Conclusion != ConclusionNothingFound || !a.Genuine() {
		t.Errorf("a search that found nothing: %+v", a)
	}
}

// With only the local archive searched, the web was not checked: muse says
// so, and never that no credible source was found.
func TestArchiveOnlySaysTheWebWasNotChecked(t *testing.T) {
	c := &Check{Post: Post{Text: "The mayor banned bicycles on Main Street"},
		Searches: []SearchRecord{{Pass: 1, Query: "mayor bicycle ban", Provider: "archive"}}}
	a := c.Account()
	if a.Genuine() || !strings.Contains(a.Summary, "the web was not checked") {
		t.Errorf("accounting %+v", a)
	}
	if txt := NoEvidenceText(c); txt == NoSourceText {
		t.Errorf("correction %q", txt)
	}
}
