package archive

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"slices"
	"strings"
	"sync"
)

// On SQLite a term's postings (the ids of the documents holding it) are
// blocks of docs_postings (migration 8), read by the first stage one
// block at a time: a block is one row, its ids ascending, delta-coded as
// uvarints, so reading a common term's 20,000 ids is some ten rows and a
// loop over bytes rather than 20,000 steps of FTS5's cursor, which made a
// third of a search's time.
//
// A block's rowid is its key: the term's docs_terms id, the field (any,
// or the title) and the block's first id, packed so that a term's blocks
// of one field are one rowid range, in id order (postKey). The blocks of
// a term and field hold disjoint, ascending id ranges, so its lowest ids
// are its first blocks'. A write appends a term's new ids to its last
// block while that holds fewer than blockIDs; a delete or a re-stemmed
// document rewrites the blocks its ids fall in.

// blockIDs is the most ids a block is filled to: about 1–3 KB for a
// common term, within what SQLite keeps of a row in its b-tree page.
const blockIDs = 1024

// Fields a term's postings are kept for: documents holding it anywhere
// (title, text or publisher), and those holding it in their title.
const (
	fieldAny   = 0
	fieldTitle = 1
)

// maxPostingID is the largest document id postKey can hold (2³¹ − 1).
const maxPostingID = 1<<31 - 1

// postKey packs a term id, a field and a block's first id into a rowid:
// term·2³² + field·2³¹ + lo. Term ids are below 2³¹ (they are numbered
// one by one from 1), so the key is positive.
func postKey(term uint32, field int, lo int64) int64 {
	return int64(term)<<32 | int64(field)<<31 | lo
}

// postRange is the rowid range of a term's blocks of one field.
func postRange(term uint32, field int) (from, to int64) {
	return postKey(term, field, 0), postKey(term, field, maxPostingID)
}

// appendBlock appends ids (ascending) delta-coded after prev (0 for a
// block's first id).
func appendBlock(b []byte, prev int64, ids []int64) []byte {
	for _, id := range ids {
		b = binary.AppendUvarint(b, uint64(id-prev))
		prev = id
	}
	return b
}

// appendRun appends ids (ascending, past the block's last) as a run of
// their own: a 0, which no delta is (ids only ascend), then the first id
// whole and the rest as deltas. A write appends a run to a block's bytes
// in SQL, without reading them.
func appendRun(b []byte, ids []int64) []byte {
	return appendBlock(append(b, 0), 0, ids)
}

// decodeBlock appends a block's ids to out, at most limit of them (≤ 0:
// all); a malformed block is an error, never a wrong id.
func decodeBlock(out []int64, b []byte, limit int) ([]int64, error) {
	var prev int64
	for len(b) > 0 && (limit <= 0 || len(out) < limit) {
		d, k := binary.Uvarint(b)
		if k <= 0 {
			return out, errors.New("postings block: bad id")
		}
		b = b[k:]
		id := prev + int64(d)
		if d == 0 { // a run (appendRun): its first id whole
			x, k := binary.Uvarint(b)
			if k <= 0 || int64(x) <= prev {
				return out, errors.New("postings block: bad run")
			}
			b, id = b[k:], int64(x)
		}
		if d > maxPostingID || id > maxPostingID {
			return out, errors.New("postings block: bad id")
		}
		prev = id
		out = append(out, id)
	}
	return out, nil
}

// readPostings returns the first limit ids (ascending) of the documents
// holding the term with docs_terms id term in field: a term no document
// holds (id 0) has none. size is how many there may be (its document
// count), to make room for them at once.
func (s *Store) readPostings(ctx context.Context, term uint32, field, limit, size int) ([]int64, error) {
	if term == 0 {
		return nil, nil
	}
	from, to := postRange(term, field)
	rows, err := s.query(ctx, `SELECT ids FROM docs_postings WHERE block BETWEEN ? AND ? ORDER BY block`, from, to)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	out := make([]int64, 0, max(min(limit, size), 0))
	for len(out) < limit && rows.Next() {
		var b sql.RawBytes
		if err := rows.Scan(&b); err != nil {
			return nil, err
		}
		if out, err = decodeBlock(out, b, limit); err != nil {
			return nil, err
		}
	}
	return out, rows.Err()
}

