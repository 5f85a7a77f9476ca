// Package feeds reads live streams of posts for `muse watch`: Bluesky's
// Jetstream (WebSocket, JSON events), Mastodon's streaming API
// (server-sent events) and a plain list of post URLs. Each feed reconnects
// on its own with exponential back-off and jitter, and resumes from a
// cursor its consumer keeps: the consumer stores each post, and its
// cursor, before the feed reads the next, so a restart from the stored
// cursor loses nothing; what a feed may deliver twice around a reconnect
// carries the same ID, for the consumer to drop.
package feeds

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/musecheck/muse/sources/posts"
)

// Post is one post a feed delivered.
type Post struct {
	// ID is the post's identity on its network (an at:// URI, a Mastodon
	// status URI, a URL): the same post delivered twice has the same ID.
	ID string
	// Cursor is where the feed resumes after this post.
	Cursor string
	// Post is the post as read; nil when the feed only says how far it
	// has read (events it skipped: other kinds, posts without a keyword).
	Post *posts.Post
	// Langs are the languages the author declared (Bluesky's langs,
	// Mastodon's language), as given.
	Langs []string
	// ImageKeys identify the post's images without downloading them:
	// Bluesky blob CIDs (the same bytes, the same CID) and Mastodon
	// blurhashes.
	ImageKeys []string
	// Boost says the post is a boost of another's (Mastodon).
	Boost bool
}

// Feed is a source of posts. Run delivers them to emit one at a time,
// starting after cursor ("" for now on), until ctx is done, emit fails or
// the feed fails for good (a refused token, a list that does not exist);
// it reconnects on its own in between. An error from emit stops Run with
// that error. Name is the feed's identity in the consumer's cursor store:
// two feeds with the same name share a cursor.
type Feed interface {
	Name() string
	Run(ctx context.Context, cursor string, emit func(Post) error) error
}

// Stats count what a feed met; read them with Snapshot.
type Stats struct {
	Connects   int // connections made (the first and each reconnect)
	Malformed  int // events that could not be read, skipped
	Heartbeats int // keep-alive comments (Mastodon's :thump)
	LastError  string
}

// Backoff says how long a feed waits before reconnecting: exponential from
// Initial to Max, each wait multiplied by a random factor in [0.5, 1.5]
// (jitter, so that many clients cut at once do not come back at once).
// Zero values mean 1 s and 2 min.
type Backoff struct {
	Initial, Max time.Duration
}

func (b Backoff) new() *backoff.ExponentialBackOff {
	e := backoff.NewExponentialBackOff()
	e.InitialInterval = b.Initial
	if e.InitialInterval <= 0 {
		e.InitialInterval = time.Second
	}
	e.MaxInterval = b.Max
	if e.MaxInterval <= 0 {
		e.MaxInterval = 2 * time.Minute
	}
	e.Multiplier = 2
	e.RandomizationFactor = 0.5
	e.Reset()
	return e
}

// ErrPermanent marks a failure that reconnecting cannot fix.
var ErrPermanent = errors.New("the feed refused")

// emitErr is an error emit returned: Run stops with it.
type emitErr struct{ err error }

func (e *emitErr) Error() string { return e.err.Error() }
func (e *emitErr) Unwrap() error { return e.err }

// reconnect runs connect until ctx is done, connect fails for good or emit
// fails, waiting by b between attempts; the wait starts over after a
// connection that delivered something (progress reports it). Each failed
// or dropped connection is said through c's warning, with the wait.
func reconnect(ctx context.Context, b Backoff, c *counted, connect func(ctx context.Context, progressed func()) error) error {
	bo := b.new()
	for {
		c.update(func(s *Stats) { s.Connects++ })
		err := connect(ctx, func() { bo.Reset() })
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ee *emitErr
		if errors.As(err, &ee) {
			return ee.err
		}
		if errors.Is(err, ErrPermanent) {
			return err
		}
		if err == nil {
			err = errors.New("the connection ended")
		}
		c.update(func(s *Stats) { s.LastError = err.Error() })
		wait := bo.NextBackOff()
		c.warnf("%v; connecting again in %s", err, wait.Round(100*time.Millisecond))
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// statusErr reads an HTTP status that ends a connection attempt: 401, 403,
// 404 and 410 are for good (a bad token, a list that is not there).
func statusErr(what string, code int, status string) error {
	switch code {
	case http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound, http.StatusGone:
		return &permanentErr{what + ": " + status}
	}
	return errors.New(what + ": " + status)
}

type permanentErr struct{ msg string }

func (e *permanentErr) Error() string { return e.msg }
func (e *permanentErr) Is(t error) bool {
	return t == ErrPermanent
}

// counted keeps a feed's Stats, and where it says what goes wrong
// without stopping it.
type counted struct {
	mu   sync.Mutex
	s    Stats
	warn func(string)
}

func (c *counted) update(f func(*Stats)) {
	c.mu.Lock()
	f(&c.s)
	c.mu.Unlock()
}

// Snapshot is what the feed has met so far.
func (c *counted) Snapshot() Stats {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.s
}

// Warner is a feed that says what goes wrong without stopping it: a
// connection that failed or dropped (and when it is made again), events
// that could not be read.
type Warner interface {
	SetWarn(func(string))
}

// SetWarn sets where the feed says what goes wrong without stopping it
// (nil: nowhere; Snapshot still counts it).
func (c *counted) SetWarn(f func(string)) {
	c.mu.Lock()
	c.warn = f
	c.mu.Unlock()
}

func (c *counted) warnf(format string, a ...any) {
	c.mu.Lock()
	w := c.warn
	c.mu.Unlock()
	if w != nil {
		w(fmt.Sprintf(format, a...))
	}
}

// malformed counts an event that could not be read, skipped, and says so
// at the 1st, 10th, 100th… of them: a flood of them is said, not each.
func (c *counted) malformed() {
	var n int
	c.update(func(s *Stats) { s.Malformed++; n = s.Malformed })
	for p := 1; p <= n; p *= 10 {
		switch {
		case p == n && n == 1:
			c.warnf("a malformed event skipped")
		case p == n:
			c.warnf("%d malformed events skipped so far", n)
		}
	}
}
