// Package cases keeps every check as a case in a SQLite database
// ($XDG_DATA_HOME/muse/cases.db): the whole Check as JSON beside a few
// indexed columns for listing, every draft of the correction, and a
// snapshot of each evidence page, so that a case reads fully offline weeks
// later.
//
// Several muse processes may open the same file at once (the TUI and a
// `muse batch`, say): the database runs in WAL mode with a busy timeout and
// every write transaction begins IMMEDIATE, so writers queue on the lock
// instead of failing with SQLITE_BUSY. Each Save is one committed
// transaction, so a process killed mid-run loses nothing saved before.
package cases

import (
	"bytes"
	"compress/gzip"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/sqlitedb"
)

// ErrNotFound is returned (wrapped) when a case, draft or snapshot does not
// exist.
var ErrNotFound = errors.New("not found")

// Options configures a Store.
type Options struct {
	// Path is the database file; the caller passes cfg.DataDir/cases.db
	// (see DefaultPath). Missing directories are created.
	Path string
	// Secrets are strings that must never be written to the database: the
	// API keys from the configuration. Any occurrence in a Check, a draft or
	// a snapshot (an error message quoting a request URL, say) is replaced
	// by "[redacted]" before it is stored. Strings shorter than 6 bytes are
	// ignored: they are too common to be keys and replacing them would
	// mangle text.
	Secrets []string
	// ReadOnly opens an existing database for reading only (a read-only
	// data directory): List, Get, Resolve, Drafts and Snapshots work; every
	// write fails.
	ReadOnly bool
}

// DefaultPath is the cases database under muse's data directory
// (config.Config.DataDir).
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "cases.db") }

// Store is an open case database. It is safe for concurrent use by several
// goroutines, and several processes may open the same file.
type Store struct {
	db     *sql.DB
	path   string
	now    func() time.Time
	redact *sources.Redactor

	mu   sync.Mutex
	last map[string][32]byte // hash of the JSON this Store last wrote per case, to skip identical saves
}

// busyTimeout is how long a write waits for another writer before failing.
// Saves are single-row transactions, so waiting this long means something
// is stuck rather than merely busy.
const busyTimeout = 30 * time.Second

// Open opens (creating when needed) the case database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenOptions(ctx, Options{Path: path})
}

// OpenOptions is Open with Options, for callers that pass secrets to keep
// out of the store.
func OpenOptions(ctx context.Context, o Options) (*Store, error) {
	if o.Path == "" {
		return nil, errors.New("open cases: no database path given")
	}
	db, err := sqlitedb.Open(o.Path, sqlitedb.Options{Busy: busyTimeout, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("open cases %s: %w", o.Path, err)
	}
	s := &Store{db: db, path: o.Path, now: time.Now, last: map[string][32]byte{}, redact: sources.NewRedactor(o.Secrets...)}
	check := s.migrate
	if o.ReadOnly {
		check = s.checkVersion
	}
	if err := check(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open cases %s: %w", o.Path, err)
	}
	return s, nil
}

func (s *Store) clean(text string) string { return s.redact.String(text) }

// Close closes the database.
func (s *Store) Close() error {
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close cases %s: %w", s.path, err)
	}
	return nil
}

// Path returns the database file's path.
func (s *Store) Path() string { return s.path }

// migrations bring the schema from version i to i+1 (PRAGMA user_version).
// Never edit a released step; append a new one. Drafts and snapshots carry
// no foreign key so that the engine may store a page before the case's
// first Save; Delete removes all three in one transaction.
var migrations = []string{
	`
CREATE TABLE cases (
	id              TEXT PRIMARY KEY,
	created_at      INTEGER NOT NULL, -- Unix milliseconds
	updated_at      INTEGER NOT NULL,
	post_excerpt    TEXT NOT NULL DEFAULT '',
	post_url        TEXT NOT NULL DEFAULT '',
	correction_line TEXT NOT NULL DEFAULT '',
	sources_used    INTEGER NOT NULL DEFAULT 0,
	cost_usd        REAL NOT NULL DEFAULT 0,
	events          INTEGER NOT NULL DEFAULT 0,
	check_json      BLOB NOT NULL
);
CREATE INDEX cases_created ON cases(created_at);
CREATE TABLE drafts (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	case_id TEXT NOT NULL,
	at      INTEGER NOT NULL,          -- Unix milliseconds
	text    TEXT NOT NULL,
	edited  INTEGER NOT NULL DEFAULT 0 -- 1: a person wrote or changed it
);
CREATE INDEX drafts_case ON drafts(case_id, seq);
CREATE TABLE snapshots (
	case_id    TEXT NOT NULL,
	url        TEXT NOT NULL,
	final_url  TEXT NOT NULL DEFAULT '',
	fetched_at INTEGER NOT NULL,       -- Unix milliseconds
	text_gz    BLOB NOT NULL,
	html_gz    BLOB NOT NULL,
	PRIMARY KEY (case_id, url)
);
`,
}

