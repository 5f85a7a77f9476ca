package pipeline

import (
	"cmp"
	"fmt"
	"slices"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/posts"
)

// A fact-check of this very post: a page whose ClaimReview names the
// post's address as where the claim appeared, or a page that links to or
// embeds the post (a report or fact-check of it). Such a page is read
// whatever its words share with the post, ranked first (after the pages
// the checker boosted), and its ClaimReview's rating is shown and given
// to the correction.

// How a page was found to be about the post (Source.OfPost).
const (
	OfPostClaimReview = "claim_review" // its ClaimReview's itemReviewed appearance is the post
	OfPostLinks       = "links"        // it links to or embeds the post
)

// markOfPost sets s.OfPost and s.ClaimReview from the page's ClaimReviews
// and links, when the post has an address.
func (r *run) markOfPost(s *Source, a *extract.Article, body []byte) {
	s.OfPost, s.ClaimReview = "", nil
	post := r.c.Post.URL
	if post == "" || posts.SamePost(s.URL, post) || posts.SamePost(cmp.Or(s.FinalURL, s.URL), post) {
		return // the post's own page is not a page about it
	}
	names := func(u string) bool { return posts.SamePost(u, post) }
	for _, cr := range a.ClaimReviews {
		if slices.ContainsFunc(cr.Appearances, names) {
			s.OfPost, s.ClaimReview = OfPostClaimReview, &cr
			return
		}
	}
	if body != nil && slices.ContainsFunc(extract.Links(body, cmp.Or(s.FinalURL, s.URL)), names) {
		s.OfPost = OfPostLinks
		if len(a.ClaimReviews) == 1 {
			// A fact-check page that links to the post: its one
			// ClaimReview is of the claim the post makes.
			cr := a.ClaimReviews[0]
			s.ClaimReview = &cr
		}
	}
}

// ofPostRank orders pages about the post before the others, those whose
// ClaimReview names it first.
func ofPostRank(s Source) int {
	switch s.OfPost {
	case OfPostClaimReview:
		return 0
	case OfPostLinks:
		return 1
	}
	return 2
}

// PostVerdict is the rating a page about the post gives it (its
// ClaimReview's), "" when it gives none.
func (s Source) PostVerdict() string {
	if s.OfPost == "" || s.ClaimReview == nil {
		return ""
	}
	return s.ClaimReview.Rating
}

// OfPostLine says what the page is to the post, in a line the app and the
// exports show: "Fact-check of this post by Reuters, rated False, 2024-03-12
// (https://…)".
func (s Source) OfPostLine() string {
	who := s.Label() // the ratings' name, or the page's own marked as its claim
	var line string
	switch s.OfPost {
	case OfPostClaimReview:
		line = "Fact-check of this post by " + who
	case OfPostLinks:
		line = who + " links to or embeds this post"
	default:
		return ""
	}
	if v := s.PostVerdict(); v != "" {
		line += ", rated " + v
	}
	if !s.Published.IsZero() {
		line += ", " + s.Published.Format(time.DateOnly)
	}
	return line + " (" + cmp.Or(s.FinalURL, s.URL) + ")"
}

// postVerdictEvidence gives the correction the rating of each page about
// the post that carries one and may be quoted, under its address: "Reuters
// fact-checked this post on 2024-03-12 and rated it False."
func (c *Check) postVerdictEvidence() []EvidenceForPrompt {
	var out []EvidenceForPrompt
	for _, s := range c.Sources {
		v := s.PostVerdict()
		if v == "" || !s.Eligible() {
			continue
		}
		// The ratings' name of the page's publisher, or its own marked as
		// its claim: never a reviewer the page names for itself.
		who := s.Label()
		q := who + " fact-checked this post"
		if s.ClaimReview.Claim != "" {
			q += fmt.Sprintf(" (the claim %q)", s.ClaimReview.Claim)
		}
		if d := cmp.Or(s.ClaimReview.ReviewDate, s.Published); !d.IsZero() {
			q += " on " + d.Format(time.DateOnly)
		}
		out = append(out, EvidenceForPrompt{URL: s.URL, Publisher: who, Tier: s.Tier,
			Published: cmp.Or(s.Published, s.ClaimReview.ReviewDate), Kind: KindContext, Quote: q + " and rated it " + v + "."})
	}
	return out
}

// postVerdicts counts the pages about the post that rate it and may be
// quoted, apart from the fact-checks claim matching found.
func (c *Check) postVerdicts() int {
	seen := map[string]bool{}
	for _, f := range c.FactChecks {
		if f.URL != "" && f.Rating != "" {
			seen[sources.Key(f.URL)] = true
		}
	}
	n := 0
	for _, s := range c.Sources {
		if s.PostVerdict() != "" && s.Eligible() && !seen[sources.Key(s.URL)] {
			n++
		}
	}
	return n
}
