package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// flaky answers with the given statuses in turn (headers set by each step),
// then serves body as JSON.
func flaky(t *testing.T, body []byte, steps ...func(w http.ResponseWriter)) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		n := int(calls.Add(1))
		if n <= len(steps) {
			steps[n-1](w)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func status(code int, header ...string) func(w http.ResponseWriter) {
	return func(w http.ResponseWriter) {
		for i := 0; i+1 < len(header); i += 2 {
			w.Header().Set(header[i], header[i+1])
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(code)
		w.Write([]byte(`{"error":{"code":` + strconv.Itoa(code) + `,"message":"slow down"}}`))
	}
}

func TestRetry429HonoursRetryAfter(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, fixture(t, "brave.json"), status(http.StatusTooManyRequests, "Retry-After", "1"))
	s := Providers(Options{BraveAPIKey: "k", BraveURL: srv.URL, Retry: Retry{BaseDelay: time.Millisecond}})[0]
	start := time.Now()
	hits, err := s.Search(context.Background(), Query{Text: claim})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || calls.Load() != 2 {
		t.Errorf("hits %d after %d calls, want 2 hits after 2 calls", len(hits), calls.Load())
	}
	// BaseDelay is 1ms, so only Retry-After explains a wait of a second.
	if d := time.Since(start); d < 900*time.Millisecond {
		t.Errorf("retried after %s, before the 1s Retry-After", d)
	}
}

func TestRetry500TwiceThenSuccess(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, fixture(t, "google_cse.json"), status(http.StatusInternalServerError), status(http.StatusBadGateway))
	s := Providers(Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: srv.URL, Retry: Retry{BaseDelay: 5 * time.Millisecond}})[0]
	hits, err := s.Search(context.Background(), Query{Text: claim})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || calls.Load() != 3 {
		t.Errorf("hits %d after %d calls, want 2 after 3", len(hits), calls.Load())
	}
}

func TestRetryGivesUpAfterAttempts(t *testing.T) {
	t.Parallel()
	down := status(http.StatusServiceUnavailable)
	srv, calls := flaky(t, nil, down, down, down, down, down)
	s := Providers(Options{SearXNGURL: srv.URL, Retry: Retry{Attempts: 3, BaseDelay: time.Millisecond}})[0]
	_, err := s.Search(context.Background(), Query{Text: claim})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 503 || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("err = %v", err)
	}
	if calls.Load() != 3 {
		t.Errorf("%d calls, want 3", calls.Load())
	}
}

func TestRetryAfterBeyondBudgetFailsAtOnce(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, nil, status(http.StatusTooManyRequests, "Retry-After", "3600"))
	s := Providers(Options{SerpAPIKey: "k", SerpAPIURL: srv.URL, Retry: Retry{MaxWait: 5 * time.Second}})[0]
	start := time.Now()
	_, err := s.Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "HTTP 429") || !strings.Contains(err.Error(), "wait 1h0m0s more, beyond the 5s allowed") {
		t.Errorf("err = %v", err)
	}
	if calls.Load() != 1 || time.Since(start) > 2*time.Second {
		t.Errorf("%d calls in %s; want one call and no wait", calls.Load(), time.Since(start))
	}
}

func TestRetryWaitIsCancellable(t *testing.T) {
	t.Parallel()
	srv, _ := flaky(t, nil, status(http.StatusTooManyRequests, "Retry-After", "20"))
	s := Providers(Options{FactCheckAPIKey: "k", FactCheckURL: srv.URL})[0]
	ctx, cancel := context.WithTimeout(context.Background(), 100*time.Millisecond)
	defer cancel()
	start := time.Now()
	_, err := s.Search(ctx, Query{Text: claim})
	if !errors.Is(err, context.DeadlineExceeded) || !strings.Contains(err.Error(), "HTTP 429") {
		t.Errorf("err = %v, want the 429 and the deadline", err)
	}
	if time.Since(start) > 5*time.Second {
		t.Errorf("cancel took %s", time.Since(start))
	}
}

