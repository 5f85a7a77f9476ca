package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
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
	// Language is the query's ISO 639-1 code (empty: English); its words
	// are stemmed as documents in that language are.
	Language string
	// Budget bounds the search's time (zero: only ctx's own deadline). A
	// search cut by it, or by ctx's deadline, returns the hits it has with
	// an error wrapping ErrCut.
	Budget time.Duration
}

// ErrCut is wrapped by the error of a search that ran out of time: the hits
// returned with it are what the search had found by then (first-stage order
// when the rerank did not finish, none when the first stage did not).
var ErrCut = errors.New("archive search cut short by its time budget")

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

// Search finds archived documents about query, best first.
func (s *Store) Search(ctx context.Context, query string, o SearchOptions) ([]Hit, error) {
	return s.search(ctx, query, o, defaultRanker)
}

type candidate struct {
	id    int64
	hit   Hit
	score float64
	doc   *docTerms // loaded by the second stage
}

func (s *Store) search(ctx context.Context, query string, o SearchOptions, r ranker) ([]Hit, error) {
	if o.Budget > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, o.Budget)
		defer cancel()
	}
	limit := o.Limit
	if limit <= 0 {
		limit = 10
	}
	q := parseQuery(query, normLang(o.Language))
	if len(q.distinct) == 0 {
		return nil, nil
	}
	fs, err := s.firstPass(ctx, q, o.Before, limit, r)
	if err == nil && fs.pool != nil {
		more := func(ts []string) (map[string]float64, error) { return s.docFreqs(ctx, ts, fs.st) }
		var scores []float64
		if scores, err = r.rank(q, fs.pool, fs.df, fs.st, more); err == nil {
			for i, c := range fs.pool {
				c.score = scores[i]
			}
			// Only the pool is re-scored; what lies beyond it keeps the
			// first stage's order, after it.
			sort.SliceStable(fs.pool, func(i, j int) bool { return fs.pool[i].score > fs.pool[j].score })
		}
	}
	if err != nil {
		if ctx.Err() != nil && !errors.Is(ctx.Err(), context.Canceled) {
			err = fmt.Errorf("%w after %d first-stage hits: %w", ErrCut, len(fs.cands), ctx.Err())
			return s.hits(fs.cands, q, limit), fmt.Errorf("search archive for %q: %w", query, err)
		}
		return nil, fmt.Errorf("search archive for %q: %w", query, err)
	}
	return s.hits(fs.cands, q, limit), nil
}

// firstPass is what the second stage starts from: the first stage's
// candidates (best first), the pool of them loaded for the second stage,
// and the statistics it scores with.
type firstPass struct {
	cands, pool []*candidate
	df          map[string]float64
	st          collStats
}

func (s *Store) firstPass(ctx context.Context, q *queryModel, before time.Time, limit int, r ranker) (firstPass, error) {
	var fs firstPass
	var err error
	if fs.st, err = s.collection(ctx); err != nil {
		return fs, err
	}
	if fs.df, err = s.docFreqs(ctx, q.distinct, fs.st); err != nil {
		return fs, err
	}
	first := r.firstTerms(q.distinct, fs.df)
	if len(first) == 0 {
		return fs, nil
	}
	if fs.cands, err = s.firstStage(ctx, orQuery(first), before, max(limit, r.pool), r); err != nil {
		return fs, err
	}
	if r.pool > 0 && len(fs.cands) > 0 {
		pool := fs.cands[:min(len(fs.cands), r.pool)]
		if err := s.loadDocs(ctx, pool); err != nil {
			return fs, err
		}
		fs.pool = pool
	}
	return fs, nil
}

// hits turns the best candidates into hits with snippets.
func (s *Store) hits(cands []*candidate, q *queryModel, limit int) []Hit {
	if len(cands) > limit {
		cands = cands[:limit]
	}
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = c.hit
		hits[i].Score = c.score
		if c.doc != nil {
			hits[i].Snippet = snippet(c.doc.head, q.words, 200)
		}
	}
	return hits
}

// collStats are the collection statistics the triggers keep.
type collStats struct {
	version int64 // moved by every write transaction
	n       float64
	maxID   float64
	avgLen  [3]float64 // title, lead, rest of text
}

