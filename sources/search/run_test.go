package search

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
)

func TestRunOneProviderDownOthersGoOn(t *testing.T) {
	sx := apiServer(t, fixture(t, "searxng.json"), nil)
	gone := httptest.NewServer(http.NotFoundHandler())
	goneURL := gone.URL
	gone.Close() // connection refused from now on
	bad := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write(fixture(t, "brave_401.json"))
	}))
	defer bad.Close()
	ps := Providers(Options{SearXNGURL: sx.URL, BraveAPIKey: "wrong", BraveURL: bad.URL,
		SerpAPIKey: "k", SerpAPIURL: goneURL, Retry: Retry{BaseDelay: time.Millisecond}})
	hits, failures := Run(context.Background(), ps, []Query{{Text: claim}})
	if len(hits) != 3 {
		t.Errorf("got %d hits, want SearXNG's 3", len(hits))
	}
	if len(failures) != 2 {
		t.Fatalf("failures = %v, want brave and serpapi", failures)
	}
	if f := failures[0]; f.Provider != "brave" || f.Query != claim || !strings.Contains(f.Error(), "check BRAVE_API_KEY") {
		t.Errorf("brave failure = %v", f)
	}
	if f := failures[1]; f.Provider != "serpapi" || !strings.Contains(f.Error(), "connection refused") {
		t.Errorf("serpapi failure = %v", f)
	}
	var se *StatusError
	if !errors.As(failures[0], &se) || se.Status != 401 {
		t.Errorf("ProviderError does not unwrap to the StatusError: %v", failures[0])
	}
	b, err := json.Marshal(failures[0])
	if err != nil || !strings.Contains(string(b), `"provider":"brave"`) || !strings.Contains(string(b), `"error":"HTTP 401`) {
		t.Errorf("failure JSON = %s (%v)", b, err)
	}
}

// Three real-shaped answers name the Reuters and BBC pages in different
// forms; each page must come out once, under its best-ranked hit.
func TestRunDeduplicatesAcrossProviders(t *testing.T) {
	sx := apiServer(t, fixture(t, "searxng.json"), nil)
	br := apiServer(t, fixture(t, "brave.json"), nil)
	g := apiServer(t, fixture(t, "google_cse.json"), nil)
	serp := apiServer(t, fixture(t, "serpapi.json"), nil)
	fc := apiServer(t, fixture(t, "factcheck.json"), nil)
	ps := Providers(Options{SearXNGURL: sx.URL, BraveAPIKey: "k", BraveURL: br.URL,
		GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: g.URL, SerpAPIKey: "k", SerpAPIURL: serp.URL,
		FactCheckAPIKey: "k", FactCheckURL: fc.URL})
	hits, failures := Run(context.Background(), ps, []Query{{Text: claim}})
	if len(failures) != 0 {
		t.Fatalf("failures: %v", failures)
	}
	var got []string
	for _, h := range hits {
		got = append(got, fmt.Sprintf("%d %s %s %s", h.Rank, h.Provider, sources.HostOf(h.URL), origins(h.Also)))
	}
	want := []string{
		"1 searxng reuters.com [google#1]",
		"1 brave bbc.com [searxng#2]", // the utm_ parameters and www. do not make another page
		"1 serpapi bbc.co.uk [google#2]",
		"1 factcheck fullfact.org [serpapi#2]",
		"2 brave apnews.com []",
		"2 factcheck politifact.com []",
		"3 searxng who.int []",
		"3 factcheck factcheck.afp.com []",
	}
	if strings.Join(got, "\n") != strings.Join(want, "\n") {
		t.Errorf("merged hits:\n%s\nwant:\n%s", strings.Join(got, "\n"), strings.Join(want, "\n"))
	}
	// The BBC hit kept Brave's fields and gained nothing it already had.
	if hits[1].URL != "https://bbc.com/news/53191523" || !hits[1].Published.Equal(date("2020-06-26T08:31:09Z")) {
		t.Errorf("bbc hit = %+v", hits[1])
	}
	if o := hits[0].Origins(); len(o) != 2 || o[0].Provider != "searxng" || o[1].Provider != "google" {
		t.Errorf("Origins = %v", o)
	}
}

func origins(os []Origin) string {
	var s []string
	for _, o := range os {
		s = append(s, fmt.Sprintf("%s#%d", o.Provider, o.Rank))
	}
	return "[" + strings.Join(s, " ") + "]"
}

// fake is a Searcher answering from a table, for Run's ordering and merging rules.
type fake struct {
	name string
	hits map[string][]Hit // by query text
	err  error
}

