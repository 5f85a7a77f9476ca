package archive

import (
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"sync"
)

// What a search reads of a candidate, and what the rerank scores, is each
// field's stems as term ids: on SQLite the ids of docs_terms (migration 7),
// varint-packed in docs_rank, a quarter of the stems' bytes; on
// PostgreSQL, whose rows hold the stems as text, ids the process gives
// each stem it meets (vocab). The rerank compares integers, never
// strings; a query's terms are mapped to ids once per search. Id 0 is no
// term: a query term no document holds gets it and matches nothing.

// appendIDs appends the varint-packed ids of a field's stems: seq are the
// stems as indices into ids.
func appendIDs(b []byte, seq []uint32, ids []uint32) []byte {
	for _, k := range seq {
		b = binary.AppendUvarint(b, uint64(ids[k]))
	}
	return b
}

// eachID calls fn with each id of a packed stream (appendIDs) and its
// index, in order; a truncated or overlong last id is dropped. It returns
// the number of ids.
func eachID(b []byte, fn func(i int, id uint32)) int {
	n := 0
	for len(b) > 0 {
		x, k := binary.Uvarint(b)
		if k <= 0 || x > 1<<32-1 {
			return n
		}
		b = b[k:]
		fn(n, uint32(x))
		n++
	}
	return n
}

// idCount is the number of ids in a packed stream: its bytes that end an
// id.
func idCount(b []byte) int {
	n := 0
	for _, c := range b {
		if c < 0x80 {
			n++
		}
	}
	return n
}

// stemSeq indexes a row's stems for docs_rank: the distinct stems of its
// title, text and publisher, and the title's and text's streams as
// indices into them.
func stemSeq(title, text, pub string) (stems []string, titleSeq, textSeq []uint32) {
	seen := make(map[string]uint32, 256)
	seq := func(stream string, keep bool) []uint32 {
		var out []uint32
		if keep {
			out = make([]uint32, 0, stemCount(stream))
		}
		eachStem(stream, func(_ int, t string) {
			k, ok := seen[t]
			if !ok {
				k = uint32(len(stems))
				seen[t] = k
				stems = append(stems, t)
			}
			if keep {
				out = append(out, k)
			}
		})
		return out
	}
	titleSeq = seq(title, true)
	textSeq = seq(text, true)
	seq(pub, false)
	return stems, titleSeq, textSeq
}

// idCache remembers docs_terms ids the process has read or written: an id,
// once committed, never changes and its row is never deleted (a term no
// document holds any more keeps its row with df 0), so an entry never
// goes stale. Cleared when full.
type idCache struct {
	mu sync.Mutex
	m  map[string]uint32
}

const idCacheSize = 1 << 18

func (c *idCache) get(t string) (uint32, bool) {
	id, ok := c.m[t]
	return id, ok
}

// add remembers the ids in m of the terms ts.
func (c *idCache) add(m map[string]uint32, ts []string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.m == nil || len(c.m)+len(ts) > idCacheSize {
		c.m = make(map[string]uint32, min(idCacheSize, max(len(ts), 4096)))
	}
	if len(ts) > idCacheSize {
		return
	}
	for _, t := range ts {
		if id, ok := m[t]; ok {
			c.m[t] = id
		}
	}
}

// termIDs gives each of the batch's terms an id (SQLite), in the batch's
// order (w.batch): from the store's cache, else docs_terms, else a new
// one, the next after the largest, the commonest of the batch first so
// frequent terms get short varints. New ids go into docs_terms with the
// counts (flushDFs).
func (w *docWriter) termIDs(ctx context.Context, terms []string) error {
	w.ids = make(map[string]uint32, len(terms))
	w.batch = make([]uint32, len(terms))
	var todo []string
	w.s.ids.mu.Lock()
	for _, t := range terms {
		if id, ok := w.s.ids.get(t); ok {
			w.ids[t] = id
		} else {
			todo = append(todo, t)
		}
	}
	w.s.ids.mu.Unlock()
	if len(todo) > 0 {
		if err := w.readIDs(ctx, todo); err != nil {
			return err
		}
		w.learned = append(w.learned, todo...) // read or numbered here
		var fresh []string
		for _, t := range todo {
			if _, ok := w.ids[t]; !ok {
				fresh = append(fresh, t)
			}
		}
		slices.SortStableFunc(fresh, func(a, b string) int { return w.dfs[b] - w.dfs[a] })
		for _, t := range fresh {
			if _, err := w.newID(ctx, t); err != nil {
				return err
			}
		}
	}
	for k, t := range terms {
		w.batch[k] = w.ids[t]
	}
	w.batchFresh = len(w.fresh)
	return nil
}

