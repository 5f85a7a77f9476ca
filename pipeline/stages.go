package pipeline

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources/search"
)

// ErrBadAnswer marks a model answer that could not be used (malformed JSON,
// empty, a refusal). Stages recover from it where the paper has a fallback;
// transport and configuration errors are not recovered from.
var ErrBadAnswer = errors.New("unusable model answer")

// queries writes the search queries. The person's own queries are kept;
// the model's are replaced.
func (r *run) queries(ctx context.Context) (int, error) {
	c := r.c
	var kept []Query
	for _, q := range c.Queries {
		if q.Origin == OriginUser {
			kept = append(kept, q)
		}
	}
	c.Queries = kept
	n := 3
	if len(c.Images) > 0 || len(c.Post.Images) > 0 {
		n = 5 // the paper asks for five when the post has images
	}
	add := func(text, origin string) {
		text = strings.TrimSpace(text)
		if text == "" {
			return
		}
		for _, q := range c.Queries {
			if strings.EqualFold(q.Text, text) {
				return
			}
		}
		q := Query{Text: text, Origin: origin, Enabled: true}
		c.Queries = append(c.Queries, q)
		r.item(StageQueries, q, "query added")
	}
	if r.e.opts.NoLLM {
		for _, q := range keyPhrases(postForSearch(c), n) {
			add(q, OriginFallback)
		}
		return len(c.Queries), nil
	}
	qs, informative, u, err := r.e.deps.Model.Queries(ctx, QueriesInput{Post: c.Post, Images: c.Images, N: n})
	r.addUsage(StageQueries, u)
	switch {
	case err != nil && errors.Is(err, ErrBadAnswer):
		r.warn(StageQueries, "the model's queries could not be used (%v); searching the post's own text", err)
		informative = false
	case err != nil:
		return 0, fmt.Errorf("write search queries: %w", err)
	}
	if informative {
		for i, q := range qs {
			if i < n {
				add(q, OriginModel)
			}
		}
	}
	if !informative || len(qs) == 0 {
		if err == nil {
			r.warn(StageQueries, "the model found the post not informative; searching the post's own text")
		}
		add(fallbackQuery(postForSearch(c)), OriginFallback)
	}
	if len(c.Queries) == 0 {
		r.warn(StageQueries, "the post has no words to search for")
	}
	return len(c.Queries), nil
}

func describedImages(ims []Image) int {
	n := 0
	for _, im := range ims {
		if strings.TrimSpace(im.Description) != "" {
			n++
		}
	}
	return n
}

// postForSearch is the post text with image descriptions, as the
// extractive mode and the fallback query see it.
func postForSearch(c *Check) string {
	parts := []string{c.Post.Text}
	for _, im := range c.Images {
		if d := imageNotes(im); d != "" {
			parts = append(parts, d)
		}
	}
	return strings.Join(parts, " ")
}

// search runs the first search pass.
func (r *run) search(ctx context.Context) (int, error) {
	r.c.Hits = nil
	hits, err := r.searchPass(ctx, StageSearch, 1, r.e.opts.FirstPassHits)
	return len(hits), err
}

// searchPass searches every enabled query on every provider and appends the
// new hits (pages not found before) to the Check.
func (r *run) searchPass(ctx context.Context, st Stage, pass, count int) ([]Hit, error) {
	c := r.c
	texts := c.EnabledQueries()
	if len(texts) == 0 {
		r.warn(st, "no enabled query to search")
		return nil, nil
	}
	if len(r.e.deps.Searchers) == 0 {
		r.warn(st, "%s", search.SetupHint)
		return nil, nil
	}
	if pass == 1 && !slices.ContainsFunc(r.e.deps.Searchers, func(s search.Searcher) bool { return s.Name() != "archive" }) {
		r.warn(st, "only the local archive was searched: %s", search.SetupHint)
	}
	qs := make([]search.Query, len(texts))
	for i, t := range texts {
		qs[i] = search.Query{Text: t, Before: c.Cutoff, Count: count}
	}
	var imgHits []search.Hit
	var imgFailures []search.ProviderError
	imgDone := make(chan struct{})
	go func() {
		defer close(imgDone)
		if pass == 1 {
			imgHits, imgFailures = r.reverseImageSearch(ctx)
		}
	}()
	found, failures := search.Run(ctx, r.e.deps.Searchers, qs)
	<-imgDone
	for _, f := range imgFailures {
		r.warn(st, "%v", f)
	}
	found = append(found, imgHits...)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("search: %w", err)
	}
	for _, f := range failures {
		r.warn(st, "%v", f)
	}
	if len(failures) > 0 && len(failures) == len(qs)*len(r.e.deps.Searchers) {
		r.warn(st, "every search failed")
	}
	seen := map[string]bool{}
	for _, h := range c.Hits {
		seen[canonicalKey(h.URL)] = true
	}
	var added []Hit
	for _, h := range found {
		key := canonicalKey(h.URL)
		if seen[key] {
			continue
		}
		seen[key] = true
		hit := Hit{URL: h.URL, Title: h.Title, Snippet: h.Snippet, Published: h.Published, Provider: h.Provider,
			Query: h.Query, Rank: h.Rank, Pass: pass, ClaimReview: h.ClaimReview}
		c.Hits = append(c.Hits, hit)
		added = append(added, hit)
		r.item(st, hit, "hit found")
	}
	if len(found) == 0 {
		r.warn(st, "the search found nothing")
	}
	return added, nil
}
