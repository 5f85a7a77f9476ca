package search

import (
	"context"
	"net/http"
	"time"
)

// exa queries Exa's search API (POST api.exa.ai/search, key in x-api-key).
// The cutoff is endPublishedDate, an ISO 8601 instant; Sites go in
// includeDomains. Exa does not page: it returns up to 100 results once.
// No contents are asked for (they cost extra), so hits have no snippet.
type exa struct {
	endpoint
	base, key string
}

func (e *exa) Name() string { return NameExa }

type exaRequest struct {
	Query            string   `json:"query"`
	NumResults       int      `json:"numResults"`
	Type             string   `json:"type"`
	IncludeDomains   []string `json:"includeDomains,omitempty"`
	EndPublishedDate string   `json:"endPublishedDate,omitempty"`
}

type exaResult struct {
	ID            string `json:"id"`
	URL           string `json:"url"`
	Title         string `json:"title"`
	PublishedDate string `json:"publishedDate"`
	Author        string `json:"author"`
}

type exaAnswer struct {
	Results []exaResult `json:"results"`
}

func (e *exa) Search(ctx context.Context, q Query) ([]Hit, error) {
	return byDomainFilter(ctx, q, exaDomains, e.siteRequests, e.search)
}

func (e *exa) search(ctx context.Context, q Query) ([]Hit, error) {
	req := exaRequest{Query: q.Text, NumResults: count(q, 100), Type: "auto", IncludeDomains: q.Sites}
	if !q.Before.IsZero() {
		// Exa includes the instant given; the cutoff itself is excluded.
		req.EndPublishedDate = q.Before.UTC().Add(-time.Millisecond).Format("2006-01-02T15:04:05.000Z")
	}
	var ans exaAnswer
	if err := e.post(ctx, join(e.base, "/search"), http.Header{"X-Api-Key": {e.key}}, req, &ans); err != nil {
		return nil, err
	}
	now := time.Now()
	return rankHits(ans.Results, q, NameExa, 0, req.NumResults, func(r exaResult) Hit {
		return Hit{URL: r.URL, Title: clean(r.Title), Published: parseDate(r.PublishedDate, now)}
	}), nil
}
