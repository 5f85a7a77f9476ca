package pipeline

import (
	"context"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/musecheck/muse/sources/archive"
)

// stopWords are English function words and social-media filler that say
// nothing about what a post claims.
var stopWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`a about above after again against all also am an and any are aren as at be
because been before being below between both but by can cannot could did do does doing down during each few for
from further had has have having he her here hers herself him himself his how i if in into is it its itself just
let me more most my myself no nor not now of off on once only or other ought our ours ourselves out over own same
she should so some such than that the their theirs them themselves then there these they this those through to
too under until up very was we were what when where which while who whom why will with would you your yours
yourself yourselves yes via rt amp http https www com says said say one get got like dont im its thats
just really people know think many much even still ever every`) {
		m[w] = true
	}
	return m
}()

// words splits text into lower-case word tokens (letters and digits),
// dropping URLs, @handles and stop words, with a light plural fold so
// "vaccines" meets "vaccine".
func words(text string) []string {
	var out []string
	for _, f := range strings.Fields(text) {
		lf := strings.ToLower(f)
		if strings.HasPrefix(lf, "http://") || strings.HasPrefix(lf, "https://") || strings.HasPrefix(lf, "www.") ||
			strings.HasPrefix(f, "@") {
			continue
		}
		for _, w := range strings.FieldsFunc(lf, func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) }) {
			if w = fold(w); w != "" && !stopWords[w] {
				out = append(out, w)
			}
		}
	}
	return out
}

func fold(w string) string {
	if len([]rune(w)) < 2 && !isDigits(w) {
		return ""
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && len(w) > 3:
		return w[:len(w)-1]
	}
	return w
}

func isDigits(s string) bool {
	for _, r := range s {
		if !unicode.IsDigit(r) {
			return false
		}
	}
	return s != ""
}

func termSet(ws []string) map[string]bool {
	m := make(map[string]bool, len(ws))
	for _, w := range ws {
		m[w] = true
	}
	return m
}

// LexicalRelevance is the share of the post's distinct content words (stop
// words, URLs and handles removed, plurals folded) that occur in the page's
// title or text, with numbers and names weighing double, since they carry a
// claim's specifics. 0 means nothing in common, 1 that every word of the
// post is on the page. Real news pages do not repeat a noisy post's words,
// so the engine gates on Relevance, which also weighs the queries.
func LexicalRelevance(post, title, text string) float64 {
	return shareOf(weightedTerms(post), termSet(words(title+" "+text)))
}

// Relevance is how much a page has to do with a post: the larger of the
// post's LexicalRelevance and the best share of one query's words on the
// page. The queries bridge a noisy post ("While we're distracted by
// pronouns, UFOs & Woke Jesus…") to the wording of the news that reports
// its subject, so a page about the subject scores high on either. Pages
// under Options.LexicalThreshold share (nearly) nothing with the post and
// its queries and are kept out; every other page reaches the evidence
// model, which decides whether it refutes. TestRelevanceOnRealPairs
// chooses the threshold on half of the real pairs and measures it on the
// other half (README, "Benchmarks and figures").
func Relevance(post string, queries []string, title, text string) float64 {
	page := termSet(words(title + " " + text))
	best := shareOf(weightedTerms(post), page)
	for _, q := range queries {
		best = max(best, shareOf(weightedTerms(q), page))
	}
	return best
}

// shareOf is the weighted share of terms found in page.
func shareOf(terms map[string]float64, page map[string]bool) float64 {
	if len(terms) == 0 {
		return 0
	}
	var have, total float64
	for t, w := range terms {
		total += w
		if page[t] {
			have += w
		}
	}
	return have / total
}

// weightedTerms gives each distinct content word of a post its weight:
// 2 for numbers and capitalised words (names, places), 1 otherwise.
func weightedTerms(post string) map[string]float64 {
	out := map[string]float64{}
	for _, f := range strings.Fields(post) {
		ws := words(f)
		for _, w := range ws {
			weight := 1.0
			if r := []rune(strings.TrimLeft(f, "\"'“‘(#")); len(r) > 0 && (unicode.IsUpper(r[0]) || unicode.IsDigit(r[0])) {
				weight = 2
			}
			if weight > out[w] {
				out[w] = weight
			}
		}
	}
	return out
}

// cutAtSentence shortens s to at most n bytes, ending at the last sentence
// end when there is one (so what is sent is still verbatim page text).
func cutAtSentence(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n-- // never split a character
	}
	cut := s[:n]
	if i := strings.LastIndexAny(cut, ".!?"); i > n/2 {
		return cut[:i+1]
	}
	return cut
}

// relevance scores sources from index `from` on and keeps out only the
// pages that share (nearly) nothing with the post and its queries. With an
// Embedder the score is the embedding similarity, and a page is kept out
// only when it is under both the embedding and the lexical threshold: the
// embeddings may order pages, never be stricter than the lexical gate.
func (r *run) relevance(ctx context.Context, st Stage, from int) {
	c := r.c
	post := postForSearch(c)
	queries := c.EnabledQueries()
	var idx []int
	for i := from; i < len(c.Sources); i++ {
		if isEligible(c.Sources[i]) {
			idx = append(idx, i)
		}
	}
	if len(idx) == 0 {
		return
	}
	lex := make(map[int]float64, len(idx))
	for _, i := range idx {
		s := c.Sources[i]
		lex[i] = Relevance(post, queries, s.Title, strings.Join(s.Paragraphs, "\n"))
	}
	if vecs := r.embedSources(ctx, st, post, idx); vecs != nil {
		for k, i := range idx {
			s := &c.Sources[i]
			s.Relevance = archive.Cosine(vecs[0], vecs[k+1])
			if s.Relevance < r.e.opts.EmbeddingThreshold && lex[i] < r.e.opts.LexicalThreshold && !s.Boosted {
				s.Status = StatusIrrelevant
				s.Reason = fmt.Sprintf("similarity to the post %.2f, below %.2f, and shares %.0f%% of the post's and its queries' key words, below %.0f%%",
					s.Relevance, r.e.opts.EmbeddingThreshold, lex[i]*100, r.e.opts.LexicalThreshold*100)
			}
		}
		return
	}
	for _, i := range idx {
		s := &c.Sources[i]
		s.Relevance = lex[i]
		if s.Relevance < r.e.opts.LexicalThreshold && !s.Boosted {
			s.Status = StatusIrrelevant
			s.Reason = fmt.Sprintf("shares %.0f%% of the key words of the post and of its queries, below %.0f%%", s.Relevance*100, r.e.opts.LexicalThreshold*100)
		}
	}
}

// embedSources embeds the post and the sources' titles and openings; nil
// when there is no Embedder or the call failed (with a warning).
func (r *run) embedSources(ctx context.Context, st Stage, post string, idx []int) [][]float32 {
	if r.e.deps.Embedder == nil || r.e.opts.NoLLM {
		return nil
	}
	texts := []string{post}
	for _, i := range idx {
		s := r.c.Sources[i]
		texts = append(texts, cutAtSentence(s.Title+"\n"+strings.Join(s.Paragraphs, "\n"), 2000))
	}
	vecs, u, err := r.e.deps.Embedder.Embed(ctx, texts)
	r.addUsage(st, u)
	if err == nil && len(vecs) == len(texts) {
		return vecs
	}
	if ctx.Err() == nil {
		if err == nil {
			err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
		}
		r.warn(st, "embeddings failed (%v); judging relevance by shared words", err)
	}
	return nil
}
