package search

import (
	"context"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
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
	Error          string `json:"error"`
	OrganicResults []struct {
		Position int    `json:"position"`
		Title    string `json:"title"`
		Link     string `json:"link"`
		Snippet  string `json:"snippet"`
		Date     string `json:"date"`
	} `json:"organic_results"`
}

func (s *serpAPI) Search(ctx context.Context, q Query) ([]Hit, error) {
	params := url.Values{"engine": {"google"}, "q": {q.Text}, "api_key": {s.key}, "num": {strconv.Itoa(count(q, 100))}}
	if !q.Before.IsZero() {
		params.Set("tbs", "cdr:1,cd_max:"+lastDay(q.Before).Format("01/02/2006"))
	}
	var ans serpAnswer
	err := s.getJSON(ctx, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, join(s.base, "/search.json")+"?"+params.Encode(), nil)
	}, &ans)
	if err != nil {
		return nil, err
	}
	if ans.Error != "" {
		// SerpAPI reports an empty Google page as an error with HTTP 200.
		if strings.Contains(ans.Error, "hasn't returned any results") {
			return nil, nil
		}
		return nil, fmt.Errorf("SerpAPI: %s", ans.Error)
	}
	now := time.Now()
	var hits []Hit
	for _, r := range ans.OrganicResults {
		if r.Link == "" {
			continue
		}
		pub := parseDate(r.Date, now)
		hits = append(hits, Hit{URL: r.Link, Title: clean(r.Title), Snippet: clean(r.Snippet), Published: pub,
			Provider: NameSerpAPI, Query: q.Text, Rank: len(hits) + 1})
		if len(hits) == count(q, 100) {
			break
		}
	}
	return hits, nil
}
