package search

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"sync"

	"github.com/musecheck/muse/sources"
)

// maxInFlight bounds the provider×query requests running at once: enough to
// overlap slow APIs, few enough not to trip per-second rate limits.
const maxInFlight = 6

// ProviderError says which provider failed on which query, and why.
type ProviderError struct {
	Provider string
	Query    string
	Err      error
}

func (e ProviderError) Error() string {
	return fmt.Sprintf("%s: search %q: %v", e.Provider, e.Query, e.Err)
}

func (e ProviderError) Unwrap() error { return e.Err }

// MarshalJSON writes {"provider","query","error"} so scripts see the reason.
func (e ProviderError) MarshalJSON() ([]byte, error) {
	msg := ""
	if e.Err != nil {
		msg = e.Err.Error()
	}
	return json.Marshal(struct {
		Provider string `json:"provider"`
		Query    string `json:"query"`
		Error    string `json:"error"`
	}{e.Provider, e.Query, msg})
}

// Run sends every query to every searcher concurrently and merges the hits.
// Hits naming the same page (same sources.Canonical URL) are merged into the
// best-ranked one, the others recorded in its Also; the result is ordered by
// rank, then searcher order, then query order, so it is the same every run.
// Hits whose provider dates them at or after a query's Before are dropped,
// as are hits of a query with Sites that are on none of them (those left
// are marked Restricted), and hits without an http(s) URL are skipped. A searcher that fails yields
// a ProviderError (hits it returned with its error, a search cut short,
// are kept) and the others go on. Failures come back in searcher then
// query order. Cancelling ctx stops what is still running.
func Run(ctx context.Context, searchers []Searcher, queries []Query) (hits []Hit, failures []ProviderError) {
	type cell struct {
		hits []Hit
		err  error
	}
	grid := make([][]cell, len(searchers))
	for i := range grid {
		grid[i] = make([]cell, len(queries))
	}
	sem := make(chan struct{}, maxInFlight)
	var wg sync.WaitGroup
	for si, s := range searchers {
		for qi, q := range queries {
			wg.Go(func() {
				select {
				case sem <- struct{}{}:
				case <-ctx.Done():
					grid[si][qi].err = context.Cause(ctx)
					return
				}
				defer func() { <-sem }()
				h, err := s.Search(ctx, q)
				grid[si][qi] = cell{hits: h, err: err}
			})
		}
	}
	wg.Wait()

	type ranked struct {
		hit    Hit
		si, qi int
	}
	sites := make([][]string, len(queries))
	for qi, q := range queries {
		sites[qi] = normSites(q.Sites)
	}
	var all []ranked
	for si, row := range grid {
		for qi, c := range row {
			if c.err != nil {
				failures = append(failures, ProviderError{Provider: searchers[si].Name(), Query: queries[qi].Text, Err: c.err})
				// A searcher may answer part of a search with its error (the
				// archive cut by its time budget): those hits still count.
			}
			for _, h := range c.hits {
				if b := queries[qi].Before; !b.IsZero() && !h.Published.IsZero() && !h.Published.Before(b) {
					continue
				}
				if len(queries[qi].Sites) > 0 {
					// An engine may loosen an operator, and a searcher
					// that cannot restrict (the archive) answers the open
					// query: neither is the restricted search's hit.
					if !onSites(h.URL, sites[qi]) {
						continue
					}
					h.Restricted = true
				}
				all = append(all, ranked{h, si, qi})
			}
		}
	}
	slices.SortStableFunc(all, func(a, b ranked) int {
		return cmp.Or(cmp.Compare(a.hit.Rank, b.hit.Rank), cmp.Compare(a.si, b.si), cmp.Compare(a.qi, b.qi))
	})
	sorted := make([]Hit, len(all))
	for i, r := range all {
		sorted[i] = r.hit
	}
	return merge(sorted), failures
}

// merge keeps the first hit for each canonical URL, records later ones in
// its Also and fills what the first one lacks (a date, a snippet, a
// fact-check rating) from them.
func merge(in []Hit) []Hit {
	var out []Hit
	index := map[string]int{}
	for _, h := range in {
		key, err := sources.Canonical(h.URL)
		if err != nil {
			continue
		}
		i, seen := index[key]
		if !seen {
			index[key] = len(out)
			out = append(out, h)
			continue
		}
		first := &out[i]
		first.Also = append(first.Also, Origin{Provider: h.Provider, Query: h.Query, Rank: h.Rank, Restricted: h.Restricted})
		if first.Title == "" {
			first.Title = h.Title
		}
		if first.Snippet == "" {
			first.Snippet = h.Snippet
		}
		if first.Published.IsZero() {
			first.Published = h.Published
		}
		if first.ClaimReview == nil {
			first.ClaimReview = h.ClaimReview
		}
	}
	return out
}

// Origins lists every provider/query pair that found h, its own first.
func (h Hit) Origins() []Origin {
	return append([]Origin{{Provider: h.Provider, Query: h.Query, Rank: h.Rank, Restricted: h.Restricted}}, h.Also...)
}
