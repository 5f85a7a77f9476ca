package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// apiServer serves body as JSON after check has looked at the request.
func apiServer(t *testing.T, body []byte, check func(t *testing.T, r *http.Request)) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if check != nil {
			check(t, r)
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	}))
	t.Cleanup(srv.Close)
	return srv
}

// only returns the one provider opts configure.
func only(t *testing.T, opts Options) Searcher {
	t.Helper()
	opts.Retry = Retry{BaseDelay: time.Millisecond}
	ps := Providers(opts)
	if len(ps) != 1 {
		t.Fatalf("Providers configured %d searchers, want 1", len(ps))
	}
	return ps[0]
}

func wantParams(t *testing.T, r *http.Request, want map[string]string) {
	t.Helper()
	got := r.URL.Query()
	for k, v := range want {
		if got.Get(k) != v {
			t.Errorf("param %s = %q, want %q (query %s)", k, got.Get(k), v, r.URL.RawQuery)
		}
	}
}

func wantPath(t *testing.T, r *http.Request, path string) {
	t.Helper()
	if r.URL.Path != path {
		t.Errorf("path = %q, want %q", r.URL.Path, path)
	}
	if r.Method != http.MethodGet {
		t.Errorf("method = %s, want GET", r.Method)
	}
}

func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

const claim = "5G towers spread coronavirus"

// cutoff is midnight UTC, so the last day engines may include is the day before.
var cutoff = date("2020-05-01T00:00:00Z")

func TestSearXNG(t *testing.T) {
	srv := apiServer(t, fixture(t, "searxng.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/searx/search")
		wantParams(t, r, map[string]string{"q": claim, "format": "json", "pageno": "1"})
		if a := r.Header.Get("Accept"); a != "application/json" {
			t.Errorf("Accept = %q", a)
		}
	})
	s := only(t, Options{SearXNGURL: srv.URL + "/searx/"})
	if s.Name() != "searxng" {
		t.Errorf("Name = %q", s.Name())
	}
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("got %d hits, want 3: %+v", len(hits), hits)
	}
	h := hits[0]
	if !strings.HasPrefix(h.URL, "https://www.reuters.com/article/uk-factcheck-coronavirus-5g/") || h.Rank != 1 ||
		h.Provider != "searxng" || h.Query != claim || !strings.HasPrefix(h.Title, "False claim: 5G networks") ||
		!strings.HasPrefix(h.Snippet, "A claim that 5G") {
		t.Errorf("first hit = %+v", h)
	}
	if !h.Published.Equal(date("2020-03-31T00:00:00Z")) {
		t.Errorf("published = %v, want 2020-03-31", h.Published)
	}
	if !hits[1].Published.IsZero() || hits[1].Rank != 2 {
		t.Errorf("second hit: published %v (want none: null in answer), rank %d", hits[1].Published, hits[1].Rank)
	}
	if !hits[2].Published.Equal(date("2022-01-19T10:12:00Z")) {
		t.Errorf("third published = %v", hits[2].Published)
	}

	hits, err = s.Search(context.Background(), Query{Text: claim, Count: 2})
	if err != nil || len(hits) != 2 {
		t.Errorf("Count 2: %d hits, err %v", len(hits), err)
	}
}

func TestSearXNGEveryEngineFailed(t *testing.T) {
	srv := apiServer(t, fixture(t, "searxng_unresponsive.json"), nil)
	_, err := only(t, Options{SearXNGURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "google (CAPTCHA), bing (timeout)") {
		t.Errorf("err = %v, want the unresponsive engines named", err)
	}
}

func TestSearXNGJSONDisabled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "403 Forbidden", http.StatusForbidden) // what SearXNG answers when json is not in search.formats
	}))
	defer srv.Close()
	_, err := only(t, Options{SearXNGURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 403 || !strings.Contains(err.Error(), "formats: [html, json]") {
		t.Errorf("err = %v, want 403 with settings.yml advice", err)
	}
}

func TestBrave(t *testing.T) {
	srv := apiServer(t, fixture(t, "brave.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/res/v1/web/search")
		wantParams(t, r, map[string]string{"q": claim, "count": "10", "freshness": "1970-01-01to2020-04-30"})
		if tok := r.Header.Get("X-Subscription-Token"); tok != "brave-key" {
			t.Errorf("X-Subscription-Token = %q", tok)
		}
		if r.URL.Query().Has("key") || r.URL.Query().Has("api_key") {
			t.Error("Brave takes its key in a header, not the query")
		}
	})
	hits, err := only(t, Options{BraveAPIKey: "brave-key", BraveURL: srv.URL}).Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("got %d hits", len(hits))
	}
	if hits[0].Title != "Ofcom: Covid-19 5G theories are 'most common' misinformation - BBC News" {
		t.Errorf("title not cleaned of highlighting and entities: %q", hits[0].Title)
	}
	if strings.Contains(hits[0].Snippet, "<strong>") {
		t.Errorf("snippet keeps markup: %q", hits[0].Snippet)
	}
	if !hits[0].Published.Equal(date("2020-06-26T08:31:09Z")) {
		t.Errorf("published from page_age = %v", hits[0].Published)
	}
	if !hits[1].Published.Equal(date("2020-04-10T00:00:00Z")) || hits[1].URL != "https://apnews.com/article/ap-fact-check-5g-coronavirus" || hits[1].Rank != 2 {
		t.Errorf("second hit (date from age) = %+v", hits[1])
	}
}