// collection reads the collection statistics: one row, and the largest
// document id from the primary key's b-tree.
func (s *Store) collection(ctx context.Context) (collStats, error) {
	var st collStats
	var sums [3]float64
	err := s.db.QueryRowContext(ctx, `SELECT version, n, title_len, lead_len, rest_len, (SELECT coalesce(max(id), 0) FROM docs) FROM docs_stats`).
		Scan(&st.version, &st.n, &sums[0], &sums[1], &sums[2], &st.maxID)
	if err != nil {
		return st, fmt.Errorf("archive statistics: %w", err)
	}
	if st.n > 0 {
		for i := range sums {
			st.avgLen[i] = sums[i] / st.n
		}
	}
	return st, nil
}

// dfExact is how many postings of a term are read to count its documents.
// A term in more documents than that is common: its count is estimated
// from how far into the id range those postings reached (FTS5 lists them
// by ascending id), which is exact enough for an idf and costs the same at
// a million documents as at a thousand.
const dfExact = 1000

// docFreqs returns the number of documents holding each term. Estimated
// counts of common terms are remembered for as long as the archive has not
// grown or shrunk by more than a hundredth; exact counts are cheap to read
// again and change with every write.
func (s *Store) docFreqs(ctx context.Context, ts []string, st collStats) (map[string]float64, error) {
	df := make(map[string]float64, len(ts))
	var todo []string
	s.dfs.mu.Lock()
	for _, t := range ts {
		if e, ok := s.dfs.m[t]; ok && math.Abs(st.n-e.n) <= e.n/100 {
			df[t] = e.df
		} else {
			todo = append(todo, t)
		}
	}
	s.dfs.mu.Unlock()
	if len(todo) == 0 {
		return df, nil
	}
	stmt, err := s.stmt(ctx, `SELECT count(*), coalesce(max(rowid), 0) FROM
	(SELECT rowid FROM docs_fts WHERE docs_fts MATCH ? LIMIT ?)`)
	if err != nil {
		return nil, fmt.Errorf("document frequencies: %w", err)
	}
	var common []string
	for _, t := range todo {
		if _, ok := df[t]; ok {
			continue
		}
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		var n, last float64
		if err := stmt.QueryRowContext(ctx, quote(t), dfExact).Scan(&n, &last); err != nil {
			return nil, fmt.Errorf("document frequency of %q: %w", t, err)
		}
		if n >= dfExact && last > 0 {
			n = min(st.n, n*st.maxID/last)
			common = append(common, t)
		}
		df[t] = n
	}
	s.dfs.mu.Lock()
	if s.dfs.m == nil || len(s.dfs.m)+len(common) > dfCacheSize {
		s.dfs.m = make(map[string]dfEntry, 1024)
	}
	for _, t := range common {
		s.dfs.m[t] = dfEntry{df: df[t], n: st.n}
	}
	s.dfs.mu.Unlock()
	return df, nil
}

type dfCache struct {
	mu sync.Mutex
	m  map[string]dfEntry
}

type dfEntry struct{ df, n float64 }

const dfCacheSize = 100_000

// stmt returns a statement prepared once per Store.
func (s *Store) stmt(ctx context.Context, q string) (*sql.Stmt, error) {
	if st, ok := s.stmts.Load(q); ok {
		return st.(*sql.Stmt), nil
	}
	st, err := s.db.PrepareContext(ctx, q)
	if err != nil {
		return nil, err
	}
	if prev, loaded := s.stmts.LoadOrStore(q, st); loaded {
		st.Close()
		return prev.(*sql.Stmt), nil
	}
	return st, nil
}

// firstStage runs the OR of terms through FTS5's bm25() with column
// weights, ranking on the index alone (the date filter reads a covering
// index), and reads the documents' rows only for the n best. bm25() is
// lower-is-better; scores are negated here.
func (s *Store) firstStage(ctx context.Context, match string, before time.Time, n int, r ranker) ([]*candidate, error) {
	q := fmt.Sprintf(`
WITH best AS (
	SELECT f.rowid AS id, bm25(docs_fts, %g, %g, %g) AS score FROM docs_fts f
	WHERE docs_fts MATCH ?1 AND (?2 = 0 OR EXISTS (SELECT 1 FROM docs INDEXED BY docs_id_published
		WHERE id = f.rowid AND (published IS NULL OR published < ?2)))
	ORDER BY score LIMIT ?3)
SELECT d.id, d.orig_url, d.title, d.publisher, d.published, best.score
FROM best JOIN docs d ON d.id = best.id ORDER BY best.score`, r.wTitle, r.wText, r.wPublisher)
	var cutoff int64
	if !before.IsZero() {
		cutoff = before.Unix()
	}
	stmt, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	rows, err := stmt.QueryContext(ctx, match, cutoff, n)
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
