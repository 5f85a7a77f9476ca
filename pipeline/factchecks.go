package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/musecheck/muse/sources"
)

// Claim matching: before the web is searched, the post (its text and the
// text in its images, as the queries see it) is matched against the
// fact-checks the newsroom imported (`muse archive add --claimreview`).
// A match is shown first, its page is read first as a source, and its
// claim and rating go to the correction as a source of their own, so the
// correction can cite it even when the page cannot be read.

// ProviderClaimReview is the Hit.Provider of a page found by claim matching.
const ProviderClaimReview = "claimreview"

// matchFactChecks fills the Check's FactChecks when the archive can match
// claims; a failure is a warning, since the web search goes on.
func (r *run) matchFactChecks(ctx context.Context) {
	c := r.c
	c.FactChecks = nil
	m, ok := r.e.deps.Archive.(ClaimMatcher)
	if !ok {
		return
	}
	parts := []string{c.Post.Text, c.Post.contextForSearch()}
	for _, im := range c.Images {
		parts = append(parts, im.OCRText)
	}
	parts = append(parts, c.Video.text())
	text := strings.TrimSpace(strings.Join(parts, "\n"))
	if text == "" {
		return
	}
	// No post time: a check wants a fact-check published after the post
	// as much as one before it (a later debunk is evidence), so none is
	// left out by its date.
	fcs, err := m.MatchFactChecks(ctx, text, c.Post.Language, time.Time{})
	if err != nil {
		if ctx.Err() == nil {
			r.warn(StageSearch, "match the post against archived fact-checks: %v", err)
		}
		return
	}
	for i := range fcs {
		fcs[i].ReviewerVerified = r.reviewerVerified(fcs[i])
	}
	c.FactChecks = fcs
	for _, f := range fcs {
		r.item(StageSearch, f, f.String())
	}
}

// reviewerVerified says whether a fact-check's reviewer is who its page's
// domain is: the ratings give the domain that publisher's name, or the
// domain's own name is the reviewer's ("PolitiFact" on politifact.com,
// "AFP Fact Check" on afp.com). Names are compared by their letters and
// digits alone, in any case.
func (r *run) reviewerVerified(f FactCheck) bool {
	u, err := sources.ParseHTTP(f.URL)
	want := nameKey(f.Reviewer)
	if err != nil || want == "" {
		return false
	}
	if rt := r.e.deps.Rater.Rate(f.URL); rt.Publisher != "" && nameKey(rt.Publisher) == want {
		return true
	}
	label, _, _ := strings.Cut(sources.RegistrableDomain(u.Hostname()), ".")
	label = nameKey(label)
	return label != "" && (label == want || label == strings.TrimSuffix(want, "factcheck"))
}

// nameKey is a name's letters and digits in lower case.
func nameKey(s string) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			return unicode.ToLower(r)
		}
		return -1
	}, s)
}

// factCheckHits puts the matched fact-checks' pages first among the hits:
// a page the web search found too is moved up and keeps its record.
func (r *run) factCheckHits() {
	c := r.c
	var first []Hit
	for i, f := range c.FactChecks {
		if _, err := sources.ParseHTTP(f.URL); err != nil || !f.ReviewerVerified {
			continue // an unverified reviewer's page is not put first
		}
		key := sources.Key(f.URL)
		cr := &sources.ClaimReview{Claim: f.Claim, Claimant: f.Claimant, Rating: f.Rating, Reviewer: f.Reviewer,
			ReviewURL: f.URL, ReviewDate: f.ReviewDate, Language: f.Language}
		h := Hit{URL: f.URL, Title: f.Reviewer + ": " + f.Claim, Snippet: f.Claim, Published: f.ReviewDate,
			Provider: ProviderClaimReview, Query: "the post", Rank: i + 1, Pass: 1}
		if j := slices.IndexFunc(c.Hits, func(h Hit) bool { return sources.Key(h.URL) == key }); j >= 0 {
			h = c.Hits[j]
			c.Hits = slices.Delete(c.Hits, j, j+1)
		} else {
			r.item(StageSearch, h, "hit found")
		}
		h.ClaimReview = cr
		first = append(first, h)
	}
	c.Hits = append(first, c.Hits...)
}

// factCheckEvidence gives each matched fact-check to the correction as a
// source: its reviewer, date and verdict, under its URL. Fact-checks by
// publishers the ratings exclude, and those dated after the cutoff, are
// left out, like any other page.
func (r *run) factCheckEvidence() []EvidenceForPrompt {
	var out []EvidenceForPrompt
	cutoff := r.c.Cutoff
	for _, f := range r.c.FactChecks {
		if _, err := sources.ParseHTTP(f.URL); err != nil || f.Rating == "" || !f.ReviewerVerified {
			continue // not citable: anyone can claim to be a fact-checker
		}
		if !cutoff.IsZero() && !f.ReviewDate.IsZero() && !f.ReviewDate.Before(cutoff) {
			continue
		}
		rt := r.e.deps.Rater.Rate(f.URL)
		if rt.Tier == TierExcluded && !rt.Boost || rt.Drop || rt.UserContent {
			continue
		}
		out = append(out, EvidenceForPrompt{URL: f.URL, Publisher: f.Reviewer, Tier: rt.Tier, Published: f.ReviewDate,
			Kind: KindContext, Quote: f.verdict()})
	}
	// A page's own fact-check of this very post (ofpost.go), unless claim
	// matching found the same page.
	for _, e := range r.c.postVerdictEvidence() {
		if !slices.ContainsFunc(out, func(o EvidenceForPrompt) bool { return sources.Key(o.URL) == sources.Key(e.URL) }) {
			out = append(out, e)
		}
	}
	return out
}

// verdict is the fact-check's finding in a sentence.
func (f FactCheck) verdict() string {
	s := fmt.Sprintf("%s checked the claim %q", f.Reviewer, f.Claim)
	if f.Claimant != "" {
		s += " (made by " + f.Claimant + ")"
	}
	if !f.ReviewDate.IsZero() {
		s += " on " + f.ReviewDate.Format(time.DateOnly)
	}
	return s + " and rated it " + f.Rating + "."
}
