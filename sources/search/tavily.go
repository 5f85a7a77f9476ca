package search

import (
	"context"
	"net/http"
	"time"
)

// tavily queries Tavily's search API (POST api.tavily.com/search, key as a
// Bearer token). The cutoff is end_date, the last day included; Sites go in
// include_domains. Tavily does not page: it returns up to 20 results once.
type tavily struct {
	endpoint
	base, key string
	depth     string // search_depth: basic or advanced
}

func (t *tavily) Name() string { return NameTavily }

type tavilyRequest struct {
	Query          string   `json:"query"`
	MaxResults     int      `json:"max_results"`
	SearchDepth    string   `json:"search_depth"`
	Topic          string   `json:"topic"`
	IncludeDomains []string `json:"include_domains,omitempty"`
	EndDate        string   `json:"end_date,omitempty"`
}

type tavilyResult struct {
	Title         string  `json:"title"`
	URL           string  `json:"url"`
	Content       string  `json:"content"`
	Score         float64 `json:"score"`
	PublishedDate string  `json:"published_date"` // given for some results, in RFC 1123 or ISO form
}

type tavilyAnswer struct {
	Results []tavilyResult `json:"results"`
}

func (t *tavily) Search(ctx context.Context, q Query) ([]Hit, error) {
	return byDomainFilter(ctx, q, tavilyDomains, t.siteRequests, t.search)
}

func (t *tavily) search(ctx context.Context, q Query) ([]Hit, error) {
	req := tavilyRequest{Query: q.Text, MaxResults: count(q, 20), SearchDepth: t.depth, Topic: "general", IncludeDomains: q.Sites}
	if !q.Before.IsZero() {
		req.EndDate = lastDay(q.Before).Format(time.DateOnly)
	}
	var ans tavilyAnswer
	if err := t.post(ctx, join(t.base, "/search"), http.Header{"Authorization": {"Bearer " + t.key}}, req, &ans); err != nil {
		return nil, err
	}
	now := time.Now()
	return rankHits(ans.Results, q, NameTavily, 0, req.MaxResults, func(r tavilyResult) Hit {
		return Hit{URL: r.URL, Title: clean(r.Title), Snippet: clip(clean(r.Content), 400), Published: parseDate(r.PublishedDate, now)}
	}), nil
}
