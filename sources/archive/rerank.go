package archive

import (
	"context"
	"fmt"
	"math"
	"slices"
	"sort"
	"sync"
	"time"
)

// The first stage reads the postings of the query's rarest terms only,
// ranks the documents holding them by the idfs of the terms each holds
// (firstStage), and keeps the best few hundred documents. The
// second stage re-scores those with BM25F computed here, over the stems
// the index holds, rather than by FTS5, whose bm25() fixes k1 at 1.2 and
// knows no fields: a fact-check or news report about a claim repeats the
// claim's key words many times, while a post shares a few of them with many
// pages in passing. On top come proximity (adjacent query words found near
// each other), quoted phrases found as written, and pseudo-relevance
// feedback (RM3), and, when the post's time is known, a time prior: a
// claim and its fact-check circulate near the same time, and a fact-check
// dated after the post is seldom the one it repeats. Every weight is
// chosen by cross-validation on the fact-check benchmark
// (retrieval_test.go), never on the tweets it is measured on. Tried
// through the same cross-validation, before the time prior, and left out,
// since none beat 0.776 / 0.936 out of sample: a tuned BM25 length
// normalisation b (0.3–0.9) with title weights up to 12 (0.775 / 0.935),
// a bonus for the share of a page's title and lead that the post repeats
// (0.776 / 0.934), and judging capitals line by line rather than over the
// whole post + image text, so a meme's all-caps OCR does not turn off
// names in the post (0.777 / 0.935: recall fell). Tried with the time
// prior, each as a weight the same procedure tunes inside the training
// folds, and left out, since none beat the fine grid's 0.807 / 0.950 out of sample: the
// words of a post's @handles cut as CamelCase hashtags are (0.806 /
// 0.949), only those it mentions rather than opens a reply with (0.805 /
// 0.949: every fold took them, and the held-out figure fell); query
// weights sharpened by rarity, × (idf / a one-page term's idf)^0.5–2
// (never chosen); proximity pairs bridged over words no page holds, such
// as OCR garbage (0.803 / 0.949); a phrase bonus for two names in a row
// in the post (capitalised inside a sentence, as for params.entity) found
// side by side in a page (0.806 / 0.950: one fold of five took it); the
// time prior scaled by the pool's best score less its mean rather than
// by the best score (never chosen; forced on, 0.795 / 0.949). Nor is the
// pool the limit: re-scoring every fact-check with every query term read
// moves the default weights' in-sample figure by 0.002 at most. Nor did
// the tuning gain from asking a value to beat the current one by one or
// two tweets' worth of the objective (0.796 / 0.950 and 0.804 / 0.949);
// what did pay is a coarser grid of values, chosen among the procedures
// by the same folds (docs/benchmarks.md). The commit history gives the
// figures of earlier tries.

// ranker holds the ranking choices, so the retrieval test can measure the
// plain BM25 baseline and tune the rest with the same code that serves
// real searches.
type ranker struct {
	// wTitle and wText weight a term's idf in the first stage when the
	// document holds it in its title, or only elsewhere; wPublisher is
	// not read since the first stage stopped using FTS5's bm25().
	wTitle, wText, wPublisher float64
	// pool is how many first-stage hits the second stage re-scores; zero
	// turns the second stage off.
	pool int
	// postings caps the first stage's work: terms join it rarest first
	// while their documents add up to no more than this (the rarest
	// minTerms always join). Zero: every term.
	postings, minTerms int
	// p are the second stage's weights for a query whose posting time
	// is known (SearchOptions.Posted), tuned with the time prior in
	// place; undated are those for a query with none, tuned without it.
	p, undated params
}