func TestBraveNoCutoffNoFreshness(t *testing.T) {
	srv := apiServer(t, fixture(t, "brave.json"), func(t *testing.T, r *http.Request) {
		if r.URL.Query().Has("freshness") {
			t.Errorf("freshness sent without a cutoff: %s", r.URL.RawQuery)
		}
		wantParams(t, r, map[string]string{"count": "20"}) // Brave's maximum
	})
	if _, err := only(t, Options{BraveAPIKey: "k", BraveURL: srv.URL}).Search(context.Background(), Query{Text: claim, Count: 50}); err != nil {
		t.Fatal(err)
	}
}

func TestBraveBadKeyNotRetried(t *testing.T) {
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(t, "brave_401.json"))
	}))
	defer srv.Close()
	_, err := only(t, Options{BraveAPIKey: "wrong", BraveURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 401 {
		t.Fatalf("err = %v, want a 401 StatusError", err)
	}
	if !strings.Contains(err.Error(), "check BRAVE_API_KEY") || !strings.Contains(err.Error(), "subscription token is invalid") {
		t.Errorf("err = %q, want Brave's detail and advice", err)
	}
	if calls.Load() != 1 {
		t.Errorf("401 was sent %d times, want 1", calls.Load())
	}
}

func TestGoogleCSE(t *testing.T) {
	srv := apiServer(t, fixture(t, "google_cse.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/customsearch/v1")
		wantParams(t, r, map[string]string{"key": "cse-key", "cx": "0123456789abcdef0", "q": claim, "num": "10",
			"sort": "date:r:19700101:20200430"})
	})
	s := only(t, Options{GoogleCSEKey: "cse-key", GoogleCSECX: "0123456789abcdef0", GoogleCSEURL: srv.URL + "/"})
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff, Count: 25})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || s.Name() != "google" {
		t.Fatalf("got %d hits from %s", len(hits), s.Name())
	}
	if !hits[0].Published.Equal(date("2020-03-31T16:55:00Z")) {
		t.Errorf("published from article:published_time = %v", hits[0].Published)
	}
	if !hits[1].Published.Equal(date("2020-04-23T00:00:00Z")) || !strings.HasPrefix(hits[1].Snippet, "Engineers are being abused") {
		t.Errorf("date not taken from the snippet prefix: %v %q", hits[1].Published, hits[1].Snippet)
	}
	if hits[1].URL != "https://www.bbc.co.uk/news/technology-52395209" || hits[1].Provider != "google" {
		t.Errorf("second hit = %+v", hits[1])
	}
}

func TestGoogleCSECutoffDuringDay(t *testing.T) {
	// A cutoff in the afternoon admits pages from that same morning.
	srv := apiServer(t, fixture(t, "google_cse.json"), func(t *testing.T, r *http.Request) {
		wantParams(t, r, map[string]string{"sort": "date:r:19700101:20200501"})
	})
	s := only(t, Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: srv.URL})
	if _, err := s.Search(context.Background(), Query{Text: claim, Before: date("2020-05-01T15:00:00+02:00")}); err != nil {
		t.Fatal(err)
	}
}

func TestGoogleCSEDisabledAPI(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		w.WriteHeader(http.StatusForbidden)
		w.Write(fixture(t, "google_403.json"))
	}))
	defer srv.Close()
	_, err := only(t, Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "Custom Search JSON API has not been used") ||
		!strings.Contains(err.Error(), "GOOGLE_CSE_KEY and GOOGLE_CSE_CX and that the Custom Search API is enabled") {
		t.Errorf("err = %v", err)
	}
	if strings.Contains(err.Error(), "key=k") {
		t.Errorf("error leaks the API key: %v", err)
	}
}

