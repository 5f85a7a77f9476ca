package watch

import (
	"context"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/sqlitedb"
)

//go:embed migrations
var migrations embed.FS

// DefaultPath is the watch store under muse's data directory.
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "watch.db") }

// Store keeps what `muse watch` has read: each feed's cursor, every post's
// ID (so a post delivered twice is counted once) and the clusters of
// near-duplicate posts with their triage. A SQLite file, or the newsroom's
// PostgreSQL when location is a postgres:// URL. Safe for concurrent use.
type Store struct {
	db       *sql.DB
	postgres bool
	pool     *pgxpool.Pool
	// The statements of a post, prepared once: a transaction of posts
	// runs them on its connection without parsing them again.
	seen, newCluster, grow, post, cursor *sql.Stmt
}

// Open opens (creating and migrating when needed) the store at location.
func Open(ctx context.Context, location string) (*Store, error) {
	if location == "" {
		return nil, errors.New("open watch store: no path given")
	}
	if pgdb.IsURL(location) {
		pool, db, err := pgdb.OpenMigrated(ctx, location, "watch", migrations, "migrations/postgres")
		if err != nil {
			return nil, fmt.Errorf("open watch store: %w", err)
		}
		st := &Store{db: db, postgres: true, pool: pool}
		if err := st.prepare(ctx); err != nil {
			st.Close()
			return nil, fmt.Errorf("open watch store: %w", err)
		}
		return st, nil
	}
	db, err := sqlitedb.Open(location, sqlitedb.Options{Busy: 10 * time.Second, MaxConns: 4, Pragmas: []string{"foreign_keys(ON)"}})
	if err != nil {
		return nil, fmt.Errorf("open watch store %s: %w", location, err)
	}
	sub, _ := fs.Sub(migrations, "migrations/sqlite")
	if err := sqlitedb.Migrate(ctx, db, "watch", sub); err != nil {
		db.Close()
		return nil, fmt.Errorf("open watch store %s: %w", location, err)
	}
	st := &Store{db: db}
	if err := st.prepare(ctx); err != nil {
		st.Close()
		return nil, fmt.Errorf("open watch store %s: %w", location, err)
	}
	return st, nil
}

// prepare prepares the statements of a post.
func (s *Store) prepare(ctx context.Context) error {
	for _, p := range []struct {
		st    **sql.Stmt
		query string
	}{
		{&s.seen, `UPDATE watch_post SET seen_us = ? WHERE id = ?`},
		{&s.newCluster, `INSERT INTO watch_cluster (sketch, first_post, post, lang, image_keys, size,
			first_us, last_us, fact_checks) VALUES (?, ?, ?, ?, ?, 1, ?, ?, ?) RETURNING id`},
		{&s.grow, `UPDATE watch_cluster SET size = size + 1, last_us = ? WHERE id = ? RETURNING size`},
		{&s.post, `INSERT INTO watch_post (id, feed, seen_us, cluster) VALUES (?, ?, ?, ?)`},
		{&s.cursor, cursorUpsert},
	} {
		st, err := s.db.PrepareContext(ctx, s.q(p.query))
		if err != nil {
			return err
		}
		*p.st = st
	}
	return nil
}

// Close closes the database.
func (s *Store) Close() error {
	for _, st := range []*sql.Stmt{s.seen, s.newCluster, s.grow, s.post, s.cursor} {
		if st != nil {
			st.Close()
		}
	}
	err := s.db.Close()
	if s.pool != nil {
		s.pool.Close()
	}
	return err
}

func (s *Store) q(query string) string {
	if s.postgres {
		return pgdb.Rebind(query)
	}
	return query
}

// Cursor is where feed resumes ("" when it has never been read).
func (s *Store) Cursor(ctx context.Context, feed string) (string, error) {
	var c string
	err := s.db.QueryRowContext(ctx, s.q(`SELECT cursor FROM watch_cursor WHERE feed = ?`), feed).Scan(&c)
	if errors.Is(err, sql.ErrNoRows) {
		return "", nil
	}
	if err != nil {
		return "", fmt.Errorf("watch store: cursor of %s: %w", feed, err)
	}
	return c, nil
}

