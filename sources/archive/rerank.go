package archive

import (
	"context"
	"fmt"
	"math"
	"strings"
)

// The second stage re-scores the first stage's best documents with what a
// bag of words cannot see. A post that repeats a claim repeats its wording:
// query terms that stand next to each other in the post stand near each
// other in the fact-check ("sugar tax", "crime rate fell"), and a
// fact-check names its subject in its title and first lines. Both signals
// are weighted by the terms' inverse document frequency, the unit BM25
// scores are in, so they add to the first-stage score without rescaling.

// rerank adds the proximity and lead scores to each candidate's score.
func (s *Store) rerank(ctx context.Context, query string, cands []*candidate, r ranker) error {
	if len(cands) > r.pool {
		cands = cands[:r.pool]
	}
	words := tokens(cleanPostText(query))
	idf, err := s.idf(ctx, words)
	if err != nil {
		return err
	}
	stems := make([]string, len(words))
	for i, w := range words {
		stems[i] = stem(w)
	}
	texts, err := s.texts(ctx, cands)
	if err != nil {
		return err
	}
	for _, c := range cands {
		d := newDocTerms(texts[c.id], r.leadWords)
		c.score += r.near*d.nearScore(stems, words, idf, r.nearDist) + r.lead*d.leadScore(stems, words, idf)
	}
	return nil
}

// idf returns the inverse document frequency of each distinct word, as
// FTS5 counts documents (porter-stemmed), with BM25's formula.
func (s *Store) idf(ctx context.Context, words []string) (map[string]float64, error) {
	var n float64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM docs`).Scan(&n); err != nil {
		return nil, fmt.Errorf("count documents: %w", err)
	}
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

// texts loads the title and text of the candidates.
func (s *Store) texts(ctx context.Context, cands []*candidate) (map[int64][2]string, error) {
	ids := make([]string, len(cands))
	for i, c := range cands {
		ids[i] = fmt.Sprint(c.id)
	}
	// The ids are our own integers, so listing them in the SQL is safe.
	rows, err := s.db.QueryContext(ctx, `SELECT id, title, text FROM docs WHERE id IN (`+strings.Join(ids, ",")+`)`)
	if err != nil {
		return nil, fmt.Errorf("load candidate texts: %w", err)
	}
	defer rows.Close()
	out := make(map[int64][2]string, len(cands))
	for rows.Next() {
		var id int64
		var t [2]string
		if err := rows.Scan(&id, &t[0], &t[1]); err != nil {
			return nil, fmt.Errorf("load candidate texts: %w", err)
		}
		out[id] = t
	}
	return out, rows.Err()
}

// docTerms is a document cut into stemmed content words.
type docTerms struct {
	pos  map[string][]int // stem → positions in title followed by text
	lead map[string]bool  // stems in the title and the first words of the text
}

func newDocTerms(t [2]string, leadWords int) docTerms {
	d := docTerms{pos: map[string][]int{}, lead: map[string]bool{}}
	title, text := tokens(t[0]), tokens(t[1])
	for i, w := range title {
		st := stem(w)
		d.pos[st] = append(d.pos[st], i)
		d.lead[st] = true
	}
	// A gap keeps the title's last word from seeming next to the text's first.
	off := len(title) + 1000
	for i, w := range text {
		st := stem(w)
		d.pos[st] = append(d.pos[st], off+i)
		if i < leadWords {
			d.lead[st] = true
		}
	}
	return d
}

// nearScore sums, over distinct pairs of adjacent query words, the mean idf
// of the pair when the document has the two within dist words of each other.
func (d docTerms) nearScore(stems, words []string, idf map[string]float64, dist int) float64 {
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
			sum += (idf[words[i]] + idf[words[i+1]]) / 2
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

// leadScore sums the idf of the distinct query words found in the lead.
func (d docTerms) leadScore(stems, words []string, idf map[string]float64) float64 {
	seen := map[string]bool{}
	var sum float64
	for i, st := range stems {
		if seen[st] {
			continue
		}
		seen[st] = true
		if d.lead[st] {
			sum += idf[words[i]]
		}
	}
	return sum
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