// params are the second stage's tunable weights.
type params struct {
	// k1 is BM25's term-frequency saturation.
	k1 float64
	// fieldW weights title, lead (the first leadWords words of the text)
	// and the rest of the text in BM25F.
	fieldW [3]float64
	// qtfCap caps how often a repeated query word counts.
	qtfCap int
	// entity raises the weight of words that look like names (capitalised
	// inside a sentence) and of numbers, by this fraction.
	entity float64
	// near weights pairs of adjacent query words found within nearDist
	// words of each other in a document.
	near     float64
	nearDist int
	// phrase weights quoted phrases of the query found as written.
	phrase float64
	// RM3: the best fbDocs documents lend their fbTerms likeliest terms to
	// the query, mixed with it as origW·query + (1-origW)·feedback. fbDocs
	// zero: no feedback.
	fbDocs, fbTerms int
	origW           float64
	// A time prior, when the query's posting time is known
	// (SearchOptions.Posted): a page dated more than a day after the
	// post loses (future + later × ln(1 + days after/30)) × the pool's
	// best score, and one dated before it loses age × ln(1 + days
	// before/30) × the best score. Undated pages, and every page of a
	// query with no posting time, keep their score.
	future, later, age float64
}

// plainBM25 is the first stage alone, title and text alike: the baseline.
var plainBM25 = ranker{wTitle: 1, wText: 1, wPublisher: 1}

// defaultRanker is what Search uses. Its params are what the tuning
// procedure of TestRetrievalCrossValidated picks on all 1,013 benchmark
// tweets; docs/benchmarks.md reports that procedure's figure out of sample. RM3
// is there to be tried, and the procedure leaves it off (fbDocs 0): it
// did not help out of sample.
var defaultRanker = ranker{
	wTitle: 2, wText: 1, wPublisher: 0.5, pool: 200, postings: 5_000, minTerms: 3,
	p: params{k1: 25, fieldW: [3]float64{8, 2, 1}, qtfCap: 2, entity: 0, near: 2, nearDist: 10, phrase: 0,
		fbDocs: 0, fbTerms: 10, origW: 0.7, future: 0.4, later: 0.1, age: 0.08},
	undated: params{k1: 15, fieldW: [3]float64{8, 1.5, 1}, qtfCap: 1, entity: 0.25, near: 1, nearDist: 2, phrase: 2,
		fbDocs: 0, fbTerms: 10, origW: 0.7},
}

// firstTerms picks the terms the first stage reads: rarest first, within
// the postings budget.
func (r ranker) firstTerms(ts []string, df map[string]float64) []string {
	var out []string
	for _, t := range ts {
		if df[t] > 0 {
			out = append(out, t)
		}
	}
	if r.postings <= 0 {
		return out
	}
	sort.SliceStable(out, func(i, j int) bool { return df[out[i]] < df[out[j]] })
	var sum float64
	for i, t := range out {
		sum += df[t]
		if sum > float64(r.postings) && i >= r.minTerms {
			return out[:i]
		}
	}
	return out
}

// rank scores the pool; qids are the ids of q.distinct in the numbering
// the pool's stems are in (termids.go). more looks up the document
// frequencies of feedback terms, by id, that the query did not hold.
func (r ranker) rank(q *queryModel, pool []*candidate, qids []uint32, df map[string]float64, st collStats,
	more func([]uint32) ([]float64, error)) ([]float64, error) {
	docs := make([]*docTerms, len(pool))
	pub := make([]int64, len(pool))
	for i, c := range pool {
		docs[i] = c.doc
		pub[i] = unixOrZero(c.hit.Published)
	}
	// The views' arrays are reused from one search to the next: for a
	// long post they were a third of a search's allocations.
	b := viewPool.Get().(*viewBufs)
	defer viewPool.Put(b)
	p := r.p
	if q.posted == 0 {
		p = r.undated
	}
	return p.rank(q, qids, docs, pub, b.views(docs, qids), df, st, more)
}

// unixOrZero is t in Unix seconds, zero when t is unknown.
func unixOrZero(t time.Time) int64 {
	if t.IsZero() {
		return 0
	}
	return t.Unix()
}

// rank scores docs, whose publication times (Unix seconds, zero:
// unknown) are pub; vs are the documents seen through qids (q.distinct's
// ids).
func (p params) rank(q *queryModel, qids []uint32, docs []*docTerms, pub []int64, vs []*docView, df map[string]float64, st collStats,
	more func([]uint32) ([]float64, error)) ([]float64, error) {
	scores, err := p.rankText(q, qids, docs, vs, df, st, more)
	if err == nil {
		p.timePrior(scores, q.posted, pub)
	}
	return scores, err
}

