package archive

import (
	"container/heap"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"sort"
	"strconv"
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
	// Posted is when the query's text was posted (a post's date), if
	// known: then pages dated after it, or long before it, rank lower
	// (params.future and params.age, chosen by cross-validation on the
	// fact-check benchmark). Unlike Before, it drops nothing. Zero: no
	// time prior.
	Posted time.Time
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
	id      int64
	hit     Hit
	score   float64
	version docVersion // read with the hit, so the second stage knows its cache is fresh
	doc     *docTerms  // loaded by the second stage
}

func (s *Store) search(ctx context.Context, query string, o SearchOptions, r ranker) ([]Hit, error) {
	parent := ctx // a search cut by its own budget still reads its hits' snippets
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
	q.posted = unixOrZero(o.Posted)
	fs, err := s.firstPass(ctx, q, o.Before, limit, r)
	if err == nil && fs.pool != nil {
		more := func(ids []uint32) ([]float64, error) { return s.idFreqs(ctx, ids, fs.voc) }
		var scores []float64
		if scores, err = r.rank(q, fs.pool, fs.qids, fs.df, fs.st, more); err == nil {
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
			return s.hits(parent, fs.cands, q, limit), fmt.Errorf("search archive for %q: %w", query, err)
		}
		return nil, fmt.Errorf("search archive for %q: %w", query, err)
	}
	return s.hits(ctx, fs.cands, q, limit), nil
}

// firstPass is what the second stage starts from: the first stage's
// candidates (best first), the pool of them loaded for the second stage,
// the statistics it scores with, and the ids of the query's terms
// (q.distinct's, in order) in the numbering its stems are in (termids.go).
type firstPass struct {
	cands, pool []*candidate
	df          map[string]float64
	qids        []uint32
	voc         *vocab // on PostgreSQL: the numbering
	st          collStats
}

func (s *Store) firstPass(ctx context.Context, q *queryModel, before time.Time, limit int, r ranker) (firstPass, error) {
	var fs firstPass
	var err error
	if fs.st, err = s.collection(ctx); err != nil {
		return fs, err
	}
	ps, err := s.postings(ctx, q.distinct, fs.st)
	if err != nil {
		return fs, err
	}
	fs.df = ps.df
	fs.qids = make([]uint32, len(q.distinct))
	if s.postgres {
		fs.voc = s.vocabulary()
		fs.voc.mu.Lock()
		for k, t := range q.distinct {
			fs.qids[k] = fs.voc.id(t)
		}
		fs.voc.mu.Unlock()
	} else {
		for k, t := range q.distinct {
			fs.qids[k] = ps.ids[t]
		}
	}
	first := r.firstTerms(q.distinct, fs.df)
	if len(first) == 0 {
		return fs, nil
	}
	if fs.cands, err = s.firstStage(ctx, first, ps, fs.st, before, max(limit, r.pool), r); err != nil {
		return fs, err
	}
	if r.pool > 0 && len(fs.cands) > 0 {
		pool := fs.cands[:min(len(fs.cands), r.pool)]
		if err := s.loadDocs(ctx, pool, fs.voc); err != nil {
			return fs, err
		}
		fs.pool = pool
	}
	return fs, nil
}

// hits turns the best candidates into hits: their URLs, titles and
// publishers, and snippets cut from the top of each page's text, are read
// for these few only. A search cut by its deadline still reads them (a
// hit needs its URL), but skips the snippets.
func (s *Store) hits(ctx context.Context, cands []*candidate, q *queryModel, limit int) []Hit {
	if len(cands) > limit {
		cands = cands[:limit]
	}
	heads := s.fillHits(context.WithoutCancel(ctx), cands)
	hits := make([]Hit, len(cands))
	for i, c := range cands {
		hits[i] = c.hit
		hits[i].Score = c.score
		if ctx.Err() == nil {
			hits[i].Snippet = snippet(heads[c.id], q.words, 200)
		}
	}
	return hits
}

