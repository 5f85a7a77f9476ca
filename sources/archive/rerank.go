package archive

import (
	"context"
	"fmt"
	"math"
	"strings"
	"sync"
)

// The second stage re-scores the first stage's best documents with BM25F
// computed here rather than by FTS5, whose bm25() fixes k1 at 1.2. A
// fact-check or news report about a claim repeats the claim's key words
// many times, while a post shares a few of them with many pages in passing;
// a large k1 lets that repetition keep counting instead of saturating after
// two or three occurrences. Title and lead (where news and fact-checks
// state their subject) weigh double. On top, a post that repeats a claim
// repeats its wording: adjacent post words found near each other in a page
// add their idf.

type docStats struct {
	n      float64
	avgLen [3]float64 // title, lead, rest of text
}

// rerank replaces the pool's first-stage scores with second-stage ones.
func (s *Store) rerank(ctx context.Context, query string, cands []*candidate, r ranker) error {
	if len(cands) > r.pool {
		cands = cands[:r.pool]
	}
	words := tokens(cleanPostText(query))
	st, err := s.stats(ctx, r.leadWords)
	if err != nil {
		return err
	}
	idf, err := s.idf(ctx, words, st.n)
	if err != nil {
		return err
	}
	stems := make([]string, len(words))
	qtf := map[string]int{}
	stemIDF := map[string]float64{}
	for i, w := range words {
		stems[i] = stem(w)
		qtf[stems[i]]++
		stemIDF[stems[i]] = max(stemIDF[stems[i]], idf[w])
	}
	docs, err := s.docTerms(ctx, cands, r.leadWords)
	if err != nil {
		return err
	}
	for _, c := range cands {
		d := docs[c.id]
		c.text = d.text
		c.score = d.bm25f(qtf, stemIDF, st, r) + r.near*d.nearScore(stems, stemIDF, r.nearDist)
	}
	return nil
}

// stats returns the document count and mean field lengths.
func (s *Store) stats(ctx context.Context, leadWords int) (docStats, error) {
	var st docStats
	err := s.db.QueryRowContext(ctx, `SELECT count(*), coalesce(avg(title_len), 0),
	coalesce(avg(min(text_len, ?)), 0), coalesce(avg(max(text_len - ?, 0)), 0) FROM docs`, leadWords, leadWords).
		Scan(&st.n, &st.avgLen[0], &st.avgLen[1], &st.avgLen[2])
	if err != nil {
		return st, fmt.Errorf("archive statistics: %w", err)
	}
	return st, nil
}