const cursorUpsert = `INSERT INTO watch_cursor (feed, cursor, updated_us) VALUES (?, ?, ?)
	ON CONFLICT (feed) DO UPDATE SET cursor = excluded.cursor, updated_us = excluded.updated_us`

// SetCursor records how far feed has read, with no post.
func (s *Store) SetCursor(ctx context.Context, feed, cursor string) error {
	if _, err := s.cursor.ExecContext(ctx, feed, cursor, time.Now().UnixMicro()); err != nil {
		return fmt.Errorf("watch store: cursor of %s: %w", feed, err)
	}
	return nil
}

// postTx is a transaction of posts and of the cursors they move.
type postTx struct {
	s     *Store
	tx    *sql.Tx
	start time.Time
	posts int
	stmts map[*sql.Stmt]*sql.Stmt // the store's, on the transaction's connection
	// cursors are the feeds' cursors, written when it commits:
	// with the posts before them, and each feed's once however many posts
	// moved it.
	cursors map[string]string
}

// begin opens a postTx. The transaction outlives ctx's cancellation: a
// stop must not roll back the posts of the calls before.
func (s *Store) begin(ctx context.Context) (*postTx, error) {
	tx, err := s.db.BeginTx(context.WithoutCancel(ctx), nil)
	if err != nil {
		return nil, fmt.Errorf("watch store: %w", err)
	}
	return &postTx{s: s, tx: tx, start: time.Now(), stmts: map[*sql.Stmt]*sql.Stmt{}, cursors: map[string]string{}}, nil
}

func (b *postTx) stmt(ctx context.Context, st *sql.Stmt) *sql.Stmt {
	t, ok := b.stmts[st]
	if !ok {
		t = b.tx.StmtContext(ctx, st)
		b.stmts[st] = t
	}
	return t
}

// setCursor moves feed's cursor when b commits.
func (b *postTx) setCursor(feed, cursor string) { b.cursors[feed] = cursor }

// commit writes the cursors and commits.
func (b *postTx) commit(ctx context.Context) error {
	now := time.Now().UnixMicro()
	for feed, cursor := range b.cursors {
		if _, err := b.stmt(ctx, b.s.cursor).ExecContext(ctx, feed, cursor, now); err != nil {
			b.tx.Rollback()
			return fmt.Errorf("watch store: cursor of %s: %w", feed, err)
		}
	}
	if err := b.tx.Commit(); err != nil {
		return fmt.Errorf("watch store: %w", err)
	}
	return nil
}

func (b *postTx) rollback() { b.tx.Rollback() }

// newCluster is what a post that starts a cluster brings.
type newCluster struct {
	sketch     sketch
	post       *posts.Post
	lang       string
	imageKeys  []string
	factChecks []pipeline.FactCheck
}

