package archive

import (
	"context"
	"time"

	"github.com/musecheck/muse/sources/search"
)

// SearcherOptions configures the archive as a search provider.
type SearcherOptions struct {
	// Budget bounds each search (see SearchOptions.Budget); zero: none.
	Budget time.Duration
	// Language is the queries' ISO 639-1 code; empty: English.
	Language string
	// Embedder, when set, adds dense ranking fused with the lexical one
	// (HybridSearch).
	Embedder Embedder
}

// Searcher returns the archive as a search provider named "archive".
func (s *Store) Searcher() search.Searcher { return s.SearcherWith(SearcherOptions{}) }

// SearcherWith is Searcher with options. A search cut by its budget
// returns the hits it has with an error wrapping ErrCut, so the caller can
// use them and report the cut.
func (s *Store) SearcherWith(o SearcherOptions) search.Searcher { return searcher{s, o} }

type searcher struct {
	s *Store
	o SearcherOptions
}

func (searcher) Name() string { return "archive" }

func (a searcher) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	hits, err := a.s.HybridSearch(ctx, q.Text, SearchOptions{Before: q.Before, Posted: q.Posted, Limit: q.Count,
		Language: a.o.Language, Budget: a.o.Budget}, a.o.Embedder)
	out := make([]search.Hit, len(hits))
	for i, h := range hits {
		out[i] = search.Hit{URL: h.URL, Title: h.Title, Snippet: h.Snippet, Published: h.Published,
			Provider: "archive", Query: q.Text, Rank: i + 1}
	}
	return out, err
}