// postChange is how a transaction moves one term's postings of one
// field: ids added and removed, each sorted and compacted before the
// flush.
type postChange struct {
	add, del []int64
}

// postTerm is a term id and a field, the key of a transaction's changes.
type postTerm struct {
	term  uint32
	field int
}

// comparePostTerms orders terms as their blocks' keys are.
func comparePostTerms(a, b postTerm) int {
	return cmp.Or(cmp.Compare(a.term, b.term), cmp.Compare(a.field, b.field))
}

// addPostings records that document id now holds the terms (docs_terms
// ids) in field.
func (w *docWriter) addPostings(id int64, field int, terms []uint32) {
	for _, t := range terms {
		c := w.change(t, field)
		c.add = append(c.add, id)
	}
}

// delPostings records that document id no longer holds the terms in
// field.
func (w *docWriter) delPostings(id int64, field int, terms []uint32) {
	for _, t := range terms {
		c := w.change(t, field)
		c.del = append(c.del, id)
	}
}

// change is the transaction's change of term t's postings in field.
func (w *docWriter) change(t uint32, field int) *postChange {
	if w.postings == nil {
		w.postings = make(map[postTerm]*postChange) // merged and deleted pages' terms; new pages' go in batchAdds
	}
	k := postTerm{t, field}
	c := w.postings[k]
	if c == nil {
		c = &postChange{}
		w.postings[k] = c
	}
	return c
}

// stemIDs are the docs_terms ids of the distinct stems of token streams.
func (w *docWriter) stemIDs(ctx context.Context, streams ...string) ([]uint32, error) {
	stems := distinctStems(streams...)
	ids := make([]uint32, len(stems))
	for i, t := range stems {
		id, err := w.idOf(ctx, t)
		if err != nil {
			return nil, err
		}
		ids[i] = id
	}
	return ids, nil
}

// indexDoc records document id's postings: r's distinct stems under
// fieldAny and its title's under fieldTitle. A row of the batch has them
// as batch indices (newDFs); a merged row's are looked up.
func (w *docWriter) indexDoc(ctx context.Context, id int64, r docRow) error {
	if id > maxPostingID {
		return fmt.Errorf("document id %d is past the archive's limit of %d", id, maxPostingID)
	}
	if r.batchStems != nil && len(w.batch) > 0 {
		// By the stems' indices in the batch, hashing nothing: a
		// batch's documents hold a few hundred thousand stems.
		if w.batchAdds == nil {
			w.batchAdds = make([][]int64, 2*len(w.batch))
		}
		for _, k := range r.batchStems {
			w.batchAdds[2*k] = append(w.batchAdds[2*k], id)
		}
		for _, k := range r.titleSeq {
			if l := w.batchAdds[2*k+1]; len(l) == 0 || l[len(l)-1] != id { // a title may repeat a word
				w.batchAdds[2*k+1] = append(l, id)
			}
		}
		return nil
	}
	all, err := w.stemIDs(ctx, r.titleTerms, r.textTerms, r.pubTerms)
	if err != nil {
		return err
	}
	title, err := w.stemIDs(ctx, r.titleTerms)
	if err != nil {
		return err
	}
	w.addPostings(id, fieldAny, all)
	w.addPostings(id, fieldTitle, title)
	return nil
}

