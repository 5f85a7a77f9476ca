// Package cases keeps every check as a case: the whole Check as JSON beside
// a few indexed columns for listing, every draft of the correction, a
// snapshot of each evidence page (so that a case reads fully offline weeks
// later), who made and changed it, and an audit trail. The cases live in a
// SQLite database ($XDG_DATA_HOME/muse/cases.db) or, for a newsroom, in its
// PostgreSQL database (MUSE_DATABASE_URL), through the same statements; the
// schema is versioned goose migrations (migrations/) applied on first use.
//
// Several muse processes may open the same store at once (the TUI and a
// `muse batch`, two checkers' laptops on one PostgreSQL): on SQLite the
// database runs in WAL mode with a busy timeout and every write transaction
// begins IMMEDIATE, so writers queue on the lock instead of failing with
// SQLITE_BUSY; on PostgreSQL a save locks the case's row. Each Save is one
// committed transaction, so a process killed mid-run loses nothing saved
// before.
//
// Every case has a version that each save moves on. A Store remembers the
// version it last read or wrote of each case, and a save based on an older
// one (another checker saved the case meanwhile) keeps both: the other
// checker's state is kept in the case's versions, the save goes in as the
// newest version, and Save returns a *ConflictError saying who changed the
// case and when.
package cases

import (
	"bufio"
	"cmp"
	"context"
	"crypto/rand"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"net/textproto"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sqlitedb"
)

//go:embed migrations
var migrations embed.FS

// ErrNotFound is returned (wrapped) when a case, draft or snapshot does not
// exist.
var ErrNotFound = errors.New("not found")

// Options configures a Store.
type Options struct {
	// Path is the database file; the caller passes cfg.DataDir/cases.db
	// (see DefaultPath), or a newsroom's postgres:// URL. Missing
	// directories are created.
	Path string
	// User names the checker (MUSE_USER): recorded as the case's
	// created_by and updated_by, as the author of drafts, and in the audit
	// trail. Empty records no name. On a PostgreSQL newsroom with roles
	// (muse newsroom init) the login is the checker: a User that differs
	// is refused when UserGiven (the person set it), else ignored.
	User      string
	UserGiven bool
	// Secrets are strings that must never be written to the database: the
	// API keys from the configuration. Any occurrence in a Check, a draft or
	// a snapshot (an error message quoting a request URL, say) is replaced
	// by "[redacted]" before it is stored. Strings shorter than 6 bytes are
	// ignored: they are too common to be keys and replacing them would
	// mangle text.
	Secrets []string
	// ReadOnly opens an existing SQLite database for reading only (a
	// read-only data directory): List, Get, Resolve, Drafts, Snapshots and
	// Trail work; every write fails.
	ReadOnly bool
}

// DefaultPath is the cases database under muse's data directory
// (config.Config.DataDir).
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "cases.db") }

// Store is an open case database. It is safe for concurrent use by several
// goroutines, and several processes may open the same database.
type Store struct {
	db       *sql.DB
	pool     *pgxpool.Pool // PostgreSQL only
	postgres bool
	path     string // the file, or the URL with its password masked
	user     string
	// roles: the PostgreSQL newsroom has roles (muse newsroom init), user
	// is the login, and editor says whether it may change anyone's case.
	roles, editor bool
	writer        string // this Store's token in cases.writer and notifications
	now           func() time.Time
	redact        *sources.Redactor
	poll          time.Duration // how often Watch reads a SQLite store

	mu      sync.Mutex
	last    map[string]known // per case: what this Store last read or wrote
	touched map[string]bool  // cases whose first save by this Store is in the trail
	// deleted holds the audit entries (seq) of this Store's own deletions
	// on SQLite, which its Watch skips as PostgreSQL's skips its notices.
	deleted map[int64]bool
}

// known is what a Store last read or wrote of a case: the version, to tell
// a stale save, and the hash of the JSON, to skip identical saves.
type known struct {
	version int64
	sum     [32]byte
}

// busyTimeout is how long a write waits for another writer before failing.
// Saves are single-row transactions, so waiting this long means something
// is stuck rather than merely busy.
const busyTimeout = 30 * time.Second