// add records post id of feed in b: into cluster when it is not 0, else
// into a new cluster made of nc. fresh is false when the post was
// recorded before: then it is only marked seen now, so that a post its
// feed keeps offering (X's eligible posts, polled again and again) is
// remembered, with its cluster, as long as it is offered. The post and its cluster's count are written in the
// transaction that moves the feed's cursor past it: after a crash either all
// three are there or none, and a feed resumed from the cursor kept
// delivers again what was not.
func (s *Store) add(ctx context.Context, b *postTx, feed, id string, cluster int64, nc *newCluster, now time.Time) (clusterID int64, size int, fresh bool, err error) {
	us := now.UnixMicro()
	res, err := b.stmt(ctx, s.seen).ExecContext(ctx, us, id)
	var n int64
	if err == nil {
		n, err = res.RowsAffected()
	}
	switch {
	case err != nil:
		return 0, 0, false, fmt.Errorf("watch store: %w", err)
	case n > 0:
		return 0, 0, false, nil
	}
	if cluster == 0 {
		pj, _ := json.Marshal(nc.post)
		keys, _ := json.Marshal(nc.imageKeys)
		fcs := ""
		if len(nc.factChecks) > 0 {
			b, _ := json.Marshal(nc.factChecks)
			fcs = string(b)
		}
		err = b.stmt(ctx, s.newCluster).QueryRowContext(ctx, nc.sketch.encode(), id, string(pj), nc.lang, string(keys), us, us, fcs).Scan(&clusterID)
		size = 1
	} else {
		clusterID = cluster
		err = b.stmt(ctx, s.grow).QueryRowContext(ctx, us, cluster).Scan(&size)
	}
	if err != nil {
		return 0, 0, false, fmt.Errorf("watch store: cluster: %w", err)
	}
	if _, err := b.stmt(ctx, s.post).ExecContext(ctx, id, feed, us, clusterID); err != nil {
		return 0, 0, false, fmt.Errorf("watch store: post: %w", err)
	}
	return clusterID, size, true, nil
}

// The states of a cluster.
const (
	StateNew       = "new"       // waiting for the checker (or for its score)
	StateHeld      = "held"      // worthy, but the rule held it back (budget, spend cap): see the note
	StateQueued    = "queued"    // a job for the workers
	StateOpened    = "opened"    // opened as a check in the app
	StateDismissed = "dismissed" // not worth checking, said the checker
	StatePinned    = "pinned"    // kept at the top by the checker
)

// Cluster is a post and its near-duplicates, triaged.
type Cluster struct {
	ID     int64      `json:"cluster"`
	PostID string     `json:"post_id"` // the first post's ID
	Post   posts.Post `json:"post"`    // the first post
	Lang   string     `json:"language,omitempty"`
	// Size is how many posts (reposts, copies, near-copies) the cluster
	// holds.
	Size       int                  `json:"size"`
	First      time.Time            `json:"first_seen"`
	Last       time.Time            `json:"last_seen"`
	FactChecks []pipeline.FactCheck `json:"fact_checks,omitempty"`
	// Score is how check-worthy the model found the post, 0 to 1; nil
	// when it was not scored, and ScoreNote says why.
	Score     *float64 `json:"score"`
	ScoreNote string   `json:"score_note,omitempty"`
	State     string   `json:"state"`
	StateNote string   `json:"state_note,omitempty"`
	BatchID   string   `json:"batch_id,omitempty"`
	imageKeys []string
	sketch    sketch
}

// Alert is the repeat-claim alert of the cluster's best fact-check
// ("repeat of a claim PolitiFact rated False on 2020-05-01"), derived from
// it; "" when none matched.
func (c Cluster) Alert() string {
	if len(c.FactChecks) == 0 {
		return ""
	}
	return Alert(c.FactChecks[0])
}

// Alert says that a post repeats the claim f rated.
func Alert(f pipeline.FactCheck) string {
	who := f.Reviewer
	if who == "" {
		who = "a fact-checker"
	}
	if !f.ReviewerVerified {
		who = "a fact-check that claims to be by " + who + " (not verified)"
	}
	s := "repeat of a claim " + who
	if f.Rating != "" {
		s += " rated " + f.Rating
	} else {
		s += " checked"
	}
	if !f.ReviewDate.IsZero() {
		s += " on " + f.ReviewDate.Format(time.DateOnly)
	}
	return s
}

const clusterColumns = `id, first_post, post, lang, image_keys, size, first_us, last_us, fact_checks, score, score_note, state,
	state_note, batch_id, sketch`