// unindexDoc records that document id, stored as old, leaves its terms'
// postings.
func (w *docWriter) unindexDoc(ctx context.Context, id int64, old docRow) error {
	all, err := w.stemIDs(ctx, old.titleTerms, old.textTerms, old.pubTerms)
	if err != nil {
		return err
	}
	title, err := w.stemIDs(ctx, old.titleTerms)
	if err != nil {
		return err
	}
	w.delPostings(id, fieldAny, all)
	w.delPostings(id, fieldTitle, title)
	return nil
}

// blockRows is the head of an insert of blocks (rowWriter), and
// insertBlock an insert of one.
const (
	blockRows   = `INSERT INTO docs_postings (block, hi, n, ids) VALUES `
	insertBlock = blockRows + `(?, ?, ?, ?)`
)

// postStmts are the statements flushBlocks writes docs_postings with.
type postStmts struct {
	span, ins, upd, del *sql.Stmt
}

// flushBlocks writes the transaction's postings changes to docs_postings,
// term by term in key order. Ids only added past a term's last id (every
// new document's) go at the end of its last block, or into new blocks
// when it is full; anything else rewrites the blocks the ids fall in.
func (w *docWriter) flushBlocks(ctx context.Context) error {
	if err := w.appendNew(ctx); err != nil {
		return fmt.Errorf("archive: postings: %w", err)
	}
	if len(w.postings) == 0 {
		return nil
	}
	var st postStmts
	for _, p := range []struct {
		st **sql.Stmt
		q  string
	}{
		// The blocks that may hold ids in [lo, hi]: those starting at or
		// before hi, from the last starting at or before lo on.
		{&st.span, `SELECT block, hi, n, ids FROM docs_postings WHERE block BETWEEN
	coalesce((SELECT max(block) FROM docs_postings WHERE block BETWEEN ? AND ?), ?) AND ? ORDER BY block`},
		{&st.ins, insertBlock},
		{&st.upd, `UPDATE docs_postings SET hi = ?, n = ?, ids = ? WHERE block = ?`},
		{&st.del, `DELETE FROM docs_postings WHERE block = ?`},
	} {
		var err error
		if *p.st, err = w.tx.PrepareContext(ctx, p.q); err != nil {
			return fmt.Errorf("archive: postings: %w", err)
		}
		defer (*p.st).Close()
	}
	keys := slices.SortedFunc(maps.Keys(w.postings), comparePostTerms)
	var buf []byte
	// The terms' last blocks are read a few thousand terms a statement
	// (a statement each was most of an import's writing), those of terms
	// numbered in this transaction not at all: they have none.
	fresh := w.freshTerms()
	const chunk = 4096
	for start := 0; start < len(keys); start += chunk {
		part := keys[start:min(start+chunk, len(keys))]
		old := make([]postTerm, 0, len(part))
		for _, k := range part {
			if !fresh[k.term] {
				old = append(old, k)
			}
		}
		last, err := w.lastBlocks(ctx, old, true)
		if err != nil {
			return fmt.Errorf("archive: postings: %w", err)
		}
		for _, k := range part {
			c := w.postings[k]
			add, del := net(c.add, c.del)
			if len(add) == 0 && len(del) == 0 {
				continue
			}
			if buf, err = w.flushTerm(ctx, st, k, last[k], add, del, buf); err != nil {
				return fmt.Errorf("archive: postings: %w", err)
			}
		}
	}
	return nil
}

// freshTerms are the ids of the terms numbered in this transaction.
func (w *docWriter) freshTerms() map[uint32]bool {
	fresh := make(map[uint32]bool, len(w.fresh))
	for _, t := range w.fresh {
		fresh[w.ids[t]] = true
	}
	return fresh
}

