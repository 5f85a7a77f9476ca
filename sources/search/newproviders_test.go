package search

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"
	"time"
)

// jsonServer checks a POSTed JSON body (decoded into a map) and the
// request, then answers with status and body.
func jsonServer(t *testing.T, status int, body []byte, check func(t *testing.T, r *http.Request, got map[string]any)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost {
			t.Errorf("method = %s, want POST", r.Method)
		}
		if ct := r.Header.Get("Content-Type"); ct != "application/json" {
			t.Errorf("Content-Type = %q", ct)
		}
		raw, _ := io.ReadAll(r.Body)
		var got map[string]any
		if err := json.Unmarshal(raw, &got); err != nil {
			t.Errorf("body is not JSON: %q", raw)
		}
		if check != nil {
			check(t, r, got)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func wantBody(t *testing.T, got map[string]any, want map[string]any) {
	t.Helper()
	for k, v := range want {
		if !reflect.DeepEqual(got[k], v) {
			t.Errorf("body %s = %#v, want %#v (body %v)", k, got[k], v, got)
		}
	}
}

func TestSerper(t *testing.T) {
	srv := jsonServer(t, 200, fixture(t, "serper.json"), func(t *testing.T, r *http.Request, got map[string]any) {
		if r.URL.Path != "/search" || r.Header.Get("X-API-KEY") != "serper-key" {
			t.Errorf("path %q, X-API-KEY %q", r.URL.Path, r.Header.Get("X-API-KEY"))
		}
		wantBody(t, got, map[string]any{"q": claim, "num": 10.0, "tbs": "cdr:1,cd_max:04/30/2020"})
		if _, ok := got["page"]; ok {
			t.Errorf("page sent for the first page: %v", got)
		}
	})
	s := only(t, Options{SerperAPIKey: "serper-key", SerperURL: srv.URL})
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "serper" || len(hits) != 2 {
		t.Fatalf("%s: %d hits, want 2 (the linkless entry skipped): %+v", s.Name(), len(hits), hits)
	}
	if h := hits[0]; h.URL != "https://www.bbc.co.uk/news/technology-52395209" || !h.Published.Equal(date("2020-04-23T00:00:00Z")) ||
		h.Provider != "serper" || h.Rank != 1 || h.Query != claim {
		t.Errorf("first hit = %+v", h)
	}
	if h := hits[1]; h.Snippet != "There is no evidence that 5G spreads the new coronavirus." || !h.Published.IsZero() || h.Rank != 2 {
		t.Errorf("second hit = %+v", h)
	}
}

func TestSerperPage(t *testing.T) {
	srv := jsonServer(t, 200, fixture(t, "serper.json"), func(t *testing.T, r *http.Request, got map[string]any) {
		wantBody(t, got, map[string]any{"page": 2.0, "num": 20.0})
		if _, ok := got["tbs"]; ok {
			t.Errorf("tbs sent without a cutoff")
		}
	})
	hits, err := only(t, Options{SerperAPIKey: "k", SerperURL: srv.URL}).Search(context.Background(), Query{Text: claim, Count: 20, Page: 2})
	if err != nil || len(hits) != 2 || hits[0].Rank != 21 {
		t.Errorf("hits %+v, err %v; want page 2 ranked from 21", hits, err)
	}
}

func TestSerperBadKey(t *testing.T) {
	srv := jsonServer(t, http.StatusForbidden, fixture(t, "serper_403.json"), nil)
	_, err := only(t, Options{SerperAPIKey: "wrong", SerperURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 403 || !strings.Contains(err.Error(), "Unauthorized.") || !strings.Contains(err.Error(), "check SERPER_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

func TestTavily(t *testing.T) {
	srv := jsonServer(t, 200, fixture(t, "tavily.json"), func(t *testing.T, r *http.Request, got map[string]any) {
		if r.URL.Path != "/search" || r.Header.Get("Authorization") != "Bearer tvly-key" {
			t.Errorf("path %q, Authorization %q", r.URL.Path, r.Header.Get("Authorization"))
		}
		wantBody(t, got, map[string]any{"query": claim, "max_results": 20.0, "search_depth": "advanced", "end_date": "2020-04-30"})
		if _, ok := got["include_domains"]; ok {
			t.Errorf("include_domains sent for an open query")
		}
		if _, ok := got["api_key"]; ok {
			t.Errorf("key sent in the body as well as the header")
		}
	})
	s := only(t, Options{TavilyAPIKey: "tvly-key", TavilyURL: srv.URL, TavilySearchDepth: "advanced"})
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff, Count: 50})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "tavily" || len(hits) != 2 {
		t.Fatalf("%s: %d hits", s.Name(), len(hits))
	}
	if h := hits[0]; !strings.HasPrefix(h.URL, "https://www.reuters.com/article/uk-factcheck") || !h.Published.Equal(date("2020-03-31T00:00:00Z")) ||
		h.Snippet != "A claim that 5G networks are making people sick, rather than the new coronavirus, is false." || h.Provider != "tavily" {
		t.Errorf("first hit = %+v", h)
	}
	if h := hits[1]; !h.Published.IsZero() || h.Rank != 2 {
		t.Errorf("second hit = %+v", h)
	}
}

func TestTavilyErrors(t *testing.T) {
	for _, c := range []struct {
		status  int
		fixture string
		want    []string
	}{
		{401, "tavily_401.json", []string{"HTTP 401 Unauthorized: Unauthorized: missing or invalid API key.", "check TAVILY_API_KEY"}},
		{432, "tavily_432.json", []string{"HTTP 432: This request exceeds your plan's set usage limit", "plan or spending limit"}},
	} {
		srv := jsonServer(t, c.status, fixture(t, c.fixture), nil)
		_, err := only(t, Options{TavilyAPIKey: "k", TavilyURL: srv.URL}).Search(context.Background(), Query{Text: claim})
		for _, w := range c.want {
			if err == nil || !strings.Contains(err.Error(), w) {
				t.Errorf("%d: err = %v, want %q", c.status, err, w)
			}
		}
	}
}

func TestExa(t *testing.T) {
	srv := jsonServer(t, 200, fixture(t, "exa.json"), func(t *testing.T, r *http.Request, got map[string]any) {
		if r.URL.Path != "/search" || r.Header.Get("x-api-key") != "exa-key" {
			t.Errorf("path %q, x-api-key %q", r.URL.Path, r.Header.Get("x-api-key"))
		}
		wantBody(t, got, map[string]any{"query": claim, "numResults": 10.0, "type": "auto", "endPublishedDate": "2020-04-30T23:59:59.999Z"})
	})
	s := only(t, Options{ExaAPIKey: "exa-key", ExaURL: srv.URL})
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if s.Name() != "exa" || len(hits) != 2 {
		t.Fatalf("%s: %d hits", s.Name(), len(hits))
	}
	if h := hits[0]; h.URL != "https://apnews.com/article/ap-fact-check-5g-coronavirus" || !h.Published.Equal(date("2020-04-10T00:00:00Z")) || h.Rank != 1 {
		t.Errorf("first hit = %+v", h)
	}
	if h := hits[1]; !h.Published.IsZero() || h.Title != "5G and COVID-19: what you need to know" {
		t.Errorf("second hit = %+v", h)
	}
}

func TestExaBadKey(t *testing.T) {
	srv := jsonServer(t, http.StatusUnauthorized, fixture(t, "exa_401.json"), nil)
	_, err := only(t, Options{ExaAPIKey: "k", ExaURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "Invalid API key") || !strings.Contains(err.Error(), "check EXA_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

// The POST providers retry 429 (after its Retry-After) and 5xx with the
// same body each time.
func TestPostProvidersRetry(t *testing.T) {
	for _, c := range []struct {
		name, fixture string
		opts          func(u string) Options
	}{
		{"serper", "serper.json", func(u string) Options { return Options{SerperAPIKey: "k", SerperURL: u} }},
		{"tavily", "tavily.json", func(u string) Options { return Options{TavilyAPIKey: "k", TavilyURL: u} }},
		{"exa", "exa.json", func(u string) Options { return Options{ExaAPIKey: "k", ExaURL: u} }},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var bodies []string
			steps := []func(w http.ResponseWriter){status(http.StatusTooManyRequests, "Retry-After", "1"), status(http.StatusBadGateway)}
			n := 0
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				b, _ := io.ReadAll(r.Body)
				bodies = append(bodies, string(b))
				if n < len(steps) {
					n++
					steps[n-1](w)
					return
				}
				w.Header().Set("Content-Type", "application/json")
				w.Write(fixture(t, c.fixture))
			}))
			t.Cleanup(srv.Close)
			start := time.Now()
			hits, err := only(t, c.opts(srv.URL)).Search(context.Background(), Query{Text: claim})
			if err != nil || len(hits) != 2 {
				t.Fatalf("hits %d, err %v", len(hits), err)
			}
			if len(bodies) != 3 || bodies[0] == "" || bodies[0] != bodies[2] {
				t.Errorf("bodies sent: %q; want the same body three times", bodies)
			}
			if time.Since(start) < 900*time.Millisecond {
				t.Errorf("retried before the 1s Retry-After")
			}
		})
	}
}

// Tavily and Exa cannot page: a second page costs nothing and finds nothing.
func TestNoPagingProviders(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request sent for page 2: %s", r.URL)
	}))
	defer srv.Close()
	for _, opts := range []Options{{TavilyAPIKey: "k", TavilyURL: srv.URL}, {ExaAPIKey: "k", ExaURL: srv.URL}} {
		s := only(t, opts)
		if hits, err := s.Search(context.Background(), Query{Text: claim, Page: 2}); err != nil || len(hits) != 0 {
			t.Errorf("%s: %d hits, err %v", s.Name(), len(hits), err)
		}
	}
}

func TestGoogleCSEEndOfLife(t *testing.T) {
	if !GoogleCSEEndOfLife.Equal(time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("GoogleCSEEndOfLife = %v", GoogleCSEEndOfLife)
	}
	if !strings.Contains(GoogleCSEWarning, "2027-01-01") || !strings.Contains(GoogleCSEWarning, "SERPER_API_KEY") {
		t.Errorf("warning = %q", GoogleCSEWarning)
	}
}