func scanCluster(sc interface{ Scan(...any) error }) (Cluster, error) {
	var c Cluster
	var pj, keys, fcs, sk string
	var first, last int64
	var score sql.NullFloat64
	if err := sc.Scan(&c.ID, &c.PostID, &pj, &c.Lang, &keys, &c.Size, &first, &last, &fcs, &score, &c.ScoreNote, &c.State,
		&c.StateNote, &c.BatchID, &sk); err != nil {
		return c, err
	}
	_ = json.Unmarshal([]byte(pj), &c.Post)
	_ = json.Unmarshal([]byte(keys), &c.imageKeys)
	if fcs != "" {
		_ = json.Unmarshal([]byte(fcs), &c.FactChecks)
	}
	if score.Valid {
		v := score.Float64
		c.Score = &v
	}
	c.First, c.Last = time.UnixMicro(first).UTC(), time.UnixMicro(last).UTC()
	c.sketch = decodeSketch(sk)
	return c, nil
}

func (s *Store) clusters(ctx context.Context, where string, args ...any) ([]Cluster, error) {
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT `+clusterColumns+` FROM watch_cluster `+where), args...)
	if err != nil {
		return nil, fmt.Errorf("watch store: %w", err)
	}
	defer rows.Close()
	var out []Cluster
	for rows.Next() {
		c, err := scanCluster(rows)
		if err != nil {
			return nil, fmt.Errorf("watch store: %w", err)
		}
		out = append(out, c)
	}
	return out, rows.Err()
}

// Cluster reads one cluster.
func (s *Store) Cluster(ctx context.Context, id int64) (Cluster, error) {
	cs, err := s.clusters(ctx, `WHERE id = ?`, id)
	if err != nil {
		return Cluster{}, err
	}
	if len(cs) == 0 {
		return Cluster{}, fmt.Errorf("watch store: no cluster %d", id)
	}
	return cs[0], nil
}

// Recent are the clusters seen last, newest first, at most n.
func (s *Store) Recent(ctx context.Context, n int) ([]Cluster, error) {
	return s.clusters(ctx, `ORDER BY last_us DESC, id DESC LIMIT ?`, n)
}

// unscored are the clusters waiting for a score, to be scored on the next
// start: read before a stop and, when retry, also those not scored for
// any reason before (no model then, the model server failing, a post the
// model's answer left out), for a model is there now.
func (s *Store) unscored(ctx context.Context, retry bool) ([]Cluster, error) {
	if retry {
		return s.clusters(ctx, `WHERE score IS NULL AND state = 'new' ORDER BY id`)
	}
	return s.clusters(ctx, `WHERE score IS NULL AND score_note = '' AND state = 'new' ORDER BY id`)
}

// setScore records a cluster's score (nil: not scored, note says why).
func (s *Store) setScore(ctx context.Context, id int64, score *float64, note string) error {
	var v any
	if score != nil {
		v = *score
	}
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE watch_cluster SET score = ?, score_note = ? WHERE id = ?`), v, note, id)
	if err != nil {
		return fmt.Errorf("watch store: score: %w", err)
	}
	return nil
}

// SetState moves a cluster to state (one of the State constants), with a
// note and the batch it was queued in.
func (s *Store) SetState(ctx context.Context, id int64, state, note, batchID string) error {
	switch state {
	case StateNew, StateHeld, StateQueued, StateOpened, StateDismissed, StatePinned:
	default:
		return fmt.Errorf("watch store: unknown state %q", state)
	}
	_, err := s.db.ExecContext(ctx, s.q(`UPDATE watch_cluster SET state = ?, state_note = ?, state_us = ?,
		batch_id = CASE WHEN ? = '' THEN batch_id ELSE ? END WHERE id = ?`), state, note, time.Now().UnixMicro(), batchID, batchID, id)
	if err != nil {
		return fmt.Errorf("watch store: state: %w", err)
	}
	return nil
}

// queuedSince counts the clusters queued since t.
func (s *Store) queuedSince(ctx context.Context, t time.Time) (int, error) {
	var n int
	err := s.db.QueryRowContext(ctx, s.q(`SELECT count(*) FROM watch_cluster WHERE state = 'queued' AND state_us >= ?`),
		t.UnixMicro()).Scan(&n)
	if err != nil {
		return 0, fmt.Errorf("watch store: %w", err)
	}
	return n, nil
}