// fillHits reads each candidate's URL, title and publisher into its hit
// and returns the first 4 KiB of each one's text, for its snippet. A
// candidate whose row cannot be read keeps an empty hit.
func (s *Store) fillHits(ctx context.Context, cands []*candidate) map[int64]string {
	out := make(map[int64]string, len(cands))
	if len(cands) == 0 {
		return out
	}
	byID := make(map[int64]*candidate, len(cands))
	for _, c := range cands {
		byID[c.id] = c
	}
	rows, err := s.queryIDs(ctx, `SELECT id, orig_url, title, publisher, substr(text, 1, 4096) FROM docs WHERE id IN (@ids)`, cands)
	if err != nil {
		return out
	}
	defer rows.Close()
	for rows.Next() {
		var id int64
		var url, title, pub, head string
		if rows.Scan(&id, &url, &title, &pub, &head) != nil {
			continue
		}
		if c := byID[id]; c != nil {
			c.hit.URL, c.hit.Title, c.hit.Publisher = url, title, pub
		}
		out[id] = strings.ToValidUTF8(head, "")
	}
	return out
}

// queryIDs runs q, whose first parameter is the list @ids of the
// candidates' ids (in "id IN (@ids)"), then args, as one statement
// whatever the ids: on SQLite the list is one bound JSON array read by
// json_each, on PostgreSQL one bound bigint array (id = ANY). Writing the
// ids into the statement made every search's statements new to the
// server, parsed and planned afresh.
func (s *Store) queryIDs(ctx context.Context, q string, cands []*candidate, args ...any) (*sql.Rows, error) {
	if s.postgres {
		ids := make([]int64, len(cands))
		for i, c := range cands {
			ids[i] = c.id
		}
		return s.query(ctx, s.sql(strings.Replace(q, "id IN (@ids)", "id = ANY(?::bigint[])", 1)), append([]any{ids}, args...)...)
	}
	b := make([]byte, 0, 8*len(cands)+2)
	b = append(b, '[')
	for i, c := range cands {
		if i > 0 {
			b = append(b, ',')
		}
		b = strconv.AppendInt(b, c.id, 10)
	}
	b = append(b, ']')
	return s.query(ctx, strings.Replace(q, "@ids", "SELECT value FROM json_each(?)", 1), append([]any{string(b)}, args...)...)
}

// collStats are the collection statistics the triggers keep.
type collStats struct {
	version int64 // moved by every write transaction
	n       float64
	avgLen  [3]float64 // title, lead, rest of text
}

