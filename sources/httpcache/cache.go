// Package httpcache is a caching http.RoundTripper for the requests muse
// pays for: search-provider queries and model (OpenAI-compatible) calls.
// Rerunning a check, or a stage of one, sends the same requests again; with
// the cache they are answered from $XDG_DATA_HOME/muse/cache.db instead of
// the provider.
//
// An entry is keyed by the SHA-256 of the exact request: method, URL
// (query included), body, and the headers that change what a server sends
// back (Accept, Accept-Encoding, Accept-Language, Content-Type). Headers
// that authenticate are not part of the key and are never stored; neither
// is the URL in clear — only its hash, plus a copy whose secret query
// parameters (key=, api_key=, token=, ...) are replaced by "REDACTED" for
// people reading the database. Secret values the request carried are also
// replaced in the stored response, in case a server echoes them.
//
// Only 200 responses are kept. A streamed answer (text/event-stream, NDJSON)
// is passed through to the caller as it arrives and stored whole once it
// has ended, then replayed in one piece; a stream the caller abandons, or
// that breaks, is not stored.
package httpcache

import (
	"bytes"
	"context"
	"crypto/sha256"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sqlitedb"
)

// DefaultTTL is how long an entry is served when Options.TTL is zero.
const DefaultTTL = 24 * time.Hour

//go:embed migrations
var migrations embed.FS

// DefaultMaxBody is the largest response stored when Options.MaxBody is
// zero; larger ones pass through uncached.
const DefaultMaxBody = 16 << 20

// Options configures a Cache.
type Options struct {
	// Path is the database file; the caller passes cfg.DataDir/cache.db
	// (see DefaultPath). Missing directories are created. A postgres://
	// URL keeps the cache in that database instead (table http_cache), so
	// a newsroom's processes share it.
	Path string
	// TTL is how long a stored response is served; zero means DefaultTTL.
	TTL time.Duration
	// Bypass turns the cache off (--no-cache): requests go straight to the
	// network and nothing is read or written.
	Bypass bool
	// MaxBody caps the size of a stored response; zero means DefaultMaxBody.
	MaxBody int64
	// Secrets are further strings never to store (the API keys from the
	// configuration); they are replaced by "[redacted]" in stored
	// responses. Keys the request itself carries are found without this.
	Secrets []string
	// Skip, when set, sends the requests it returns true for past the cache
	// (for example a model-listing call whose answer must be fresh).
	Skip func(*http.Request) bool
	// Now is the clock that stamps and expires entries; nil means time.Now.
	Now func() time.Time
}

// DefaultPath is the cache database under muse's data directory
// (config.Config.DataDir).
func DefaultPath(dataDir string) string { return filepath.Join(dataDir, "cache.db") }

// Cache is an open response cache. Wrap a transport with it; one Cache may
// serve several clients at once, and several processes may share the file.
type Cache struct {
	db       *sql.DB
	postgres bool
	pool     *pgxpool.Pool
	table    string
	opts     Options
	now      func() time.Time

	hits, misses, stored atomic.Int64
}

// Stats counts what a Cache did since it was opened (Hits, Misses, Stored)
// and what the database holds (Entries, Bytes of stored bodies, including
// expired entries not yet pruned).
type Stats struct {
	Hits    int64 `json:"hits"`
	Misses  int64 `json:"misses"`
	Stored  int64 `json:"stored"`
	Entries int64 `json:"entries"`
	Bytes   int64 `json:"bytes"`
}

// Open opens (creating when needed) the cache database and removes expired
// entries. With o.Bypass the database is still opened, so Clear and Stats
// work, but RoundTrip never touches it.
func Open(ctx context.Context, o Options) (*Cache, error) {
	if o.Path == "" {
		return nil, errors.New("open cache: no database path given")
	}
	if o.TTL <= 0 {
		o.TTL = DefaultTTL
	}
	if o.MaxBody <= 0 {
		o.MaxBody = DefaultMaxBody
	}
	c, err := openDB(ctx, o)
	if err != nil {
		return nil, err
	}
	c.opts = o
	c.now = time.Now
	if o.Now != nil {
		c.now = o.Now
	}
	if _, err := c.db.ExecContext(ctx, c.sql("DELETE FROM entries WHERE expires_at <= ?"), c.now().UnixMilli()); err != nil {
		c.Close()
		return nil, fmt.Errorf("open cache %s: prune expired entries: %w", c.where(), err)
	}
	return c, nil
}