// appendNew writes the postings of the batch's new documents under the
// terms nothing else in the transaction changed: their ids are past every
// id the blocks hold (a new document's id is the largest), so they go at
// the end of the term's last block, appended in SQL (appendRun) when it
// has room for them and ends before them; a term numbered in this
// transaction has no block yet, and gets new ones. What is left joins
// the terms' changes (flushTerm), as do the other terms' new ids.
func (w *docWriter) appendNew(ctx context.Context) error {
	if len(w.batchAdds) == 0 {
		return nil
	}
	fresh := w.freshTerms()
	// In key order, so the writes walk the table from one end to the
	// other.
	var order []int
	for i, ids := range w.batchAdds {
		if len(ids) > 0 {
			order = append(order, i)
		}
	}
	key := func(i int) postTerm { return postTerm{w.batch[i/2], i % 2} }
	slices.SortFunc(order, func(a, b int) int { return comparePostTerms(key(a), key(b)) })
	var todo []int
	var old []postTerm
	for _, i := range order {
		k := key(i)
		if c := w.postings[k]; c != nil {
			c.add = append(c.add, w.batchAdds[i]...)
			continue
		}
		todo = append(todo, i)
		if !fresh[k.term] {
			old = append(old, k)
		}
	}
	heads, err := w.heads(ctx, old)
	if err != nil {
		return err
	}
	// Appends and new blocks go many rows a statement (a statement a term
	// and field was a third of an import's writing).
	ins := newRowWriter(w.tx, blockRows, "", 4)
	app := newRowWriter(w.tx, blockRows,
		` ON CONFLICT (block) DO UPDATE SET ids = CAST(ids || excluded.ids AS BLOB), n = n + excluded.n, hi = excluded.hi`, 4)
	defer ins.close()
	defer app.close()
	for _, i := range todo {
		ids := w.batchAdds[i]
		k := key(i)
		h, ok := heads[k]
		switch {
		case !ok: // a term numbered in this transaction, or one with no block
			for len(ids) > 0 {
				part := ids[:min(blockIDs, len(ids))]
				ids = ids[len(part):]
				if err := ins.add(ctx, postKey(k.term, k.field, part[0]), part[len(part)-1], len(part), appendBlock(nil, 0, part)); err != nil {
					return err
				}
				w.newHeads[k] = blockHead{key: postKey(k.term, k.field, part[0]), hi: part[len(part)-1], n: len(part)}
			}
		case h.n+len(ids) <= blockIDs && h.hi < ids[0]:
			if err := app.add(ctx, h.key, ids[len(ids)-1], len(ids), appendRun(nil, ids)); err != nil {
				return err
			}
			w.newHeads[k] = blockHead{key: h.key, hi: ids[len(ids)-1], n: h.n + len(ids)}
		default: // the last block is full
			c := w.change(k.term, k.field)
			c.add = append(c.add, ids...)
		}
	}
	if err := ins.flush(ctx); err != nil {
		return err
	}
	return app.flush(ctx)
}

// blockHead is a block's key, last id and size, without its ids.
type blockHead struct {
	key, hi int64
	n       int
}

// heads gives the last block's head of each of the terms ks that has
// one: from the store's cache when nothing was written since it was
// filled, else read (lastBlocks).
func (w *docWriter) heads(ctx context.Context, ks []postTerm) (map[postTerm]blockHead, error) {
	if w.newHeads == nil {
		w.newHeads = make(map[postTerm]blockHead, len(ks))
	}
	c := &w.s.heads
	out := make(map[postTerm]blockHead, len(ks))
	var todo []postTerm
	c.mu.Lock()
	if c.version == w.v0 && c.m != nil {
		for _, k := range ks {
			if h, ok := c.m[k]; ok {
				out[k] = h
			} else {
				todo = append(todo, k)
			}
		}
	} else {
		todo = ks
	}
	c.mu.Unlock()
	read, err := w.lastBlocks(ctx, todo, false)
	if err != nil {
		return nil, err
	}
	for k, b := range read {
		out[k] = b.blockHead
		w.newHeads[k] = b.blockHead // still the head after the commit unless changed below
	}
	return out, nil
}

