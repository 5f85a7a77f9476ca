package archive

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

// Doc is one archived document: a fetched and extracted page, a fact-check
// imported from a file, or anything else worth finding again.
type Doc struct {
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Text      string    `json:"text"`
	Publisher string    `json:"publisher,omitempty"`
	Published time.Time `json:"published,omitzero"` // zero when unknown
	// Language is the text's ISO 639-1 code; empty means English. Words
	// are stemmed in it, and a query finds them when asked in it.
	Language string `json:"language,omitempty"`
}

// ErrNotFound is returned when the archive holds nothing under a URL.
var ErrNotFound = errors.New("not in the archive")

// Add stores d, replacing the document archived under the same canonical
// URL (sources.Canonical). Empty fields of d keep what was stored before, so
// adding a page's extracted text never erases a title or date known from
// elsewhere.
func (s *Store) Add(ctx context.Context, d Doc) error {
	return s.AddAll(ctx, []Doc{d})
}

// AddAll stores many documents in one transaction, which is much faster
// than one Add each. It stops at the first bad document and stores none.
func (s *Store) AddAll(ctx context.Context, docs []Doc) error {
	rows := make([]docRow, len(docs))
	for i, d := range docs {
		r, err := s.newRow(d)
		if err != nil {
			return err
		}
		rows[i] = r
	}
	return s.write(ctx, s.newDFs(rows), func(w *docWriter) error { return w.putAll(ctx, rows) })
}

// newDFs counts, for each stem, the rows holding it: how a transaction
// putting rows moves docs_terms if every row is new (put corrects it for
// the rows that are not). Counted before the transaction, and by an import
// beside the writing of the previous batch, so the writer does not. On
// PostgreSQL the postings rows hold the counts (see postgres.go): none.
// On SQLite it also numbers the batch's stems (terms) and gives each row
// its title's and text's stems as those numbers (titleSeq, textSeq), so
// the writer turns them into docs_terms ids by indexing a slice, hashing
// no string.
func (s *Store) newDFs(rows []docRow) termBatch {
	tb := termBatch{dfs: make(map[string]int, 4096)}
	if s.postgres {
		return termBatch{}
	}
	// A row's distinct stems are numbered in the batch, so its own
	// sequences (stemSeq, by index into its stems) become the batch's by
	// indexing a slice.
	at := make(map[string]uint32, 4096)
	var df []int
	var local []uint32
	remap := func(seq []uint32) []uint32 {
		out := make([]uint32, len(seq))
		for i, k := range seq {
			out[i] = local[k]
		}
		return out
	}
	for i := range rows {
		r := &rows[i]
		local = local[:0]
		for _, t := range r.stems {
			k, ok := at[t]
			if !ok {
				k = uint32(len(tb.terms))
				at[t] = k
				tb.terms = append(tb.terms, t)
				df = append(df, 0)
			}
			df[k]++
			local = append(local, k)
		}
		r.titleSeq, r.textSeq = remap(r.ownTitle), remap(r.ownText)
		r.batchStems = slices.Clone(local)
		// Which rows hold each term, by row: the writer turns them into
		// postings by the rows' ids.
		for len(tb.rows) < 2*len(tb.terms) {
			tb.rows = append(tb.rows, nil)
		}
		for _, k := range local {
			tb.rows[2*k] = append(tb.rows[2*k], int32(i))
		}
		for _, k := range r.titleSeq {
			if l := tb.rows[2*k+1]; len(l) == 0 || l[len(l)-1] != int32(i) { // a title may repeat a word
				tb.rows[2*k+1] = append(l, int32(i))
			}
		}
	}
	tb.nrows = len(rows)
	for k, t := range tb.terms {
		tb.dfs[t] = df[k]
	}
	// The writer writes the counts in key order (flushDFs); sorted here,
	// beside the writing of the batch before.
	tb.df = df
	tb.order = make([]int, len(tb.terms))
	for k := range tb.order {
		tb.order[k] = k
	}
	slices.SortFunc(tb.order, func(a, b int) int { return strings.Compare(tb.terms[a], tb.terms[b]) })
	return tb
}