// openDB opens the SQLite file or the PostgreSQL database of o.Path and
// brings its schema up to date.
func openDB(ctx context.Context, o Options) (*Cache, error) {
	if pgdb.IsURL(o.Path) {
		pool, db, err := pgdb.OpenMigrated(ctx, o.Path, "http_cache", migrations, "migrations/postgres")
		if err != nil {
			return nil, fmt.Errorf("open cache: %w", err)
		}
		return &Cache{db: db, postgres: true, pool: pool, table: "http_cache"}, nil
	}
	db, err := sqlitedb.Open(o.Path, sqlitedb.Options{Busy: 30 * time.Second})
	if err != nil {
		return nil, fmt.Errorf("open cache %s: %w", o.Path, err)
	}
	sub, _ := fs.Sub(migrations, "migrations/sqlite")
	if err := sqlitedb.Migrate(ctx, db, "http_cache", sub); err != nil {
		db.Close()
		return nil, fmt.Errorf("open cache %s: %w", o.Path, err)
	}
	return &Cache{db: db, table: "entries"}, nil
}

// sql names the engine's table in a statement written for "entries" and
// writes its placeholders as the engine wants them.
func (c *Cache) sql(s string) string {
	if !c.postgres {
		return s
	}
	return pgdb.Rebind(strings.ReplaceAll(s, "entries", c.table))
}

// where names the cache in messages without a database password.
func (c *Cache) where() string { return pgdb.Redact(c.opts.Path) }

// Close closes the database.
func (c *Cache) Close() error {
	if c.pool != nil {
		defer c.pool.Close()
	}
	if err := c.db.Close(); err != nil {
		return fmt.Errorf("close cache %s: %w", c.where(), err)
	}
	return nil
}

// Clear removes every entry (`muse cache clear`) and returns how many, and
// the model capabilities learned.
func (c *Cache) Clear(ctx context.Context) (int64, error) {
	res, err := c.db.ExecContext(ctx, c.sql("DELETE FROM entries"))
	if err != nil {
		return 0, fmt.Errorf("clear cache %s: %w", c.where(), err)
	}
	// What servers taught of their models goes too: a lesson learned from
	// a passing error is not kept for ever.
	if _, err := c.db.ExecContext(ctx, "DELETE FROM model_capabilities"); err != nil {
		return 0, fmt.Errorf("clear cache %s: %w", c.where(), err)
	}
	n, _ := res.RowsAffected()
	if c.postgres {
		return n, nil // autovacuum gives the space back
	}
	// Give the space back: a cleared cache should not stay the size it was.
	if _, err := c.db.ExecContext(ctx, "PRAGMA wal_checkpoint(TRUNCATE)"); err != nil {
		return n, fmt.Errorf("clear cache %s: checkpoint: %w", c.where(), err)
	}
	if _, err := c.db.ExecContext(ctx, "VACUUM"); err != nil {
		return n, fmt.Errorf("clear cache %s: vacuum: %w", c.where(), err)
	}
	return n, nil
}

// Stats reports this Cache's hits, misses and stores, and the database's
// size.
func (c *Cache) Stats(ctx context.Context) (Stats, error) {
	s := Stats{Hits: c.hits.Load(), Misses: c.misses.Load(), Stored: c.stored.Load()}
	err := c.db.QueryRowContext(ctx, c.sql("SELECT count(*), coalesce(sum(length(body)), 0) FROM entries")).Scan(&s.Entries, &s.Bytes)
	if err != nil {
		return s, fmt.Errorf("read cache stats %s: %w", c.where(), err)
	}
	return s, nil
}