// checkVersion is migrate for a read-only store: the schema must be the
// one this muse knows.
func (s *Store) checkVersion(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v != len(migrations) {
		return fmt.Errorf("schema version %d, this muse reads %d; open it once with write access to upgrade", v, len(migrations))
	}
	return nil
}

func (s *Store) migrate(ctx context.Context) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	var v int
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("schema version %d is newer than this muse knows (%d); upgrade muse", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if _, err := tx.ExecContext(ctx, migrations[i]); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", i+1, err)
		}
	}
	if v < len(migrations) {
		if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
			return fmt.Errorf("set schema version: %w", err)
		}
	}
	return tx.Commit()
}

// Save stores the whole Check, replacing the case's previous state. It is
// meant to be called after every engine event that ShouldSave accepts: a
// save whose JSON is the same as what this Store last wrote for the case is
// skipped, and a real one is a single-row upsert. Encoding dominates the
// cost (about 15 ms for a full run's 250 KB Check on a busy core), which is
// why token deltas, dozens a second and never a change to the Check, are
// left out.
//
// When c.ID is empty Save gives the Check a new ID (and CreatedAt when
// zero), writing them into c; so the caller must own c — while the engine
// runs, set c.ID = cases.NewID() before the run and save c.Clone() from the
// event loop.
func (s *Store) Save(ctx context.Context, c *pipeline.Check) error {
	if c == nil {
		return errors.New("save case: no check given")
	}
	if c.ID == "" {
		c.ID = NewID()
	}
	if c.CreatedAt.IsZero() {
		c.CreatedAt = s.now()
	}
	raw, err := json.Marshal(c)
	if err != nil {
		return fmt.Errorf("save case %s: encode check: %w", c.ID, err)
	}
	raw = []byte(s.clean(string(raw)))
	sum := sha256.Sum256(raw)
	s.mu.Lock()
	same := s.last[c.ID] == sum
	s.mu.Unlock()
	if same {
		return nil
	}
	sm := summarize(c)
	_, err = s.db.ExecContext(ctx, `
INSERT INTO cases (id, created_at, updated_at, post_excerpt, post_url, correction_line, sources_used, cost_usd, events, check_json)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(id) DO UPDATE SET
	created_at = excluded.created_at, updated_at = excluded.updated_at, post_excerpt = excluded.post_excerpt,
	post_url = excluded.post_url, correction_line = excluded.correction_line, sources_used = excluded.sources_used,
	cost_usd = excluded.cost_usd, events = excluded.events, check_json = excluded.check_json`,
		c.ID, c.CreatedAt.UnixMilli(), s.now().UnixMilli(), s.clean(sm.PostExcerpt), s.clean(sm.PostURL),
		s.clean(sm.CorrectionLine), sm.SourcesUsed, sm.CostUSD, sm.Events, raw)
	if err != nil {
		return fmt.Errorf("save case %s: %w", c.ID, err)
	}
	s.mu.Lock()
	s.last[c.ID] = sum
	s.mu.Unlock()
	return nil
}

// ShouldSave reports whether an engine event is worth a Save: every event
// but the streamed tokens of the correction, which arrive dozens a second
// and do not change the Check (the finished correction comes as an item).
func ShouldSave(ev pipeline.Event) bool { return ev.Kind != pipeline.EventTokenDelta }

// Get returns the case's Check as last saved. Event items (the engine's
// `Item any`) are not kept: the Check's own lists hold the same things.
func (s *Store) Get(ctx context.Context, id string) (*pipeline.Check, error) {
	var raw []byte
	err := s.db.QueryRowContext(ctx, "SELECT check_json FROM cases WHERE id = ?", id).Scan(&raw)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read case %s: %w", id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read case %s: %w", id, err)
	}
	c := &pipeline.Check{}
	if err := json.Unmarshal(raw, c); err != nil {
		return nil, fmt.Errorf("read case %s: decode check: %w", id, err)
	}
	return c, nil
}