func (f fake) Name() string { return f.name }

func (f fake) Search(ctx context.Context, q Query) ([]Hit, error) {
	if f.err != nil {
		return nil, f.err
	}
	var out []Hit
	for i, h := range f.hits[q.Text] {
		h.Provider, h.Query, h.Rank = f.name, q.Text, i+1
		out = append(out, h)
	}
	return out, nil
}

func TestRunMergeFillsGapsAndKeepsOrder(t *testing.T) {
	review := &sources.ClaimReview{Claim: "5G spreads COVID-19", Rating: "False", Reviewer: "PolitiFact"}
	a := fake{name: "a", hits: map[string][]Hit{
		"q1": {{URL: "https://example.org/x"}, {URL: "http://www.politifact.com/factchecks/5g/#top", Title: "PolitiFact"}},
		"q2": {{URL: "https://example.org/x/", Title: "X again"}, {URL: "javascript:alert(1)"}},
	}}
	b := fake{name: "b", hits: map[string][]Hit{
		"q1": {{URL: "https://politifact.com/factchecks/5g/", Snippet: "No.", Published: date("2020-05-05T00:00:00Z"), ClaimReview: review}},
	}}
	hits, failures := Run(context.Background(), []Searcher{a, b, fake{name: "c", err: errors.New("boom")}},
		[]Query{{Text: "q1"}, {Text: "q2"}})
	if len(hits) != 2 {
		t.Fatalf("hits = %+v", hits)
	}
	if hits[0].URL != "https://example.org/x" || hits[0].Query != "q1" || hits[0].Title != "X again" ||
		len(hits[0].Also) != 1 || hits[0].Also[0] != (Origin{Provider: "a", Query: "q2", Rank: 1}) {
		t.Errorf("first = %+v", hits[0])
	}
	// b's rank-1 hit beats a's rank-2 hit on the same page.
	p := hits[1]
	if p.Provider != "b" || p.ClaimReview != review || p.Title != "PolitiFact" || p.Also[0].Provider != "a" {
		t.Errorf("politifact = %+v", p)
	}
	if len(failures) != 2 || failures[0].Query != "q1" || failures[1].Query != "q2" || failures[0].Provider != "c" {
		t.Errorf("failures = %v", failures)
	}
}

func TestRunDropsHitsTheProviderDatesAfterTheCutoff(t *testing.T) {
	s := fake{name: "s", hits: map[string][]Hit{"q": {
		{URL: "https://a.example/after", Published: date("2020-05-01T00:00:00Z")},
		{URL: "https://a.example/before", Published: date("2020-04-30T23:59:59Z")},
		{URL: "https://a.example/undated"},
	}}}
	hits, _ := Run(context.Background(), []Searcher{s}, []Query{{Text: "q", Before: cutoff}})
	var urls []string
	for _, h := range hits {
		urls = append(urls, h.URL)
	}
	if strings.Join(urls, " ") != "https://a.example/before https://a.example/undated" {
		t.Errorf("kept %v", urls)
	}
}

func TestRunCancelled(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		<-r.Context().Done()
	}))
	defer srv.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	queries := make([]Query, 10)
	for i := range queries {
		queries[i] = Query{Text: fmt.Sprint("q", i)}
	}
	start := time.Now()
	_, failures := Run(ctx, Providers(Options{SearXNGURL: srv.URL}), queries)
	if len(failures) != 10 || time.Since(start) > 5*time.Second {
		t.Errorf("%d failures after %s", len(failures), time.Since(start))
	}
	for _, f := range failures {
		if !errors.Is(f, context.DeadlineExceeded) {
			t.Errorf("failure %v is not the deadline", f)
		}
	}
}

// partial answers part of a search with an error, as the archive does when
// its time budget cuts a search.
type partial struct{ fake }

func (p partial) Search(ctx context.Context, q Query) ([]Hit, error) {
	hits, _ := p.fake.Search(ctx, q)
	return hits, errors.New("archive search cut after 2s")
}

func TestRunKeepsHitsOfACutSearch(t *testing.T) {
	p := partial{fake{name: "archive", hits: map[string][]Hit{"q": {{URL: "https://www.reuters.com/a"}}}}}
	hits, failures := Run(context.Background(), []Searcher{p}, []Query{{Text: "q"}})
	if len(hits) != 1 || len(failures) != 1 || !strings.Contains(failures[0].Error(), "cut") {
		t.Errorf("hits %v, failures %v: the cut search's hits are kept and the cut reported", hits, failures)
	}
}