// Ranked are the clusters to show, best first: pinned ones, then by
// repeat-claim alert, score and size; dismissed ones are left out, and at
// most n (0: 200) come back.
func (s *Store) Ranked(ctx context.Context, n int) ([]Cluster, error) {
	if n <= 0 {
		n = 200
	}
	return s.clusters(ctx, `WHERE state <> 'dismissed'
		ORDER BY CASE WHEN state = 'pinned' THEN 0 ELSE 1 END, CASE WHEN fact_checks <> '' THEN 0 ELSE 1 END,
		COALESCE(score, -1) DESC, size DESC, last_us DESC, id DESC LIMIT ?`, n)
}

// PostsSeen counts the posts recorded.
func (s *Store) PostsSeen(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM watch_post`).Scan(&n); err != nil {
		return 0, fmt.Errorf("watch store: %w", err)
	}
	return n, nil
}

// forgotten is a cluster prune dropped: what the index filed it under.
type forgotten struct {
	id        int64
	sketch    sketch
	imageKeys []string
}

// prune forgets the clusters last joined before t that no one acted on
// (new or dismissed: not opened, pinned, queued or held) and none of
// whose posts was delivered since, with their posts, up to batch of them
// in one transaction, and says which went. A post of theirs delivered
// again is then counted as new.
func (s *Store) prune(ctx context.Context, before time.Time, batch int) ([]forgotten, error) {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
	}
	defer tx.Rollback()
	const old = `last_us < ? AND state IN ('new', 'dismissed')
		AND NOT EXISTS (SELECT 1 FROM watch_post p WHERE p.cluster = watch_cluster.id AND p.seen_us >= ?)`
	us := before.UnixMicro()
	rows, err := tx.QueryContext(ctx, s.q(`SELECT id, sketch, image_keys FROM watch_cluster WHERE `+old+` ORDER BY last_us LIMIT ?`), us, us, batch)
	if err != nil {
		return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
	}
	var out []forgotten
	args := []any{}
	for rows.Next() {
		var f forgotten
		var sk, keys string
		if err := rows.Scan(&f.id, &sk, &keys); err != nil {
			rows.Close()
			return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
		}
		f.sketch = decodeSketch(sk)
		_ = json.Unmarshal([]byte(keys), &f.imageKeys)
		out = append(out, f)
		args = append(args, f.id)
	}
	rows.Close()
	if err := rows.Err(); err != nil || len(out) == 0 {
		return nil, err
	}
	// The conditions again: a cluster the checker acted on meanwhile stays.
	which := `SELECT id FROM watch_cluster WHERE id IN (?` + strings.Repeat(", ?", len(args)-1) + `) AND ` + old
	args = append(args, us, us)
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM watch_post WHERE cluster IN (`+which+`)`), args...); err != nil {
		return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
	}
	if _, err := tx.ExecContext(ctx, s.q(`DELETE FROM watch_cluster WHERE id IN (`+which+`)`), args...); err != nil {
		return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return nil, fmt.Errorf("watch store: forget old clusters: %w", err)
	}
	return out, nil
}

// prunePosts forgets the IDs of up to batch posts last delivered before
// t (their clusters keep their counts), and says how many went: a post
// delivered again after that long is counted again.
func (s *Store) prunePosts(ctx context.Context, before time.Time, batch int) (int, error) {
	res, err := s.db.ExecContext(ctx, s.q(`DELETE FROM watch_post WHERE id IN (SELECT id FROM watch_post WHERE seen_us < ? LIMIT ?)`),
		before.UnixMicro(), batch)
	if err != nil {
		return 0, fmt.Errorf("watch store: forget old posts: %w", err)
	}
	n, err := res.RowsAffected()
	return int(n), err
}
