package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestGeminiRateLimit: Gemini's 429, a JSON list (or a plain object)
// holding Google's error with a QuotaFailure and a RetryInfo, is read: a
// per-minute limit waits the retryDelay and retries, a daily quota stops
// at once naming the quota; neither shows the raw JSON.
func TestGeminiRateLimit(t *testing.T) {
	for _, asList := range []bool{true, false} {
		t.Run(map[bool]string{true: "list", false: "object"}[asList], func(t *testing.T) {
			var calls atomic.Int32
			limit := llmtest.GeminiRateLimit(llmtest.GeminiPerMinute, "15", "21s", asList)
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
					http.NotFound(w, r)
					return
				}
				if calls.Add(1) == 1 {
					limit(w, r)
					return
				}
				llmtest.Answer("This post is missing context.")(w, r)
			}))
			defer srv.Close()
			c, waits := newClient(t, srv.URL+"/v1beta/openai", func(cfg *Config) { cfg.Model = "gemini-2.0-flash" })
			resp, err := c.Complete(context.Background(), Request{Messages: userMsg("hi")})
			if err != nil || resp.Text != "This post is missing context." {
				t.Fatalf("per-minute limit: %v %+v", err, resp)
			}
			if len(*waits) != 1 || (*waits)[0] != 21*time.Second {
				t.Errorf("waits %v, want the retryDelay of 21s", *waits)
			}

			day := httptest.NewServer(llmtest.GeminiRateLimit(llmtest.GeminiPerDay, "200", "", asList))
			defer day.Close()
			c, waits = newClient(t, day.URL+"/v1beta/openai", func(cfg *Config) { cfg.Model = "gemini-2.0-flash" })
			_, err = c.Complete(context.Background(), Request{Messages: userMsg("hi")})
			var ae *APIError
			if !errors.As(err, &ae) || !errors.Is(err, ErrQuota) || len(*waits) != 0 {
				t.Fatalf("daily quota: %v after %d waits, want ErrQuota at once", err, len(*waits))
			}
			if !strings.Contains(ae.Quota, "PerDay") || !strings.Contains(err.Error(), "GenerateRequestsPerDay") || !strings.Contains(err.Error(), "daily") {
				t.Errorf("the error does not say which quota: %v", err)
			}
			if strings.ContainsAny(err.Error(), "{[") || ae.Provider != "Gemini" {
				t.Errorf("raw JSON or no provider in %q (provider %q)", err, ae.Provider)
			}
		})
	}
}

// TestUnknownJSONErrorNeverRaw: an error body of a shape muse does not
// know is read for its message; without one, it is not shown as JSON.
func TestUnknownJSONErrorNeverRaw(t *testing.T) {
	if got := bodyMessage([]byte(`[{"detail": {"message": "slow down"}}]`)); got != "slow down" {
		t.Errorf("message %q", got)
	}
	if got := bodyMessage([]byte(`[{"code": 7}]`)); strings.Contains(got, "{") {
		t.Errorf("raw JSON %q", got)
	}
}