// termBatch is newDFs' count for a batch of rows, and on SQLite the
// stems their sequences number.
type termBatch struct {
	dfs   map[string]int
	terms []string
	df    []int // on SQLite: dfs by index into terms
	order []int // indices into terms, the terms in key order
	// rows[2k] are the rows holding term k, rows[2k+1] those holding it
	// in their title, ascending, of nrows rows.
	rows  [][]int32
	nrows int
}

// docRow is a checked document as stored: fields trimmed, stemmed and
// counted.
type docRow struct {
	key, url                        string
	domain                          string // the registrable domain of key's host (domainOf)
	title, text, publisher, lang    string
	titleTerms, textTerms, pubTerms string
	titleLen, textLen               int
	published                       sql.NullInt64
	at                              int64
	stems                           []string // distinct stems of all three fields, for docs_terms (rowStems)
	// On SQLite: the title's and text's stems as indices into stems
	// (stemSeq), and as indices into its batch's terms (newDFs), for the
	// row's docs_rank ids; nil on a merged row.
	ownTitle, ownText []uint32
	titleSeq, textSeq []uint32
	batchStems        []uint32 // stems as indices into its batch's terms, for its postings (indexDoc)

	terms []string // on PostgreSQL: the terms its postings are under (postingTerms)
}

// newRow checks d and prepares its row.
func (s *Store) newRow(d Doc) (docRow, error) {
	key, err := sources.Canonical(d.URL)
	if err != nil {
		return docRow{}, fmt.Errorf("archive %q: %w", d.URL, err)
	}
	r := docRow{key: key, url: strings.TrimSpace(d.URL), domain: domainOf(key), lang: normLang(d.Language), at: s.now().Unix(),
		title: strings.TrimSpace(d.Title), text: strings.TrimSpace(d.Text), publisher: strings.TrimSpace(d.Publisher)}
	if r.title == "" && r.text == "" {
		// Trimmed: a URL read from the user's file may end in a newline
		// (Canonical accepts it), which would split Import's
		// one-line-per-item error report.
		return docRow{}, fmt.Errorf("archive %s: document has neither title nor text", r.url)
	}
	// Stored in whole seconds, so a time within the zero second would read
	// back as unknown; call it unknown here too.
	if !d.Published.Truncate(time.Second).IsZero() {
		r.published = sql.NullInt64{Int64: d.Published.Unix(), Valid: true}
	}
	r.titleTerms, r.titleLen = tokenStream(r.title, r.lang)
	r.textTerms, r.textLen = tokenStream(r.text, r.lang)
	r.pubTerms, _ = tokenStream(r.publisher, r.lang)
	// Here, where an import reads and stems beside the writing: the
	// terms whose counts docs_terms keeps, and on PostgreSQL the
	// postings' terms they come from.
	if s.postgres {
		r.terms = postingTerms(r)
		r.stems = countedStems(r.terms)
	} else {
		r.stems, r.ownTitle, r.ownText = stemSeq(r.titleTerms, r.textTerms, r.pubTerms)
	}
	return r, nil
}

// rowStems are the distinct stems of r whose documents docs_terms counts:
// on PostgreSQL those of its postings (postingTerms).
func (s *Store) rowStems(r docRow) []string {
	if s.postgres {
		return countedStems(postingTerms(r))
	}
	return distinctStems(r.titleTerms, r.textTerms, r.pubTerms)
}

// distinctStems returns the distinct stems of token streams (tokenStream).
func distinctStems(streams ...string) []string {
	seen := make(map[string]struct{}, 256)
	var out []string
	for _, s := range streams {
		eachStem(s, func(_ int, t string) {
			if _, ok := seen[t]; !ok {
				seen[t] = struct{}{}
				out = append(out, t)
			}
		})
	}
	return out
}

