package pipeline

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/search"
)

// claimWorld is the fake world whose archive also matches claims.
type claimWorld struct {
	*fakeWorld
	fcs    []FactCheck
	err    error
	posted *[]time.Time // the post times it was given, when not nil
}

func (w claimWorld) MatchFactChecks(ctx context.Context, text, lang string, posted time.Time) ([]FactCheck, error) {
	if w.posted != nil {
		*w.posted = append(*w.posted, posted)
	}
	return w.fcs, w.err
}

func runClaimWorld(t *testing.T, cw claimWorld, cutoff time.Time) (*Check, *CorrectionInput) {
	t.Helper()
	var in CorrectionInput
	m := &fakeModel{evidence: quoting, correction: func(ci CorrectionInput) (string, error) {
		in = ci
		return "This post is false: " + ci.Evidence[0].URL, nil
	}}
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{cw.fakeWorld}, Fetcher: cw.fakeWorld, Extract: cw.extract,
		Rater: cw.fakeWorld, Archive: cw}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 1, 20, 9, 0, 0, 0, time.UTC)}, cutoff)
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	return c, &in
}

// A failing claim matcher is a warning; the check goes on without it.
func TestFactCheckMatcherFails(t *testing.T) {
	c, _ := runClaimWorld(t, claimWorld{fakeWorld: newWorld(), err: errors.New("database is locked")}, time.Time{})
	if !strings.Contains(Warnings(c), "match the post against archived fact-checks: database is locked") {
		t.Errorf("warnings = %s", Warnings(c))
	}
	if len(c.FactChecks) != 0 || statusOf(c, "https://www.reuters.com/a") != StatusUsed {
		t.Errorf("fact-checks %+v; reuters %s", c.FactChecks, statusOf(c, "https://www.reuters.com/a"))
	}
}

// The correction is given the fact-checks that predate the cutoff by
// publishers the ratings keep; every match is still shown.
func TestFactCheckEvidenceRules(t *testing.T) {
	day := func(s string) time.Time { t, _ := time.Parse(time.DateOnly, s); return t }
	fcs := []FactCheck{
		{Claim: "Springfield banned bicycles", Rating: "False", Reviewer: "Associated Press", URL: "https://apnews.com/b", ReviewDate: day("2024-01-06")},
		{Claim: "Springfield banned bicycles", Rating: "True", Reviewer: "Low Site", URL: "https://lowsite.example/d", ReviewDate: day("2024-01-03")},
		{Claim: "Springfield banned bicycles", Rating: "False", Reviewer: "Late", URL: "https://late.example/e", ReviewDate: day("2024-03-01")},
	}
	var posted []time.Time
	c, in := runClaimWorld(t, claimWorld{fakeWorld: newWorld(), fcs: fcs, posted: &posted}, day("2024-02-01"))
	if len(c.FactChecks) != 3 {
		t.Fatalf("fact-checks %+v", c.FactChecks)
	}
	// A check asks for later fact-checks too (a later debunk is
	// evidence): it gives the matcher no post time, though the post has one.
	if len(posted) != 1 || !posted[0].IsZero() {
		t.Errorf("the check gave the matcher the post times %v; want none", posted)
	}
	for i, f := range fcs {
		// Pages the web search found too keep their record, moved first.
		if h := c.Hits[i]; h.URL != f.URL || h.ClaimReview == nil || h.ClaimReview.Rating != f.Rating {
			t.Errorf("hit %d = %+v; want the fact-check %s", i, h, f.URL)
		}
	}
	var verdicts []string
	for _, e := range in.Evidence {
		if strings.Contains(e.Quote, "checked the claim") {
			verdicts = append(verdicts, e.URL)
		}
	}
	if len(verdicts) != 1 || verdicts[0] != "https://apnews.com/b" {
		t.Errorf("fact-check verdicts given to the correction: %v; want AP's alone (Low Site excluded, Late after the cutoff)", verdicts)
	}
}