// timePrior lowers the scores of pages dated after the post or long
// before it (params.future, params.age), in proportion to the best
// score, so the prior means the same whatever the query's length.
func (p params) timePrior(scores []float64, posted int64, pub []int64) {
	if posted == 0 || p.future == 0 && p.later == 0 && p.age == 0 {
		return
	}
	best := 0.0
	for _, s := range scores {
		best = max(best, s)
	}
	if best <= 0 {
		return
	}
	for i, t := range pub {
		if t == 0 {
			continue
		}
		// Dates are often known to the day only: a page dated the day
		// after the post may have been out before it.
		days := float64(posted-t) / 86400
		if days < -1 {
			scores[i] -= (p.future + p.later*math.Log1p(-days/30)) * best
		} else {
			scores[i] -= p.age * math.Log1p(max(days, 0)/30) * best
		}
	}
}

// rankText is the score of docs from their words alone.
func (p params) rankText(q *queryModel, qids []uint32, docs []*docTerms, vs []*docView, df map[string]float64, st collStats,
	more func([]uint32) ([]float64, error)) ([]float64, error) {
	idf := make([]float64, len(q.distinct))
	for k, t := range q.distinct {
		idf[k] = bm25IDF(st.n, df[t])
	}
	w := q.weights(p)
	scores := p.score(q, w, vs, idf, st)
	if p.fbDocs <= 0 {
		return scores, nil
	}
	fb := p.feedback(docs, scores)
	ts := slices.Clone(qids)
	inQuery := make(map[uint32]bool, len(qids))
	for _, id := range qids {
		inQuery[id] = true
	}
	var missing []uint32
	for t := range fb {
		if !inQuery[t] {
			missing = append(missing, t)
		}
	}
	slices.Sort(missing)
	if len(missing) > 0 {
		extra, err := more(missing)
		if err != nil {
			return scores, err
		}
		for i, t := range missing {
			ts = append(ts, t)
			idf = append(idf, bm25IDF(st.n, extra[i]))
		}
	}
	w = p.expand(w, ts, fb)
	return p.score(q, w, views(docs, ts), idf, st), nil
}

// views looks at each document through the terms ts (ids). The views'
// counts and positions are cut from a few shared arrays: one allocation
// each per document and term made a long post's rerank mostly allocation
// and GC.
func views(docs []*docTerms, ts []uint32) []*docView {
	return new(viewBufs).views(docs, ts)
}

// viewBufs are the arrays views cut from, kept for the next search
// (viewPool); what views returns is valid until they are used again.
type viewBufs struct {
	vs  []docView
	out []*docView
	sc  viewScratch
}

var viewPool = sync.Pool{New: func() any { return new(viewBufs) }}

// grow returns s with length n, zeroed, reusing its array when it is
// large enough.
func grow[T any](s []T, n int) []T {
	if cap(s) < n {
		return make([]T, n)
	}
	s = s[:n]
	clear(s)
	return s
}

func (b *viewBufs) views(docs []*docTerms, ts []uint32) []*docView {
	ti := newTermIndex(ts)
	b.vs = grow(b.vs, len(docs))
	b.out = grow(b.out, len(docs))
	sc := &b.sc
	sc.counts = grow(sc.counts, len(ts))
	sc.slot = grow(sc.slot, len(ts))
	sc.block, sc.ks, sc.tf, sc.pos, sc.bits = sc.block[:0], sc.ks[:0], sc.tf[:0], sc.pos[:0], sc.bits[:0]
	// A term listed twice sees what its first listing saw.
	sc.dups = sc.dups[:0]
	for k, t := range ts {
		if first, ok := ti.lookup(t); ok && first != k {
			sc.dups = append(sc.dups, [2]int32{int32(first), int32(k)})
		}
	}
	for i, d := range docs {
		d.view(ti, &b.vs[i], sc)
		b.out[i] = &b.vs[i]
	}
	return b.out
}

