package archive

import (
	"context"
	"fmt"
	"os"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// Meaning as well as words: the lexical ranking fused with a dense one
// (cosine of embeddings from an OpenAI-compatible /v1/embeddings server),
// by weighted reciprocal rank fusion whose constant and dense weight are
// chosen by the same folds as the lexical weights (cut by fact-check), and
// reported out of sample. The dense ranking covers every fact-check, so it
// can also find one the lexical first stage never reached.

// llmEmbedder is the model client as an archive Embedder.
type llmEmbedder struct{ c *llm.Client }

func (e llmEmbedder) Embed(ctx context.Context, texts []string) ([][]float32, error) {
	v, _, err := e.c.Embed(ctx, texts)
	return v, err
}

// fusion is one choice of weighted reciprocal rank fusion: a document's
// score is 1/(k+lexical rank) + dense/(k+dense rank); dense 0 is the
// lexical ranking alone.
type fusion struct{ k, dense float64 }

var fusionGrid = func() []fusion {
	var out []fusion
	for _, k := range []float64{5, 10, 20, 40, 60, 100} {
		for _, w := range []float64{0, 0.25, 0.5, 0.75, 1, 1.5, 2, 4, 8, 16} {
			out = append(out, fusion{k, w})
		}
	}
	return out
}()

// hybridSet is each query's lexical ranking (canonical keys, best first)
// and its similarity to every document.
type hybridSet struct {
	lex  [][]string
	keys []string    // the documents' canonical keys
	sim  [][]float64 // sim[q][d]
	rel  []map[string]bool
}

// rank fuses query i's rankings under f.
func (h *hybridSet) rank(i int, f fusion) []string {
	score := map[string]float64{}
	for r, k := range h.lex[i] {
		score[k] += 1 / (f.k + float64(r+1))
	}
	var dense []string
	if f.dense > 0 {
		order := make([]int, len(h.keys))
		for d := range order {
			order[d] = d
		}
		sort.SliceStable(order, func(a, b int) bool { return h.sim[i][order[a]] > h.sim[i][order[b]] })
		for r, d := range order[:min(len(order), 100)] {
			score[h.keys[d]] += f.dense / (f.k + float64(r+1))
			dense = append(dense, h.keys[d])
		}
	}
	all := append(slices.Clone(h.lex[i]), dense...)
	slices.Sort(all)
	all = slices.Compact(all)
	sort.SliceStable(all, func(a, b int) bool { return score[all[a]] > score[all[b]] })
	return all
}

func (h *hybridSet) eval(f fusion, idx []int) retrievalScores {
	var sc retrievalScores
	for _, i := range idx {
		sc.add(h.rank(i, f), h.rel[i])
	}
	n := float64(len(idx))
	return retrievalScores{sc.mrr / n, sc.recall10 / n}
}

// choose is the fusion with the best MRR on idx (the first of equals, so
// the lexical ranking alone unless the dense one helps).
func (h *hybridSet) choose(idx []int) fusion {
	best, bestSc := fusionGrid[0], -1.0
	for _, f := range fusionGrid {
		if sc := h.eval(f, idx).mrr; sc > bestSc+1e-9 {
			best, bestSc = f, sc
		}
	}
	return best
}

// crossValidate scores every query with the fusion chosen on the other
// folds.
func (h *hybridSet) crossValidate(folds []int) (retrievalScores, []fusion) {
	var total retrievalScores
	var chosen []fusion
	for k := range cvFolds {
		var train, test []int
		for i, f := range folds {
			if f == k {
				test = append(test, i)
			} else {
				train = append(train, i)
			}
		}
		if len(test) == 0 {
			continue
		}
		f := h.choose(train)
		chosen = append(chosen, f)
		sc := h.eval(f, test)
		total.mrr += sc.mrr * float64(len(test))
		total.recall10 += sc.recall10 * float64(len(test))
	}
	n := float64(len(folds))
	return retrievalScores{total.mrr / n, total.recall10 / n}, chosen
}

// newHybridSet embeds the queries and the documents (title and the start
// of the text) with e.
func newHybridSet(ctx context.Context, e Embedder, lex [][]string, queries []string, docs []Doc, rel []map[string]bool) (*hybridSet, error) {
	h := &hybridSet{lex: lex, rel: rel}
	texts := make([]string, 0, len(docs))
	for _, d := range docs {
		key, _ := sources.Canonical(d.URL)
		h.keys = append(h.keys, key)
		body := d.Text
		if r := []rune(body); len(r) > 1500 {
			body = string(r[:1500])
		}
		texts = append(texts, d.Title+"\n"+body)
	}
	dv, err := e.Embed(ctx, texts)
	if err != nil {
		return nil, fmt.Errorf("embed documents: %w", err)
	}
	qv, err := e.Embed(ctx, queries)
	if err != nil {
		return nil, fmt.Errorf("embed queries: %w", err)
	}
	if len(dv) != len(docs) || len(qv) != len(queries) {
		return nil, fmt.Errorf("%d and %d vectors for %d documents and %d queries", len(dv), len(qv), len(docs), len(queries))
	}
	for _, q := range qv {
		row := make([]float64, len(dv))
		for d, v := range dv {
			row[d] = Cosine(q, v)
		}
		h.sim = append(h.sim, row)
	}
	return h, nil
}

// TestHybridRetrievalCrossValidated measures the fusion of muse's lexical
// ranking with a real embeddings model on the benchmark tweets, out of
// sample. It needs an OpenAI-compatible server: MUSE_EMBEDDINGS_URL (its
// base URL, such as http://localhost:8080/v1), MUSE_EMBEDDINGS_MODEL, and
// MUSE_EMBEDDINGS_KEY when it wants one. Without them it is skipped, and
// the semantic figure is unmeasured.
func TestHybridRetrievalCrossValidated(t *testing.T) {
	testkit.Tuning(t)
	base, model := os.Getenv("MUSE_EMBEDDINGS_URL"), os.Getenv("MUSE_EMBEDDINGS_MODEL")
	if base == "" || model == "" {
		t.Skip("no embeddings server (MUSE_EMBEDDINGS_URL, MUSE_EMBEDDINGS_MODEL): the fusion with a dense ranking is unmeasured")
	}
	c, err := llm.New(llm.Config{BaseURL: base, APIKey: os.Getenv("MUSE_EMBEDDINGS_KEY"), Model: model, EmbeddingModel: model,
		Timeout: 2 * time.Minute})
	if err != nil {
		t.Fatal(err)
	}
	fc := loadFactChecks(t)
	s := indexFactChecks(t, fc.docs)
	set := cvPrepare(t, s, fc, defaultRanker)
	lex := make([][]string, len(set.qs))
	for i := range set.qs {
		lex[i] = set.lexicalRanking(t, defaultRanker.p, i)
	}
	h, err := newHybridSet(context.Background(), llmEmbedder{c}, lex, fc.queries, fc.docs, fc.relevant)
	if err != nil {
		t.Fatal(err)
	}
	folds := foldOf(fc, factCheckGroups(fc))
	all := allIdx(len(fc.queries))
	oos, chosen := h.crossValidate(folds)
	t.Logf("lexical (defaultRanker), all tweets:                         %v", h.eval(fusion{60, 0}, all))
	t.Logf("dense alone (%s), all tweets:                   %v", model, h.eval(fusion{60, 1e6}, all))
	t.Logf("RRF k=60, equal weights (archive.Fuse), all tweets:          %v", h.eval(fusion{60, 1}, all))
	t.Logf("fusion chosen by %d-fold cross-validation, out of sample:     %v", cvFolds, oos)
	for k, f := range chosen {
		t.Logf("  fold %d: k %g, dense weight %g", k, f.k, f.dense)
	}
}

// lexicalRanking is query i's ranking under p: the pool reordered, then
// the first stage's other hits.
func (set *cvSet) lexicalRanking(tb testing.TB, p params, i int) []string {
	cq := set.qs[i]
	scores, err := p.rank(cq.q, cq.qids, cq.docs, cq.pub, cq.vs, cq.df, set.st, set.more)
	if err != nil {
		tb.Fatal(err)
	}
	order := make([]int, len(cq.pool))
	for j := range order {
		order[j] = j
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	out := make([]string, 0, len(cq.pool)+len(cq.rest))
	for _, k := range order {
		out = append(out, cq.pool[k])
	}
	return append(out, cq.rest...)
}

// TestHybridCrossValidationOverLoopback runs the measurement's code over a
// loopback /v1/embeddings server (the model client, batching, the
// fusion's choice by folds) on posts that say what a fact-check says in
// other words. Where the lexical ranking finds the fact-check last or not
// at all and the embedder knows the synonyms, the fusion chosen out of
// sample puts it first; where the lexical ranking already puts it first
// and the embedder is misleading (it maps each post to another topic),
// the folds keep the lexical ranking alone.
func TestHybridCrossValidationOverLoopback(t *testing.T) {
	topics := []struct{ check, post string }{
		{"Vaccines do not cause autism", "jabs make kids autistic"},
		{"The soda tax did not raise grocery prices", "sugary drinks levy made food dearer"},
		{"Crime did not rise after the bail reform", "violence soared once cash bail ended"},
		{"The city did not ban bicycles", "council outlawed bikes on every street"},
		{"Wind turbines do not cause cancer", "windmills give people tumours"},
	}
	key := func(i int) string {
		k, _ := sources.Canonical(fmt.Sprintf("https://checks.example/%d", i))
		return k
	}
	var docs []Doc
	var queries []string
	var rel []map[string]bool
	var folds, topicOf []int
	for i, tp := range topics {
		docs = append(docs, Doc{URL: fmt.Sprintf("https://checks.example/%d", i), Title: tp.check, Text: tp.check + "."})
		for j := range cvFolds {
			queries = append(queries, fmt.Sprintf("%s (%d)", tp.post, j))
			rel = append(rel, map[string]bool{key(i): true})
			folds = append(folds, j)
			topicOf = append(topicOf, i)
		}
	}
	// lexical: the fact-check last, or missed (hard), or first (easy).
	lexical := func(hard bool) [][]string {
		var out [][]string
		for q, i := range topicOf {
			var ranked []string
			if !hard {
				ranked = append(ranked, key(i))
			}
			for k := range topics {
				if k != i {
					ranked = append(ranked, key(k))
				}
			}
			if hard && q%2 == 0 {
				ranked = append(ranked, key(i))
			}
			out = append(out, ranked)
		}
		return out
	}
	synonyms := [][]string{{"vaccines", "jabs"}, {"autism", "autistic"}, {"soda", "sugary", "drinks"}, {"tax", "levy"},
		{"crime", "violence"}, {"bail"}, {"bicycles", "bikes"}, {"ban", "outlawed"}, {"wind", "windmills", "turbines"}, {"cancer", "tumours"}}
	concept := func(shift int) func(texts []string) ([][]float32, error) {
		return func(texts []string) ([][]float32, error) {
			out := make([][]float32, len(texts))
			for i, t := range texts {
				v := make([]float32, len(synonyms)+1)
				v[len(synonyms)] = 0.01
				for _, w := range strings.Fields(strings.ToLower(t)) {
					for k, syn := range synonyms {
						if slices.Contains(syn, strings.Trim(w, ".,()")) {
							v[k]++
						}
					}
				}
				if shift > 0 && strings.HasSuffix(t, ")") { // a post: moved to the next topic's concepts
					w := make([]float32, len(v))
					for k := range synonyms {
						w[(k+2*shift)%len(synonyms)] = v[k]
					}
					w[len(synonyms)] = v[len(synonyms)]
					v = w
				}
				out[i] = v
			}
			return out, nil
		}
	}
	ctx := context.Background()
	for _, tc := range []struct {
		name      string
		hard      bool
		shift     int
		wantDense bool
	}{{"synonyms", true, 0, true}, {"misleading", false, 1, false}} {
		srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "", nil }, llmtest.WithEmbedder(concept(tc.shift)))
		c, err := llm.New(llm.Config{BaseURL: srv.BaseURL, APIKey: "sk-test", Model: "m", EmbeddingModel: "test-embed", Timeout: 5 * time.Second})
		if err != nil {
			t.Fatal(err)
		}
		h, err := newHybridSet(ctx, llmEmbedder{c}, lexical(tc.hard), queries, docs, rel)
		if err != nil {
			t.Fatal(err)
		}
		calls := srv.Calls()
		if len(calls) != 2 || calls[0].Path != "/v1/embeddings" || len(calls[0].Embeddings) != len(docs) || len(calls[1].Embeddings) != len(queries) {
			t.Fatalf("%s: embeddings requests %+v", tc.name, calls)
		}
		lex := h.eval(fusion{60, 0}, allIdx(len(queries)))
		oos, chosen := h.crossValidate(folds)
		for _, f := range chosen {
			if (f.dense > 0) != tc.wantDense {
				t.Errorf("%s: a fold chose %+v", tc.name, f)
			}
		}
		if oos.mrr != 1 || oos.recall10 != 1 || tc.hard && lex.mrr >= 0.2 {
			t.Errorf("%s: out of sample %v, lexical %v; want the fact-check first", tc.name, oos, lex)
		}
	}
}
