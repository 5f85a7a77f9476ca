package archive

import (
	"context"

	"github.com/musecheck/muse/sources/search"
)

// Searcher returns the archive as a search provider named "archive".
func (s *Store) Searcher() search.Searcher { return searcher{s} }

type searcher struct{ s *Store }

func (searcher) Name() string { return "archive" }

func (a searcher) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	hits, err := a.s.Search(ctx, q.Text, SearchOptions{Before: q.Before, Limit: q.Count})
	if err != nil {
		return nil, err
	}
	out := make([]search.Hit, len(hits))
	for i, h := range hits {
		out[i] = search.Hit{URL: h.URL, Title: h.Title, Snippet: h.Snippet, Published: h.Published,
			Provider: "archive", Query: q.Text, Rank: i + 1}
	}
	return out, nil
}