// Client returns a copy of hc (nil: a zero http.Client) whose transport
// goes through the cache.
func (c *Cache) Client(hc *http.Client) *http.Client {
	var cp http.Client
	if hc != nil {
		cp = *hc
	}
	cp.Transport = c.Wrap(cp.Transport)
	return &cp
}

// Wrap returns a RoundTripper that answers from the cache when it can and
// otherwise sends the request with next (nil: http.DefaultTransport).
func (c *Cache) Wrap(next http.RoundTripper) http.RoundTripper {
	if next == nil {
		next = http.DefaultTransport
	}
	return &transport{c: c, next: next}
}

type bypassKey struct{}

// WithoutCache marks a context so that requests made with it skip the
// cache (a "run again, fresh" action).
func WithoutCache(ctx context.Context) context.Context {
	return context.WithValue(ctx, bypassKey{}, true)
}

type transport struct {
	c    *Cache
	next http.RoundTripper
}

// HeaderCache is set on replayed responses ("hit"), so callers and tests
// can tell.
const HeaderCache = "X-Muse-Cache"

func (t *transport) RoundTrip(req *http.Request) (*http.Response, error) {
	c := t.c
	if c.opts.Bypass || req.Context().Value(bypassKey{}) != nil || (c.opts.Skip != nil && c.opts.Skip(req)) ||
		(req.Method != http.MethodGet && req.Method != http.MethodPost) {
		return t.next.RoundTrip(req)
	}
	var body []byte
	if req.Body != nil && req.Body != http.NoBody {
		b, err := io.ReadAll(req.Body)
		req.Body.Close()
		if err != nil {
			return nil, fmt.Errorf("cache: read request body for %s %s: %w", req.Method, redactURL(req.URL), err)
		}
		body = b
	}
	key := requestKey(req, body)
	if resp, ok := c.lookup(req, key); ok {
		c.hits.Add(1)
		return resp, nil
	}
	c.misses.Add(1)
	out := req.Clone(req.Context())
	if body != nil {
		out.Body = io.NopCloser(bytes.NewReader(body))
		out.GetBody = func() (io.ReadCloser, error) { return io.NopCloser(bytes.NewReader(body)), nil }
		out.ContentLength = int64(len(body))
	}
	resp, err := t.next.RoundTrip(out)
	if err != nil || resp.StatusCode != http.StatusOK {
		return resp, err
	}
	e := &pending{c: c, key: key, method: req.Method, url: redactURL(req.URL), secrets: requestSecrets(req, c.opts.Secrets),
		header: resp.Header.Clone()}
	if isStream(resp.Header) {
		e.stream = true
		resp.Body = &teeBody{rc: resp.Body, e: e, ctx: context.WithoutCancel(req.Context())}
		return resp, nil
	}
	// A whole answer is read here rather than teed: JSON decoders stop at
	// the closing brace and may never read to EOF.
	buf, err := io.ReadAll(io.LimitReader(resp.Body, c.opts.MaxBody+1))
	if err != nil {
		resp.Body.Close()
		return nil, fmt.Errorf("cache: read response of %s %s: %w", req.Method, redactURL(req.URL), err)
	}
	if int64(len(buf)) > c.opts.MaxBody {
		resp.Body = struct {
			io.Reader
			io.Closer
		}{io.MultiReader(bytes.NewReader(buf), resp.Body), resp.Body}
		return resp, nil
	}
	resp.Body.Close()
	resp.Body = io.NopCloser(bytes.NewReader(buf))
	e.body = buf
	// A failed store only loses a future hit; the caller still gets its answer.
	_ = e.store(context.WithoutCancel(req.Context()))
	return resp, nil
}

// requestKey hashes what makes two requests the same request.
func requestKey(req *http.Request, body []byte) []byte {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", req.Method, req.URL.String())
	for _, k := range []string{"Accept", "Accept-Encoding", "Accept-Language", "Content-Type"} {
		fmt.Fprintf(h, "%s: %s\n", k, strings.Join(req.Header.Values(k), ", "))
	}
	fmt.Fprintf(h, "%d\n", len(body))
	h.Write(body)
	return h.Sum(nil)
}

