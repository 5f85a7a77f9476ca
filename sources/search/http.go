package search

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/rand/v2"
	"mime"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/cenkalti/backoff/v5"

	"github.com/musecheck/muse/sources"
)

// jitter is the most added to a server-given Retry-After.
const jitter = 250 * time.Millisecond

// maxBody caps what is read from one answer: search APIs answer in tens of
// kilobytes, so anything far larger is a misconfigured endpoint, not data.
const maxBody = 8 << 20

// Retry says how hard a provider tries again after 429 Too Many Requests, a
// 5xx answer or a network failure that may pass (connection refused or
// reset, a timeout, an answer cut short). Other failures are not retried: a
// bad key stays bad.
type Retry struct {
	// Attempts is the most requests made for one search, first included; zero means 4.
	Attempts int
	// MaxWait bounds the total time spent waiting between attempts, so a
	// Retry-After of an hour fails at once instead of stalling a check; zero means 30s.
	MaxWait time.Duration
	// BaseDelay is the first back-off interval when the server gives no
	// Retry-After; it grows exponentially with jitter. Zero means 500ms.
	BaseDelay time.Duration
}

func (r Retry) withDefaults() Retry {
	if r.Attempts <= 0 {
		r.Attempts = 4
	}
	if r.MaxWait <= 0 {
		r.MaxWait = 30 * time.Second
	}
	if r.BaseDelay <= 0 {
		r.BaseDelay = 500 * time.Millisecond
	}
	return r
}

// StatusError is a non-2xx answer from a provider, with the provider's own
// message when it sent one and advice on what to fix.
type StatusError struct {
	Status  int
	Message string // what the provider said, trimmed; may be empty
	Advice  string // e.g. "check BRAVE_API_KEY"; may be empty
}

func (e *StatusError) Error() string {
	s := strings.TrimSpace(fmt.Sprintf("HTTP %d %s", e.Status, http.StatusText(e.Status)))
	if e.Message != "" {
		s += ": " + e.Message
	}
	if e.Advice != "" {
		s += " (" + e.Advice + ")"
	}
	return s
}

// endpoint is what every JSON provider shares: a client, a retry policy and
// the advice to give when the provider refuses a request.
type endpoint struct {
	client *http.Client
	retry  Retry
	// advice maps a refused status (401, 403, 404, …) to what the user should fix.
	advice func(status int) string
	// siteRequests bounds the requests of one query restricted to sites.
	siteRequests int
}

// get GETs u as getJSON does.
func (e *endpoint) get(ctx context.Context, u string, out any) error {
	return e.getJSON(ctx, func(ctx context.Context) (*http.Request, error) {
		return http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	}, out)
}

// post POSTs body as JSON to u, with the given headers, as getJSON does.
func (e *endpoint) post(ctx context.Context, u string, header http.Header, body any, out any) error {
	b, err := json.Marshal(body)
	if err != nil {
		return fmt.Errorf("encode request: %w", err)
	}
	return e.getJSON(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, u, bytes.NewReader(b))
		if err != nil {
			return nil, err
		}
		for k, v := range header {
			req.Header[k] = v
		}
		req.Header.Set("Content-Type", "application/json")
		return req, nil
	}, out)
}