// collection reads the collection statistics: one row.
func (s *Store) collection(ctx context.Context) (collStats, error) {
	var st collStats
	var sums [3]float64
	err := s.db.QueryRowContext(ctx, s.sql(`SELECT version, n, title_len, lead_len, rest_len FROM docs_stats`)).
		Scan(&st.version, &st.n, &sums[0], &sums[1], &sums[2])
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

// termPostings are the document frequencies of a query's terms, and on
// SQLite their docs_terms ids (0: no such term).
type termPostings struct {
	df  map[string]float64
	ids map[string]uint32
}

// docFreqs returns the number of documents holding each term.
func (s *Store) docFreqs(ctx context.Context, ts []string, st collStats) (map[string]float64, error) {
	ps, err := s.postings(ctx, ts, st)
	return ps.df, err
}

// postings counts the documents of each term, from docs_terms
// (on PostgreSQL the sums of its archive_postings rows' counts). Counts are remembered for as long as
// the archive has not grown or shrunk by more than a hundredth since they
// were read: an idf moves too little to matter meanwhile, and a query's
// words mostly recur in the next queries (a check asks three to five about
// one post). The first stage reads its rare terms' postings afresh.
func (s *Store) postings(ctx context.Context, ts []string, st collStats) (termPostings, error) {
	ps := termPostings{df: make(map[string]float64, len(ts)), ids: make(map[string]uint32, len(ts))}
	var todo []string
	s.dfs.mu.Lock()
	for _, t := range ts {
		// A term no document held when it was read may have been given
		// an id since (on SQLite its postings are read by id): read again.
		if e, ok := s.dfs.m[t]; ok && math.Abs(st.n-e.n) <= e.n/100 && (e.id != 0 || s.postgres) {
			ps.df[t], ps.ids[t] = e.df, e.id
		} else {
			todo = append(todo, t)
		}
	}
	s.dfs.mu.Unlock()
	todo = slices.Compact(slices.Sorted(slices.Values(todo)))
	if err := ctx.Err(); err != nil {
		return ps, err
	}
	if err := s.termCounts(ctx, todo, ps); err != nil {
		return ps, fmt.Errorf("document frequencies: %w", err)
	}
	s.rememberDFs(todo, ps, st)
	return ps, nil
}

// rememberDFs caches the document frequencies of the terms read.
func (s *Store) rememberDFs(read []string, ps termPostings, st collStats) {
	if len(read) == 0 {
		return
	}
	s.dfs.mu.Lock()
	if s.dfs.m == nil || len(s.dfs.m)+len(read) > dfCacheSize {
		s.dfs.m = make(map[string]dfEntry, 1024)
	}
	for _, t := range read {
		s.dfs.m[t] = dfEntry{df: ps.df[t], id: ps.ids[t], n: st.n}
	}
	s.dfs.mu.Unlock()
}

// termCounts reads the exact document frequencies of ts from docs_terms,
// with their ids (on PostgreSQL archive_postings' counts, no ids), one b-tree
// seek each, all in one statement; a term no document holds gets 0.
func (s *Store) termCounts(ctx context.Context, ts []string, ps termPostings) error {
	if len(ts) == 0 {
		return nil
	}
	arg, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	q := `SELECT j.key, coalesce(t.df, 0), coalesce(t.id, 0) FROM json_each(?) j LEFT JOIN docs_terms t ON t.term = j.value`
	if s.postgres {
		q = pgTermCounts
	}
	rows, err := s.query(ctx, q, string(arg))
	if err != nil {
		return err
	}
	defer rows.Close()
	for rows.Next() {
		var k int
		var n float64
		var id uint32
		dest := []any{&k, &n, &id}
		if s.postgres {
			dest = dest[:2]
		}
		if err := rows.Scan(dest...); err != nil {
			return err
		}
		if k < 0 || k >= len(ts) {
			return fmt.Errorf("term %d of %d", k, len(ts))
		}
		ps.df[ts[k]], ps.ids[ts[k]] = n, id
	}
	return rows.Err()
}

// idFreqs returns the document frequencies of the terms ids (the
// rerank's feedback terms): on SQLite read by id from docs_terms, on
// PostgreSQL those of voc's terms.
func (s *Store) idFreqs(ctx context.Context, ids []uint32, voc *vocab) ([]float64, error) {
	out := make([]float64, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	if s.postgres {
		ts := voc.termsOf(ids)
		st, err := s.collection(ctx)
		if err != nil {
			return nil, err
		}
		df, err := s.docFreqs(ctx, ts, st)
		if err != nil {
			return nil, err
		}
		for i, t := range ts {
			out[i] = df[t]
		}
		return out, nil
	}
	arg, err := json.Marshal(ids)
	if err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, `SELECT j.key, coalesce(t.df, 0) FROM json_each(?) j LEFT JOIN docs_terms t ON t.id = j.value`, string(arg))
	if err != nil {
		return nil, fmt.Errorf("document frequencies: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k int
		var n float64
		if err := rows.Scan(&k, &n); err != nil {
			return nil, fmt.Errorf("document frequencies: %w", err)
		}
		if k < 0 || k >= len(ids) {
			return nil, fmt.Errorf("term %d of %d", k, len(ids))
		}
		out[k] = n
	}
	return out, rows.Err()
}

type dfCache struct {
	mu sync.Mutex
	m  map[string]dfEntry
}

type dfEntry struct {
	df, n float64
	id    uint32
}

const dfCacheSize = 100_000

// query runs q, a statement the Store runs again and again. On SQLite it
// is prepared once per Store (stmt). On PostgreSQL it is handed to pgx,
// which prepares it once on each of its pool's connections and keeps it
// there: a statement prepared through database/sql would be parsed again
// at every run, since database/sql keeps no idle connection of a pgx pool
// (stdlib.OpenDBFromPool), so none keeps its statements.
func (s *Store) query(ctx context.Context, q string, args ...any) (*sql.Rows, error) {
	if s.postgres {
		return s.db.QueryContext(ctx, q, args...)
	}
	stmt, err := s.stmt(ctx, q)
	if err != nil {
		return nil, err
	}
	return stmt.QueryContext(ctx, args...)
}

// queryRow is query for a statement of one row.
func (s *Store) queryRow(ctx context.Context, q string, args ...any) *sql.Row {
	if !s.postgres {
		if stmt, err := s.stmt(ctx, q); err == nil {
			return stmt.QueryRowContext(ctx, args...)
		}
		// A statement that does not prepare fails the same way unprepared.
	}
	return s.db.QueryRowContext(ctx, q, args...)
}

// stmt returns a statement prepared once per Store (SQLite: see query).
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

// firstStage ranks the documents holding any of terms by the sum of the
// idfs of the terms each holds (a weighted coordinate match), computed here
// from the terms' postings alone: no document row, length or position is
// read, so its cost is the number of postings, which the caller bounds
// (ranker.firstTerms), whatever the archive's size. The n best that pass
// the date filter come back best first, with their dates and versions
// (dated); the second stage then scores them on their full text.
func (s *Store) firstStage(ctx context.Context, terms []string, ps termPostings, st collStats, before time.Time, n int, r ranker) ([]*candidate, error) {
	lists, err := s.termDocs(ctx, terms, ps.ids, ps.df, maxTermPostings, false)
	if err != nil {
		return nil, fmt.Errorf("first-stage postings: %w", err)
	}
	// A title is where a fact-check or report states its claim: the
	// documents holding a term there count it wTitle times rather than
	// wText. Titles are short, so their postings cost little.
	titles, err := s.termDocs(ctx, terms, ps.ids, ps.df, maxTermPostings, true)
	if err != nil {
		return nil, fmt.Errorf("first-stage title postings: %w", err)
	}
	// The lists are ascending, so the scores are summed by merging them
	// one after another into a list of scores by id, in the terms' order
	// (each document's sum adds up in the same order as term by term):
	// no hashing of tens of thousands of ids. The lists' buffers are
	// reused from one search to the next.
	b := stagePool.Get().(*stageBufs)
	defer b.put()
	acc, spare := b.acc[:0], b.spare[:0]
	for _, t := range terms {
		w := bm25IDF(st.n, ps.df[t])
		acc, spare = addScores(spare[:0], acc, lists[t], w*r.wText), acc
		acc, spare = addScores(spare[:0], acc, titles[t], w*(r.wTitle-r.wText)), acc
	}
	b.acc, b.spare = acc, spare
	// Only the best few hundred of often tens of thousands are wanted: a
	// heap gives them in order without sorting the rest.
	ranked := rankedIDs(acc)
	heap.Init(&ranked)
	var cutoff int64
	if !before.IsZero() {
		cutoff = before.Unix()
	}
	// Dates are read a chunk at a time, as many as the date filter lets
	// through, until n are kept.
	var out []*candidate
	for len(ranked) > 0 && len(out) < n {
		if err := ctx.Err(); err != nil {
			return out, err
		}
		want := n - len(out)
		if cutoff != 0 {
			want = max(2*want, 64) // some will be too new
		}
		chunk := make([]*candidate, 0, min(want, len(ranked)))
		for len(chunk) < want && len(ranked) > 0 {
			x := heap.Pop(&ranked).(scoredID)
			chunk = append(chunk, &candidate{id: x.id, score: x.score})
		}
		kept, err := s.dated(ctx, chunk, cutoff)
		if err != nil {
			return out, err
		}
		out = append(out, kept[:min(len(kept), n-len(out))]...)
	}
	return out, nil
}

// stageBufs are the first stage's lists of scores, kept for the next
// search (stagePool).
type stageBufs struct {
	acc, spare []scoredID
}

var stagePool = sync.Pool{New: func() any { return new(stageBufs) }}

// put gives b back, unless it grew past what searches mostly need.
func (b *stageBufs) put() {
	if cap(b.acc)+cap(b.spare) > 1<<18 {
		return
	}
	stagePool.Put(b)
}

// addScores appends to dst the scores of acc (ascending by id) with w
// added to those of the documents ids (ascending) holds, which join the
// list if they were not in it.
func addScores(dst, acc []scoredID, ids []int64, w float64) []scoredID {
	i, j := 0, 0
	for i < len(acc) && j < len(ids) {
		switch a, id := acc[i], ids[j]; {
		case a.id < id:
			dst = append(dst, a)
			i++
		case id < a.id:
			dst = append(dst, scoredID{id: id, score: w})
			j++
		default:
			dst = append(dst, scoredID{id: id, score: a.score + w})
			i++
			j++
		}
	}
	dst = append(dst, acc[i:]...)
	for _, id := range ids[j:] {
		dst = append(dst, scoredID{id: id, score: w})
	}
	return dst
}

// scoredID is a document's first-stage score.
type scoredID struct {
	id    int64
	score float64
}

// rankedIDs is a heap of first-stage scores, best first; ties go to the
// newer document (the larger id), so the order is the same on every run.
type rankedIDs []scoredID

func (h rankedIDs) Len() int { return len(h) }
func (h rankedIDs) Less(i, j int) bool {
	return h[i].score > h[j].score || h[i].score == h[j].score && h[i].id > h[j].id
}
func (h rankedIDs) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *rankedIDs) Push(x any)   { *h = append(*h, x.(scoredID)) }
func (h *rankedIDs) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// termDocs returns, for each of the terms ts, the ids of the first
// (lowest) limit documents holding it (in the title only when title is
// set), ascending. On SQLite a term's are the first blocks of its
// postings (readPostings), under its docs_terms id (ids), read into room
// for as many as its document count (dfs). On PostgreSQL
// one statement reads them all, each term's as one list in one row: term
// by term, or row by row, the round trips would cost more than reading
// the postings.
func (s *Store) termDocs(ctx context.Context, ts []string, ids map[string]uint32, dfs map[string]float64, limit int, title bool) (map[string][]int64, error) {
	out := make(map[string][]int64, len(ts))
	if len(ts) == 0 {
		return out, nil
	}
	if !s.postgres {
		field, size := fieldAny, func(t string) int { return int(dfs[t]) }
		if title {
			// A title holds a few of the words its page holds: its list
			// is short, and its length unknown.
			field, size = fieldTitle, func(string) int { return 0 }
		}
		for _, t := range ts {
			list, err := s.readPostings(ctx, ids[t], field, limit, size(t))
			if err != nil {
				return nil, err
			}
			out[t] = list
		}
		return out, nil
	}
	quoted := make([]string, len(ts))
	for i, t := range ts {
		quoted[i] = pgTermOperand(t, title)
	}
	arg, err := json.Marshal(quoted)
	if err != nil {
		return nil, err
	}
	rows, err := s.query(ctx, s.sql(pgTermDocs), limit, string(arg))
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var k int
		var list string
		if err := rows.Scan(&k, &list); err != nil {
			return nil, err
		}
		if k < 0 || k >= len(ts) {
			return nil, fmt.Errorf("postings: term %d of %d", k, len(ts))
		}
		got, err := parseIDs(list)
		if err != nil {
			return nil, err
		}
		slices.Sort(got)
		out[ts[k]] = got[:min(len(got), limit)]
	}
	return out, rows.Err()
}

