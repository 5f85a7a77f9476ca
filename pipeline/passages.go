package pipeline

import (
	"maps"
	"math"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"

	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
)

// A page longer than the evidence step's cap (sent.go) is cut to its
// passages most likely to refute the post, within the cap, when no
// embeddings model ranks them by meaning. A passage is likely to refute
// when it is about the post (BM25 against the post's words, the page's
// paragraphs being the collection) and when it is worded as a refutation:
// "false", "no evidence", "did not", "misleading". The weight of that
// wording and how much of the budget one paragraph may take were chosen on
// half of real PolitiFact tweet/fact-check pairs, when this rule chose
// what was sent of every page within 175 tokens, and are measured on the
// other half (TestPassagesOnRealPairs in passages_test.go); the weight
// was checked again at the thrifty cap on the tuning half of paraphrased
// posts over real news pages (TestEvidenceRecallOnParaphrases), where it
// neither gains nor loses. A page under the cap is sent whole and nothing
// here ranks it.

// passageRule is how page text is chosen for an evidence call.
type passageRule struct {
	// cue is how much each refutation cue word (up to maxCues of them)
	// raises a paragraph's score, as a share of its BM25 score; 0 ranks
	// by BM25 alone.
	cue float64
	// parts: no paragraph may take more than 1/parts of the budget; a
	// longer one is cut at a sentence end (still verbatim page text), so
	// one long paragraph full of the post's words cannot crowd out the
	// rest.
	parts int
}

// chosenPassages is the rule the split chose (see passages_test.go).
var chosenPassages = passageRule{cue: 0.5, parts: 4}

// maxCues caps the cue words counted in one paragraph.
const maxCues = 3

// refutationCues are words with which reporters and fact-checkers deny or
// qualify a claim. The list was written before measuring and is not tuned;
// only its weight is. It is English ("no" is a cue in Spanish and
// Portuguese too): in other languages paragraphs are ranked by BM25 alone,
// and the model judges the wording. The cues are kept because they beat
// dropping them out of sample: on the held-out half of the real pairs, at
// the chosen 175 tokens, the ruling is in the text sent for 0.794 of the
// pairs with them and 0.682 without (MUSE_TUNING=1 MUSE_PASSAGES_GRID=1 go
// test ./pipeline -run '^TestPassagesOnRealPairs$' -v).
var refutationCues = termSet(strings.Fields(`false falsely untrue wrong incorrect inaccurate misleading
mislead misleads fake fabricated baseless unfounded unsupported debunked hoax myth rumor rumour no not never
nothing none didn't doesn't isn't wasn't aren't don't can't won't evidence claim claims claimed actually
however but fact`))

// cueCount is how many distinct refutation cues p has, at most maxCues.
// Stop words are kept here: "not" and "no" are cues.
func cueCount(p string) int {
	seen := map[string]bool{}
	for _, f := range strings.FieldsFunc(strings.ToLower(p), func(r rune) bool {
		return !unicode.IsLetter(r) && r != '\'' && r != '’'
	}) {
		f = strings.ReplaceAll(f, "’", "'")
		if refutationCues[f] {
			seen[f] = true
		}
	}
	return min(len(seen), maxCues)
}

// bm25 scores each paragraph against q (the post's words, and its
// queries' for a page in another language: see paraQuery), the paragraphs
// of the page being the collection.
func bm25(q paraQuery, paras []string) []float64 {
	docs := make([][]string, len(paras))
	df := map[string]int{}
	var totalLen float64
	for i, p := range paras {
		docs[i] = words(p, q.lang)
		totalLen += float64(len(docs[i]))
		for t := range termSet(docs[i]) {
			if q.terms[t] {
				df[t]++
			}
		}
	}
	n := float64(len(paras))
	avg := math.Max(totalLen/math.Max(n, 1), 1)
	const k1, b = 1.2, 0.75
	scores := make([]float64, len(paras))
	for i, d := range docs {
		tf := map[string]float64{}
		for _, t := range d {
			if q.terms[t] {
				tf[t]++
			}
		}
		// Summed in one order: in map order, paragraphs with the same
		// words scored a few ulps apart, at random, and so swapped places
		// from one run to the next.
		for _, t := range slices.Sorted(maps.Keys(tf)) {
			f := tf[t]
			idf := math.Log(1 + (n-float64(df[t])+0.5)/(float64(df[t])+0.5))
			scores[i] += idf * f * (k1 + 1) / (f + k1*(1-b+b*float64(len(d))/avg))
		}
	}
	return scores
}

