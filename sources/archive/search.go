package archive

import (
	"context"
	"database/sql"
	"fmt"
	"sort"
	"strings"
	"time"
	"unicode/utf8"
)

// SearchOptions narrows a search.
type SearchOptions struct {
	// Before keeps only documents published before this instant; documents
	// with no known date are kept (the caller decides what undated pages are
	// worth). Zero: no limit.
	Before time.Time
	// Limit is the number of hits wanted; zero or less means 10.
	Limit int
}

// Hit is one search result, best first.
type Hit struct {
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Publisher string    `json:"publisher,omitempty"`
	Snippet   string    `json:"snippet,omitempty"`
	Published time.Time `json:"published,omitzero"`
	// Score orders hits within one answer (higher is better); it is not
	// comparable across queries.
	Score float64 `json:"score"`
}

// ranker holds the ranking choices, so the retrieval test can measure the
// plain BM25 baseline with the same code that serves real searches.
type ranker struct {
	// wTitle, wText, wPublisher weight the columns in FTS5's bm25().
	wTitle, wText, wPublisher float64
	// pool is how many first-stage hits the second stage re-scores; zero
	// turns the second stage off.
	pool int
	// k1 is the second stage's BM25 term-frequency saturation.
	k1 float64
	// fieldW weights title, lead (the first leadWords words of the text)
	// and the rest of the text in the second stage's BM25F.
	fieldW    [3]float64
	leadWords int
	// qtfCap caps how often a repeated query word counts.
	qtfCap int
	// near weights pairs of adjacent query words found within nearDist
	// words of each other in a document.
	near     float64
	nearDist int
}

// plainBM25 is textbook BM25 over all columns alike, the baseline.
var plainBM25 = ranker{wTitle: 1, wText: 1, wPublisher: 1}

// defaultRanker is what Search uses. The first stage only has to find the
// right documents among its pool (recall@100 ≈ 0.98 on the fact-check
// benchmark); the second stage orders them.
var defaultRanker = ranker{
	wTitle: 2, wText: 1, wPublisher: 0.5, pool: 100,
	k1: 10, fieldW: [3]float64{2, 2, 1}, leadWords: 50, qtfCap: 3,
	near: 0.5, nearDist: 5,
}

// Search finds archived documents about query, best first.
func (s *Store) Search(ctx context.Context, query string, o SearchOptions) ([]Hit, error) {
	return s.search(ctx, query, o, defaultRanker)
}

type candidate struct {
	id    int64
	hit   Hit
	score float64
	text  string // loaded by the second stage, for the snippet
}

func (s *Store) search(ctx context.Context, query string, o SearchOptions, r ranker) ([]Hit, error) {
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	ts := terms(query)
	if len(ts) == 0 {
		return nil, nil
	}
	pool := max(limit, r.pool)
	cands, err := s.firstStage(ctx, orQuery(ts), o.Before, pool, r)
	if err != nil {
		return nil, fmt.Errorf("search archive for %q: %w", query, err)
	}
	if r.pool > 0 && len(cands) > 0 {
		if err := s.rerank(ctx, query, cands, r); err != nil {
			return nil, fmt.Errorf("search archive for %q: %w", query, err)
		}
	}
	sort.SliceStable(cands, func(i, j int) bool { return cands[i].score > cands[j].score })
	if len(cands) > limit {
		cands = cands[:limit]
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = c.hit
		hits[i].Score = c.score
		if hits[i].Snippet == "" {
			hits[i].Snippet = snippet(c.text, ts, 200)
		}
	}
	return hits, nil
}

// firstStage runs the OR-of-terms query through FTS5's bm25() with column
// weights. bm25() is lower-is-better; scores are negated here.
func (s *Store) firstStage(ctx context.Context, match string, before time.Time, n int, r ranker) ([]*candidate, error) {
	q := fmt.Sprintf(`
SELECT d.id, d.orig_url, d.title, d.publisher, d.published,
	bm25(docs_fts, %g, %g, %g) AS score
FROM docs_fts JOIN docs d ON d.id = docs_fts.rowid
WHERE docs_fts MATCH ? AND (? = 0 OR d.published IS NULL OR d.published < ?)
ORDER BY score LIMIT ?`, r.wTitle, r.wText, r.wPublisher)
	var cutoff int64
	if !before.IsZero() {
		cutoff = before.Unix()
	}
	rows, err := s.db.QueryContext(ctx, q, match, cutoff, cutoff, n)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []*candidate
	for rows.Next() {
		c := &candidate{}
		var pub sql.NullInt64
		if err := rows.Scan(&c.id, &c.hit.URL, &c.hit.Title, &c.hit.Publisher, &pub, &c.score); err != nil {
			return nil, err
		}
		c.score = -c.score
		if pub.Valid {
			c.hit.Published = time.Unix(pub.Int64, 0).UTC()
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// snippet cuts about n bytes of text around the first query term it holds,
// on word boundaries; FTS5's snippet() is left out because SQLite would
// compute it for every matching row before the LIMIT.
func snippet(text string, terms []string, n int) string {
	if text == "" {
		return ""
	}
	// Looking only near the top keeps this cheap on long pages, and a
	// page's first mention is usually its best.
	head := text
	if len(head) > 4096 {
		head = head[:4096]
	}
	lower := strings.ToLower(head)
	at := -1
	for _, t := range terms {
		if i := strings.Index(lower, t); i >= 0 && (at < 0 || i < at) {
			at = i
		}
	}
	start := max(at-n/3, 0)
	if len(lower) != len(head) { // ToLower changed byte offsets; fall back to the start
		start = 0
	}
	for start > 0 && !utf8.RuneStart(text[start]) {
		start--
	}
	if i := strings.IndexByte(text[start:], ' '); start > 0 && i >= 0 && i < 20 {
		start += i + 1
	}
	end := min(start+n, len(text))
	for end < len(text) && !utf8.RuneStart(text[end]) {
		end++
	}
	if i := strings.LastIndexByte(text[start:end], ' '); end < len(text) && i > n/2 {
		end = start + i
	}
	out := strings.Join(strings.Fields(text[start:end]), " ")
	if start > 0 {
		out = "…" + out
	}
	if end < len(text) {
		out += "…"
	}
	return out
}