// Open opens (creating when needed) the case database at path.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenOptions(ctx, Options{Path: path})
}

// OpenOptions is Open with Options, for callers that name the checker or
// pass secrets to keep out of the store.
func OpenOptions(ctx context.Context, o Options) (*Store, error) {
	if o.Path == "" {
		return nil, errors.New("open cases: no database path given")
	}
	var tok [8]byte
	rand.Read(tok[:]) // crypto/rand.Read never fails (Go 1.24+)
	s := &Store{path: o.Path, user: o.User, writer: hex.EncodeToString(tok[:]), now: time.Now,
		last: map[string]known{}, touched: map[string]bool{}, deleted: map[int64]bool{}, redact: sources.NewRedactor(o.Secrets...), poll: 2 * time.Second}
	if pgdb.IsURL(o.Path) {
		return s, s.openPostgres(ctx, o)
	}
	db, err := sqlitedb.Open(o.Path, sqlitedb.Options{Busy: busyTimeout, ReadOnly: o.ReadOnly})
	if err != nil {
		return nil, fmt.Errorf("open cases %s: %w", o.Path, err)
	}
	s.db = db
	sub, _ := fs.Sub(migrations, "migrations/sqlite")
	if o.ReadOnly {
		err = checkVersion(ctx, db, sub)
	} else {
		err = sqlitedb.Migrate(ctx, db, "cases", sub)
	}
	if err != nil {
		db.Close()
		return nil, fmt.Errorf("open cases %s: %w", o.Path, err)
	}
	return s, nil
}

func (s *Store) openPostgres(ctx context.Context, o Options) error {
	s.path, s.postgres = pgdb.Redact(o.Path), true
	if o.ReadOnly {
		return fmt.Errorf("open cases %s: read-only is for SQLite files", s.path)
	}
	pool, db, err := pgdb.OpenMigrated(ctx, o.Path, "cases", migrations, "migrations/postgres")
	if err != nil {
		return fmt.Errorf("open cases %s: %w", s.path, err)
	}
	s.pool, s.db = pool, db
	if err := s.identity(ctx, o.User, o.UserGiven); err != nil {
		s.Close()
		return fmt.Errorf("open cases %s: %w", s.path, err)
	}
	return nil
}

// checkVersion is the migration for a read-only store: every migration
// this muse knows must have been applied.
func checkVersion(ctx context.Context, db *sql.DB, fsys fs.FS) error {
	files, err := fs.Glob(fsys, "*.sql")
	if err != nil {
		return err
	}
	var v int
	err = db.QueryRowContext(ctx, "SELECT COALESCE(MAX(version_id), 0) FROM muse_cases_migrations WHERE is_applied").Scan(&v)
	if err != nil || v < len(files) {
		return fmt.Errorf("the schema is older than this muse reads (version %d of %d); open it once with write access to upgrade", v, len(files))
	}
	return nil
}

// q writes a statement's ? placeholders as $1, $2… on PostgreSQL.
func (s *Store) q(query string) string {
	if s.postgres {
		return pgdb.Rebind(query)
	}
	return query
}

func (s *Store) clean(text string) string { return s.redact.String(text) }

// Close closes the database.
func (s *Store) Close() error {
	err := s.db.Close()
	if s.pool != nil {
		s.pool.Close()
	}
	if err != nil {
		return fmt.Errorf("close cases %s: %w", s.path, err)
	}
	return nil
}

// Path returns the database file's path (a PostgreSQL URL with its
// password masked).
func (s *Store) Path() string { return s.path }

// ConflictError is what Save returns when the case was saved by someone
// else since the version the save was based on. Nothing is lost: the save
// is stored as the newest version (Version) and the state it replaced is
// kept as version Theirs (GetVersion). It is a notice to show the checker,
// not a failed save.
type ConflictError struct {
	ID      string
	By      string    // who saved the case meanwhile
	At      time.Time // when
	Theirs  int64     // the version they saved, kept in the case's versions
	Version int64     // the version this save became
	Deleted bool      // they deleted the case; this save put it back
}

