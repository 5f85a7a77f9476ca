package archive

import (
	"context"
	"errors"
	"fmt"
	"math"
	"sort"

	"github.com/musecheck/muse/sources"
)

// Hybrid ranking: when an embeddings model is configured, the lexical
// answer is also ranked by embedding similarity to the query, and the two
// rankings are merged by reciprocal rank fusion, which needs no score
// calibration between them.

// Embedder turns texts into vectors (an embeddings model). Vectors of one
// call are comparable by cosine.
type Embedder interface {
	Embed(ctx context.Context, texts []string) ([][]float32, error)
}

// rrfK is reciprocal rank fusion's constant (Cormack, Clarke and Büttcher,
// SIGIR 2009): a hit's fused score is Σ 1/(rrfK + rank) over the rankings
// that hold it.
const rrfK = 60

// Fuse merges rankings of hits (best first) by reciprocal rank fusion; a
// page is known by its canonical URL and keeps the fields of the first
// ranking that holds it. dense may be nil (no embeddings model): the
// lexical ranking comes back in its own order. Score is the fused score.
func Fuse(lexical, dense []Hit) []Hit {
	if dense == nil {
		return lexical
	}
	type fused struct {
		hit   Hit
		score float64
		first int // order of first appearance, to break ties
	}
	byKey := map[string]*fused{}
	var all []*fused
	for _, ranking := range [][]Hit{lexical, dense} {
		for rank, h := range ranking {
			key, err := sources.Canonical(h.URL)
			if err != nil {
				key = h.URL
			}
			f := byKey[key]
			if f == nil {
				f = &fused{hit: h, first: len(all)}
				byKey[key] = f
				all = append(all, f)
			}
			f.score += 1 / float64(rrfK+rank+1)
		}
	}
	sort.SliceStable(all, func(i, j int) bool { return all[i].score > all[j].score })
	out := make([]Hit, len(all))
	for i, f := range all {
		out[i] = f.hit
		out[i].Score = f.score
	}
	return out
}

// DenseRank orders hits by the cosine similarity of their title and
// snippet to the query, as e embeds them.
func DenseRank(ctx context.Context, e Embedder, query string, hits []Hit) ([]Hit, error) {
	if len(hits) == 0 {
		return nil, nil
	}
	texts := make([]string, 0, len(hits)+1)
	texts = append(texts, query)
	for _, h := range hits {
		texts = append(texts, h.Title+"\n"+h.Snippet)
	}
	vecs, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed %d archive hits: %w", len(hits), err)
	}
	if len(vecs) != len(texts) {
		return nil, fmt.Errorf("embed %d archive hits: the model returned %d vectors for %d texts", len(hits), len(vecs), len(texts))
	}
	sim := make([]float64, len(hits))
	for i := range hits {
		sim[i] = Cosine(vecs[0], vecs[i+1])
	}
	order := make([]int, len(hits))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return sim[order[a]] > sim[order[b]] })
	out := make([]Hit, len(hits))
	for i, k := range order {
		out[i] = hits[k]
	}
	return out, nil
}

// Cosine is the cosine similarity of two vectors (0 when either is empty
// or their lengths differ).
func Cosine(a, b []float32) float64 {
	if len(a) == 0 || len(a) != len(b) {
		return 0
	}
	var dot, na, nb float64
	for i := range a {
		dot += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	if na == 0 || nb == 0 {
		return 0
	}
	return dot / math.Sqrt(na*nb)
}

// HybridSearch is Search, with the lexical answer's pool (defaultRanker's
// pool size) also ranked by e and the two fused (Fuse). With e nil it is
// Search. When the embedding fails, the lexical hits come back with the
// error.
func (s *Store) HybridSearch(ctx context.Context, query string, o SearchOptions, e Embedder) ([]Hit, error) {
	if e == nil {
		return s.Search(ctx, query, o)
	}
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	wide := o
	wide.Limit = max(limit, defaultRanker.pool)
	lex, err := s.Search(ctx, query, wide)
	if err != nil && !errors.Is(err, ErrCut) {
		return nil, err
	}
	dense, derr := DenseRank(ctx, e, query, lex)
	hits := lex
	if derr == nil {
		hits = Fuse(lex, dense)
	}
	if len(hits) > limit {
		hits = hits[:limit]
	}
	return hits, errors.Join(err, derr)
}
