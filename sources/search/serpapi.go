package search

import (
	"context"
	"net/url"
	"strconv"
	"time"
)

// serpAPI queries Google through SerpAPI (engine=google). The cutoff goes in
// Google's custom date range, tbs=cdr:1,cd_max:MM/DD/YYYY.
type serpAPI struct {
	endpoint
	base, key string
}

func (s *serpAPI) Name() string { return NameSerpAPI }

type serpAnswer struct {
	SearchMetadata struct {
		Status string `json:"status"`
	} `json:"search_metadata"`
	Error          string       `json:"error"`
	OrganicResults []serpResult `json:"organic_results"`
}

// serpResult is one organic result of SerpAPI's Google engine; Serper's
// organic[] entries have the same fields.
type serpResult struct {
	Position int    `json:"position"`
	Title    string `json:"title"`
	Link     string `json:"link"`
	Snippet  string `json:"snippet"`
	Date     string `json:"date"` // "Apr 23, 2020" or "3 days ago", when Google shows one
}

// hit is the page a Google result names.
func (r serpResult) hit(now time.Time) Hit {
	return Hit{URL: r.Link, Title: clean(r.Title), Snippet: clean(r.Snippet), Published: parseDate(r.Date, now)}
}

func (s *serpAPI) Search(ctx context.Context, q Query) ([]Hit, error) {
	return bySiteOperators(ctx, q, googleLimit, s.siteRequests, s.search)
}

func (s *serpAPI) search(ctx context.Context, q Query) ([]Hit, error) {
	params := url.Values{"engine": {"google"}, "q": {q.Text}, "api_key": {s.key}, "num": {strconv.Itoa(count(q, 100))}}
	googleLanguage(params, q)
	if q.page() > 1 {
		params.Set("start", strconv.Itoa((q.page()-1)*count(q, 100)))
	}
	if !q.Before.IsZero() {
		params.Set("tbs", "cdr:1,cd_max:"+lastDay(q.Before).Format("01/02/2006"))
	}
	var ans serpAnswer
	if err := s.serpGet(ctx, s.base, params, &ans); err != nil {
		return nil, err
	}
	if ans.Error != "" {
		return nil, serpError(ans.Error)
	}
	now := time.Now()
	return rankHits(ans.OrganicResults, q, NameSerpAPI, q.skipped(100), count(q, 100), func(r serpResult) Hit { return r.hit(now) }), nil
}