// Resolve turns what a person typed (a whole ID or a unique prefix of one)
// into the case's ID.
func (s *Store) Resolve(ctx context.Context, prefix string) (string, error) {
	prefix = strings.TrimSpace(prefix)
	if prefix == "" {
		return "", errors.New("find case: no ID given")
	}
	esc := strings.NewReplacer(`\`, `\\`, `%`, `\%`, `_`, `\_`).Replace(prefix)
	rows, err := s.db.QueryContext(ctx, `SELECT id FROM cases WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id LIMIT 3`, prefix, esc+"%")
	if err != nil {
		return "", fmt.Errorf("find case %s: %w", prefix, err)
	}
	defer rows.Close()
	var ids []string
	for rows.Next() {
		var id string
		if err := rows.Scan(&id); err != nil {
			return "", fmt.Errorf("find case %s: %w", prefix, err)
		}
		if id == prefix {
			return id, nil
		}
		ids = append(ids, id)
	}
	if err := rows.Err(); err != nil {
		return "", fmt.Errorf("find case %s: %w", prefix, err)
	}
	switch len(ids) {
	case 0:
		return "", fmt.Errorf("find case %s: %w (see `muse cases`)", prefix, ErrNotFound)
	case 1:
		return ids[0], nil
	default:
		return "", fmt.Errorf("find case %s: the prefix matches several cases (%s, ...); give more of the ID", prefix, strings.Join(ids, ", "))
	}
}

// Delete removes the case with its drafts and snapshots.
func (s *Store) Delete(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
	}
	defer tx.Rollback()
	res, err := tx.ExecContext(ctx, "DELETE FROM cases WHERE id = ?", id)
	if err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
	}
	n, _ := res.RowsAffected()
	for _, q := range []string{"DELETE FROM drafts WHERE case_id = ?", "DELETE FROM snapshots WHERE case_id = ?"} {
		r, err := tx.ExecContext(ctx, q, id)
		if err != nil {
			return fmt.Errorf("delete case %s: %w", id, err)
		}
		m, _ := r.RowsAffected()
		n += m
	}
	if n == 0 {
		return fmt.Errorf("delete case %s: %w", id, ErrNotFound)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
	}
	s.mu.Lock()
	delete(s.last, id)
	s.mu.Unlock()
	return nil
}

// Draft is one version of a case's correction.
type Draft struct {
	Seq    int64     `json:"seq"` // order of saving, increasing
	Time   time.Time `json:"time"`
	Text   string    `json:"text"`
	Edited bool      `json:"edited"` // a person wrote or changed it (false: the model's)
}

// SaveDraft keeps one more draft of the case's correction: call it when the
// model finishes a correction (edited=false) and each time the person saves
// an edit (edited=true). A draft identical to the case's latest one (same
// text and origin) is not stored twice.
func (s *Store) SaveDraft(ctx context.Context, id, text string, edited bool) error {
	if id == "" {
		return errors.New("save draft: no case ID given")
	}
	text = s.clean(text)
	_, err := s.db.ExecContext(ctx, `
INSERT INTO drafts (case_id, at, text, edited)
SELECT ?, ?, ?, ?
WHERE NOT EXISTS (
	SELECT 1 FROM (SELECT text, edited FROM drafts WHERE case_id = ? ORDER BY seq DESC LIMIT 1) l
	WHERE l.text = ? AND l.edited = ?)`,
		id, s.now().UnixMilli(), text, edited, id, text, edited)
	if err != nil {
		return fmt.Errorf("save draft of case %s: %w", id, err)
	}
	return nil
}

// Drafts returns every draft of the case's correction, oldest first.
func (s *Store) Drafts(ctx context.Context, id string) ([]Draft, error) {
	rows, err := s.db.QueryContext(ctx, "SELECT seq, at, text, edited FROM drafts WHERE case_id = ? ORDER BY seq", id)
	if err != nil {
		return nil, fmt.Errorf("read drafts of case %s: %w", id, err)
	}
	defer rows.Close()
	var out []Draft
	for rows.Next() {
		var d Draft
		var at int64
		if err := rows.Scan(&d.Seq, &at, &d.Text, &d.Edited); err != nil {
			return nil, fmt.Errorf("read drafts of case %s: %w", id, err)
		}
		d.Time = time.UnixMilli(at)
		out = append(out, d)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read drafts of case %s: %w", id, err)
	}
	return out, nil
}

// Snapshot is an evidence page as muse read it.
type Snapshot struct {
	URL       string    // as found (Source.URL)
	FinalURL  string    // after redirects
	FetchedAt time.Time // when the page was read
	Text      string    // extracted main text
	RawHTML   []byte    // the page's bytes as received
}

// SaveSnapshot keeps the page behind one of the case's sources, gzipped,
// replacing an earlier snapshot of the same URL. Call it when the engine
// has read a page (at least for every page quoted as evidence).
func (s *Store) SaveSnapshot(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte) error {
	if id == "" || pageURL == "" {
		return fmt.Errorf("save snapshot %q of case %q: case ID and URL are required", pageURL, id)
	}
	tz, err := gz([]byte(s.clean(text)))
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	rawHTML = s.redact.Bytes(rawHTML)
	hz, err := gz(rawHTML)
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	_, err = s.db.ExecContext(ctx, `
INSERT INTO snapshots (case_id, url, final_url, fetched_at, text_gz, html_gz) VALUES (?, ?, ?, ?, ?, ?)
ON CONFLICT(case_id, url) DO UPDATE SET final_url = excluded.final_url, fetched_at = excluded.fetched_at,
	text_gz = excluded.text_gz, html_gz = excluded.html_gz`,
		id, s.clean(pageURL), s.clean(finalURL), fetchedAt.UnixMilli(), tz, hz)
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	return nil
}

// Snapshot returns the stored page for url, matched against the URL as
// found or the final URL after redirects.
func (s *Store) Snapshot(ctx context.Context, id, pageURL string) (*Snapshot, error) {
	row := s.db.QueryRowContext(ctx, `SELECT url, final_url, fetched_at, text_gz, html_gz FROM snapshots
WHERE case_id = ? AND (url = ? OR final_url = ?) ORDER BY url = ? DESC LIMIT 1`, id, pageURL, pageURL, pageURL)
	sn, err := scanSnapshot(row.Scan)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("read snapshot %s of case %s: %w", pageURL, id, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("read snapshot %s of case %s: %w", pageURL, id, err)
	}
	return sn, nil
}

// Snapshots returns every stored page of the case, by URL.
func (s *Store) Snapshots(ctx context.Context, id string) ([]Snapshot, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT url, final_url, fetched_at, text_gz, html_gz FROM snapshots WHERE case_id = ? ORDER BY url`, id)
	if err != nil {
		return nil, fmt.Errorf("read snapshots of case %s: %w", id, err)
	}
	defer rows.Close()
	var out []Snapshot
	for rows.Next() {
		sn, err := scanSnapshot(rows.Scan)
		if err != nil {
			return nil, fmt.Errorf("read snapshots of case %s: %w", id, err)
		}
		out = append(out, *sn)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read snapshots of case %s: %w", id, err)
	}
	return out, nil
}