func TestSerpAPI(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/search.json")
		wantParams(t, r, map[string]string{"engine": "google", "q": claim, "api_key": "serp-key", "num": "10",
			"tbs": "cdr:1,cd_max:04/30/2020"})
	})
	hits, err := only(t, Options{SerpAPIKey: "serp-key", SerpAPIURL: srv.URL}).Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 {
		t.Fatalf("got %d hits", len(hits))
	}
	if hits[0].URL != "https://www.bbc.co.uk/news/technology-52395209" || !hits[0].Published.Equal(date("2020-04-23T00:00:00Z")) ||
		hits[0].Provider != "serpapi" || hits[0].Rank != 1 {
		t.Errorf("first hit = %+v", hits[0])
	}
	if hits[1].URL != "https://fullfact.org/health/5g-coronavirus/" || !hits[1].Published.IsZero() {
		t.Errorf("second hit = %+v", hits[1])
	}
}

func TestSerpAPINoResultsIsNotAFailure(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_empty.json"), nil)
	hits, err := only(t, Options{SerpAPIKey: "k", SerpAPIURL: srv.URL}).Search(context.Background(), Query{Text: "zxqv"})
	if err != nil || len(hits) != 0 {
		t.Errorf("hits %v, err %v; want none and no error", hits, err)
	}
}

func TestSerpAPIErrorField(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"}`))
	}))
	defer srv.Close()
	_, err := only(t, Options{SerpAPIKey: "k", SerpAPIURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "Invalid API key") || !strings.Contains(err.Error(), "check SERPAPI_API_KEY") {
		t.Errorf("err = %v", err)
	}
}

func TestFactCheck(t *testing.T) {
	srv := apiServer(t, fixture(t, "factcheck.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/v1alpha1/claims:search")
		wantParams(t, r, map[string]string{"query": claim, "key": "fc-key", "pageSize": "10", "languageCode": "en", "maxAgeDays": "3650"})
	})
	s := only(t, Options{FactCheckAPIKey: "fc-key", FactCheckURL: srv.URL, FactCheckLanguage: "en", FactCheckMaxAgeDays: 3650})
	hits, err := s.Search(context.Background(), Query{Text: claim, Before: cutoff})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("got %d hits, want one per ClaimReview (3)", len(hits))
	}
	h := hits[0]
	cr := h.ClaimReview
	if cr == nil {
		t.Fatal("no ClaimReview on a fact-check hit")
	}
	if h.URL != "https://fullfact.org/health/5g-coronavirus/" || h.Title != "There is no link between 5G and the new coronavirus" ||
		h.Provider != "factcheck" || !h.Published.Equal(date("2020-04-03T00:00:00Z")) {
		t.Errorf("hit = %+v", h)
	}
	if cr.Claim != "5G mobile networks spread COVID-19." || cr.Claimant != "Social media users" || cr.Rating != "Incorrect" ||
		cr.Reviewer != "Full Fact" || cr.ReviewURL != h.URL || !cr.ClaimDate.Equal(date("2020-03-28T00:00:00Z")) {
		t.Errorf("claim review = %+v", cr)
	}
	if hits[1].ClaimReview.Reviewer != "politifact.com" || hits[1].ClaimReview.Rating != "Pants on Fire" ||
		hits[1].Title != "politifact.com: 5G mobile networks spread COVID-19." || hits[1].Rank != 2 {
		t.Errorf("review without publisher name or title: %+v %+v", hits[1], hits[1].ClaimReview)
	}
	if hits[2].ClaimReview.Claimant != "Facebook post" || !hits[2].ClaimReview.ClaimDate.IsZero() || hits[2].Rank != 3 {
		t.Errorf("third = %+v", hits[2].ClaimReview)
	}
}

