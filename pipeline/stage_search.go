package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/search"
)

// reverseImageSearch asks each image searcher (Google Lens through SerpAPI)
// about every post image given by http(s) URL, and the poster frame the
// platform serves for the post's video: the service downloads the image
// itself, so files on this machine (keyframes cut from the video among
// them) cannot be searched this way. The hits join the text search's and
// go through the same ratings.
func (r *run) reverseImageSearch(ctx context.Context) ([]search.Hit, []search.ProviderError) {
	if len(r.e.deps.ImageSearchers) == 0 {
		return nil, nil
	}
	var urls []string
	r.mu.Lock()
	for _, im := range r.c.Images {
		if u, err := sources.ParseHTTP(im.Source); err == nil && im.PHash != "" { // loaded: an image, and reachable
			urls = append(urls, u.String())
		}
	}
	if v := r.c.Video; v != nil && v.Poster != "" {
		if u, err := sources.ParseHTTP(v.Poster); err == nil && !slices.Contains(urls, u.String()) {
			urls = append(urls, u.String())
		}
	}
	r.mu.Unlock()
	if len(urls) == 0 {
		return nil, nil
	}
	return search.RunImages(ctx, r.e.deps.ImageSearchers, urls, r.c.Cutoff)
}

// search runs the first search pass.
func (r *run) search(ctx context.Context) (int, error) {
	r.c.Hits, r.c.Searches = nil, nil
	r.matchFactChecks(ctx)
	_, err := r.searchPass(ctx, StageSearch, 1, r.e.opts.FirstPassHits)
	r.factCheckHits()
	return len(r.c.Hits), err
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
	// The queries carry no cutoff, so search.Run drops nothing: each
	// searcher still asks its provider for pages before the cutoff, and a
	// hit the provider dates after it becomes an excluded_cutoff source.
	qs := make([]search.Query, len(texts))
	for i, t := range texts {
		qs[i] = search.Query{Text: t, Count: count, Language: queryLanguage(c, t)}
	}
	if sites := r.credibleSites(); len(sites) > 0 {
		for _, t := range texts {
			qs = append(qs, search.Query{Text: t, Count: count, Sites: sites, Language: queryLanguage(c, t)})
		}
	}
	searchers := make([]search.Searcher, len(r.e.deps.Searchers))
	for i, s := range r.e.deps.Searchers {
		searchers[i] = datedSearcher{Searcher: s, before: c.Cutoff, posted: c.Post.PostedAt}
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
	found, failures := search.Run(ctx, searchers, qs)
	c.Searches = slices.DeleteFunc(c.Searches, func(s SearchRecord) bool { return s.Pass == pass })
	r.recordSearches(pass, texts, searchers, found, failures)
	if pass == 1 && ctx.Err() == nil && !allFailed(failures, len(qs), searchers) && r.fewCredible(found) {
		// Too few credible pages on the first result page: ask for the
		// second (providers that cannot page answer nothing).
		next := make([]search.Query, len(texts))
		for i, t := range texts {
			next[i] = search.Query{Text: t, Count: count, Page: 2, Language: queryLanguage(c, t)}
		}
		more, moreFailures := search.Run(ctx, searchers, next)
		found = append(found, more...)
		for _, f := range moreFailures {
			r.warn(st, "%v (second page)", f)
		}
		r.emit(Event{Kind: EventProgress, Stage: st,
			Message: fmt.Sprintf("fewer than %d hits from credible publishers: asked for a second page of results", r.e.opts.MinCredibleHits)})
	}
	<-imgDone
	r.recordSearches(pass, nil, nil, imgHits, imgFailures)
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
	seen := map[string]bool{}
	for _, h := range c.Hits {
		seen[sources.Key(h.URL)] = true
	}
	var added []Hit
	for _, h := range found {
		key := sources.Key(h.URL)
		if seen[key] {
			continue
		}
		seen[key] = true
		hit := Hit{URL: h.URL, Title: h.Title, Snippet: h.Snippet, Published: h.Published, Provider: h.Provider,
			Query: h.Query, Rank: h.Rank, Pass: pass, ClaimReview: h.ClaimReview, Restricted: h.Restricted}
		c.Hits = append(c.Hits, hit)
		added = append(added, hit)
		r.item(st, hit, "hit found")
	}
	// What the search did, from its records: a stage whose searches all
	// failed did not do its work.
	a := c.Account()
	switch {
	case pass == 1 && a.searchFailed():
		r.partial = "every web search provider failed: " + strings.Join(a.failedProviders(), "; ")
		if len(c.Hits) > 0 {
			r.partial += "; only the local archive answered"
		}
		r.warn(st, "%s", r.partial)
	case len(found) == 0 && (pass > 1 || len(c.FactChecks) == 0): // a matched fact-check is a hit already
		r.warn(st, "%s", a.searchSentence())
	}
	return added, nil
}

// recordSearches keeps each provider's answer to each query of a pass
// (Check.Searches): the hits it gave, or its error, adding to what the
// pass recorded so far. The reverse image searches are recorded the same
// way.
func (r *run) recordSearches(pass int, texts []string, searchers []search.Searcher, found []search.Hit, failures []search.ProviderError) {
	c := r.c
	r.mu.Lock()
	defer r.mu.Unlock()
	type key struct{ provider, query string }
	index := map[key]int{}
	add := func(k key) int {
		i, ok := index[k]
		if !ok {
			i = len(c.Searches)
			index[k] = i
			c.Searches = append(c.Searches, SearchRecord{Pass: pass, Query: k.query, Provider: k.provider})
		}
		return i
	}
	for _, t := range texts {
		for _, s := range searchers {
			add(key{s.Name(), t})
		}
	}
	for _, h := range found {
		for _, o := range h.Origins() {
			c.Searches[add(key{o.Provider, o.Query})].Hits++
		}
	}
	for _, f := range failures {
		if i := add(key{f.Provider, f.Query}); c.Searches[i].Error == "" && f.Err != nil {
			c.Searches[i].Error = f.Err.Error()
		}
	}
}

// searchWider runs the paper's second, wider search pass (top
// SecondPassHits per query) when no page refutes the post, and reads the new
// hits as sources. It reports whether any new page was read; it runs once
// per check.
func (r *run) searchWider(ctx context.Context) (bool, error) {
	for _, h := range r.c.Hits {
		if h.Pass == 2 {
			return false, nil // the wider pass was already run for this check
		}
	}
	r.emit(Event{Kind: EventProgress, Stage: StageEvidence,
		Message: fmt.Sprintf("no page refutes the post: searching wider (top %d per query)", r.e.opts.SecondPassHits)})
	hits, err := r.searchPass(ctx, StageEvidence, 2, r.e.opts.SecondPassHits)
	if err != nil || len(hits) == 0 {
		return false, err
	}
	return true, r.readHits(ctx, StageEvidence, hits, nil)
}

// datedSearcher asks its searcher only for pages before the cutoff, and
// tells it when the post was posted: the local archive ranks by it (its
// weights are tuned with the post's time, docs/benchmarks.md), dropping
// nothing, so a fact-check published after the post is still found.
type datedSearcher struct {
	search.Searcher
	before, posted time.Time
}

func (d datedSearcher) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	q.Before, q.Posted = d.before, d.posted
	return d.Searcher.Search(ctx, q)
}

