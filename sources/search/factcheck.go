package search

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"strconv"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
)

// factCheck queries the Google Fact Check Tools API (claims:search) for
// existing fact-checks. Each ClaimReview becomes a hit on the review's URL
// carrying the reviewer's rating. The API cannot restrict to before a date;
// Run drops reviews dated after the cutoff (reviewDate is exact here).
type factCheck struct {
	endpoint
	base, key  string
	language   string
	maxAgeDays int
}

func (f *factCheck) Name() string { return NameFactCheck }

type factCheckAnswer struct {
	Claims []struct {
		Text        string `json:"text"`
		Claimant    string `json:"claimant"`
		ClaimDate   string `json:"claimDate"`
		ClaimReview []struct {
			Publisher struct {
				Name string `json:"name"`
				Site string `json:"site"`
			} `json:"publisher"`
			URL           string `json:"url"`
			Title         string `json:"title"`
			ReviewDate    string `json:"reviewDate"`
			TextualRating string `json:"textualRating"`
			LanguageCode  string `json:"languageCode"`
		} `json:"claimReview"`
	} `json:"claims"`
	NextPageToken string `json:"nextPageToken"`
}

func (f *factCheck) Search(ctx context.Context, q Query) ([]Hit, error) {
	if q.page() > 1 {
		return nil, nil // the API pages by token, not by number; the first page holds the best matches
	}
	if len(q.Sites) > 0 {
		return nil, nil // it searches fact-checks, which the open query found already
	}
	params := url.Values{"query": {q.Text}, "key": {f.key}, "pageSize": {strconv.Itoa(count(q, 0))}}
	switch {
	case q.Language != "":
		params.Set("languageCode", bcp47(q.Language, q.Region))
	case f.language != "":
		params.Set("languageCode", f.language)
	}
	if f.maxAgeDays > 0 {
		params.Set("maxAgeDays", strconv.Itoa(f.maxAgeDays))
	}
	var ans factCheckAnswer
	if err := f.get(ctx, join(f.base, "/v1alpha1/claims:search")+"?"+params.Encode(), &ans); err != nil {
		return nil, err
	}
	var hits []Hit
	for _, cr := range ans.reviews(time.Now()) {
		title := cr.title
		if title == "" && cr.Reviewer != "" {
			title = cr.Reviewer + ": " + cr.Claim
		} else if title == "" {
			title = cr.Claim
		}
		hits = append(hits, Hit{URL: cr.ReviewURL, Title: title, Snippet: cr.Claim, Published: cr.ReviewDate,
			Provider: NameFactCheck, Query: q.Text, Rank: len(hits) + 1, ClaimReview: &cr.ClaimReview})
	}
	return hits, nil
}

// titledReview is a ClaimReview with the title of the review's page.
type titledReview struct {
	sources.ClaimReview
	title string
}

// reviews flattens the answer's claims into their reviews; a review
// without a URL is left out.
func (a factCheckAnswer) reviews(now time.Time) []titledReview {
	var out []titledReview
	for _, c := range a.Claims {
		for _, r := range c.ClaimReview {
			if r.URL == "" {
				continue
			}
			reviewer := r.Publisher.Name
			if reviewer == "" {
				reviewer = r.Publisher.Site
			}
			out = append(out, titledReview{sources.ClaimReview{
				Claim: clean(c.Text), Claimant: clean(c.Claimant), ClaimDate: parseDate(c.ClaimDate, now),
				Rating: clean(r.TextualRating), Reviewer: reviewer, ReviewURL: r.URL, ReviewDate: parseDate(r.ReviewDate, now),
				Language: lang.Normalise(r.LanguageCode),
			}, clean(r.Title)})
		}
	}
	return out
}

// FactCheckReviews reads a saved answer of the Fact Check Tools API
// (claims:search or pages), {"claims": [{"text", "claimReview": [...]}]},
// into its ClaimReviews.
func FactCheckReviews(b []byte) ([]sources.ClaimReview, error) {
	var ans factCheckAnswer
	if err := json.Unmarshal(b, &ans); err != nil {
		return nil, fmt.Errorf("read Fact Check Tools claims: %w", err)
	}
	var out []sources.ClaimReview
	for _, r := range ans.reviews(time.Now()) {
		out = append(out, r.ClaimReview)
	}
	return out, nil
}