func isStream(h http.Header) bool {
	ct := strings.ToLower(h.Get("Content-Type"))
	return strings.HasPrefix(ct, "text/event-stream") || strings.Contains(ct, "ndjson")
}

func (c *Cache) lookup(req *http.Request, key []byte) (*http.Response, bool) {
	var hdr, body []byte
	err := c.db.QueryRowContext(req.Context(), c.sql("SELECT header, body FROM entries WHERE key = ? AND expires_at > ?"),
		key, c.now().UnixMilli()).Scan(&hdr, &body)
	if err != nil {
		return nil, false // not there, or the database is unreadable: ask the network
	}
	h := http.Header{}
	if json.Unmarshal(hdr, &h) != nil {
		return nil, false
	}
	h.Set(HeaderCache, "hit")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	return &http.Response{
		Status: "200 OK", StatusCode: http.StatusOK, Proto: "HTTP/1.1", ProtoMajor: 1, ProtoMinor: 1,
		Header: h, Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body)), Request: req,
	}, true
}

// pending is a response on its way into the cache.
type pending struct {
	c           *Cache
	key         []byte
	method, url string
	secrets     []string
	header      http.Header
	body        []byte
	stream      bool
}

// dropHeaders never reach the database: credentials, cookies and
// per-connection framing.
var dropHeaders = []string{"Authorization", "Proxy-Authorization", "X-Subscription-Token", "Api-Key", "X-Api-Key",
	"Set-Cookie", "Cookie", "Connection", "Keep-Alive", "Transfer-Encoding", "Content-Length", HeaderCache}

func (e *pending) store(ctx context.Context) error {
	h := e.header.Clone()
	for _, k := range dropHeaders {
		h.Del(k)
	}
	hj, err := json.Marshal(h)
	if err != nil {
		return err
	}
	body := e.body
	r := sources.NewRedactor(e.secrets...)
	hj, body = r.Bytes(hj), r.Bytes(body)
	now := e.c.now()
	_, err = e.c.db.ExecContext(ctx, e.c.sql(`
INSERT INTO entries (key, method, url, created_at, expires_at, header, body, stream) VALUES (?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(key) DO UPDATE SET created_at = excluded.created_at, expires_at = excluded.expires_at,
	header = excluded.header, body = excluded.body, stream = excluded.stream`),
		e.key, e.method, e.url, now.UnixMilli(), now.Add(e.c.opts.TTL).UnixMilli(), hj, body, e.stream)
	if err == nil {
		e.c.stored.Add(1)
	}
	return err
}

// teeBody passes a stream through and stores it once it has ended, at EOF
// or when the caller closes it (go-openai stops reading at "data: [DONE]"
// and never sees EOF).
type teeBody struct {
	rc   io.ReadCloser
	e    *pending
	ctx  context.Context
	buf  bytes.Buffer
	over bool // larger than MaxBody: pass through only
	done bool // stored, or given up
	eof  bool
}

func (b *teeBody) Read(p []byte) (int, error) {
	n, err := b.rc.Read(p)
	if n > 0 && !b.over {
		b.buf.Write(p[:n])
		if int64(b.buf.Len()) > b.e.c.opts.MaxBody {
			b.over = true
			b.buf = bytes.Buffer{}
		}
	}
	if err == io.EOF {
		b.eof = true
		b.finish()
	} else if err != nil {
		b.done = true // a broken stream is not an answer to replay
	}
	return n, err
}

func (b *teeBody) Close() error {
	b.finish()
	return b.rc.Close()
}

// finish stores the stream if it is complete: an event stream must carry
// OpenAI's "data: [DONE]" (a server that stopped without it gave up
// mid-answer), an NDJSON stream must have reached EOF.
func (b *teeBody) finish() {
	if b.done || b.over {
		b.done = true
		return
	}
	if ct := strings.ToLower(b.e.header.Get("Content-Type")); strings.HasPrefix(ct, "text/event-stream") {
		if !bytes.Contains(b.buf.Bytes(), []byte("data: [DONE]")) {
			b.done = true
			return
		}
	} else if !b.eof {
		b.done = true
		return
	}
	b.done = true
	b.e.body = slices.Clone(b.buf.Bytes())
	_ = b.e.store(b.ctx)
}