// A docWriter writes documents, their index entries and the collection
// statistics inside one transaction, through prepared statements. The
// index and statistics are kept here rather than by triggers, so a
// transaction writes each term's postings and count once, however many of
// its documents hold the term.
type docWriter struct {
	s                    *Store
	tx                   *sql.Tx
	get, ins, upd, stats stmt
	rank                 *sql.Stmt
	delta                [4]int // docs, title, lead and rest lengths
	wrote                bool   // anything changed: the version moves
	// dfs is how the transaction moves each term's document count
	// (docs_terms; on PostgreSQL unused, the postings count), written
	// once before the commit; it starts from newDFs.
	dfs map[string]int
	// On SQLite: the docs_terms id of each term the transaction meets
	// (termIDs, idOf), those of the batch's terms in its order (batch),
	// the ids it numbered (fresh) and the next free one; and buffers
	// reused from one docs_rank row to the next.
	ids     map[string]uint32
	learned []string // terms whose ids were not in the store's cache
	batch   []uint32
	fresh   []string
	next    uint32
	idBuf   []uint32
	rankBuf []byte
	// postings is how the transaction moves each term's postings
	// (docs_postings), written before the commit (flushBlocks).
	postings map[postTerm]*postChange
	// batchAdds are the ids added under each of the batch's terms
	// (w.batch), by batch index: 2k for any field, 2k+1 for the title.
	batchAdds [][]int64
	// v0 is docs_stats' version when the transaction began (SQLite), and
	// newHeads the heads of terms' last blocks it read or wrote, for the
	// store's headCache once it commits.
	v0       int64
	newHeads map[postTerm]blockHead
	// tb is newDFs of the rows the transaction puts; moved says whether
	// anything else moved dfs (a merge or a delete, moveDFs).
	tb         termBatch
	moved      bool
	batchFresh int // len(fresh) after termIDs

	// On PostgreSQL: tx's connection, for COPY (copyNew), and the
	// postings moved by puts, written before the commit (flushPostings).
	conn  *sql.Conn
	posts map[posting]int
}

// write runs fn with a docWriter in one IMMEDIATE transaction; tb is
// newDFs of the rows fn puts. On PostgreSQL a transaction that met
// another writer is run again (retryConflicts).
func (s *Store) write(ctx context.Context, tb termBatch, fn func(*docWriter) error) error {
	if s.postgres {
		return retryConflicts(ctx, func() error { return s.writeOnce(ctx, tb, fn) })
	}
	return s.writeOnce(ctx, tb, fn)
}