// Every provider must name the HTML it got instead of JSON, not fail on
// "invalid character '<'".
func TestHTMLInsteadOfJSON(t *testing.T) {
	page := fixture(t, "searxng_front.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	}))
	defer srv.Close()
	opts := Options{SearXNGURL: srv.URL, BraveAPIKey: "k", BraveURL: srv.URL, GoogleCSEKey: "k", GoogleCSECX: "cx",
		GoogleCSEURL: srv.URL, SerpAPIKey: "k", SerpAPIURL: srv.URL, FactCheckAPIKey: "k", FactCheckURL: srv.URL,
		SerperAPIKey: "k", SerperURL: srv.URL, TavilyAPIKey: "k", TavilyURL: srv.URL, ExaAPIKey: "k", ExaURL: srv.URL}
	ps := Providers(opts)
	if len(ps) != 8 {
		t.Fatalf("%d providers", len(ps))
	}
	hits, failures := Run(context.Background(), ps, []Query{{Text: claim}})
	if len(hits) != 0 || len(failures) != 8 {
		t.Fatalf("hits %d failures %d, want 0 and 8", len(hits), len(failures))
	}
	for i, f := range failures {
		if f.Provider != ps[i].Name() {
			t.Errorf("failure %d names %q, want %q", i, f.Provider, ps[i].Name())
		}
		msg := f.Error()
		if !strings.HasPrefix(msg, f.Provider+": ") || !strings.Contains(msg, "answered HTML instead of JSON") ||
			!strings.Contains(msg, `page titled "SearXNG"`) {
			t.Errorf("failure = %q", msg)
		}
		if strings.Contains(msg, "key=k") || strings.Contains(msg, "api_key") {
			t.Errorf("failure leaks the key: %q", msg)
		}
	}
}

func TestHTMLWithoutContentType(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json") // a proxy that lies
		w.Write([]byte("\n  <html><body>Bad gateway</body></html>"))
	}))
	defer srv.Close()
	_, err := only(t, Options{BraveAPIKey: "k", BraveURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "answered HTML instead of JSON") {
		t.Errorf("err = %v", err)
	}
}

func TestMalformedJSON(t *testing.T) {
	srv := apiServer(t, []byte(`{"results": [{"url": 42}]}`), nil)
	_, err := only(t, Options{SearXNGURL: srv.URL}).Search(context.Background(), Query{Text: claim})
	if err == nil || !strings.Contains(err.Error(), "decode JSON answer") {
		t.Errorf("err = %v", err)
	}
}

func TestProvidersAndProblems(t *testing.T) {
	if ps := Providers(Options{}); len(ps) != 0 {
		t.Errorf("nothing configured but %d providers", len(ps))
	}
	opts := Options{GoogleCSEKey: "k", SearXNGURL: "localhost:8888", FactCheckAPIKey: "f", BraveAPIKey: "b",
		ExaAPIKey: "e", SerperAPIKey: "s", TavilyAPIKey: "t", TavilySearchDepth: "deep"}
	var names []string
	for _, p := range Providers(opts) {
		names = append(names, p.Name())
	}
	if got := strings.Join(names, ","); got != "searxng,brave,serper,tavily,exa,factcheck" {
		t.Errorf("providers = %s", got)
	}
	probs := strings.Join(opts.Problems(), "\n")
	if !strings.Contains(probs, "GOOGLE_CSE_CX") || !strings.Contains(probs, `SEARXNG_URL "localhost:8888"`) ||
		!strings.Contains(probs, `Tavily search depth "deep"`) {
		t.Errorf("problems = %q", probs)
	}
	if p := (Options{SearXNGURL: "http://127.0.0.1:8888"}).Problems(); len(p) != 0 {
		t.Errorf("good options reported problems: %v", p)
	}
}

func TestRequestURLsAreEscaped(t *testing.T) {
	q := `"Bill Gates" & vaccines #chip 100%`
	srv := apiServer(t, fixture(t, "searxng.json"), func(t *testing.T, r *http.Request) {
		if got := r.URL.Query().Get("q"); got != q {
			t.Errorf("q = %q, want %q", got, q)
		}
	})
	if _, err := only(t, Options{SearXNGURL: srv.URL}).Search(context.Background(), Query{Text: q}); err != nil {
		t.Fatal(err)
	}
}

func TestConnectionErrorDoesNotLeakKey(t *testing.T) {
	gone := httptest.NewServer(http.NotFoundHandler())
	gone.Close()
	for _, opts := range []Options{
		{GoogleCSEKey: "secret-key", GoogleCSECX: "cx", GoogleCSEURL: gone.URL},
		{SerpAPIKey: "secret-key", SerpAPIURL: gone.URL},
		{FactCheckAPIKey: "secret-key", FactCheckURL: gone.URL},
		{SerperAPIKey: "secret-key", SerperURL: gone.URL},
		{TavilyAPIKey: "secret-key", TavilyURL: gone.URL},
		{ExaAPIKey: "secret-key", ExaURL: gone.URL},
	} {
		s := only(t, opts)
		_, err := s.Search(context.Background(), Query{Text: claim})
		if err == nil || !strings.Contains(err.Error(), "connection refused") {
			t.Errorf("%s: err = %v", s.Name(), err)
			continue
		}
		if strings.Contains(err.Error(), "secret-key") {
			t.Errorf("%s error leaks the key: %v", s.Name(), err)
		}
	}
}
