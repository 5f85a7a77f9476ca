package search

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
)

func TestSiteQueries(t *testing.T) {
	sites := []string{"reuters.com", "apnews.com", "bbc.com"}
	got := siteQueries("5g covid", sites, googleLimit, 5)
	if len(got) != 1 || got[0] != "5g covid (site:reuters.com OR site:apnews.com OR site:bbc.com)" {
		t.Errorf("one group: %q", got)
	}
	if got := siteQueries("5g covid", sites[:1], googleLimit, 5); len(got) != 1 || got[0] != "5g covid site:reuters.com" {
		t.Errorf("one site: %q", got)
	}
	// 2 words of text leave 30: 15 sites and 14 ORs make 29 words, a 16th would make 31.
	var many []string
	for i := range 40 {
		many = append(many, fmt.Sprintf("site%02d.example", i))
	}
	got = siteQueries("5g covid", many, googleLimit, 5)
	if len(got) != 3 || strings.Count(got[0], "site:") != 15 || strings.Count(got[2], "site:") != 10 {
		t.Fatalf("40 sites in groups of 15: %d queries %q", len(got), got)
	}
	for _, q := range got {
		if n := len(strings.Fields(q)); n > googleLimit.words {
			t.Errorf("%d words > %d: %q", n, googleLimit.words, q)
		}
	}
	// Brave's 400 characters bind before its 50 words.
	for _, q := range siteQueries("5g covid", many, braveLimit, 5) {
		if len(q) > braveLimit.chars || len(strings.Fields(q)) > braveLimit.words {
			t.Errorf("over Brave's limits (%d chars): %q", len(q), q)
		}
	}
	// At most max requests: the sites after are not sent.
	if got := siteQueries("5g covid", many, googleLimit, 2); len(got) != 2 || strings.Contains(strings.Join(got, " "), "site39") {
		t.Errorf("max 2: %q", got)
	}
	// A text at the limit still sends each site, one per query.
	long := strings.Repeat("w ", 32)
	if got := siteQueries(long, sites, googleLimit, 5); len(got) != 3 {
		t.Errorf("long text: %q", got)
	}
}

func TestNormSitesAndOnSites(t *testing.T) {
	got := normSites([]string{" https://WWW.Reuters.com/ ", "reuters.com", "", "al.com/birmingham", "bad site"})
	if strings.Join(got, ",") != "reuters.com,al.com/birmingham" {
		t.Errorf("normSites = %q", got)
	}
	for u, want := range map[string]bool{
		"https://www.reuters.com/x":          true,
		"https://uk.reuters.com/x":           true,
		"https://notreuters.com/x":           false,
		"https://www.al.com/birmingham/2020": true,
		"https://www.al.com/mobile/2020":     false,
		"not a url":                          false,
	} {
		if onSites(u, got) != want {
			t.Errorf("onSites(%q) = %v", u, !want)
		}
	}
}

func TestDomainGroups(t *testing.T) {
	sites := []string{"a.com", "b.com", "al.com/birmingham", "c.com", "d.com", "e.com"}
	got := domainGroups(sites, 2, 2)
	if fmt.Sprint(got) != "[[a.com b.com] [c.com d.com]]" {
		t.Errorf("domainGroups = %v", got)
	}
}

// A restricted query goes out as site: groups, one request each, within
// SiteRequests; hits come back interleaved, marked Restricted, with the
// caller's query text.
func TestRestrictedSearchBySiteOperators(t *testing.T) {
	var mu sync.Mutex
	var qs []string
	srv := apiServer(t, fixture(t, "serpapi.json"), func(t *testing.T, r *http.Request) {
		mu.Lock()
		qs = append(qs, r.URL.Query().Get("q"))
		mu.Unlock()
	})
	var sites []string
	for i := range 40 {
		sites = append(sites, fmt.Sprintf("site%02d.example", i))
	}
	opts := Options{SerpAPIKey: "k", SerpAPIURL: srv.URL, SiteRequests: 2}
	hits, err := only(t, opts).Search(context.Background(), Query{Text: "5g covid", Sites: sites})
	if err != nil {
		t.Fatal(err)
	}
	if len(qs) != 2 || !strings.HasPrefix(qs[0], "5g covid (site:site00.example OR site:site01.example") || !strings.Contains(qs[1], "site:site15.example") {
		t.Errorf("queries sent: %q", qs)
	}
	if len(hits) != 4 {
		t.Fatalf("%d hits, want 2 per group", len(hits))
	}
	for i, h := range hits {
		if !h.Restricted || h.Query != "5g covid" || h.Rank != i+1 {
			t.Errorf("hit %d = %+v", i, h)
		}
	}
	if hits[0].URL != hits[1].URL || hits[2].URL == hits[0].URL {
		t.Errorf("not interleaved (group 1 #1, group 2 #1, group 1 #2, …): %v %v %v", hits[0].URL, hits[1].URL, hits[2].URL)
	}
}