// viewScratch is what views reuse from one document to the next: the
// matches of the document being read, its counts per term of the list
// (zero between documents) and each held term's place in its view (slot),
// the list's repeated terms (first index, repeat), and the blocks the
// views' arrays are cut from.
type viewScratch struct {
	matches []termAt
	counts  [][3]int32
	slot    []int32
	held    []int32
	dups    [][2]int32
	block   []int32
	bits    []uint64
	ks      []int32
	tf      [][3]int32
	pos     [][]int32
}

// cut returns n elements cut from the end of *block, a new block (twice
// as large) when it is full: slices cut from the old one stay valid. The
// elements may hold what an earlier search left; the caller sets them.
func cut[T any](block *[]T, n int) []T {
	if n > cap(*block)-len(*block) {
		*block = make([]T, 0, max(n, 1024, 2*cap(*block)))
	}
	at := len(*block)
	*block = (*block)[:at+n]
	return (*block)[at : at+n : at+n]
}

// termAt is a match: the term's index and the word's position.
type termAt struct{ k, pos int32 }

// positions returns an empty slice with room for n positions, cut from
// the current block (a new one, twice as large, when it is full; slices
// of the old stay valid).
func (sc *viewScratch) positions(n int) []int32 {
	if n > cap(sc.block)-len(sc.block) {
		sc.block = make([]int32, 0, max(n, 8192, 2*cap(sc.block)))
	}
	at := len(sc.block)
	sc.block = sc.block[:at+n]
	return sc.block[at : at : at+n]
}

// termIndex finds a list's terms (ids) among a document's: an
// open-addressed table of each term's first index in the list, a few
// times larger than the list, so most of a document's ids are ruled out
// at the first probe. Id 0 (no term) is never found.
type termIndex struct {
	keys  []uint32 // 0: empty slot
	vals  []int32
	shift uint
}

func newTermIndex(ts []uint32) termIndex {
	size, shift := 64, uint(32-6)
	for size < 4*len(ts) {
		size, shift = size*2, shift-1
	}
	ti := termIndex{keys: make([]uint32, size), vals: make([]int32, size), shift: shift}
	for k, t := range ts {
		if t == 0 {
			continue
		}
		i := ti.slot(t)
		for ti.keys[i] != 0 && ti.keys[i] != t {
			i = (i + 1) & (len(ti.keys) - 1)
		}
		if ti.keys[i] == 0 { // else a repeat: the first index stays
			ti.keys[i], ti.vals[i] = t, int32(k)
		}
	}
	return ti
}

func (ti *termIndex) slot(t uint32) int { return int((t * 0x9e3779b1) >> ti.shift) }

// lookup returns t's first index, if t is one of the terms.
func (ti *termIndex) lookup(t uint32) (int, bool) {
	for i := ti.slot(t); ; i = (i + 1) & (len(ti.keys) - 1) {
		switch ti.keys[i] {
		case t:
			return int(ti.vals[i]), t != 0
		case 0:
			return 0, false
		}
	}
}

func bm25IDF(n, df float64) float64 { return math.Log(1 + (n-df+0.5)/(df+0.5)) }

// score is BM25F with the term weights w plus the proximity and phrase
// bonuses; w, idf and the views are indexed alike, the query's own terms
// first.
func (p params) score(q *queryModel, w []float64, docs []*docView, idf []float64, st collStats) []float64 {
	out := make([]float64, len(docs))
	for i, d := range docs {
		s := d.bm25f(w, idf, st, p)
		if p.near != 0 {
			s += p.near * d.nearScore(q.pairs, idf, p.nearDist)
		}
		if p.phrase != 0 {
			s += p.phrase * d.phraseScore(q.phrases, idf)
		}
		out[i] = s
	}
	return out
}