func TestRetryAfterHeader(t *testing.T) {
	now := time.Date(2024, 4, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    map[string]string
		want time.Duration
	}{
		{map[string]string{"Retry-After": "7"}, 7 * time.Second},
		{map[string]string{"Retry-After": "Mon, 29 Apr 2024 12:00:30 GMT"}, 30 * time.Second},
		{map[string]string{"Retry-After": "Mon, 29 Apr 2024 11:00:00 GMT"}, 0}, // already past
		{map[string]string{"Retry-After": "soon"}, 0},
		// Brave: the per-second window is exhausted, the monthly one is not.
		{map[string]string{"X-RateLimit-Remaining": "0, 1999", "X-RateLimit-Reset": "1, 1419704"}, time.Second},
		// Monthly quota gone: wait for the month, which Retry.MaxWait then refuses.
		{map[string]string{"X-RateLimit-Remaining": "0, 0", "X-RateLimit-Reset": "1, 1419704"}, 1419704 * time.Second},
		{map[string]string{}, 0},
	} {
		h := http.Header{}
		for k, v := range c.h {
			h.Set(k, v)
		}
		if got := retryAfter(h, now); got != c.want {
			t.Errorf("retryAfter(%v) = %s, want %s", c.h, got, c.want)
		}
	}
}

// hangUp closes the connection without answering, as a server that crashed
// mid-request or a proxy that reset it does: the client sees EOF.
func hangUp(w http.ResponseWriter) {
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

// cutShort promises more body than it sends: the client sees an unexpected EOF.
func cutShort(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Content-Length", "1000")
	w.Write([]byte(`{"web":{"results":[`))
	conn, _, err := w.(http.Hijacker).Hijack()
	if err != nil {
		panic(err)
	}
	conn.Close()
}

func TestRetryNetworkFailures(t *testing.T) {
	t.Parallel()
	srv, calls := flaky(t, fixture(t, "brave.json"), hangUp, cutShort)
	s := Providers(Options{BraveAPIKey: "k", BraveURL: srv.URL, Retry: Retry{BaseDelay: time.Millisecond}})[0]
	hits, err := s.Search(context.Background(), Query{Text: claim})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || calls.Load() != 3 {
		t.Errorf("hits %d after %d calls, want 2 after 3 (a hang-up and a cut answer retried)", len(hits), calls.Load())
	}
}

func TestRetryConnectionRefusedBounded(t *testing.T) {
	t.Parallel()
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	s := Providers(Options{SearXNGURL: gone.URL, Retry: Retry{Attempts: 3, BaseDelay: time.Millisecond}})[0]
	_, err := s.Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.Contains(err.Error(), "gave up after 3 attempts") {
		t.Errorf("err = %v, want connection refused, given up after 3 attempts", err)
	}
}

func TestRetryClientTimeout(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if calls.Add(1) == 1 {
			select { // slower than the client's timeout
			case <-r.Context().Done():
			case <-time.After(5 * time.Second):
			}
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixture(t, "searxng.json"))
	}))
	t.Cleanup(srv.Close)
	client := &http.Client{Timeout: 200 * time.Millisecond}
	s := Providers(Options{Client: client, SearXNGURL: srv.URL, Retry: Retry{BaseDelay: time.Millisecond}})[0]
	hits, err := s.Search(context.Background(), Query{Text: claim})
	if err != nil || len(hits) != 3 || calls.Load() != 2 {
		t.Errorf("hits %d, err %v after %d calls; want the timed-out request retried once", len(hits), err, calls.Load())
	}
}

func TestCancelledSearchNotRetried(t *testing.T) {
	t.Parallel()
	var calls atomic.Int32
	ctx, cancel := context.WithCancel(context.Background())
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		cancel()
		<-r.Context().Done()
	}))
	t.Cleanup(srv.Close)
	s := Providers(Options{SearXNGURL: srv.URL, Retry: Retry{BaseDelay: time.Millisecond}})[0]
	_, err := s.Search(ctx, Query{Text: claim})
	if !errors.Is(err, context.Canceled) || calls.Load() != 1 {
		t.Errorf("err %v after %d calls; want the cancellation, one call", err, calls.Load())
	}
}
