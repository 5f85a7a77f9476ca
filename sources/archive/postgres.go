package archive

import (
	"cmp"
	"context"
	"embed"
	"encoding/binary"
	"errors"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgtype"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/musecheck/muse/sources/pgdb"
)

// The archive on a newsroom's PostgreSQL: the same tables (named archive_*
// there, beside the other stores' tables), the same statements, and the
// same stems. A term's postings are rows of archive_postings (migration
// 5): a batch of documents appends, through COPY, one row per term it
// holds with the batch's ids holding it (copyNew), so an import neither
// updates an index per posting nor a row another importer writes. A
// term's document count is the sum of its rows' counts, exact and kept by
// the same rows. The collection statistics are a row kept by every write,
// as on SQLite. The first stage and the rerank are the same Go code on
// both engines, reading the same counts, so they rank the same documents
// the same way.

//go:embed migrations
var pgMigrations embed.FS

// openPostgres opens the archive in the database at rawURL and brings its
// schema up to date.
func openPostgres(ctx context.Context, rawURL string) (*Store, error) {
	pool, db, err := pgdb.OpenMigrated(ctx, rawURL, "archive", pgMigrations, "migrations/postgres")
	if err != nil {
		return nil, fmt.Errorf("open archive: %w", err)
	}
	s := &Store{db: db, pool: pool, postgres: true, path: pgdb.Redact(rawURL)}
	if err := s.fillDomainsPostgres(ctx); err != nil {
		s.Close()
		return nil, fmt.Errorf("open archive: %w", err)
	}
	return s, nil
}

// pgTables finds the tables' SQLite names in a statement.
var pgTables = regexp.MustCompile(`\b(docs|docs_stats|pages|claims)\b`)

var pgNames = map[string]string{"docs": "archive_docs", "docs_stats": "archive_stats", "pages": "archive_pages", "claims": "archive_claims"}

// sql returns a statement written for SQLite as the engine wants it: on
// PostgreSQL the tables' archive_* names and $n placeholders. Statements
// name tables only as tables (no column is called docs, pages or claims)
// and hold no ? inside a string literal.
func (s *Store) sql(q string) string {
	if !s.postgres {
		return q
	}
	return pgdb.Rebind(pgTables.ReplaceAllStringFunc(q, func(t string) string { return pgNames[t] }))
}

