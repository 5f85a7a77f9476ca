// Package search queries web search providers (SearXNG, Brave, Google
// Programmable Search, SerpAPI, Google Fact Check Tools) and the local
// archive concurrently, and merges their hits.
package search

import (
	"context"
	"time"

	"github.com/musecheck/muse/sources"
)

// Query is one search request.
type Query struct {
	Text   string
	Before time.Time // only pages published before this instant, where the engine can filter by date; zero: no limit
	Count  int       // hits wanted from each provider; zero means the provider's default (10)
}

// Hit is one search result.
type Hit struct {
	URL         string               `json:"url"`
	Title       string               `json:"title"`
	Snippet     string               `json:"snippet,omitempty"`
	Published   time.Time            `json:"published,omitzero"` // as reported by the provider, when it does
	Provider    string               `json:"provider"`           // which provider found it, e.g. "searxng"
	Query       string               `json:"query"`              // which query found it
	Rank        int                  `json:"rank"`               // 1-based position in that provider's answer
	ClaimReview *sources.ClaimReview `json:"claim_review,omitempty"`
	// Also lists every other provider/query pair that found the same page after merging.
	Also []Origin `json:"also,omitempty"`
}

// Origin says which provider and query found a hit.
type Origin struct {
	Provider string `json:"provider"`
	Query    string `json:"query"`
	Rank     int    `json:"rank"`
}

// Searcher is one search provider.
type Searcher interface {
	Name() string
	Search(ctx context.Context, q Query) ([]Hit, error)
}