// idf returns the inverse document frequency of each distinct word, as
// FTS5 counts documents (porter-stemmed), with BM25's formula.
func (s *Store) idf(ctx context.Context, words []string, n float64) (map[string]float64, error) {
	out := make(map[string]float64, len(words))
	for _, w := range words {
		if _, ok := out[w]; ok {
			continue
		}
		var df float64
		err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM docs_fts WHERE docs_fts MATCH ?`, quote(w)).Scan(&df)
		if err != nil {
			return nil, fmt.Errorf("document frequency of %q: %w", w, err)
		}
		out[w] = math.Log(1 + (n-df+0.5)/(df+0.5))
	}
	return out, nil
}

// termCache keeps documents already cut into words, since the engine asks
// several queries in a row over mostly the same pages. An entry is valid
// for one version of a document (its updated_at and lengths), so a page
// updated by another process is cut again.
type termCache struct {
	mu sync.Mutex
	m  map[int64]*docTerms
}

const termCacheSize = 4096

type docVersion struct {
	updated           int64
	titleLen, textLen int
	leadWords         int
}

// docTerms returns the candidates cut into words, from the cache or the
// database.
func (s *Store) docTerms(ctx context.Context, cands []*candidate, leadWords int) (map[int64]*docTerms, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = fmt.Sprint(c.id)
	}
	// The ids are our own integers, so listing them in the SQL is safe.
	rows, err := s.db.QueryContext(ctx, `SELECT id, updated_at, title_len, text_len FROM docs WHERE id IN (`+strings.Join(ids, ",")+`)`)
	if err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	out := make(map[int64]*docTerms, len(cands))
	var missing []string
	s.terms.mu.Lock()
	for rows.Next() {
		var id int64
		v := docVersion{leadWords: leadWords}
		if err := rows.Scan(&id, &v.updated, &v.titleLen, &v.textLen); err != nil {
			s.terms.mu.Unlock()
			rows.Close()
			return nil, fmt.Errorf("load candidate texts: %w", err)
		}
		if d := s.terms.m[id]; d != nil && d.version == v {
			out[id] = d
		} else {
			missing = append(missing, fmt.Sprint(id))
		}
	}
	s.terms.mu.Unlock()
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	if len(missing) == 0 {
		return out, nil
	}
	rows, err = s.db.QueryContext(ctx, `SELECT id, updated_at, title_len, text_len, title, text FROM docs WHERE id IN (`+strings.Join(missing, ",")+`)`)
	if err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	defer rows.Close()
	var fresh []*docTerms
	for rows.Next() {
		var id int64
		v := docVersion{leadWords: leadWords}
		var title, text string
		if err := rows.Scan(&id, &v.updated, &v.titleLen, &v.textLen, &title, &text); err != nil {
			return nil, fmt.Errorf("load candidate texts: %w", err)
		}
		d := newDocTerms([2]string{title, text}, leadWords)
		d.id, d.version = id, v
		out[id] = d
		fresh = append(fresh, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	s.terms.mu.Lock()
	if s.terms.m == nil || len(s.terms.m)+len(fresh) > termCacheSize {
		s.terms.m = make(map[int64]*docTerms, termCacheSize)
	}
	for _, d := range fresh {
		s.terms.m[d.id] = d
	}
	s.terms.mu.Unlock()
	return out, nil
}

// docTerms is a document cut into stemmed content words.
type docTerms struct {
	id      int64
	version docVersion
	text    string
	tf      [3]map[string]int // per field: title, lead, rest of text
	len     [3]int
	pos     map[string][]int // stem → positions in title followed by text
}

func newDocTerms(t [2]string, leadWords int) *docTerms {
	// Only the snippet reads the text, and only its top.
	head := t[1]
	if len(head) > 4096 {
		head = strings.ToValidUTF8(head[:4096], "")
	}
	d := &docTerms{pos: map[string][]int{}, text: head}
	for f := range d.tf {
		d.tf[f] = map[string]int{}
	}
	title, text := tokens(t[0]), tokens(t[1])
	for i, w := range title {
		st := stem(w)
		d.pos[st] = append(d.pos[st], i)
		d.tf[0][st]++
	}
	// A gap keeps the title's last word from seeming next to the text's first.
	off := len(title) + 1000
	for i, w := range text {
		st := stem(w)
		d.pos[st] = append(d.pos[st], off+i)
		if i < leadWords {
			d.tf[1][st]++
		} else {
			d.tf[2][st]++
		}
	}
	d.len = [3]int{len(title), min(len(text), leadWords), max(len(text)-leadWords, 0)}
	return d
}

// bm25f is BM25F (Robertson et al. 2004): field term frequencies are
// length-normalised, weighted and summed before one saturation.
func (d *docTerms) bm25f(qtf map[string]int, idf map[string]float64, st docStats, r ranker) float64 {
	const b = 0.75
	var sum float64
	for t, n := range qtf {
		var tf float64
		for f := range d.tf {
			if c := d.tf[f][t]; c > 0 {
				norm := 1.0
				if st.avgLen[f] > 0 {
					norm = 1 - b + b*float64(d.len[f])/st.avgLen[f]
				}
				tf += r.fieldW[f] * float64(c) / norm
			}
		}
		if tf > 0 {
			sum += idf[t] * tf * (r.k1 + 1) / (tf + r.k1) * float64(min(n, max(r.qtfCap, 1)))
		}
	}
	return sum
}

// nearScore sums, over distinct pairs of adjacent query words, the mean idf
// of the pair when the document has the two within dist words of each other.
func (d *docTerms) nearScore(stems []string, idf map[string]float64, dist int) float64 {
	seen := map[[2]string]bool{}
	var sum float64
	for i := 0; i+1 < len(stems); i++ {
		a, b := stems[i], stems[i+1]
		k := [2]string{a, b}
		if a == b || seen[k] {
			continue
		}
		seen[k] = true
		if near(d.pos[a], d.pos[b], dist) {
			sum += (idf[a] + idf[b]) / 2
		}
	}
	return sum
}

// near reports whether some position in a is within dist of one in b; both
// are ascending.
func near(a, b []int, dist int) bool {
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

// stem strips the commonest English inflections so that "taxes", "taxed"
// and "taxing" meet "tax". It only has to agree with itself: FTS5's porter
// tokenizer does the matching in the first stage.
func stem(w string) string {
	n := len(w)
	switch {
	case n > 4 && strings.HasSuffix(w, "ies"):
		return w[:n-3] + "y"
	case n > 5 && strings.HasSuffix(w, "ing"):
		return w[:n-3]
	case n > 4 && strings.HasSuffix(w, "ed"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "es") && strings.ContainsAny(w[n-3:n-2], "sxzh"):
		return w[:n-2]
	case n > 3 && strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us"):
		return w[:n-1]
	}
	return w
}