// getJSON sends req (re-created by newReq for each attempt), retries 429 and
// 5xx answers and passing network failures, and decodes a JSON body into out.
func (e *endpoint) getJSON(ctx context.Context, newReq func(context.Context) (*http.Request, error), out any) error {
	r := e.retry.withDefaults()
	bo := backoff.NewExponentialBackOff()
	bo.InitialInterval = r.BaseDelay
	bo.MaxInterval = r.MaxWait
	var waited time.Duration
	for attempt := 1; ; attempt++ {
		body, err := e.do(ctx, newReq)
		if err == nil {
			return decodeJSON(body, out)
		}
		var re *retryable
		if !errors.As(err, &re) {
			return err
		}
		if attempt >= r.Attempts {
			return fmt.Errorf("%w (gave up after %d attempts)", re.err, attempt)
		}
		wait := re.after
		if wait > 0 {
			// Concurrent queries refused together would otherwise all come
			// back in the same instant and be refused together again.
			wait += rand.N(jitter)
		} else {
			wait = bo.NextBackOff()
		}
		if waited+wait > r.MaxWait {
			if re.after > 0 {
				return fmt.Errorf("%w (server asked to wait %s more, beyond the %s allowed)", re.err, re.after.Round(time.Second), r.MaxWait)
			}
			return fmt.Errorf("%w (gave up after %d attempts and %s of waiting)", re.err, attempt, waited.Round(time.Millisecond))
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return fmt.Errorf("%w (stopped waiting to retry: %w)", re.err, context.Cause(ctx))
		case <-t.C:
		}
		waited += wait
	}
}

// retryable marks an answer worth asking again for, with the wait the server
// asked for (zero when it did not say).
type retryable struct {
	err   error
	after time.Duration
}

func (r *retryable) Error() string { return r.err.Error() }
func (r *retryable) Unwrap() error { return r.err }

// do makes one request and returns the body of a 2xx answer that is not HTML.
func (e *endpoint) do(ctx context.Context, newReq func(context.Context) (*http.Request, error)) ([]byte, error) {
	req, err := newReq(ctx)
	if err != nil {
		return nil, fmt.Errorf("build request: %w", err)
	}
	req.Header.Set("Accept", "application/json")
	resp, err := e.client.Do(req)
	if err != nil {
		// The client's error quotes the whole URL, API key included.
		var ue *url.Error
		if errors.As(err, &ue) {
			ue.URL = redactURL(req.URL)
		}
		return nil, netFailure(ctx, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxBody))
	if err != nil {
		return nil, netFailure(ctx, fmt.Errorf("read answer from %s: %w", redact(req), err))
	}
	if resp.StatusCode >= 200 && resp.StatusCode < 300 {
		if isHTML(resp.Header.Get("Content-Type"), body) {
			return nil, fmt.Errorf("%s answered HTML instead of JSON (%s); check that the URL points at the API", redact(req), htmlHint(body))
		}
		return body, nil
	}
	se := &StatusError{Status: resp.StatusCode, Message: errorMessage(resp.Header.Get("Content-Type"), body)}
	if e.advice != nil {
		se.Advice = e.advice(resp.StatusCode)
	}
	if resp.StatusCode == http.StatusTooManyRequests || resp.StatusCode >= 500 {
		return nil, &retryable{err: se, after: retryAfter(resp.Header, time.Now())}
	}
	return nil, se
}

// netFailure marks err retryable when it is a network failure that may pass:
// the connection refused, reset or closed before the answer was complete,
// or a timeout of the client (not of ctx: a cancelled search stays
// cancelled). A host that does not exist or a refused TLS certificate is a
// configuration mistake, and not retried.
func netFailure(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return err
	}
	var ne net.Error
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.ECONNABORTED),
		errors.Is(err, syscall.EPIPE), errors.Is(err, io.ErrUnexpectedEOF), errors.Is(err, io.EOF),
		errors.As(err, &ne) && ne.Timeout():
		return &retryable{err: err}
	}
	return err
}

// redact names the request without its query string, which may carry an API key.
func redact(req *http.Request) string {
	return req.Method + " " + redactURL(req.URL)
}

func redactURL(u *url.URL) string {
	c := *u
	c.RawQuery = ""
	c.User = nil
	return c.String()
}

func isHTML(contentType string, body []byte) bool {
	if mt, _, err := mime.ParseMediaType(contentType); err == nil && (mt == "text/html" || mt == "application/xhtml+xml") {
		return true
	}
	b := bytes.TrimSpace(body)
	return len(b) > 0 && b[0] == '<'
}