func scanSnapshot(scan func(...any) error) (*Snapshot, error) {
	var sn Snapshot
	var at int64
	var tz, hz []byte
	if err := scan(&sn.URL, &sn.FinalURL, &at, &tz, &hz); err != nil {
		return nil, err
	}
	sn.FetchedAt = time.UnixMilli(at)
	text, err := gunzip(tz)
	if err != nil {
		return nil, fmt.Errorf("decompress text of %s: %w", sn.URL, err)
	}
	sn.Text = string(text)
	if sn.RawHTML, err = gunzip(hz); err != nil {
		return nil, fmt.Errorf("decompress HTML of %s: %w", sn.URL, err)
	}
	return &sn, nil
}

func gz(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("compress: %w", err)
	}
	return buf.Bytes(), nil
}

func gunzip(b []byte) ([]byte, error) {
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}

// NewID returns a new case ID: 9 characters of the current time in
// milliseconds then 7 random ones, all lower-case Crockford base32 (no i,
// l, o, u), so IDs sort by creation time, are safe in file names and URLs,
// and can be typed by a unique prefix. 35 random bits make a clash between
// IDs made in the same millisecond a 1 in 34 billion event per pair.
func NewID() string { return newID(time.Now()) }

const crockford = "0123456789abcdefghjkmnpqrstvwxyz"

func newID(t time.Time) string {
	var b [16]byte
	ms := uint64(t.UnixMilli())
	for i := 8; i >= 0; i-- {
		b[i] = crockford[ms&31]
		ms >>= 5
	}
	var r [7]byte
	rand.Read(r[:]) // crypto/rand.Read never fails (Go 1.24+)
	for i, x := range r {
		b[9+i] = crockford[x&31]
	}
	return string(b[:])
}