// feedback returns RM3's relevance model over the best fbDocs documents:
// P(w|R) ∝ Σ_d P(w|d)·P(d), with P(d) the documents' scores normalised,
// kept to the fbTerms likeliest terms and renormalised.
func (p params) feedback(docs []*docTerms, scores []float64) map[uint32]float64 {
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(a, b int) bool { return scores[order[a]] > scores[order[b]] })
	order = order[:min(len(order), p.fbDocs)]
	var total float64
	for _, i := range order {
		total += max(scores[i], 0)
	}
	if total == 0 {
		return nil
	}
	rel := map[uint32]float64{}
	for _, i := range order {
		d := docs[i]
		n := float64(d.nTitle + d.nText)
		if n == 0 {
			continue
		}
		pd := max(scores[i], 0) / total
		for _, f := range [][]byte{d.title, d.text} {
			eachID(f, func(_ int, t uint32) { rel[t] += pd / n })
		}
	}
	type tw struct {
		t uint32
		w float64
	}
	all := make([]tw, 0, len(rel))
	for t, w := range rel {
		all = append(all, tw{t, w})
	}
	sort.Slice(all, func(a, b int) bool { return all[a].w > all[b].w || all[a].w == all[b].w && all[a].t < all[b].t })
	all = all[:min(len(all), p.fbTerms)]
	var sum float64
	for _, x := range all {
		sum += x.w
	}
	out := make(map[uint32]float64, len(all))
	for _, x := range all {
		out[x.t] = x.w / sum
	}
	return out
}

// expand mixes the query's weights w (normalised to sum 1) with the
// feedback model over the terms ts (the query's own first), and scales back
// so the query's terms keep their magnitude when origW is 1.
func (p params) expand(w []float64, ts []uint32, fb map[uint32]float64) []float64 {
	var sum float64
	for _, x := range w {
		sum += x
	}
	out := make([]float64, len(ts))
	if sum == 0 {
		copy(out, w)
		return out
	}
	for k, t := range ts {
		if k < len(w) {
			out[k] = p.origW * w[k] / sum
		}
		out[k] += (1 - p.origW) * fb[t]
		out[k] *= sum
	}
	return out
}

// termCache keeps documents already split into stems, since the engine
// asks several queries in a row over mostly the same pages. An entry is
// valid for one version of a document (its updated_at and lengths), so a
// page updated by another process is split again.
type termCache struct {
	mu sync.Mutex
	m  map[int64]*docTerms
}

// A few KB each: a few checks' worth of pools.
const termCacheSize = 1024

type docVersion struct {
	updated           int64
	titleLen, textLen int
}

// loadDocs fills each candidate's doc from the cache or the database;
// the first stage has read each candidate's version, and on SQLite its
// stems too (dated), which a cached copy of the same version replaces:
// that one may have been indexed already (docTerms.index). On PostgreSQL
// voc numbers the stems, and a copy numbered by another is read again.
func (s *Store) loadDocs(ctx context.Context, cands []*candidate, voc *vocab) error {
	byID := make(map[int64]*candidate, len(cands))
	var missing []*candidate
	var fresh []*docTerms
	s.terms.mu.Lock()
	for _, c := range cands {
		byID[c.id] = c
		if d := s.terms.m[c.id]; d != nil && d.version == c.version && d.voc == voc {
			c.doc = d
		} else if c.doc != nil {
			fresh = append(fresh, c.doc)
		} else {
			missing = append(missing, c)
		}
	}
	s.terms.mu.Unlock()
	if len(missing) > 0 {
		got, err := s.readDocs(ctx, missing, byID, voc)
		if err != nil {
			return err
		}
		fresh = append(fresh, got...)
	}
	s.terms.mu.Lock()
	if s.terms.m == nil || len(s.terms.m)+len(fresh) > termCacheSize {
		s.terms.m = make(map[int64]*docTerms, termCacheSize)
	}
	for _, d := range fresh {
		s.terms.m[d.id] = d
	}
	s.terms.mu.Unlock()
	return nil
}