// htmlHint gives the page title, if any, so the error says what was served
// (a login page, a proxy error, the SearXNG front page, …).
func htmlHint(body []byte) string {
	s := string(body)
	// ASCII-only lowering keeps byte offsets: strings.ToLower turns each
	// invalid byte into a three-byte U+FFFD, and its indexes then cut s
	// out of range.
	lower := asciiLower(s)
	i := strings.Index(lower, "<title")
	if i >= 0 {
		if j := strings.Index(lower[i:], ">"); j >= 0 {
			rest := s[i+j+1:]
			if k := strings.Index(lower[i+j+1:], "</title>"); k >= 0 {
				if t := strings.Join(strings.Fields(rest[:k]), " "); t != "" {
					return "page titled " + strconv.Quote(clip(t, 80))
				}
			}
		}
	}
	return fmt.Sprintf("%d bytes of markup", len(body))
}

func asciiLower(s string) string {
	b := []byte(s)
	for i, c := range b {
		if 'A' <= c && c <= 'Z' {
			b[i] = c + 'a' - 'A'
		}
	}
	return string(b)
}

func decodeJSON(body []byte, out any) error {
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("decode JSON answer (%s): %w", clip(strings.TrimSpace(string(body)), 60), err)
	}
	return nil
}

// errorMessage pulls the human message out of the error shapes these APIs
// use: Google {"error":{"message"}}, Brave {"error":{"detail"}}, SerpAPI and
// Exa {"error":"…"}, Serper {"message":"…"}, Tavily {"detail":{"error":"…"}},
// or a short plain-text body.
func errorMessage(contentType string, body []byte) string {
	var v struct {
		Error   json.RawMessage `json:"error"`
		Message string          `json:"message"`
		Detail  json.RawMessage `json:"detail"`
	}
	if json.Unmarshal(body, &v) == nil {
		if len(v.Error) == 0 && len(v.Detail) > 0 {
			var d struct {
				Error string `json:"error"`
			}
			var s string
			if json.Unmarshal(v.Detail, &d) == nil && d.Error != "" {
				return clip(d.Error, 300)
			}
			if json.Unmarshal(v.Detail, &s) == nil && s != "" {
				return clip(s, 300)
			}
		}
		var s string
		if json.Unmarshal(v.Error, &s) == nil && s != "" {
			return clip(s, 300)
		}
		var obj struct {
			Message string `json:"message"`
			Detail  string `json:"detail"`
			Code    any    `json:"code"`
		}
		if json.Unmarshal(v.Error, &obj) == nil {
			if obj.Detail != "" {
				return clip(obj.Detail, 300)
			}
			if obj.Message != "" {
				return clip(obj.Message, 300)
			}
		}
		return clip(v.Message, 300)
	}
	if isHTML(contentType, body) {
		return htmlHint(body)
	}
	return clip(strings.Join(strings.Fields(string(body)), " "), 200)
}

// retryAfter reads how long the server asked us to wait: Retry-After in
// seconds or as an HTTP date (RFC 9110 §10.2.3), else the rate-limit headers
// Brave documents (X-RateLimit-Remaining / X-RateLimit-Reset, one value per
// window: wait for the exhausted window that resets last).
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := sources.RetryAfter(h, now); ok { // capped at sources.MaxRetryAfter
		return d
	}
	remaining := splitInts(h.Get("X-RateLimit-Remaining"))
	reset := splitInts(h.Get("X-RateLimit-Reset"))
	var wait time.Duration
	for i, r := range reset {
		if i < len(remaining) && remaining[i] == 0 {
			wait = max(wait, time.Duration(min(r, int(maxRetryAfter/time.Second)))*time.Second)
		}
	}
	return wait
}

// maxRetryAfter caps a server's requested wait: longer than any real
// rate-limit window (Brave's is a month) and far beyond any retry budget,
// yet small enough that adding it to the time already waited cannot
// overflow.
const maxRetryAfter = 10 * 365 * 24 * time.Hour

func splitInts(s string) []int {
	if strings.TrimSpace(s) == "" {
		return nil
	}
	var out []int
	for _, f := range strings.Split(s, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil {
			return nil
		}
		out = append(out, n)
	}
	return out
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