func (e *ConflictError) Error() string {
	who := cmp.Or(e.By, "someone")
	what := "changed"
	if e.Deleted {
		what = "deleted"
	}
	msg := fmt.Sprintf("case %s was %s by %s at %s", e.ID, what, who, clock(e.At))
	if e.Deleted {
		return msg + "; your save put it back as version " + fmt.Sprint(e.Version)
	}
	// "Version" alone would read as one of the correction's versions (v in
	// the app): these are saved states of the whole case.
	return fmt.Sprintf("%s: both are kept, yours as the case now, theirs as its saved state %d (muse cases export %s --version %d)",
		msg, e.Theirs, e.ID, e.Theirs)
}

// clock writes a time as a checker reads it: 14:02 today, else with the date.
func clock(t time.Time) string {
	t = t.Local()
	if y, m, d := t.Date(); y == time.Now().Year() && m == time.Now().Month() && d == time.Now().Day() {
		return t.Format("15:04")
	}
	return t.Format("2006-01-02 15:04")
}

// Save stores the whole Check, replacing the case's previous state, as an
// edit of the version this Store last read (Get) or wrote of the case; a
// case it has neither read nor written counts as new. It is meant to be
// called after every engine event that ShouldSave accepts: a save whose
// JSON is the same as what this Store last read or wrote for the case is
// skipped, and a real one is a single-row transaction. Encoding dominates
// the cost (about 15 ms for a full run's 250 KB Check on a busy core),
// which is why token deltas, dozens a second and never a change to the
// Check, are left out.
//
// When the case was saved elsewhere since that version, the save is kept
// all the same and Save returns a *ConflictError (see there).
//
// When c.ID is empty Save gives the Check a new ID (and CreatedAt when
// zero), writing them into c; so the caller must own c — while the engine
// runs, give it its ID before the run (Engine.NewCheck does) and save c.Clone() from the
// event loop.
func (s *Store) Save(ctx context.Context, c *pipeline.Check) error {
	if c == nil {
		return errors.New("save case: no check given")
	}
	if c.ID == "" {
		c.ID = pipeline.NewID()
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
	k, seen := s.last[c.ID]
	first := !s.touched[c.ID]
	s.mu.Unlock()
	if seen && k.sum == sum {
		return nil
	}
	v, conflict, err := s.write(ctx, c, raw, k.version, first)
	if err != nil {
		return fmt.Errorf("save case %s: %w", c.ID, err)
	}
	s.mu.Lock()
	if v >= s.last[c.ID].version {
		s.last[c.ID] = known{version: v, sum: sum}
	}
	s.touched[c.ID] = true
	s.mu.Unlock()
	if conflict != nil {
		return conflict
	}
	return nil
}

// write stores the case as an edit of version base in one transaction,
// returning the version it became and, when the case had moved on, the
// conflict.
func (s *Store) write(ctx context.Context, c *pipeline.Check, raw []byte, base int64, first bool) (int64, *ConflictError, error) {
	tx, err := s.db.BeginTx(ctx, nil) // IMMEDIATE on SQLite (sqlitedb)
	if err != nil {
		return 0, nil, err
	}
	defer tx.Rollback()
	lock := ""
	if s.postgres {
		lock = " FOR UPDATE"
	}
	if err := s.mayChange(ctx, tx, c.ID); err != nil {
		return 0, nil, err
	}
	var cur, at int64
	var by string
	err = tx.QueryRowContext(ctx, s.q("SELECT version, updated_by, updated_at FROM cases WHERE id = ?"+lock), c.ID).Scan(&cur, &by, &at)
	now := s.now().UnixMilli()
	sm := summarize(c)
	args := []any{c.CreatedAt.UnixMilli(), now, s.clean(sm.PostExcerpt), s.clean(sm.PostURL), s.clean(sm.CorrectionLine),
		sm.SourcesUsed, sm.CostUSD, sm.LLMCalls, sm.CachedCalls, sm.UnreportedCalls, sm.Events, raw, s.user}
	var conflict *ConflictError
	var v int64
	switch {
	case errors.Is(err, sql.ErrNoRows):
		v = base + 1
		if base > 0 { // deleted elsewhere while this Store had it open
			conflict = &ConflictError{ID: c.ID, Version: v, Deleted: true}
			conflict.By, conflict.At = s.lastDeletion(ctx, tx, c.ID)
		}
		_, err = tx.ExecContext(ctx, s.q(`
INSERT INTO cases (created_at, updated_at, post_excerpt, post_url, correction_line, sources_used, cost_usd,
	llm_calls, cached_calls, unreported_calls, events, check_json, updated_by, version, writer, created_by, id)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`), append(args, v, s.writer, s.user, c.ID)...)
	case err != nil:
		return 0, nil, err
	default:
		v = cur + 1
		if cur != base {
			conflict = &ConflictError{ID: c.ID, By: by, At: time.UnixMilli(at), Theirs: cur, Version: v}
			// Theirs is kept before it is replaced.
			if _, err := tx.ExecContext(ctx, s.q(`
INSERT INTO case_versions (case_id, version, updated_by, updated_at, check_json)
SELECT id, version, updated_by, updated_at, check_json FROM cases WHERE id = ?
ON CONFLICT (case_id, version) DO NOTHING`), c.ID); err != nil {
				return 0, nil, err
			}
		}
		_, err = tx.ExecContext(ctx, s.q(`
UPDATE cases SET created_at = ?, updated_at = ?, post_excerpt = ?, post_url = ?, correction_line = ?, sources_used = ?,
	cost_usd = ?, llm_calls = ?, cached_calls = ?, unreported_calls = ?, events = ?, check_json = ?, updated_by = ?,
	version = ?, writer = ?
WHERE id = ?`), append(args, v, s.writer, c.ID)...)
	}
	if err != nil {
		return 0, nil, err
	}
	switch {
	case conflict != nil && conflict.Deleted:
		err = s.audit(ctx, tx, c.ID, ActionConflict, fmt.Sprintf("saved after %s deleted it: put back as version %d", cmp.Or(conflict.By, "someone"), v))
	case conflict != nil:
		err = s.audit(ctx, tx, c.ID, ActionConflict, fmt.Sprintf("saved over version %d by %s, based on version %d: theirs kept as version %d, this is version %d",
			cur, cmp.Or(by, "someone"), base, cur, v))
	case first && cur == 0:
		err = s.audit(ctx, tx, c.ID, ActionCreated, "")
	case first:
		err = s.audit(ctx, tx, c.ID, ActionChanged, fmt.Sprintf("version %d", v))
	}
	if err != nil {
		return 0, nil, err
	}
	if err := s.notify(ctx, tx, Change{ID: c.ID, Version: v, By: s.user, At: time.UnixMilli(now)}); err != nil {
		return 0, nil, err
	}
	return v, conflict, tx.Commit()
}

// ShouldSave reports whether an engine event is worth a Save: every event
// but the streamed tokens of the correction, which arrive dozens a second
// and do not change the Check (the finished correction comes as an item).
func ShouldSave(ev pipeline.Event) bool { return ev.Kind != pipeline.EventTokenDelta }

// Get returns the case's Check as last saved, and remembers its version as
// the one this Store's next Save of the case is based on. Event items (the
// engine's `Item any`) are not kept: the Check's own lists hold the same
// things.
func (s *Store) Get(ctx context.Context, id string) (*pipeline.Check, error) {
	var raw []byte
	var v int64
	err := s.db.QueryRowContext(ctx, s.q("SELECT check_json, version FROM cases WHERE id = ?"), id).Scan(&raw, &v)
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
	s.mu.Lock()
	if v >= s.last[id].version { // a save of this Store's may have landed meanwhile
		s.last[id] = known{version: v, sum: sha256.Sum256(raw)}
	}
	s.mu.Unlock()
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
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT id FROM cases WHERE id = ? OR id LIKE ? ESCAPE '\' ORDER BY id LIMIT 3`), prefix, esc+"%")
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

// Delete removes the case with its drafts, snapshots and kept versions.
// Its audit trail stays, with who deleted it and when.
func (s *Store) Delete(ctx context.Context, id string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
	}
	defer tx.Rollback()
	if s.roles && !s.editor {
		return fmt.Errorf("delete case %s: %w: deleting a case is an editor's (muse newsroom grant %s editor)", id, ErrNotYours, s.user)
	}
	var n int64
	for _, q := range []string{"DELETE FROM cases WHERE id = ?", "DELETE FROM drafts WHERE case_id = ?",
		"DELETE FROM snapshots WHERE case_id = ?", "DELETE FROM case_versions WHERE case_id = ?", "DELETE FROM rechecks WHERE case_id = ?"} {
		r, err := tx.ExecContext(ctx, s.q(q), id)
		if err != nil {
			return fmt.Errorf("delete case %s: %w", id, err)
		}
		m, _ := r.RowsAffected()
		n += m
	}
	if n == 0 {
		return fmt.Errorf("delete case %s: %w", id, ErrNotFound)
	}
	entry, err := s.auditEntry(ctx, tx, id, ActionDeleted, "")
	if err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
	}
	if !s.postgres { // known before the commit, so this Store's watch never reports it
		if seq, err := entry.LastInsertId(); err == nil {
			s.mu.Lock()
			s.deleted[seq] = true
			s.mu.Unlock()
		}
	}
	if err := s.notify(ctx, tx, Change{ID: id, By: s.user, At: s.now(), Deleted: true}); err != nil {
		return fmt.Errorf("delete case %s: %w", id, err)
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
	By     string    `json:"by"`     // the checker whose muse saved it
}

// Versions are drafts as the JSON export writes them, "versions".
func Versions(ds []Draft) []export.Version {
	out := make([]export.Version, 0, len(ds))
	for _, d := range ds {
		out = append(out, export.Version{Time: d.Time, Text: d.Text, Edited: d.Edited, By: d.By})
	}
	return out
}

// SaveDraft keeps one more draft of the case's correction: call it when the
// model finishes a correction (edited=false) and each time the person saves
// an edit (edited=true). A draft identical to the case's latest one (same
// text and origin) is not stored twice. An edited draft is an "edited"
// entry in the audit trail.
func (s *Store) SaveDraft(ctx context.Context, id, text string, edited bool) error {
	if id == "" {
		return errors.New("save draft: no case ID given")
	}
	text = s.clean(text)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save draft of case %s: %w", id, err)
	}
	defer tx.Rollback()
	if err := s.mayChange(ctx, tx, id); err != nil {
		return fmt.Errorf("save draft of case %s: %w", id, err)
	}
	res, err := tx.ExecContext(ctx, s.q(`
INSERT INTO drafts (case_id, at, text, edited, author)
SELECT ?, ?, ?, ?, ?
WHERE NOT EXISTS (
	SELECT 1 FROM (SELECT text, edited FROM drafts WHERE case_id = ? ORDER BY seq DESC LIMIT 1) l
	WHERE l.text = ? AND l.edited = ?)`),
		id, s.now().UnixMilli(), text, edited, s.user, id, text, edited)
	if err != nil {
		return fmt.Errorf("save draft of case %s: %w", id, err)
	}
	if n, _ := res.RowsAffected(); n > 0 && edited {
		if err := s.audit(ctx, tx, id, ActionEdited, "the correction: "+excerpt(firstLine(text), 80)); err != nil {
			return fmt.Errorf("save draft of case %s: %w", id, err)
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save draft of case %s: %w", id, err)
	}
	return nil
}

// Drafts returns every draft of the case's correction, oldest first.
func (s *Store) Drafts(ctx context.Context, id string) ([]Draft, error) {
	rows, err := s.db.QueryContext(ctx, s.q("SELECT seq, at, text, edited, author FROM drafts WHERE case_id = ? ORDER BY seq"), id)
	if err != nil {
		return nil, fmt.Errorf("read drafts of case %s: %w", id, err)
	}
	defer rows.Close()
	var out []Draft
	for rows.Next() {
		var d Draft
		var at int64
		if err := rows.Scan(&d.Seq, &at, &d.Text, &d.Edited, &d.By); err != nil {
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
	// Header is the page's HTTP response headers as received; nil when
	// they were not kept (a page read from a cache or the archive, or a
	// snapshot saved before headers were kept).
	Header http.Header
}

// PackPages are snapshots as an evidence pack holds them (export.Pack).
func PackPages(ss []Snapshot) []export.PackPage {
	out := make([]export.PackPage, 0, len(ss))
	for _, s := range ss {
		out = append(out, export.PackPage{URL: s.URL, FinalURL: s.FinalURL, FetchedAt: s.FetchedAt, Text: s.Text, HTML: s.RawHTML, Header: s.Header})
	}
	return out
}

// SaveSnapshot keeps the page behind one of the case's sources, gzipped,
// replacing an earlier snapshot of the same URL. Call it when the engine
// has read a page (at least for every page quoted as evidence).
func (s *Store) SaveSnapshot(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte) error {
	return s.SaveSnapshotHeaders(ctx, id, pageURL, finalURL, fetchedAt, text, rawHTML, nil)
}

// SaveSnapshotHeaders is SaveSnapshot keeping the page's HTTP response
// headers as received too (nil: none kept).
func (s *Store) SaveSnapshotHeaders(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte, header http.Header) error {
	if id == "" || pageURL == "" {
		return fmt.Errorf("save snapshot %q of case %q: case ID and URL are required", pageURL, id)
	}
	tz, err := sources.Gzip([]byte(s.clean(text)))
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	if err := s.mayChange(ctx, s.db, id); err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	rawHTML = s.redact.Bytes(rawHTML)
	hz, err := sources.Gzip(rawHTML)
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	_, err = s.db.ExecContext(ctx, s.q(`
INSERT INTO snapshots (case_id, url, final_url, fetched_at, text_gz, html_gz, headers) VALUES (?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(case_id, url) DO UPDATE SET final_url = excluded.final_url, fetched_at = excluded.fetched_at,
	text_gz = excluded.text_gz, html_gz = excluded.html_gz, headers = excluded.headers`),
		id, s.clean(pageURL), s.clean(finalURL), fetchedAt.UnixMilli(), tz, hz, s.clean(headerText(header)))
	if err != nil {
		return fmt.Errorf("save snapshot %s of case %s: %w", pageURL, id, err)
	}
	return nil
}

// Snapshot returns the stored page for url, matched against the URL as
// found or the final URL after redirects.
func (s *Store) Snapshot(ctx context.Context, id, pageURL string) (*Snapshot, error) {
	row := s.db.QueryRowContext(ctx, s.q(`SELECT url, final_url, fetched_at, text_gz, html_gz, headers FROM snapshots
WHERE case_id = ? AND (url = ? OR final_url = ?) ORDER BY url = ? DESC LIMIT 1`), id, pageURL, pageURL, pageURL)
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
	rows, err := s.db.QueryContext(ctx, s.q(`SELECT url, final_url, fetched_at, text_gz, html_gz, headers FROM snapshots WHERE case_id = ? ORDER BY url`), id)
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
	var headers string
	if err := scan(&sn.URL, &sn.FinalURL, &at, &tz, &hz, &headers); err != nil {
		return nil, err
	}
	if headers != "" {
		h, err := textproto.NewReader(bufio.NewReader(strings.NewReader(headers + "\r\n"))).ReadMIMEHeader()
		if err != nil {
			return nil, fmt.Errorf("read headers of %s: %w", sn.URL, err)
		}
		sn.Header = http.Header(h)
	}
	sn.FetchedAt = time.UnixMilli(at)
	text, err := sources.Gunzip(tz)
	if err != nil {
		return nil, fmt.Errorf("decompress text of %s: %w", sn.URL, err)
	}
	sn.Text = string(text)
	if sn.RawHTML, err = sources.Gunzip(hz); err != nil {
		return nil, fmt.Errorf("decompress HTML of %s: %w", sn.URL, err)
	}
	return &sn, nil
}

// headerText is h in the HTTP wire format ("Name: value" lines, sorted);
// "" for none.
func headerText(h http.Header) string {
	var b strings.Builder
	_ = h.Write(&b) // a strings.Builder does not fail
	return b.String()
}