// parseIDs reads a comma-separated list of ids (non-negative, as rowids
// and PostgreSQL's ids are), digit by digit: strconv on each field was a
// tenth of the first stage.
func parseIDs(list string) ([]int64, error) {
	ids := make([]int64, 0, strings.Count(list, ",")+1)
	var id int64
	digits := 0
	for i := 0; i <= len(list); i++ {
		if i == len(list) || list[i] == ',' {
			if digits > 0 {
				ids = append(ids, id)
			}
			id, digits = 0, 0
			continue
		}
		c := list[i]
		if c < '0' || c > '9' || digits == 18 {
			return nil, fmt.Errorf("postings list: bad id at %q", list[max(i-digits, 0):min(i+1, len(list))])
		}
		id = id*10 + int64(c-'0')
		digits++
	}
	return ids, nil
}

// dated reads the dates and versions of cands and returns those published
// before cutoff (Unix seconds; zero: all) or undated, in the order given.
// On SQLite they come from the narrow rows of docs_rank, never from the
// wide rows, whose date lies past the text; a hit's URL and title are read
// for the final few only (fillHits).
func (s *Store) dated(ctx context.Context, cands []*candidate, cutoff int64) ([]*candidate, error) {
	byID := make(map[int64]*candidate, len(cands))
	for _, c := range cands {
		byID[c.id] = c
	}
	// On SQLite the stems are in the same narrow row, so they come along
	// (the second stage's loadDocs then has nothing to read): the row's
	// page is read for its date anyway.
	cols := "id, published, updated_at, title_len, text_len"
	if !s.postgres {
		cols += ", title_ids, text_ids"
	}
	rows, err := s.queryIDs(ctx, `SELECT `+cols+` FROM `+s.rankTable()+`
WHERE id IN (@ids) AND (? = 0 OR published IS NULL OR published < ?)`, cands, cutoff, cutoff)
	if err != nil {
		return nil, fmt.Errorf("first-stage rows: %w", err)
	}
	defer rows.Close()
	kept := make(map[int64]bool, len(cands))
	var id int64
	var pub sql.NullInt64
	var v docVersion
	var title, text sql.RawBytes
	dest := []any{&id, &pub, &v.updated, &v.titleLen, &v.textLen, &title, &text}
	if s.postgres {
		dest = dest[:5]
	}
	// The candidates' ids are copied into one block (RawBytes is the
	// driver's, for this row only): one allocation, not two a row.
	var block []byte
	for rows.Next() {
		pub = sql.NullInt64{}
		if err := rows.Scan(dest...); err != nil {
			return nil, fmt.Errorf("first-stage rows: %w", err)
		}
		if c := byID[id]; c != nil {
			if pub.Valid {
				c.hit.Published = time.Unix(pub.Int64, 0).UTC()
			}
			c.version = v
			if !s.postgres {
				if len(title)+len(text) > cap(block)-len(block) {
					block = make([]byte, 0, max(len(title)+len(text), 64<<10))
				}
				at := len(block)
				block = append(append(block, title...), text...)
				mid := at + len(title)
				c.doc = newDocTerms(id, v, block[at:mid:mid], block[mid:len(block):len(block)], nil)
			}
			kept[id] = true
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("first-stage rows: %w", err)
	}
	out := make([]*candidate, 0, len(kept))
	for _, c := range cands {
		if kept[c.id] {
			out = append(out, c)
		}
	}
	return out, nil
}

// rankTable is the table a candidate's date, version and stems are read
// from: on SQLite the narrow docs_rank (migration 6), on PostgreSQL the
// documents themselves.
func (s *Store) rankTable() string {
	if s.postgres {
		return "docs"
	}
	return "docs_rank"
}

// maxTermPostings bounds what the first stage reads of one term when the
// query has nothing rarer (ranker.minTerms always join): enough to rank
// among, never a whole common term's list in a large archive.
const maxTermPostings = 20_000

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
	// Once a term is found, the next are looked for only before it: a
	// long post's hundred words would otherwise each scan the whole head.
	at := -1
	for _, t := range terms {
		in := lower
		if at >= 0 {
			in = lower[:min(len(lower), at-1+len(t))]
		}
		if i := strings.Index(in, t); i >= 0 && (at < 0 || i < at) {
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