// secretParams are query parameter names whose values are credentials.
var secretParams = map[string]bool{"key": true, "api_key": true, "apikey": true, "api-key": true, "access_token": true,
	"token": true, "auth": true, "password": true, "secret": true, "client_secret": true, "signature": true,
	"sig": true, "subscription-key": true, "x-api-key": true}

// secretHeaders are request headers whose values are credentials.
var secretHeaders = []string{"Authorization", "Proxy-Authorization", "X-Subscription-Token", "Api-Key", "X-Api-Key",
	"X-Goog-Api-Key", "Ocp-Apim-Subscription-Key"}

// requestSecrets collects the credential values a request carries (and the
// configured ones), longest first so that a key inside another is not left
// half-replaced.
func requestSecrets(req *http.Request, extra []string) []string {
	var out []string
	add := func(s string) {
		s = strings.TrimSpace(s)
		if len(s) >= 6 && !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, s := range extra {
		add(s)
	}
	for _, h := range secretHeaders {
		for _, v := range req.Header.Values(h) {
			add(v)
			if _, tok, ok := strings.Cut(v, " "); ok { // "Bearer sk-..."
				add(tok)
			}
		}
	}
	for k, vs := range req.URL.Query() {
		if secretParams[strings.ToLower(k)] {
			for _, v := range vs {
				add(v)
			}
		}
	}
	if req.URL.User != nil {
		if p, ok := req.URL.User.Password(); ok {
			add(p)
		}
	}
	slices.SortFunc(out, func(a, b string) int { return len(b) - len(a) })
	return out
}

// redactURL is u without credentials, for storing and for error messages.
func redactURL(u *url.URL) string {
	r := *u
	r.User = nil
	q := r.Query()
	changed := false
	for k := range q {
		if secretParams[strings.ToLower(k)] {
			q[k] = []string{"REDACTED"}
			changed = true
		}
	}
	if changed {
		r.RawQuery = q.Encode()
	}
	return r.String()
}

// Capabilities returns what earlier processes learned of the models of
// the model server at base URL server (SetCapabilities), by model, as
// the JSON they kept. A bypassed cache (--no-cache) remembers nothing.
func (c *Cache) Capabilities(ctx context.Context, server string) (map[string][]byte, error) {
	out := map[string][]byte{}
	if c.opts.Bypass {
		return out, nil
	}
	rows, err := c.db.QueryContext(ctx, c.sql("SELECT model, caps FROM model_capabilities WHERE server = ?"), server)
	if err != nil {
		return nil, fmt.Errorf("read learned model capabilities from %s: %w", c.where(), err)
	}
	defer rows.Close()
	for rows.Next() {
		var model, caps string
		if err := rows.Scan(&model, &caps); err != nil {
			return nil, fmt.Errorf("read learned model capabilities from %s: %w", c.where(), err)
		}
		out[model] = []byte(caps)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("read learned model capabilities from %s: %w", c.where(), err)
	}
	return out, nil
}

// SetCapabilities keeps what a model server's answer taught of one of its
// models, as JSON, for later processes. `muse cache clear` forgets it.
func (c *Cache) SetCapabilities(ctx context.Context, server, model string, caps []byte) error {
	if c.opts.Bypass {
		return nil
	}
	_, err := c.db.ExecContext(ctx, c.sql(`INSERT INTO model_capabilities (server, model, caps, learned_at) VALUES (?, ?, ?, ?)
ON CONFLICT (server, model) DO UPDATE SET caps = excluded.caps, learned_at = excluded.learned_at`),
		server, model, string(caps), c.now().UnixMilli())
	if err != nil {
		return fmt.Errorf("keep learned model capabilities in %s: %w", c.where(), err)
	}
	return nil
}