// tsQuote makes a stem a tsquery operand: quoted, so that nothing in it
// reads as an operator.
func tsQuote(t string) string {
	return `'` + strings.NewReplacer(`\`, `\\`, `'`, `''`).Replace(t) + `'`
}

// tsOr matches documents holding any of the stems.
func tsOr(ts []string) string {
	q := make([]string, len(ts))
	for i, t := range ts {
		q[i] = tsQuote(t)
	}
	return strings.Join(q, " | ")
}

// titleMark marks a title's stems in archive_postings (see migration 5):
// no stem holds it, since stems are letters, digits and marks.
const titleMark = "!"

// maxTerm is the longest term archive_postings keeps, in bytes: an index
// key's limit leaves room for this (a lexeme's limit in archive_terms
// before, so an existing archive's postings keep the same terms).
const maxTerm = 2047

// postingTerms are the terms whose postings list a document: its distinct
// stems of every field, then its title's again under titleMark (so the
// counted stems are a prefix, see countedStems), each in the order of its
// first occurrence. A stem longer than maxTerm is left out.
// archive_doc_terms (migration 5) computes the same set on the server, for
// the delete trigger.
func postingTerms(r docRow) []string {
	terms := slices.DeleteFunc(distinctStems(r.titleTerms, r.textTerms, r.pubTerms), func(t string) bool { return len(t) > maxTerm })
	// A title's few stems are told apart by a look at the marks so far,
	// cheaper than a map of their own.
	marked := len(terms)
	eachStem(r.titleTerms, func(_ int, t string) {
		if len(t) < maxTerm && !slices.ContainsFunc(terms[marked:], func(m string) bool { return m[len(titleMark):] == t }) {
			terms = append(terms, titleMark+t)
		}
	})
	return terms
}

// pgTermDocs is termDocs' statement on PostgreSQL: for each term of the
// JSON array (a stem, or a title's stem under titleMark, see
// pgTermOperand), a comma-separated list of ids, from its
// archive_postings rows, that holds the lowest limit documents holding it:
// one index range a term. The list is in no particular order and may hold
// more than limit ids; termDocs sorts it and keeps the first limit.
//
// A common term's rows hold far more ids than limit (121,688 in 303 rows
// for a word of one page in eight at 1M pages), and unnesting them all
// cost 30-100 ms a term. So the statement first finds h, the least hi
// such that the rows ending at or below it hold limit ids (from the rows'
// hi and n alone): the limit lowest ids are then all at most h, so only
// the rows starting at or below h are read, each sent whole
// (array_to_string, in C). Every id at or below h is in one of them; the
// ids past h that a row straddling h also holds are larger than all of
// those, so the limit lowest of what is sent are the term's limit lowest.
// A row's lo and hi are bounds of its ids (still bounds after a removal),
// which is all this needs. A term of at most limit ids (its count read
// from the index alone) is read whole, without looking for h: its rows
// would be read twice.
//
// Unnesting the rows into a row an id, to keep those up to h and sort them
// here for the limit, took three quarters of the statement's time (at 1M
// pages 16-28 ms against 4-7 ms for three common words). OFFSET 0 keeps h
// computed once a term: the planner would otherwise copy it into each
// place it is used.
const pgTermDocs = `SELECT j.k - 1, coalesce((SELECT string_agg(array_to_string(p.ids, ','), ',')
	FROM archive_postings p WHERE p.term = j.q AND p.lo <= b.h), '')
	FROM json_array_elements_text($2::json) WITH ORDINALITY AS j(q, k),
	LATERAL (SELECT CASE WHEN (SELECT sum(n) FROM archive_postings WHERE term = j.q) > $1
		THEN (SELECT c.hi FROM (SELECT hi, sum(n) OVER (ORDER BY hi) s FROM archive_postings WHERE term = j.q) c
			WHERE c.s >= $1 ORDER BY c.hi LIMIT 1)
		ELSE 9223372036854775807 END AS h OFFSET 0) b`

// pgTermOperand is the archive_postings term of the documents holding
// stem t, or (title) holding it in their title.
func pgTermOperand(t string, title bool) string {
	if title {
		return titleMark + t
	}
	return t
}

// PostgreSQL's SQLSTATEs for a duplicate key, and for a transaction
// aborted to break a deadlock or a serialization conflict.
const (
	uniqueViolation      = "23505"
	deadlockDetected     = "40P01"
	serializationFailure = "40001"
)

// docColumns are the columns of a new document's row, in the order of
// copyRow: what copyNew copies on PostgreSQL and putAllSQLite inserts.
var docColumns = []string{"id", "url", "orig_url", "title", "text", "publisher", "published", "added_at", "updated_at",
	"title_len", "text_len", "lang", "title_terms", "text_terms", "publisher_terms", "domain"}

func copyRow(id int64, r docRow) []any {
	var pub any
	if r.published.Valid {
		pub = r.published.Int64
	}
	return []any{id, r.key, r.url, r.title, r.text, r.publisher, pub, r.at, r.at,
		int32(r.titleLen), int32(r.textLen), r.lang, r.titleTerms, r.textTerms, r.pubTerms, r.domain}
}

// pgInsertNew inserts a document's row (docColumns but its id, which the
// sequence gives) unless its key is stored, and returns its id.
var pgInsertNew = pgdb.Rebind(`INSERT INTO archive_docs (` + strings.Join(docColumns[1:], ", ") + `) VALUES (` +
	strings.TrimSuffix(strings.Repeat("?, ", len(docColumns)-1), ", ") + `) ON CONFLICT (url) DO NOTHING RETURNING id`)

// copyNew stores through the COPY protocol the rows whose key no stored
// document (nor an earlier row) holds, with their postings, and says
// which it stored; the others are for put to merge. Ids come from the
// documents' sequence first, so both tables are copied in one pass each
// (copyPostings).
//
// Other writers may be writing the same keys (READ COMMITTED). The stored
// documents of the keys are locked first, in key order, so that put
// merges each into the row as the last writer committed it, and moves its
// postings while no other writer can; then the new rows are copied, in
// key order too. Should another writer store one of the new keys before
// this one (the COPY waits for its commit and fails on the unique key),
// the round's look-up, locks and copy are undone (a savepoint) and made
// again, finding that writer's row; after copyRounds rounds the
// transaction gives up with errKeysTaken, for write to run again. So a
// writer holds row locks of one round, taken in key order, and waits
// only for keys after those it has taken, and two writers never wait on
// each other in a circle. putAll calls it once for all its rows.
func (w *docWriter) copyNew(ctx context.Context, rows []docRow) ([]bool, error) {
	inserted := make([]bool, len(rows))
	keys := make([]string, len(rows))
	for i, r := range rows {
		keys[i] = r.key
	}
	err := w.conn.Raw(func(dc any) error {
		c := dc.(*stdlib.Conn).Conn()
		for range copyRounds {
			if done, err := w.copyRound(ctx, c, rows, keys, inserted); done || err != nil {
				return err
			}
		}
		return errKeysTaken
	})
	if err != nil {
		return nil, fmt.Errorf("archive %d documents: %w", len(rows), err)
	}
	return inserted, nil
}

// copyRounds bounds how often copyNew looks its keys up again after
// another writer stored one of them: a round is undone only when another
// writer commits one of its keys in the moment between its look-up and
// its copy.
const copyRounds = 8

// errKeysTaken is copyNew giving up after copyRounds rounds, each undone
// by another writer storing one of its keys; retryConflicts runs the
// transaction again.
var errKeysTaken = errors.New("other writers kept storing the same documents")

// copyRound is one look-up and copy of copyNew; it reports false when
// the copy met a key another writer stored and was undone.
func (w *docWriter) copyRound(ctx context.Context, c *pgx.Conn, rows []docRow, keys []string, inserted []bool) (bool, error) {
	// Undone with the copy, the round's locks are taken again in key
	// order by the next.
	if _, err := c.Exec(ctx, `SAVEPOINT archive_copy`); err != nil {
		return false, err
	}
	// pgx returns a failed Query's error in its Rows too, where
	// CollectRows reports it.
	res, _ := c.Query(ctx, `SELECT url FROM archive_docs WHERE url = ANY($1) ORDER BY url COLLATE "C" FOR UPDATE`, keys)
	have, err := pgx.CollectRows(res, pgx.RowTo[string])
	if err != nil {
		return false, err
	}
	stored := make(map[string]bool, len(rows))
	for _, k := range have {
		stored[k] = true
	}
	var fresh []int // first rows of keys not stored
	for i, r := range rows {
		if !stored[r.key] {
			stored[r.key] = true
			fresh = append(fresh, i)
		}
	}
	if len(fresh) == 0 {
		_, err := c.Exec(ctx, `RELEASE SAVEPOINT archive_copy`)
		return err == nil, err
	}
	res, _ = c.Query(ctx, `SELECT nextval(pg_get_serial_sequence('archive_docs', 'id')) FROM generate_series(1, $1)`, len(fresh))
	ids, err := pgx.CollectRows(res, pgx.RowTo[int64])
	if err != nil {
		return false, err
	}
	if len(ids) != len(fresh) {
		return false, fmt.Errorf("%d ids for %d documents", len(ids), len(fresh))
	}
	slices.Sort(ids) // a new document gets a larger id than an older one, as on SQLite
	idOf := make([]int64, len(rows))
	for x, i := range fresh {
		idOf[i] = ids[x]
	}
	byKey := slices.Clone(fresh) // the keys are distinct
	slices.SortFunc(byKey, func(a, b int) int { return strings.Compare(rows[a].key, rows[b].key) })
	_, err = c.CopyFrom(ctx, pgx.Identifier{"archive_docs"}, docColumns, pgx.CopyFromSlice(len(fresh), func(i int) ([]any, error) {
		return copyRow(idOf[byKey[i]], rows[byKey[i]]), nil
	}))
	few := len(fresh) < appendDocs
	if err == nil && !few {
		err = copyPostings(ctx, c, rows, fresh, ids)
	}
	if pe := (*pgconn.PgError)(nil); errors.As(err, &pe) && pe.Code == uniqueViolation {
		if _, err := c.Exec(ctx, `ROLLBACK TO SAVEPOINT archive_copy`); err != nil {
			return false, err
		}
		_, err = c.Exec(ctx, `RELEASE SAVEPOINT archive_copy`)
		return false, err
	}
	if err != nil {
		return false, err
	}
	if _, err := c.Exec(ctx, `RELEASE SAVEPOINT archive_copy`); err != nil {
		return false, err
	}
	// A few documents' postings join the terms' rows with room, when
	// flushPostings writes the transaction's postings; more were copied.
	for x, i := range fresh {
		inserted[i] = true
		w.count(ctx, 1, docRow{}, rows[i], nil)
		if few {
			w.indexPostings(ids[x], docRow{}, rows[i])
		}
	}
	return true, nil
}

// appendDocs is the fewest new documents a copy writes postings rows of
// their own for, one row a term, as an import's batch does. A smaller
// write (a check archives the few pages it read) adds its documents to
// each term's last row with room (flushPostings), else a term would get
// a row of a few ids for every check that met it: 100k pages written 20
// at a time left a term 253 rows on average, up to 5,024, and a search
// there read them all.
const appendDocs = 200

// rowIDs is how many ids a postings row grows to by appends: small
// enough that an append rewrites about 2 KiB (and stays out of TOAST),
// large enough that a term held by a tenth of 1M pages has 500 rows.
const rowIDs = 256

// lockStored is how put's look-up of a stored document ends on
// PostgreSQL, where writers run at once (READ COMMITTED): it locks the
// row, so put reads it as the last writer committed it, and moves its
// postings from the terms it holds, not from a version another writer
// has since replaced. copyNew has locked the rows of putAll's stored keys
// already, in key order. SQLite's IMMEDIATE transactions write one at a
// time: nothing.
func lockStored(postgres bool) string {
	if postgres {
		return " FOR UPDATE"
	}
	return ""
}

// retryConflicts runs fn, a PostgreSQL write, again (up to conflictTries
// in all, after a short pause) when it failed for meeting another writer:
// the server aborted it to break a deadlock (or a serialization failure,
// which READ COMMITTED does not raise today), or copyNew gave up
// (errKeysTaken). copyNew takes a transaction's document locks in key
// order and flushPostings its postings rows' in (term, lo) order, so
// muse's own writers should not deadlock; this is for what else writes
// (another program's transaction, a future statement). fn starts a new
// transaction each time; onConflictRetry, when set (tests), hears each
// retry.
func retryConflicts(ctx context.Context, fn func() error) error {
	for try := 1; ; try++ {
		err := fn()
		if !conflicted(err) || try == conflictTries {
			return err
		}
		if onConflictRetry != nil {
			onConflictRetry(err)
		}
		select {
		case <-ctx.Done():
			return err
		case <-time.After(time.Duration(try*try) * 10 * time.Millisecond):
		}
	}
}

// onConflictRetry, nil but in tests, is called with each error
// retryConflicts runs a write again for.
var onConflictRetry func(error)

// conflictTries bounds retryConflicts' attempts.
const conflictTries = 5

// conflicted says whether err is PostgreSQL aborting a transaction that
// may succeed when run again: deadlock_detected or serialization_failure.
func conflicted(err error) bool {
	pe := (*pgconn.PgError)(nil)
	return errors.As(err, &pe) && (pe.Code == deadlockDetected || pe.Code == serializationFailure) || errors.Is(err, errKeysTaken)
}

// copyPostings appends the postings of the documents rows[fresh[i]],
// whose ids are ids[i] (ascending), to archive_postings: one row per term
// they hold, its ids ascending. The lists are cut from one array, filled
// in a second pass over the documents, so a posting costs one map look-up
// and no allocation.
func copyPostings(ctx context.Context, c *pgx.Conn, rows []docRow, fresh []int, ids []int64) error {
	index := make(map[string]int32, 32768)
	var terms []string
	var counts []int32
	slots := make([]int32, 0, 256*len(fresh)) // each posting's term, document by document
	for _, k := range fresh {
		if rows[k].terms == nil {
			rows[k].terms = postingTerms(rows[k])
		}
		for _, t := range rows[k].terms {
			x, ok := index[t]
			if !ok {
				x = int32(len(terms))
				index[t] = x
				terms, counts = append(terms, t), append(counts, 0)
			}
			counts[x]++
			slots = append(slots, x)
		}
	}
	// In key order, so the index is appended to in one sweep.
	order := make([]int32, len(terms))
	for x := range order {
		order[x] = int32(x)
	}
	slices.SortFunc(order, func(a, b int32) int { return strings.Compare(terms[a], terms[b]) })
	start, next := make([]int32, len(terms)), make([]int32, len(terms))
	at := int32(0)
	for _, x := range order {
		start[x], next[x] = at, at
		at += counts[x]
	}
	flat := make([]int64, len(slots))
	j := 0
	for i, k := range fresh {
		for range rows[k].terms {
			x := slots[j]
			flat[next[x]] = ids[i]
			next[x]++
			j++
		}
	}
	useIDLists(c.TypeMap())
	_, err := c.CopyFrom(ctx, pgx.Identifier{"archive_postings"}, []string{"term", "lo", "hi", "n", "ids"},
		pgx.CopyFromSlice(len(order), func(i int) ([]any, error) {
			x := order[i]
			l := flat[start[x] : start[x]+counts[x]]
			return []any{terms[x], l[0], l[len(l)-1], counts[x], idList(l)}, nil
		}))
	return err
}

// idList is a postings row's ids, sent as a bigint[] by idListCodec.
type idList []int64

// idListCodec is the connection's bigint[] codec with a fast way to send
// an idList in binary: pgx's array codec boxes every element in an
// interface and plans its encoding (0.47 s of muse's CPU per 10k pages
// imported, for 2 million postings). Everything else goes to the codec it
// wraps.
type idListCodec struct{ pgtype.Codec }

func (c idListCodec) PlanEncode(m *pgtype.Map, oid uint32, format int16, value any) pgtype.EncodePlan {
	if _, ok := value.(idList); ok && format == pgtype.BinaryFormatCode {
		return idListPlan{}
	}
	return c.Codec.PlanEncode(m, oid, format, value)
}

type idListPlan struct{}

// Encode writes PostgreSQL's binary array as pgx does: dimensions (1), no
// NULLs, the element type, the length and lower bound (1), then each
// element's length (8) and value, big-endian.
func (idListPlan) Encode(value any, buf []byte) ([]byte, error) {
	ids := value.(idList)
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = binary.BigEndian.AppendUint32(buf, 0)
	buf = binary.BigEndian.AppendUint32(buf, pgtype.Int8OID)
	buf = binary.BigEndian.AppendUint32(buf, uint32(len(ids)))
	buf = binary.BigEndian.AppendUint32(buf, 1)
	buf = slices.Grow(buf, 12*len(ids))
	for _, id := range ids {
		buf = binary.BigEndian.AppendUint32(buf, 8)
		buf = binary.BigEndian.AppendUint64(buf, uint64(id))
	}
	return buf, nil
}

// useIDLists puts idListCodec in front of m's bigint[] codec, once.
func useIDLists(m *pgtype.Map) {
	t, ok := m.TypeForOID(pgtype.Int8ArrayOID)
	if !ok {
		return
	}
	if _, done := t.Codec.(idListCodec); !done {
		m.RegisterType(&pgtype.Type{Name: t.Name, OID: t.OID, Codec: idListCodec{t.Codec}})
	}
}

// countedStems are the terms of postingTerms whose documents the counts
// count: all but the title's marked copies, which come last.
func countedStems(terms []string) []string {
	n := len(terms)
	for n > 0 && strings.HasPrefix(terms[n-1], titleMark) {
		n--
	}
	return terms[:n]
}

// A posting is a document's place in a term's postings, which a put that
// merges a stored document moves (index): docWriter.posts counts each up
// for a term the document gains and down for one it loses, and
// flushPostings writes them before the commit.
type posting struct {
	term string
	id   int64
}

// index records, on PostgreSQL, that document id now holds n's terms
// instead of old's (a zero docRow for a new document).
func (w *docWriter) indexPostings(id int64, old, n docRow) {
	if w.posts == nil {
		w.posts = make(map[posting]int)
	}
	for _, t := range postingTerms(old) {
		w.posts[posting{t, id}]--
	}
	for _, t := range postingTerms(n) {
		w.posts[posting{t, id}]++
	}
}

// flushPostings writes the postings the transaction's puts moved: a
// document lost from a term is taken out of the term's rows (locked
// first, in (term, lo, ctid) order, as the delete trigger locks them: see
// migration 5), and the documents gained by a term are one new row of it.
func (w *docWriter) flushPostings(ctx context.Context) error {
	var gone, add []posting
	for p, n := range w.posts {
		switch {
		case n < 0:
			gone = append(gone, p)
		case n > 0:
			add = append(add, p)
		}
	}
	split := func(ps []posting) ([]string, []int64) {
		slices.SortFunc(ps, func(a, b posting) int {
			return cmp.Or(strings.Compare(a.term, b.term), cmp.Compare(a.id, b.id))
		})
		ts, ids := make([]string, len(ps)), make([]int64, len(ps))
		for i, p := range ps {
			ts[i], ids[i] = p.term, p.id
		}
		return ts, ids
	}
	if len(gone) > 0 {
		ts, ids := split(gone)
		for _, q := range []struct {
			sql  string
			args []any
		}{
			{`SELECT 1 FROM archive_postings p JOIN unnest($1::text[], $2::bigint[]) AS u(t, d)
ON p.term = u.t AND p.lo <= u.d AND u.d <= p.hi AND u.d = ANY(p.ids) ORDER BY p.term, p.lo, p.ctid FOR UPDATE OF p`, []any{ts, ids}},
			{`UPDATE archive_postings p SET ids = array(SELECT x FROM unnest(p.ids) x WHERE x <> ALL(g.ds) ORDER BY x),
	n = (SELECT count(*) FROM unnest(p.ids) x WHERE x <> ALL(g.ds))
FROM (SELECT t, array_agg(d) ds, min(d) lo, max(d) hi FROM unnest($1::text[], $2::bigint[]) AS u(t, d) GROUP BY t) g
WHERE p.term = g.t AND p.lo <= g.hi AND g.lo <= p.hi AND p.ids && g.ds`, []any{ts, ids}},
			{`DELETE FROM archive_postings WHERE term = ANY($1) AND n = 0`, []any{slices.Compact(slices.Clone(ts))}},
		} {
			if _, err := w.tx.ExecContext(ctx, q.sql, q.args...); err != nil {
				return fmt.Errorf("archive: postings: %w", err)
			}
		}
	}
	if len(add) > 0 {
		ts, ids := split(add)
		rows, err := w.tx.QueryContext(ctx, pgRoomRows, ts, rowIDs)
		if err != nil {
			return fmt.Errorf("archive: postings: %w", err)
		}
		var roomTerms, roomRows []string
		for rows.Next() {
			var t, at string
			if err := rows.Scan(&t, &at); err != nil {
				rows.Close()
				return fmt.Errorf("archive: postings: %w", err)
			}
			roomTerms, roomRows = append(roomTerms, t), append(roomRows, at)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return fmt.Errorf("archive: postings: %w", err)
		}
		if _, err := w.tx.ExecContext(ctx, pgAddPostings, ts, ids, roomTerms, roomRows); err != nil {
			return fmt.Errorf("archive: postings: %w", err)
		}
	}
	return nil
}

// pgRoomRows locks, for each term of $1 (sorted, a term once for each
// posting it gains), its last postings row with room for them all ($2 ids
// at most) that no other writer holds, and returns the row's ctid.
// SKIP LOCKED passes over a row another writer holds rather than wait
// for it, so these locks, the transaction's last but the statistics
// row's, never close a circle. pgAddPostings then writes, in a statement
// of its own: under READ COMMITTED its snapshot sees a row as the writer
// before left it, which the lock may have followed past this statement's.
const pgRoomRows = `SELECT g.t, r.ctid::text FROM (SELECT t, count(*) n FROM unnest($1::text[]) t GROUP BY t) g
CROSS JOIN LATERAL (SELECT p.ctid FROM archive_postings p WHERE p.term = g.t AND p.n + g.n <= $2
	ORDER BY p.lo DESC LIMIT 1 FOR UPDATE SKIP LOCKED) r`

// pgAddPostings adds postings ($1 terms, $2 ids, sorted by term): each
// term's to the row pgRoomRows locked for it ($3 terms, $4 ctids), else as
// a new row of its own. New ids mostly come after a row's (a sequence
// gives them), and are then appended as they are; ids of a writer that
// commits after a later one are sorted in.
const pgAddPostings = `WITH g AS (
	SELECT t, array_agg(d ORDER BY d) ds, min(d) lo, max(d) hi, count(*)::integer n
	FROM unnest($1::text[], $2::bigint[]) AS u(t, d) GROUP BY t),
grown AS (
	UPDATE archive_postings p SET ids = CASE WHEN p.hi < g.lo THEN p.ids || g.ds
		ELSE array(SELECT x FROM unnest(p.ids || g.ds) x ORDER BY x) END,
		lo = least(p.lo, g.lo), hi = greatest(p.hi, g.hi), n = p.n + g.n
	FROM unnest($3::text[], $4::text[]::tid[]) AS r(t, at) JOIN g ON g.t = r.t WHERE p.ctid = r.at
	RETURNING p.term)
INSERT INTO archive_postings (term, lo, hi, n, ids)
SELECT t, lo, hi, n, ds FROM g WHERE t NOT IN (SELECT term FROM grown)`

// pgTermCounts is termCounts' statement on PostgreSQL: the document count
// of each term of the JSON array, 0 for a term no document holds.
const pgTermCounts = `SELECT j.k - 1, coalesce((SELECT sum(p.n) FROM archive_postings p WHERE p.term = j.q), 0)
	FROM json_array_elements_text($1::json) WITH ORDINALITY AS j(q, k)`

// importing tells PostgreSQL that the transaction is a batch of an
// import: its commit does not wait for the server to flush its WAL to
// disk (synchronous_commit off, for this transaction only). Nothing is
// given up to a crash of muse; a crash of the server (or its machine)
// right after a commit may lose the last batches committed, up to three
// times wal_writer_delay (600 ms by default), while the archive stays
// consistent: those batches' documents, counts and postings are lost
// together, and adding the file again stores them. On SQLite it does
// nothing.
func (w *docWriter) importing(ctx context.Context) error {
	if !w.s.postgres {
		return nil
	}
	if _, err := w.tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		return fmt.Errorf("archive: import settings: %w", err)
	}
	return nil
}