// readIDs reads the docs_terms ids of ts that have one into w.ids.
func (w *docWriter) readIDs(ctx context.Context, ts []string) error {
	arg, err := json.Marshal(ts)
	if err != nil {
		return err
	}
	rows, err := w.tx.QueryContext(ctx, `SELECT t.term, t.id FROM json_each(?) j JOIN docs_terms t ON t.term = j.value`, string(arg))
	if err != nil {
		return fmt.Errorf("archive: term ids: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var id uint32
		if err := rows.Scan(&t, &id); err != nil {
			return fmt.Errorf("archive: term ids: %w", err)
		}
		w.ids[t] = id
	}
	if err := rows.Err(); err != nil {
		return fmt.Errorf("archive: term ids: %w", err)
	}
	return nil
}

// idOf is t's id, for a term termIDs did not see (the stems of a stored
// document an update or a delete replaces): read from docs_terms, else new.
func (w *docWriter) idOf(ctx context.Context, t string) (uint32, error) {
	if id, ok := w.ids[t]; ok {
		return id, nil
	}
	var id uint32
	err := w.tx.QueryRowContext(ctx, `SELECT id FROM docs_terms WHERE term = ?`, t).Scan(&id)
	if errors.Is(err, sql.ErrNoRows) {
		return w.newID(ctx, t)
	}
	if err != nil {
		return 0, fmt.Errorf("archive: term id: %w", err)
	}
	w.ids[t] = id
	return id, nil
}

// newID numbers t after the largest id in use.
func (w *docWriter) newID(ctx context.Context, t string) (uint32, error) {
	if w.next == 0 {
		if err := w.tx.QueryRowContext(ctx, `SELECT coalesce(max(id), 0) + 1 FROM docs_terms`).Scan(&w.next); err != nil {
			return 0, fmt.Errorf("archive: term ids: %w", err)
		}
	}
	id := w.next
	w.next++
	w.ids[t] = id
	w.fresh = append(w.fresh, t)
	return id, nil
}

// rankIDs packs r's title and text stems as ids for its docs_rank row:
// a row of the batch by its sequences (newDFs), a merged row (put) by
// looking its stems up.
func (w *docWriter) rankIDs(ctx context.Context, r docRow) (title, text []byte, err error) {
	ids, ts, xs := w.batch, r.titleSeq, r.textSeq
	if len(ids) == 0 || ts == nil && xs == nil && (r.titleTerms != "" || r.textTerms != "") {
		var stems []string
		stems, ts, xs = stemSeq(r.titleTerms, r.textTerms, "")
		ids = w.idBuf[:0]
		for _, t := range stems {
			id, err := w.idOf(ctx, t)
			if err != nil {
				return nil, nil, err
			}
			ids = append(ids, id)
		}
		w.idBuf = ids
	}
	// One buffer for both fields, reused row after row: the driver copies
	// what it binds.
	b := appendIDs(w.rankBuf[:0], ts, ids)
	nt := len(b)
	b = appendIDs(b, xs, ids)
	w.rankBuf = b
	return b[:nt:nt], b[nt:], nil
}

// vocab numbers the stems a PostgreSQL archive's searches meet, since its
// rows hold them as text: a term keeps its id for the table's life. A
// table that grows past vocabSize is replaced by an empty one (newVocab),
// and what was numbered by the old one is read again.
type vocab struct {
	mu    sync.Mutex
	ids   map[string]uint32
	terms []string // by id - 1
}

const vocabSize = 1 << 20

// id returns t's id, numbering it when new.
func (v *vocab) id(t string) uint32 {
	id, ok := v.ids[t]
	if !ok {
		v.terms = append(v.terms, t)
		id = uint32(len(v.terms))
		v.ids[t] = id
	}
	return id
}

// pack is a token stream (tokenStream) as packed ids.
func (v *vocab) pack(stream string) []byte {
	b := make([]byte, 0, len(stream)/3+4)
	v.mu.Lock()
	eachStem(stream, func(_ int, t string) { b = binary.AppendUvarint(b, uint64(v.id(t))) })
	v.mu.Unlock()
	return b
}

// termsOf returns the terms of ids (unknown ones as "").
func (v *vocab) termsOf(ids []uint32) []string {
	out := make([]string, len(ids))
	v.mu.Lock()
	for i, id := range ids {
		if id > 0 && int(id) <= len(v.terms) {
			out[i] = v.terms[id-1]
		}
	}
	v.mu.Unlock()
	return out
}

// vocabulary returns the PostgreSQL store's current table, replacing it
// when full.
func (s *Store) vocabulary() *vocab {
	s.vocabMu.Lock()
	defer s.vocabMu.Unlock()
	if s.vocab != nil {
		s.vocab.mu.Lock()
		full := len(s.vocab.ids) > vocabSize
		s.vocab.mu.Unlock()
		if !full {
			return s.vocab
		}
	}
	s.vocab = &vocab{ids: make(map[string]uint32, 1<<14)}
	return s.vocab
}

// allTermIDs reads every docs_terms id, for a migration.
func allTermIDs(ctx context.Context, tx *sql.Tx) (map[string]uint32, error) {
	ids := map[string]uint32{}
	rows, err := tx.QueryContext(ctx, `SELECT term, id FROM docs_terms`)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var t string
		var id uint32
		if err := rows.Scan(&t, &id); err != nil {
			return nil, err
		}
		ids[t] = id
	}
	return ids, rows.Err()
}