// credibleSites lists the credible publishers' domains the queries are
// also restricted to, when the rater can name them.
func (r *run) credibleSites() []string {
	if r.e.opts.OpenSearchOnly {
		return nil
	}
	if cs, ok := r.e.deps.Rater.(CredibleSites); ok {
		return cs.CredibleDomains()
	}
	return nil
}

// fewCredible reports whether the open queries' hits hold fewer than
// MinCredibleHits pages from high- or medium-tier publishers.
func (r *run) fewCredible(found []search.Hit) bool {
	if r.e.opts.MinCredibleHits <= 0 {
		return false
	}
	n := 0
	for _, h := range found {
		if t := r.e.deps.Rater.Rate(h.URL).Tier; t == TierHigh || t == TierMedium {
			n++
		}
	}
	return n < r.e.opts.MinCredibleHits
}

// allFailed reports whether every web search provider failed every one of
// n queries.
func allFailed(failures []search.ProviderError, n int, searchers []search.Searcher) bool {
	web, failed := 0, 0
	for _, s := range searchers {
		if s.Name() != "archive" {
			web++
		}
	}
	for _, f := range failures {
		if f.Provider != "archive" {
			failed++
		}
	}
	return web > 0 && failed >= n*web
}

// queryLanguage is the language a query asks its engines for: the post's,
// when the query is known (Query.Language) or detected to be written in
// it; none for a query in another language (the English query of an
// international claim) or one too short to tell, so a wrong guess never
// narrows a search.
func queryLanguage(c *Check, query string) string {
	post := c.Post.Language
	if i := slices.IndexFunc(c.Queries, func(q Query) bool { return strings.TrimSpace(q.Text) == query }); i >= 0 && c.Queries[i].Language != "" {
		if c.Queries[i].Language == post {
			return post
		}
		return ""
	}
	if post == "" || lang.Detect(query).Code != post {
		return ""
	}
	return post
}