// headCache remembers the heads of terms' last blocks as of a version of
// docs_stats, which every write transaction moves: valid only while the
// version is the one it was filled at, so another process's (or
// connection's) write makes it forget everything. Cleared when full.
type headCache struct {
	mu      sync.Mutex
	version int64
	m       map[postTerm]blockHead
}

const headCacheSize = 1 << 18

// committed records a transaction's heads: it began at version v0 and
// committed at v1; set are heads known after it, gone those of terms its
// general path rewrote.
func (c *headCache) committed(v0, v1 int64, set map[postTerm]blockHead, gone map[postTerm]*postChange) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.version != v0 || c.m == nil || len(c.m)+len(set) > headCacheSize {
		c.m = make(map[postTerm]blockHead, min(headCacheSize, max(len(set), 4096)))
	}
	c.version = v1
	if len(set) > headCacheSize {
		return
	}
	for k, h := range set {
		c.m[k] = h
	}
	for k := range gone {
		delete(c.m, k)
	}
}

// rowWriter writes rows many a statement: an INSERT's head (through
// VALUES), rows of cols values each, and its tail (an upsert's clause).
type rowWriter struct {
	tx         *sql.Tx
	head, tail string
	cols       int
	args       []any
	full       *sql.Stmt
}

// rowsAtOnce is how many rows a rowWriter statement writes.
const rowsAtOnce = 128

func newRowWriter(tx *sql.Tx, head, tail string, cols int) *rowWriter {
	return &rowWriter{tx: tx, head: head, tail: tail, cols: cols}
}

// add writes a row of r.cols values, once rowsAtOnce are waiting.
func (r *rowWriter) add(ctx context.Context, vals ...any) error {
	r.args = append(r.args, vals...)
	if len(r.args) < r.cols*rowsAtOnce {
		return nil
	}
	if r.full == nil {
		var err error
		if r.full, err = r.tx.PrepareContext(ctx, r.query(rowsAtOnce)); err != nil {
			return err
		}
	}
	_, err := r.full.ExecContext(ctx, r.args...)
	r.args = r.args[:0]
	return err
}

func (r *rowWriter) query(rows int) string {
	var b strings.Builder
	b.WriteString(r.head)
	row := "(" + strings.Repeat("?, ", r.cols-1) + "?)"
	for i := range rows {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(row)
	}
	b.WriteString(r.tail)
	return b.String()
}

// flush writes the rows still waiting.
func (r *rowWriter) flush(ctx context.Context) error {
	if len(r.args) == 0 {
		return nil
	}
	_, err := r.tx.ExecContext(ctx, r.query(len(r.args)/r.cols), r.args...)
	r.args = r.args[:0]
	return err
}

func (r *rowWriter) close() {
	if r.full != nil {
		r.full.Close()
	}
}