// byScore returns the indexes of scores, best first, ties in page order.
func byScore(scores []float64) []int {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	sort.SliceStable(idx, func(a, b int) bool { return scores[idx[a]] > scores[idx[b]] })
	return idx
}

// rankParagraphs orders paragraphs by BM25 against q, best first.
// Paragraphs sharing no word with q come last, in page order.
func rankParagraphs(q paraQuery, paras []string) []int {
	return byScore(bm25(q, paras))
}

// rank orders paragraphs by how likely they are to refute the post. A
// paragraph sharing no word with the post but worded as a refutation
// comes before one with neither.
func (r passageRule) rank(q paraQuery, paras []string) []int {
	scores := bm25(q, paras)
	if r.cue > 0 {
		for i, p := range paras {
			c := r.cue * float64(cueCount(p))
			scores[i] = scores[i]*(1+c) + c*1e-3
		}
	}
	return byScore(scores)
}

// pageTokens counts page text in the model's tokens (llm.CountTokens:
// OpenAI's o200k encoding), so that a page in Hindi, Thai or Arabic gets
// as much of the budget as one in English, where four bytes a token gave
// them a third to a half of its text. Counts are kept (up to
// maxTokenMemo bytes of text): passages are measured once as they are
// split and again as they are chosen.
func pageTokens(s string) int {
	tokenMemo.Lock()
	n, ok := tokenMemo.m[s]
	tokenMemo.Unlock()
	if ok {
		return n
	}
	n = llm.CountTokens(s)
	tokenMemo.Lock()
	if tokenMemo.bytes+len(s) > maxTokenMemo {
		tokenMemo.m, tokenMemo.bytes = map[string]int{}, 0
	}
	tokenMemo.m[s] = n
	tokenMemo.bytes += len(s)
	tokenMemo.Unlock()
	return n
}

const maxTokenMemo = 16 << 20

var tokenMemo = struct {
	sync.Mutex
	m     map[string]int
	bytes int
}{m: map[string]int{}}

// limit is the longest passage in tokens: 1/parts of the budget, and at
// least 50 (one sentence) unless the budget is smaller.
func (r passageRule) limit(budget int) int {
	limit := budget / max(r.parts, 1)
	if limit < 50 {
		limit = min(50, budget)
	}
	return limit
}

// splitPassages keeps each paragraph of at most limit tokens whole and
// cuts a longer one into runs of whole sentences of at most limit tokens;
// a sentence longer than that stays whole up to most tokens (the budget),
// and only past that is cut at a word. What is sent is always verbatim
// page text.
func splitPassages(paras []string, limit, most int) []string {
	var out []string
	for _, p := range paras {
		if pageTokens(p) <= limit {
			out = append(out, p)
			continue
		}
		// A run of sentences is the paragraph's own text from the first's
		// start to the last's end, with the spaces between them as the
		// page has them (none in Chinese or Japanese).
		run, start, pos, size := "", 0, 0, 0
		for _, s := range lang.Sentences(p) {
			i := pos + strings.Index(p[pos:], s)
			pos = i + len(s)
			n := pageTokens(s)
			switch {
			case run != "" && size+n <= limit:
				run, size = p[start:pos], size+n
				continue
			case run != "":
				out = append(out, run)
			}
			run, start, size = cutAtWord(s, max(limit, most)), i, n
		}
		if run != "" {
			out = append(out, run)
		}
	}
	return out
}

// cutAtWord shortens s to at most n tokens, at a sentence end when there
// is one in its second half, else before a space when there is one there.
func cutAtWord(s string, n int) string {
	if pageTokens(s) <= n {
		return s
	}
	whole, b := s, tokenBytes(s, n)
	s = cutAtSentence(s, b)
	if len(s) < b || lang.SentenceCut(whole, b) == b {
		return s
	}
	if i := strings.LastIndexByte(s, ' '); i > b/2 {
		return s[:i]
	}
	return s
}

// tokenBytes is the length in bytes of the longest start of s (ending
// between two characters) that is at most n tokens.
func tokenBytes(s string, n int) int {
	var offs []int
	for i := range s {
		offs = append(offs, i)
	}
	offs = append(offs, len(s))
	k := sort.Search(len(offs), func(k int) bool { return llm.CountTokens(s[:offs[k]]) > n })
	return offs[max(k-1, 0)]
}

// fillIndexes is fill's choice as indexes of ps, in page order.
func fillIndexes(ps []string, order []int, budget int) []int {
	chosen := map[int]bool{}
	used := 0
	for _, i := range order {
		if t := pageTokens(ps[i]); used+t <= budget {
			chosen[i] = true
			used += t
		}
	}
	return slices.Sorted(maps.Keys(chosen))
}