// Tavily and Exa get the sites in their own filters.
func TestRestrictedSearchByDomainFilter(t *testing.T) {
	sites := []string{"www.reuters.com", "who.int", "al.com/birmingham"}
	for _, c := range []struct {
		name, fixture, field string
		opts                 func(u string) Options
	}{
		{"tavily", "tavily.json", "include_domains", func(u string) Options { return Options{TavilyAPIKey: "k", TavilyURL: u} }},
		{"exa", "exa.json", "includeDomains", func(u string) Options { return Options{ExaAPIKey: "k", ExaURL: u} }},
	} {
		calls := 0
		srv := jsonServer(t, 200, fixture(t, c.fixture), func(t *testing.T, r *http.Request, got map[string]any) {
			calls++
			if fmt.Sprint(got[c.field]) != "[reuters.com who.int]" {
				t.Errorf("%s %s = %v", c.name, c.field, got[c.field])
			}
			if q := got["query"]; q != claim {
				t.Errorf("%s query = %v: the filter is not in the text", c.name, q)
			}
		})
		hits, err := only(t, c.opts(srv.URL)).Search(context.Background(), Query{Text: claim, Sites: sites})
		if err != nil || calls != 1 || len(hits) == 0 || !hits[0].Restricted {
			t.Errorf("%s: %d calls, hits %+v, err %v", c.name, calls, hits, err)
		}
	}
}

// One group failing leaves the others' hits; all failing is an error.
func TestRestrictedSearchPartialFailure(t *testing.T) {
	calls := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls++
		if strings.Contains(r.URL.Query().Get("q"), "site:bad.example") {
			w.WriteHeader(http.StatusBadRequest)
			w.Write([]byte(`{"error":"Invalid query"}`))
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Write(fixture(t, "searxng.json"))
	}))
	defer srv.Close()
	s := only(t, Options{SearXNGURL: srv.URL})
	long := strings.Repeat("w ", 30) // room for one site a query
	hits, err := s.Search(context.Background(), Query{Text: long, Sites: []string{"bad.example", "reuters.com"}})
	if err != nil || len(hits) != 3 || calls != 2 {
		t.Errorf("hits %d, err %v, calls %d; want the good group's 3 hits", len(hits), err, calls)
	}
	_, err = s.Search(context.Background(), Query{Text: long, Sites: []string{"bad.example"}})
	if err == nil || !strings.Contains(err.Error(), "Invalid query") {
		t.Errorf("err = %v", err)
	}
}

// Run keeps a restricted query's hits on its sites only (a searcher that
// cannot restrict answers the open query), marks them, and merges them
// with the open query's hits on the same page.
func TestRunRestricted(t *testing.T) {
	both := []Hit{{URL: "https://www.reuters.com/a"}, {URL: "https://blog.example/b"}}
	open := fake{name: "archive", hits: map[string][]Hit{"q": both}}
	hits, failures := Run(context.Background(), []Searcher{open},
		[]Query{{Text: "q"}, {Text: "q", Sites: []string{"reuters.com"}}})
	if len(failures) != 0 || len(hits) != 2 {
		t.Fatalf("hits %+v failures %v", hits, failures)
	}
	if hits[0].URL != "https://www.reuters.com/a" || hits[0].Restricted || len(hits[0].Also) != 1 || !hits[0].Also[0].Restricted {
		t.Errorf("reuters hit = %+v, want found by both, the second restricted", hits[0])
	}
	if got := hits[0].Origins()[1].String(); got != "archive (credible sites): q" {
		t.Errorf("origin = %q", got)
	}
	if hits[1].URL != "https://blog.example/b" || hits[1].Restricted || len(hits[1].Also) != 0 {
		t.Errorf("blog hit = %+v, want the open query's only", hits[1])
	}
}

// Fact Check Tools has no restricted form: it answers nothing.
func TestFactCheckRestrictedAnswersNothing(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Errorf("request sent: %s", r.URL)
	}))
	defer srv.Close()
	hits, err := only(t, Options{FactCheckAPIKey: "k", FactCheckURL: srv.URL}).Search(context.Background(), Query{Text: claim, Sites: []string{"reuters.com"}})
	if err != nil || len(hits) != 0 {
		t.Errorf("hits %v err %v", hits, err)
	}
}