// writeOnce is write's one transaction.
func (s *Store) writeOnce(ctx context.Context, tb termBatch, fn func(*docWriter) error) error {
	dfs := tb.dfs
	w := &docWriter{s: s}
	begin := s.db.BeginTx
	if s.postgres {
		conn, err := s.db.Conn(ctx)
		if err != nil {
			return fmt.Errorf("archive: begin: %w", err)
		}
		defer conn.Close()
		w.conn, begin = conn, conn.BeginTx
	}
	tx, err := begin(ctx, nil)
	if err != nil {
		return fmt.Errorf("archive: begin: %w", err)
	}
	defer tx.Rollback()
	if dfs == nil {
		dfs = map[string]int{}
	}
	w.tx, w.dfs, w.tb = tx, dfs, tb
	stmts := []struct {
		st *stmt
		q  string
	}{
		{&w.get, `SELECT id, title, text, publisher, lang, title_terms, text_terms, publisher_terms, title_len, text_len, published
FROM docs WHERE url = ?` + lockStored(s.postgres)},
		{&w.ins, `INSERT INTO docs (url, orig_url, title, text, publisher, published, added_at, updated_at,
	title_len, text_len, lang, title_terms, text_terms, publisher_terms, domain) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)` + returning(s.postgres)},
		{&w.upd, `UPDATE docs SET title = ?, text = ?, publisher = ?, published = ?, updated_at = ?, title_len = ?, text_len = ?,
	lang = ?, title_terms = ?, text_terms = ?, publisher_terms = ? WHERE id = ?`},
		{&w.stats, `UPDATE docs_stats SET version = version + 1, n = n + ?, title_len = title_len + ?, lead_len = lead_len + ?, rest_len = rest_len + ?`},
	}
	for _, p := range stmts {
		if s.postgres {
			*p.st = txStmt{tx, s.sql(p.q)}
			continue
		}
		st, err := tx.PrepareContext(ctx, p.q)
		if err != nil {
			return fmt.Errorf("archive: prepare: %w", err)
		}
		defer st.Close()
		*p.st = st
	}
	if !s.postgres {
		if w.rank, err = tx.PrepareContext(ctx, rankRows+`(?, ?, ?, ?, ?, ?, ?)`); err != nil {
			return fmt.Errorf("archive: prepare: %w", err)
		}
		defer w.rank.Close()
		if err := tx.QueryRowContext(ctx, `SELECT version FROM docs_stats`).Scan(&w.v0); err != nil {
			return fmt.Errorf("archive: statistics: %w", err)
		}
		w.rankBuf = make([]byte, 0, 4096) // never nil: the driver binds a nil blob as NULL
		if err := w.termIDs(ctx, tb.terms); err != nil {
			return err
		}
	}
	if err := fn(w); err != nil {
		return err
	}
	if err := w.flushDFs(ctx); err != nil {
		return err
	}
	if !s.postgres {
		if err := w.flushBlocks(ctx); err != nil {
			return err
		}
	}
	if w.wrote {
		if _, err := w.stats.ExecContext(ctx, w.delta[0], w.delta[1], w.delta[2], w.delta[3]); err != nil {
			return fmt.Errorf("archive: statistics: %w", err)
		}
	}
	var v1 int64
	if !s.postgres {
		if err := tx.QueryRowContext(ctx, `SELECT version FROM docs_stats`).Scan(&v1); err != nil {
			return fmt.Errorf("archive: statistics: %w", err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("archive: commit: %w", err)
	}
	if !s.postgres {
		s.heads.committed(w.v0, v1, w.newHeads, w.postings)
	}
	if w.ids != nil {
		s.ids.add(w.ids, append(w.learned, w.fresh...)) // committed: these ids are for good
	}
	return nil
}

// putAll puts rows in order. On PostgreSQL, where every statement is a
// round trip, new documents go in by hundreds through COPY; the rows that
// meet a stored document (or an earlier row of rows) under their key are
// then merged one by one, in order, which is what putting each in turn
// would have done.
func (w *docWriter) putAll(ctx context.Context, rows []docRow) error {
	if !w.s.postgres {
		return w.putAllSQLite(ctx, rows)
	}
	if len(rows) == 1 {
		return w.putOne(ctx, rows[0])
	}
	// One COPY for all of them, however many: its look-up locks every
	// stored document of rows in key order at once. Copied a batch at a
	// time, each batch's locks came after the last's, and two writers of
	// more than a batch waited on each other in a circle (a deadlock the
	// server breaks only after deadlock_timeout).
	inserted, err := w.copyNew(ctx, rows)
	if err != nil {
		return err
	}
	for i, r := range rows {
		if !inserted[i] {
			if err := w.put(ctx, r); err != nil {
				return err
			}
		}
	}
	return nil
}

// putOne puts one row on PostgreSQL, what a check's write of a page it
// read is: an insert that does nothing when the key is stored, one round
// trip where copyNew's savepoint, look-up, ids and COPY took five. A key
// another writer is inserting makes the insert wait for that writer's
// commit (READ COMMITTED), and do nothing once it has committed: then put
// merges r into the row that writer stored, locked by its look-up, as
// copyNew does for a key it lost to another writer. A row deleted between the two is inserted
// again, up to copyRounds times.
func (w *docWriter) putOne(ctx context.Context, r docRow) error {
	for range copyRounds {
		var id int64
		err := w.tx.QueryRowContext(ctx, pgInsertNew, copyRow(0, r)[1:]...).Scan(&id)
		if errors.Is(err, sql.ErrNoRows) {
			if merged, err := w.merge(ctx, r); merged || err != nil {
				return err
			}
			continue
		}
		if err != nil {
			return fmt.Errorf("archive %s: %w", r.url, err)
		}
		w.indexPostings(id, docRow{}, r)
		return w.count(ctx, 1, docRow{}, r, nil)
	}
	return fmt.Errorf("archive %s: %w", r.url, errKeysTaken)
}

// rankRows is the head of an insert of docs_rank rows.
const rankRows = `INSERT OR REPLACE INTO docs_rank (id, published, updated_at, title_len, text_len, title_ids, text_ids) VALUES `

// putAllSQLite puts rows in order on SQLite: the new documents (neither
// stored nor met earlier in rows) many a statement, with their ids given
// here, the next after the largest, which is what SQLite would give them;
// the others through put, once the rows before them are written.
func (w *docWriter) putAllSQLite(ctx context.Context, rows []docRow) error {
	if len(rows) == 1 {
		return w.put(ctx, rows[0])
	}
	stored, err := w.storedKeys(ctx, rows)
	if err != nil {
		return err
	}
	var next int64
	if err := w.tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM docs`).Scan(&next); err != nil {
		return fmt.Errorf("archive: %w", err)
	}
	docs := newRowWriter(w.tx, `INSERT INTO docs (`+strings.Join(docColumns, ", ")+`) VALUES `, "", len(docColumns))
	rank := newRowWriter(w.tx, rankRows, "", 7)
	defer docs.close()
	defer rank.close()
	flush := func() error {
		if err := docs.flush(ctx); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		if err := rank.flush(ctx); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		return nil
	}
	met := make(map[string]bool, len(rows))
	// The new rows' postings are made at the end, from newDFs' rows of
	// each term, when newDFs saw these rows.
	byRows := w.tb.nrows == len(rows) && len(w.tb.rows) == 2*len(w.batch)
	ids := make([]int64, len(rows)) // a new row's id
	for i, r := range rows {
		if stored[r.key] || met[r.key] {
			if err := flush(); err != nil {
				return err
			}
			if err := w.put(ctx, r); err != nil {
				return err
			}
			continue
		}
		met[r.key] = true
		id := next
		next++
		if err := docs.add(ctx, copyRow(id, r)...); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		switch {
		case id > maxPostingID:
			return fmt.Errorf("archive %s: document id %d is past the archive's limit of %d", r.url, id, maxPostingID)
		case byRows:
			ids[i] = id
		default:
			if err := w.index(ctx, id, docRow{}, r); err != nil {
				return fmt.Errorf("archive %s: %w", r.url, err)
			}
		}
		title, text, err := w.rankIDs(ctx, r)
		if err != nil {
			return fmt.Errorf("archive %s: %w", r.url, err)
		}
		// The rows wait for their statement: bytes of their own, not
		// rankIDs' reused buffer.
		if err := rank.add(ctx, id, r.published, r.at, r.titleLen, r.textLen, slices.Clone(title), slices.Clone(text)); err != nil {
			return fmt.Errorf("archive: %w", err)
		}
		if err := w.count(ctx, 1, docRow{}, r, nil); err != nil {
			return err
		}
	}
	if byRows {
		if w.batchAdds == nil {
			w.batchAdds = make([][]int64, 2*len(w.batch))
		}
		for j, rs := range w.tb.rows {
			l := w.batchAdds[j]
			for _, i := range rs {
				if id := ids[i]; id != 0 {
					l = append(l, id) // ascending: ids go to rows in order
				}
			}
			w.batchAdds[j] = l
		}
	}
	return flush()
}

// storedKeys is which of rows' keys the archive holds.
func (w *docWriter) storedKeys(ctx context.Context, rows []docRow) (map[string]bool, error) {
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	arg, err := json.Marshal(keys)
	if err != nil {
		return nil, err
	}
	res, err := w.tx.QueryContext(ctx, `SELECT url FROM docs WHERE url IN (SELECT value FROM json_each(?))`, string(arg))
	if err != nil {
		return nil, fmt.Errorf("archive: %w", err)
	}
	defer res.Close()
	stored := make(map[string]bool)
	for res.Next() {
		var k string
		if err := res.Scan(&k); err != nil {
			return nil, fmt.Errorf("archive: %w", err)
		}
		stored[k] = true
	}
	return stored, res.Err()
}

// put inserts r, or merges it into the document stored under its key:
// fields r leaves empty keep their stored value.
func (w *docWriter) put(ctx context.Context, r docRow) error {
	merged, err := w.merge(ctx, r)
	if merged || err != nil {
		return err
	}
	fail := func(err error) error { return fmt.Errorf("archive %s: %w", r.url, err) }
	id, err := insertID(ctx, w.ins, w.s.postgres, r.key, r.url, r.title, r.text, r.publisher, r.published, r.at, r.at,
		r.titleLen, r.textLen, r.lang, r.titleTerms, r.textTerms, r.pubTerms, r.domain)
	if err != nil {
		return fail(err)
	}
	if err := w.index(ctx, id, docRow{}, r); err != nil {
		return fail(err)
	}
	if err := w.ranked(ctx, id, r); err != nil {
		return fail(err)
	}
	return w.count(ctx, 1, docRow{}, r, fail)
}

// merge merges r into the document stored under its key, when there is
// one: fields r leaves empty keep their stored value. It reports whether
// there was one.
func (w *docWriter) merge(ctx context.Context, r docRow) (bool, error) {
	fail := func(err error) error { return fmt.Errorf("archive %s: %w", r.url, err) }
	var id int64
	var old docRow
	err := w.get.QueryRowContext(ctx, r.key).Scan(&id, &old.title, &old.text, &old.publisher, &old.lang,
		&old.titleTerms, &old.textTerms, &old.pubTerms, &old.titleLen, &old.textLen, &old.published)
	if errors.Is(err, sql.ErrNoRows) {
		return false, nil
	}
	if err != nil {
		return false, fail(err)
	}
	w.moveDFs(r.stems, -1) // newDFs counted r as new
	n := old
	if r.title != "" {
		n.title, n.titleTerms, n.titleLen = r.title, r.titleTerms, r.titleLen
	}
	if r.text != "" {
		n.text, n.textTerms, n.textLen, n.lang = r.text, r.textTerms, r.textLen, r.lang
	}
	if r.publisher != "" {
		n.publisher, n.pubTerms = r.publisher, r.pubTerms
	}
	if r.published.Valid {
		n.published = r.published
	}
	reindex := n.titleTerms != old.titleTerms || n.textTerms != old.textTerms || n.pubTerms != old.pubTerms
	if reindex && !w.s.postgres {
		if err := w.unindexDoc(ctx, id, old); err != nil {
			return false, fail(err)
		}
	}
	if reindex {
		w.moveDFs(w.s.rowStems(old), -1)
		w.moveDFs(w.s.rowStems(n), 1)
	}
	if _, err := w.upd.ExecContext(ctx, n.title, n.text, n.publisher, n.published, r.at, n.titleLen, n.textLen,
		n.lang, n.titleTerms, n.textTerms, n.pubTerms, id); err != nil {
		return false, fail(err)
	}
	if reindex {
		if err := w.index(ctx, id, old, n); err != nil {
			return false, fail(err)
		}
	}
	n.at = r.at
	if err := w.ranked(ctx, id, n); err != nil {
		return false, fail(err)
	}
	if w.s.postgres && unchanged(old, n) {
		// A page read again as it was stored leaves the statistics row
		// alone on PostgreSQL: it is every writer's, locked from its
		// update to the commit, and no cache there goes by its version
		// (the rerank's goes by each document's updated_at and lengths,
		// the counts' by n). On SQLite the heads' cache does.
		return true, nil
	}
	return true, w.count(ctx, 0, old, n, fail)
}

// unchanged says whether merging made no change to a stored document but
// its time.
func unchanged(old, n docRow) bool {
	return old.title == n.title && old.text == n.text && old.publisher == n.publisher && old.published == n.published &&
		old.lang == n.lang
}

// returning is the clause by which an insert gives its row's id on
// PostgreSQL. SQLite has LastInsertId instead, and its RETURNING runs as a
// trigger: a statement journal for every insert.
func returning(postgres bool) string {
	if postgres {
		return " RETURNING id"
	}
	return ""
}

// A stmt is a statement a docWriter runs many times in its transaction:
// on SQLite prepared for the transaction, on PostgreSQL sent by its text
// (txStmt), which pgx prepares once a connection and keeps (its statement
// cache), where preparing it for each transaction cost a round trip to
// prepare and another to close, 8 of a page's write of about 20.
type stmt interface {
	ExecContext(ctx context.Context, args ...any) (sql.Result, error)
	QueryRowContext(ctx context.Context, args ...any) *sql.Row
}

// txStmt is a stmt run by its text in tx.
type txStmt struct {
	tx *sql.Tx
	q  string
}

func (t txStmt) ExecContext(ctx context.Context, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, t.q, args...)
}

func (t txStmt) QueryRowContext(ctx context.Context, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, t.q, args...)
}

// insertID runs an insert prepared with returning and gives the new row's
// id.
func insertID(ctx context.Context, st stmt, postgres bool, args ...any) (int64, error) {
	if postgres {
		var id int64
		err := st.QueryRowContext(ctx, args...).Scan(&id)
		return id, err
	}
	res, err := st.ExecContext(ctx, args...)
	if err != nil {
		return 0, err
	}
	return res.LastInsertId()
}

// index adds document id's postings under r's terms; on PostgreSQL it
// moves them from old's terms (a zero docRow for a new document) to r's,
// where on SQLite put has taken them out of old's (unindexDoc).
func (w *docWriter) index(ctx context.Context, id int64, old, r docRow) error {
	if w.s.postgres {
		w.indexPostings(id, old, r)
		return nil
	}
	return w.indexDoc(ctx, id, r)
}

// ranked writes r's docs_rank row (SQLite), what a search reads of a
// candidate: its date, version and stems as term ids (see migrations 6
// and 7).
func (w *docWriter) ranked(ctx context.Context, id int64, r docRow) error {
	if w.rank == nil {
		return nil
	}
	title, text, err := w.rankIDs(ctx, r)
	if err != nil {
		return err
	}
	_, err = w.rank.ExecContext(ctx, id, r.published, r.at, r.titleLen, r.textLen, title, text)
	return err
}

// moveDFs counts the documents holding each of stems up (by 1) or down.
func (w *docWriter) moveDFs(stems []string, by int) {
	w.moved = true
	for _, t := range stems {
		w.dfs[t] += by
	}
}

// flushDFs writes the transaction's document-count changes to docs_terms
// in one statement, the terms in key order (json.Marshal sorts a map's
// keys), so the b-tree is walked once from one end to the other.
func (w *docWriter) flushDFs(ctx context.Context) error {
	if w.s.postgres {
		return w.flushPostings(ctx)
	}
	if len(w.dfs) == 0 {
		return nil
	}
	// A term numbered here goes in even if its count did not move. A
	// count that falls to 0 keeps its row, so an id is never freed nor
	// given to another term (idCache). In key order, so the b-tree is
	// walked once from one end to the other.
	up := newRowWriter(w.tx, `INSERT INTO docs_terms (term, id, df) VALUES `, ` ON CONFLICT (term) DO UPDATE SET df = df + excluded.df`, 3)
	defer up.close()
	if !w.moved && len(w.tb.order) == len(w.batch) && len(w.fresh) == w.batchFresh {
		// Only new rows were put: the counts are newDFs', the ids
		// termIDs' (every id numbered here is a batch term's), and the
		// order was sorted beside the writing.
		for _, k := range w.tb.order {
			if err := up.add(ctx, w.tb.terms[k], int64(w.batch[k]), w.tb.df[k]); err != nil {
				return fmt.Errorf("archive: document counts: %w", err)
			}
		}
		if err := up.flush(ctx); err != nil {
			return fmt.Errorf("archive: document counts: %w", err)
		}
		return nil
	}
	terms := make([]string, 0, len(w.dfs)+len(w.fresh))
	for t, d := range w.dfs {
		if d != 0 {
			terms = append(terms, t)
		}
	}
	for _, t := range w.fresh {
		if w.dfs[t] == 0 {
			terms = append(terms, t)
		}
	}
	slices.Sort(terms)
	for _, t := range terms {
		id, err := w.idOf(ctx, t)
		if err != nil {
			return err
		}
		if err := up.add(ctx, t, int64(id), w.dfs[t]); err != nil {
			return fmt.Errorf("archive: document counts: %w", err)
		}
	}
	if err := up.flush(ctx); err != nil {
		return fmt.Errorf("archive: document counts: %w", err)
	}
	return nil
}

// count moves the collection statistics from old's lengths to n's, and
// the document count by dn. The change is written once, before the commit:
// the statistics row is updated once per transaction.
func (w *docWriter) count(_ context.Context, dn int, old, n docRow, _ func(error) error) error {
	lead := func(r docRow) int { return min(r.textLen, leadWords) }
	rest := func(r docRow) int { return max(r.textLen-leadWords, 0) }
	w.wrote = true
	w.delta[0] += dn
	w.delta[1] += n.titleLen - old.titleLen
	w.delta[2] += lead(n) - lead(old)
	w.delta[3] += rest(n) - rest(old)
	return nil
}

// Delete removes the document archived under url's canonical form (a
// trigger takes it out of the statistics, and on PostgreSQL out of its
// postings; on SQLite its postings and its terms' document counts move
// here); it reports whether there was one.
func (s *Store) Delete(ctx context.Context, rawURL string) (bool, error) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return false, fmt.Errorf("archive delete %q: %w", rawURL, err)
	}
	if s.postgres {
		var res sql.Result
		err := retryConflicts(ctx, func() (err error) {
			res, err = s.db.ExecContext(ctx, s.sql(`DELETE FROM docs WHERE url = ?`), key)
			return err
		})
		if err != nil {
			return false, fmt.Errorf("archive delete %s: %w", rawURL, err)
		}
		n, err := res.RowsAffected()
		return n > 0, err
	}
	var n int64
	err = s.write(ctx, termBatch{}, func(w *docWriter) error {
		rows, err := w.tx.QueryContext(ctx, `DELETE FROM docs WHERE url = ? RETURNING id, title_terms, text_terms, publisher_terms`, key)
		if err != nil {
			return err
		}
		var gone []docRow
		var ids []int64
		for rows.Next() {
			var id int64
			var old docRow
			if err := rows.Scan(&id, &old.titleTerms, &old.textTerms, &old.pubTerms); err != nil {
				rows.Close()
				return err
			}
			gone, ids = append(gone, old), append(ids, id)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		for i, old := range gone {
			w.moveDFs(distinctStems(old.titleTerms, old.textTerms, old.pubTerms), -1)
			if err := w.unindexDoc(ctx, ids[i], old); err != nil {
				return err
			}
			n++
		}
		return nil
	})
	if err != nil {
		return false, fmt.Errorf("archive delete %s: %w", rawURL, err)
	}
	return n > 0, nil
}

// Get returns the document archived under url's canonical form, or an
// error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, rawURL string) (Doc, error) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return Doc{}, fmt.Errorf("archive lookup %q: %w", rawURL, err)
	}
	var d Doc
	var pub sql.NullInt64
	err = s.db.QueryRowContext(ctx,
		s.sql(`SELECT orig_url, title, text, publisher, published, lang FROM docs WHERE url = ?`), key).
		Scan(&d.URL, &d.Title, &d.Text, &d.Publisher, &pub, &d.Language)
	if errors.Is(err, sql.ErrNoRows) {
		return Doc{}, fmt.Errorf("archive lookup %s: %w", rawURL, ErrNotFound)
	}
	if err != nil {
		return Doc{}, fmt.Errorf("archive lookup %s: %w", rawURL, err)
	}
	if pub.Valid {
		d.Published = time.Unix(pub.Int64, 0).UTC()
	}
	return d, nil
}

// Count returns how many documents the archive holds (from the collection
// statistics, without a scan).
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.sql(`SELECT n FROM docs_stats`)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count archived documents: %w", err)
	}
	return n, nil
}

// ClaimCount is the number of archived fact-checks (ClaimReview records).
func (s *Store) ClaimCount(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, s.sql(`SELECT count(*) FROM claims`)).Scan(&n); err != nil {
		return 0, fmt.Errorf("count archived fact-checks: %w", err)
	}
	return n, nil
}
