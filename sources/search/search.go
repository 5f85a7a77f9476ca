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
	// Page asks for the next hits after the first Count (page 2 is hits
	// Count+1 … 2×Count, as the provider ranks them); zero means 1. A
	// provider that cannot page (Tavily, Exa, Fact Check Tools) answers no
	// hits for a page after the first, and none pages past what its API
	// serves (Google: 100 results, Brave: 10 pages).
	Page int
	// Sites restricts the search to these domains ("reuters.com",
	// "al.com/birmingham"), most wanted first: each provider sends them as
	// OR-joined site: operators in as many requests as its query length
	// limit needs, or in its own domain filter, up to Options.SiteRequests
	// requests; sites beyond that are not searched. Hits on other sites are
	// dropped by Run. Fact Check Tools answers nothing for a restricted
	// query (it searches fact-checks, not the web).
	Sites []string
	// Language asks for pages in this language (ISO 639-1, "es"), and
	// Region for pages from this country (ISO 3166-1 alpha-2, "MX"), in
	// each engine's own terms (SearXNG language, Brave search_lang and
	// country, Google lr/hl/gl, Serper and SerpAPI hl/gl, Fact Check Tools
	// languageCode). Empty: the engine's default. Tavily and Exa take no
	// language; the query's words choose it.
	Language, Region string
	// Posted is when the post the query is about was posted (zero:
	// unknown). A searcher that ranks by time, the local archive, ranks
	// pages dated long before it or after it lower; none is dropped.
	// Web engines ignore it.
	Posted time.Time
}

// braveLang is Brave's search_lang for an ISO 639-1 code: Brave spells a
// few its own way (jp, zh-hans, pt-br/pt-pt, en-gb).
func braveLang(lang, region string) string {
	switch lang {
	case "ja":
		return "jp"
	case "zh":
		if region == "TW" || region == "HK" {
			return "zh-hant"
		}
		return "zh-hans"
	case "pt":
		if region == "PT" {
			return "pt-pt"
		}
		return "pt-br"
	case "en":
		if region == "GB" {
			return "en-gb"
		}
	}
	return lang
}

// bcp47 is "es" or "es-MX".
func bcp47(lang, region string) string {
	if lang == "" || region == "" {
		return lang
	}
	return lang + "-" + region
}

// rankHits turns a provider's results into hits: hit maps a result to its
// page (URL, title, snippet, date; no URL to skip it), and rankHits ranks
// the pages after the skip hits of earlier pages, records provider and
// q.Text, and keeps at most limit of them (zero: all).
func rankHits[T any](results []T, q Query, provider string, skip, limit int, hit func(T) Hit) []Hit {
	var hits []Hit
	for _, r := range results {
		h := hit(r)
		if h.URL == "" {
			continue
		}
		h.Provider, h.Query, h.Rank = provider, q.Text, skip+len(hits)+1
		hits = append(hits, h)
		if len(hits) == limit {
			break
		}
	}
	return hits
}

// page is q's 1-based page number.
func (q Query) page() int { return max(q.Page, 1) }

// skipped is how many hits the pages before q's hold, for a provider that
// serves at most limit a request (zero: no limit): page 2's first hit ranks
// after page 1's last.
func (q Query) skipped(limit int) int { return (q.page() - 1) * count(q, limit) }

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
	// Restricted says the search that found the hit was restricted to
	// Query.Sites (the credible-first search), not the open one.
	Restricted bool `json:"restricted,omitempty"`
	// Also lists every other provider/query pair that found the same page after merging.
	Also []Origin `json:"also,omitempty"`
}

// Origin says which provider and query found a hit.
type Origin struct {
	Provider   string `json:"provider"`
	Query      string `json:"query"`
	Rank       int    `json:"rank"`
	Restricted bool   `json:"restricted,omitempty"` // a search restricted to Query.Sites
}

// String names the search for a person: "brave: 5g towers", or
// "brave (credible sites): 5g towers" for a restricted one.
func (o Origin) String() string {
	if o.Restricted {
		return o.Provider + " (credible sites): " + o.Query
	}
	return o.Provider + ": " + o.Query
}

// Searcher is one search provider.
type Searcher interface {
	Name() string
	Search(ctx context.Context, q Query) ([]Hit, error)
}