// packRankRows converts docs_rank's stems from text to packed ids
// (migration 7), in place: docs_terms has its ids by then.
func packRankRows(ctx context.Context, tx *sql.Tx) error {
	ids, err := allTermIDs(ctx, tx)
	if err != nil {
		return err
	}
	upd, err := tx.PrepareContext(ctx, `UPDATE docs_rank SET title_ids = ?, text_ids = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer upd.Close()
	pack := func(stream string, b []byte) ([]byte, error) {
		var bad error
		eachStem(stream, func(_ int, t string) {
			id, ok := ids[t]
			if !ok && bad == nil {
				bad = fmt.Errorf("stem %q not in docs_terms", t)
			}
			b = binary.AppendUvarint(b, uint64(id))
		})
		return b, bad
	}
	type row struct {
		id          int64
		title, text string
	}
	// A chunk at a time, so a large archive's rows are never all in memory.
	var last int64
	for {
		rs, err := tx.QueryContext(ctx, `SELECT id, title_terms, text_terms FROM docs_rank WHERE id > ? ORDER BY id LIMIT 5000`, last)
		if err != nil {
			return err
		}
		var chunk []row
		for rs.Next() {
			var r row
			if err := rs.Scan(&r.id, &r.title, &r.text); err != nil {
				rs.Close()
				return err
			}
			chunk = append(chunk, r)
		}
		rs.Close()
		if err := rs.Err(); err != nil {
			return err
		}
		if len(chunk) == 0 {
			return nil
		}
		buf := make([]byte, 0, 4096) // never nil: the driver binds a nil blob as NULL
		for _, r := range chunk {
			title, err := pack(r.title, buf[:0])
			if err != nil {
				return fmt.Errorf("document %d: %w", r.id, err)
			}
			nt := len(title)
			all, err := pack(r.text, title)
			if err != nil {
				return fmt.Errorf("document %d: %w", r.id, err)
			}
			buf = all
			if _, err := upd.ExecContext(ctx, all[:nt:nt], all[nt:], r.id); err != nil {
				return err
			}
		}
		last = chunk[len(chunk)-1].id
	}
}
