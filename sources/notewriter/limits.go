package notewriter

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// Limits are the AI Note Writer API's limits as the client holds them.
type Limits struct {
	// Requests may be made per Window (X: 90 per 15 minutes).
	Requests int
	Window   time.Duration
	// Submissions may be made per Day (X: 250 a day, counted here over
	// the last 24 hours).
	Submissions int
	Day         time.Duration
	// MaxWait is the longest the queue waits for one slot; a slot further
	// off is an error saying when it opens.
	MaxWait time.Duration
	// Retries is how many times a request X answered 429 is sent again
	// (after waiting for X's reset).
	Retries int
}

// DefaultLimits are X's documented limits, a wait of at most 20 minutes
// and three retries after a 429.
var DefaultLimits = Limits{Requests: 90, Window: 15 * time.Minute, Submissions: 250, Day: 24 * time.Hour,
	MaxWait: 20 * time.Minute, Retries: 3}

// Wait is one wait of the queue: until when, and whose limit.
type Wait struct {
	Until time.Time
	For   time.Duration
	Why   string
}

func (w Wait) String() string {
	return fmt.Sprintf("waiting %s until %s (%s)", w.For.Round(time.Second), w.Until.UTC().Format("15:04:05 UTC"), w.Why)
}

// LimitError is a slot further off than Limits.MaxWait: nothing is sent.
type LimitError struct{ Wait }

func (e *LimitError) Error() string {
	return fmt.Sprintf("%s: the next slot opens at %s, in %s; nothing was sent — try again then",
		e.Why, e.Until.UTC().Format("2006-01-02 15:04 UTC"), e.For.Round(time.Minute))
}

// limitState is what the limiter remembers: the times of the requests
// and submissions made, and X's word on when it takes requests again.
type limitState struct {
	Requests     []time.Time `json:"requests,omitempty"`
	Submissions  []time.Time `json:"submissions,omitempty"`
	BlockedUntil time.Time   `json:"blocked_until,omitzero"`
	BlockedWhy   string      `json:"blocked_why,omitempty"`
}

// Limiter is the client's queue: each request takes a slot under the
// limits, waiting (Sleep) for one when they are reached, and X's
// x-rate-limit-remaining, x-rate-limit-reset and 429 answers close the
// slots until X's reset. With a state file, the requests of every muse
// on the machine count together.
type Limiter struct {
	mu     sync.Mutex
	lim    Limits
	path   string
	mem    limitState
	Now    func() time.Time
	Sleep  func(ctx context.Context, d time.Duration) error
	OnWait func(Wait)
}

// NewLimiter is a queue under lim, remembering in the file at path (none
// when "").
func NewLimiter(lim Limits, path string) *Limiter {
	return &Limiter{lim: lim, path: path, Now: time.Now, Sleep: sleep}
}

func sleep(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

func (l *Limiter) load() limitState {
	if l.path == "" {
		return l.mem
	}
	var st limitState
	if b, err := os.ReadFile(l.path); err == nil {
		json.Unmarshal(b, &st) // an unreadable file starts afresh
	}
	return st
}

func (l *Limiter) save(st limitState) error {
	if l.path == "" {
		l.mem = st
		return nil
	}
	b, err := json.Marshal(st)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(l.path), 0o700); err != nil {
		return err
	}
	tmp := l.path + ".tmp"
	if err := os.WriteFile(tmp, b, 0o600); err != nil {
		return err
	}
	return os.Rename(tmp, l.path)
}

// since keeps the times after t.
func since(ts []time.Time, t time.Time) []time.Time {
	var out []time.Time
	for _, x := range ts {
		if x.After(t) {
			out = append(out, x)
		}
	}
	return out
}

// Acquire takes a slot for one request (and one submission when submit),
// waiting while the limits are reached; it fails when the wait would pass
// MaxWait (LimitError) or ctx ends.
func (l *Limiter) Acquire(ctx context.Context, submit bool) error {
	l.mu.Lock()
	defer l.mu.Unlock()
	for {
		now := l.Now()
		st := l.load()
		st.Requests = since(st.Requests, now.Add(-l.lim.Window))
		st.Submissions = since(st.Submissions, now.Add(-l.lim.Day))
		var w Wait
		if st.BlockedUntil.After(now) {
			w = Wait{Until: st.BlockedUntil, Why: st.BlockedWhy}
		}
		if n := len(st.Requests); n >= l.lim.Requests {
			if u := st.Requests[n-l.lim.Requests].Add(l.lim.Window); u.After(w.Until) {
				w = Wait{Until: u, Why: fmt.Sprintf("X's limit of %d requests per %s", l.lim.Requests, minutes(l.lim.Window))}
			}
		}
		if n := len(st.Submissions); submit && n >= l.lim.Submissions {
			if u := st.Submissions[n-l.lim.Submissions].Add(l.lim.Day); u.After(w.Until) {
				w = Wait{Until: u, Why: fmt.Sprintf("X's limit of %d notes a day", l.lim.Submissions)}
			}
		}
		if !w.Until.After(now) {
			st.Requests = append(st.Requests, now)
			if submit {
				st.Submissions = append(st.Submissions, now)
			}
			return l.save(st)
		}
		w.For = w.Until.Sub(now)
		if w.For > l.lim.MaxWait {
			return &LimitError{w}
		}
		if l.OnWait != nil {
			l.OnWait(w)
		}
		if err := l.Sleep(ctx, w.For); err != nil {
			return fmt.Errorf("stopped while %s: %w", w, err)
		}
	}
}

func minutes(d time.Duration) string {
	if d%time.Minute == 0 {
		return strconv.Itoa(int(d/time.Minute)) + " minutes"
	}
	return d.String()
}

// Observe reads X's rate-limit headers: no request remaining, or a 429,
// closes the slots until x-rate-limit-reset (a 429 without it: Retry-After,
// else a minute). It reports whether the answer was a 429.
func (l *Limiter) Observe(resp *http.Response) bool {
	h := resp.Header
	reset := time.Time{}
	if s, err := strconv.ParseInt(h.Get("x-rate-limit-reset"), 10, 64); err == nil {
		reset = time.Unix(s, 0)
	}
	limited := resp.StatusCode == http.StatusTooManyRequests
	if !limited && h.Get("x-rate-limit-remaining") != "0" {
		return false
	}
	if reset.IsZero() && limited {
		if s, err := strconv.Atoi(h.Get("Retry-After")); err == nil {
			reset = l.Now().Add(time.Duration(s) * time.Second)
		} else {
			reset = l.Now().Add(time.Minute)
		}
	}
	if reset.IsZero() {
		return limited
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	st := l.load()
	if reset.After(st.BlockedUntil) {
		st.BlockedUntil = reset
		st.BlockedWhy = "X's rate limit for this endpoint, until its reset"
		if limited {
			st.BlockedWhy = "X answered 429 Too Many Requests"
		}
		if err := l.save(st); err != nil {
			return limited
		}
	}
	return limited
}

// ErrRateLimited is X's 429 after the retries.
var ErrRateLimited = errors.New("X answered 429 Too Many Requests")