// lastBlocks reads the last block of each of the terms ks that has one,
// its ids too when withIDs (a head alone is all an append needs).
func (w *docWriter) lastBlocks(ctx context.Context, ks []postTerm, withIDs bool) (map[postTerm]*block, error) {
	out := make(map[postTerm]*block, len(ks))
	cols := "j.key, p.block, p.hi, p.n"
	if withIDs {
		cols += ", p.ids"
	}
	const chunk = 4096
	for start := 0; start < len(ks); start += chunk {
		part := ks[start:min(start+chunk, len(ks))]
		from := make([]int64, len(part))
		for i, k := range part {
			from[i], _ = postRange(k.term, k.field)
		}
		arg, err := json.Marshal(from)
		if err != nil {
			return nil, err
		}
		rows, err := w.tx.QueryContext(ctx, `SELECT `+cols+` FROM json_each(?) j
JOIN docs_postings p ON p.block = (SELECT max(block) FROM docs_postings WHERE block BETWEEN j.value AND j.value + ?)`,
			string(arg), int64(maxPostingID))
		if err != nil {
			return nil, err
		}
		for rows.Next() {
			var i int
			b := new(block)
			dest := []any{&i, &b.key, &b.hi, &b.n, &b.ids}
			if !withIDs {
				dest = dest[:4]
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			if i < 0 || i >= len(part) {
				rows.Close()
				return nil, fmt.Errorf("last block of term %d of %d", i, len(part))
			}
			out[part[i]] = b
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// net is a term's change as ids to add and ids to remove, each sorted:
// a document put twice in one transaction may leave a term, join it again,
// or both, and each add or remove flips whether it holds the term, so
// what counts is how many of each there were.
func net(add, del []int64) ([]int64, []int64) {
	if len(del) == 0 {
		slices.Sort(add)
		return slices.Compact(add), nil
	}
	moved := make(map[int64]int, len(add)+len(del))
	for _, id := range add {
		moved[id]++
	}
	for _, id := range del {
		moved[id]--
	}
	var a, d []int64
	for id, m := range moved {
		switch {
		case m > 0:
			a = append(a, id)
		case m < 0:
			d = append(d, id)
		}
	}
	slices.Sort(a)
	slices.Sort(d)
	return a, d
}

// block is one docs_postings row, read.
type block struct {
	blockHead
	ids []byte
}

// flushTerm writes term k's change, its last block (nil: none) read.
func (w *docWriter) flushTerm(ctx context.Context, st postStmts, k postTerm, last *block, add, del []int64, buf []byte) ([]byte, error) {
	from, _ := postRange(k.term, k.field)
	found := last != nil
	if len(del) == 0 && (!found || add[0] > last.hi) {
		// Appended: into the last block while it has room, the rest in
		// new blocks.
		if found && last.n < blockIDs {
			take := min(blockIDs-last.n, len(add))
			buf = appendBlock(append(buf[:0], last.ids...), last.hi, add[:take])
			if _, err := st.upd.ExecContext(ctx, add[take-1], last.n+take, buf, last.key); err != nil {
				return buf, err
			}
			add = add[take:]
		}
		return w.insertBlocks(ctx, st, k, add, buf)
	}
	// Rewritten: the blocks that may hold the ids touched, merged with
	// the change and cut into full blocks again.
	lo := add0(add, del)
	hi := max(lastOf(add), lastOf(del))
	rows, err := st.span.QueryContext(ctx, from, postKey(k.term, k.field, lo), postKey(k.term, k.field, lo), postKey(k.term, k.field, hi))
	if err != nil {
		return buf, err
	}
	var ids []int64
	var keys []int64
	for rows.Next() {
		var b block
		if err := rows.Scan(&b.key, &b.hi, &b.n, &b.ids); err != nil {
			rows.Close()
			return buf, err
		}
		keys = append(keys, b.key)
		if ids, err = decodeBlock(ids, b.ids, 0); err != nil {
			rows.Close()
			return buf, err
		}
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return buf, err
	}
	for _, key := range keys {
		if _, err := st.del.ExecContext(ctx, key); err != nil {
			return buf, err
		}
	}
	merged := mergeIDs(ids, add, del)
	return w.insertBlocks(ctx, st, k, merged, buf)
}

// add0 is the least id of two sorted lists, one of which is not empty.
func add0(add, del []int64) int64 {
	switch {
	case len(add) == 0:
		return del[0]
	case len(del) == 0:
		return add[0]
	}
	return min(add[0], del[0])
}

func lastOf(ids []int64) int64 {
	if len(ids) == 0 {
		return 0
	}
	return ids[len(ids)-1]
}

// mergeIDs is the sorted union of ids and add, less del (all sorted).
func mergeIDs(ids, add, del []int64) []int64 {
	out := make([]int64, 0, len(ids)+len(add))
	i, j := 0, 0
	for i < len(ids) || j < len(add) {
		var x int64
		switch {
		case j == len(add) || i < len(ids) && ids[i] < add[j]:
			x = ids[i]
			i++
		case i == len(ids) || add[j] < ids[i]:
			x = add[j]
			j++
		default: // in both
			x = ids[i]
			i++
			j++
		}
		if _, gone := slices.BinarySearch(del, x); !gone {
			out = append(out, x)
		}
	}
	return out
}

// insertBlocks writes ids (ascending, past any block of the term's they
// do not belong to) as new full blocks.
func (w *docWriter) insertBlocks(ctx context.Context, st postStmts, k postTerm, ids []int64, buf []byte) ([]byte, error) {
	for len(ids) > 0 {
		part := ids[:min(blockIDs, len(ids))]
		ids = ids[len(part):]
		buf = appendBlock(buf[:0], 0, part)
		if _, err := st.ins.ExecContext(ctx, postKey(k.term, k.field, part[0]), part[len(part)-1], len(part), buf); err != nil {
			return buf, err
		}
	}
	return buf, nil
}

// buildPostings fills docs_postings from the stems the documents hold
// (migration 8), in id order, each term's ids cut into full blocks as
// they come.
func buildPostings(ctx context.Context, tx *sql.Tx) error {
	ids, err := allTermIDs(ctx, tx)
	if err != nil {
		return err
	}
	ins, err := tx.PrepareContext(ctx, insertBlock)
	if err != nil {
		return err
	}
	defer ins.Close()
	// Each term's open block is kept encoded as it will be stored, one
	// to three bytes an id rather than eight: at 100k pages the open
	// blocks of frequent terms were most of the migration's memory.
	type openBlock struct {
		enc         []byte
		first, last int64
		n           int
	}
	put := func(k postTerm, b *openBlock) error {
		_, err := ins.ExecContext(ctx, postKey(k.term, k.field, b.first), b.last, b.n, b.enc)
		b.enc, b.n = b.enc[:0], 0
		return err
	}
	open := map[postTerm]*openBlock{}
	add := func(id int64, field int, stems []string) error {
		for _, t := range stems {
			term, ok := ids[t]
			if !ok {
				return fmt.Errorf("document %d: stem %q has no docs_terms row", id, t)
			}
			k := postTerm{term, field}
			b := open[k]
			if b == nil {
				b = &openBlock{}
				open[k] = b
			}
			if b.n == 0 {
				b.first, b.last = id, 0
			}
			b.enc, b.last = appendBlock(b.enc, b.last, []int64{id}), id
			if b.n++; b.n == blockIDs {
				if err := put(k, b); err != nil {
					return err
				}
			}
		}
		return nil
	}
	// Read a chunk of documents at a time: the statement is not kept open
	// across the inserts.
	for last := int64(0); ; {
		rows, err := tx.QueryContext(ctx, `SELECT id, title_terms, text_terms, publisher_terms FROM docs WHERE id > ? ORDER BY id LIMIT 5000`, last)
		if err != nil {
			return err
		}
		type doc struct {
			id               int64
			title, text, pub string
		}
		var docs []doc
		for rows.Next() {
			var d doc
			if err := rows.Scan(&d.id, &d.title, &d.text, &d.pub); err != nil {
				rows.Close()
				return err
			}
			docs = append(docs, d)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		if len(docs) == 0 {
			break
		}
		for _, d := range docs {
			if d.id > maxPostingID {
				return fmt.Errorf("document id %d is past the archive's limit of %d", d.id, maxPostingID)
			}
			if err := add(d.id, fieldAny, distinctStems(d.title, d.text, d.pub)); err != nil {
				return err
			}
			if err := add(d.id, fieldTitle, distinctStems(d.title)); err != nil {
				return err
			}
		}
		last = docs[len(docs)-1].id
		if err := ctx.Err(); err != nil {
			return err
		}
	}
	for _, k := range slices.SortedFunc(maps.Keys(open), comparePostTerms) {
		if b := open[k]; b.n > 0 {
			if err := put(k, b); err != nil {
				return err
			}
		}
	}
	return nil
}