// readDocs reads the stems of the candidates missing them: on SQLite as
// ids, on PostgreSQL as text, numbered by voc.
func (s *Store) readDocs(ctx context.Context, missing []*candidate, byID map[int64]*candidate, voc *vocab) ([]*docTerms, error) {
	cols := "title_ids, text_ids"
	if s.postgres {
		cols = "title_terms, text_terms"
	}
	rows, err := s.queryIDs(ctx, `SELECT id, updated_at, title_len, text_len, `+cols+`
FROM `+s.rankTable()+` WHERE id IN (@ids)`, missing)
	if err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	defer rows.Close()
	var fresh []*docTerms
	for rows.Next() {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var id int64
		var v docVersion
		var title, text []byte
		if s.postgres {
			var ts, xs string
			if err := rows.Scan(&id, &v.updated, &v.titleLen, &v.textLen, &ts, &xs); err != nil {
				return nil, fmt.Errorf("load candidate texts: %w", err)
			}
			title, text = voc.pack(ts), voc.pack(xs)
		} else if err := rows.Scan(&id, &v.updated, &v.titleLen, &v.textLen, &title, &text); err != nil {
			return nil, fmt.Errorf("load candidate texts: %w", err)
		}
		if c := byID[id]; c != nil {
			c.doc = newDocTerms(id, v, title, text, voc)
			fresh = append(fresh, c.doc)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	return fresh, nil
}

// newDocTerms is a document's stems as read, version v, as packed ids
// (numbered by voc on PostgreSQL, nil on SQLite).
func newDocTerms(id int64, v docVersion, title, text []byte, voc *vocab) *docTerms {
	return &docTerms{id: id, version: v, title: title, text: text, nTitle: idCount(title), nText: idCount(text), voc: voc}
}

// docTerms is a document as the index holds it: its fields' stems as
// packed term ids (appendIDs), read in place rather than cut into a
// slice. Reading them again is cheap enough that a document seen again
// gets no map of where each stands (which a string stem's hashing once
// repaid).
type docTerms struct {
	id            int64
	version       docVersion
	title, text   []byte // each field's stems as packed ids
	nTitle, nText int    // stems in each
	voc           *vocab // on PostgreSQL: what numbered them
}

// docView is a document seen through a list of terms: the terms it holds
// (ks, their indices in the list, ascending) and for each its frequencies
// per field (title, lead, rest of text) and positions (title, then text).
// Only what it holds is kept: a long post's 400 terms over 200 documents
// were 80,000 mostly empty entries a search.
type docView struct {
	ks   []int32
	tf   [][3]int32
	pos  [][]int32
	len  [3]int
	held []uint64 // bit k: the document holds the list's term k
}

// positions returns where the document holds the list's term k (none
// when it does not).
func (d *docView) positions(k int) []int32 {
	// Most of a long post's terms are not in a given document: the bit
	// says so without a search.
	if k < 0 || k/64 >= len(d.held) || d.held[k/64]&(1<<(k%64)) == 0 {
		return nil
	}
	if i, ok := slices.BinarySearch(d.ks, int32(k)); ok {
		return d.pos[i]
	}
	return nil
}

// view fills v (its counts zero, sized for ts) by reading the document
// once, looking each id up in ti (ts's first index of each term).
func (d *docTerms) view(ti termIndex, v *docView, sc *viewScratch) {
	v.len = [3]int{d.nTitle, min(d.nText, leadWords), max(d.nText-leadWords, 0)}
	ms, held, counts := sc.matches[:0], sc.held[:0], sc.counts
	eachID(d.title, func(i int, st uint32) {
		if k, ok := ti.lookup(st); ok {
			ms = append(ms, termAt{int32(k), int32(i)})
			if counts[k] == ([3]int32{}) {
				held = append(held, int32(k))
			}
			counts[k][0]++
		}
	})
	off := int32(d.nTitle + titleGap)
	eachID(d.text, func(i int, st uint32) {
		if k, ok := ti.lookup(st); ok {
			ms = append(ms, termAt{int32(k), off + int32(i)})
			if counts[k] == ([3]int32{}) {
				held = append(held, int32(k))
			}
			if i < leadWords {
				counts[k][1]++
			} else {
				counts[k][2]++
			}
		}
	})
	for _, dp := range sc.dups {
		if counts[dp[0]] != ([3]int32{}) {
			held = append(held, dp[1])
		}
	}
	slices.Sort(held)
	v.ks = cut(&sc.ks, len(held))
	v.tf = cut(&sc.tf, len(held))
	v.pos = cut(&sc.pos, len(held))
	copy(v.ks, held)
	v.held = cut(&sc.bits, (len(counts)+63)/64)
	clear(v.held)
	for _, k := range held {
		v.held[k/64] |= 1 << (k % 64)
	}
	for i, k := range held {
		sc.slot[k] = int32(i)
		v.tf[i] = counts[k]
		// Each term's positions in one piece of the block, in order.
		v.pos[i] = sc.positions(int(counts[k][0] + counts[k][1] + counts[k][2]))
	}
	for _, m := range ms {
		i := sc.slot[m.k]
		v.pos[i] = append(v.pos[i], m.pos)
	}
	for _, dp := range sc.dups {
		if c := counts[dp[0]]; c != ([3]int32{}) {
			i := sc.slot[dp[1]]
			v.tf[i], v.pos[i] = c, v.pos[sc.slot[dp[0]]]
		}
	}
	for _, k := range held {
		counts[k] = [3]int32{}
	}
	sc.matches, sc.held = ms, held
}

// titleGap keeps the title's last word from seeming next to the text's
// first: text positions start this far after the title's end.
const titleGap = 1000

// bm25f is BM25F (Robertson et al. 2004): field term frequencies are
// length-normalised, weighted and summed before one saturation; each term
// counts with its weight.
func (d *docView) bm25f(w, idf []float64, st collStats, p params) float64 {
	const b = 0.75
	var norm [3]float64
	for f := range norm {
		norm[f] = 1
		if st.avgLen[f] > 0 {
			norm[f] = 1 - b + b*float64(d.len[f])/st.avgLen[f]
		}
	}
	var sum float64
	for i, k := range d.ks {
		if int(k) >= len(w) {
			break
		}
		qw := w[k]
		if qw == 0 {
			continue
		}
		var tf float64
		for f, c := range d.tf[i] {
			if c > 0 {
				tf += p.fieldW[f] * float64(c) / norm[f]
			}
		}
		if tf > 0 {
			sum += idf[k] * tf * (p.k1 + 1) / (tf + p.k1) * qw
		}
	}
	return sum
}

// nearScore sums, over the query's distinct pairs of adjacent words, the
// mean idf of the pair when the document has the two within dist words of
// each other.
func (d *docView) nearScore(pairs [][2]int, idf []float64, dist int) float64 {
	var sum float64
	for _, pr := range pairs {
		if near(d.positions(pr[0]), d.positions(pr[1]), int32(dist)) {
			sum += (idf[pr[0]] + idf[pr[1]]) / 2
		}
	}
	return sum
}

// near reports whether some position in a is within dist of one in b; both
// are ascending.
func near(a, b []int32, dist int32) bool {
	i, j := 0, 0
	for i < len(a) && j < len(b) {
		if d := a[i] - b[j]; d <= dist && d >= -dist {
			return true
		}
		if a[i] < b[j] {
			i++
		} else {
			j++
		}
	}
	return false
}

// phraseScore sums the idf of the quoted phrases (term indices) the
// document holds word for word, in order.
func (d *docView) phraseScore(phrases [][]int, idf []float64) float64 {
	var sum float64
	for _, ph := range phrases {
		if d.hasPhrase(ph) {
			for _, k := range ph {
				sum += idf[k]
			}
		}
	}
	return sum
}

func (d *docView) hasPhrase(ph []int) bool {
	if len(ph) == 0 {
		return false
	}
	at := d.positions(ph[0])
	for _, k := range ph[1:] {
		var next []int32
		for _, p := range d.positions(k) {
			if _, ok := slices.BinarySearch(at, p-1); ok {
				next = append(next, p)
			}
		}
		if len(next) == 0 {
			return false
		}
		at = next
	}
	return true
}
