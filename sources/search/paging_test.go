package search

import (
	"context"
	"net/http"
	"testing"
)

// Page 2 is asked for in each API's own terms.
func TestPaging(t *testing.T) {
	for _, c := range []struct {
		name    string
		fixture string
		opts    func(url string) Options
		q       Query
		limit   int
		want    map[string]string
	}{
		{"searxng", "searxng.json", func(u string) Options { return Options{SearXNGURL: u} }, Query{Page: 2}, 0, map[string]string{"pageno": "2"}},
		{"brave", "brave.json", func(u string) Options { return Options{BraveAPIKey: "k", BraveURL: u} }, Query{Page: 3, Count: 20}, 20,
			map[string]string{"offset": "2", "count": "20"}},
		{"google", "google_cse.json", func(u string) Options { return Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: u} },
			Query{Page: 2}, 10, map[string]string{"start": "11", "num": "10"}},
		{"serpapi", "serpapi.json", func(u string) Options { return Options{SerpAPIKey: "k", SerpAPIURL: u} }, Query{Page: 2, Count: 20}, 100,
			map[string]string{"start": "20", "num": "20"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			srv := apiServer(t, fixture(t, c.fixture), func(t *testing.T, r *http.Request) {
				calls++
				wantParams(t, r, c.want)
			})
			c.q.Text = claim
			hits, err := only(t, c.opts(srv.URL)).Search(context.Background(), c.q)
			if err != nil || len(hits) == 0 || calls != 1 {
				t.Errorf("%d hits, err %v, %d calls", len(hits), err, calls)
			}
			// Page 2's hits rank after page 1's.
			for i, h := range hits {
				if want := c.q.skipped(c.limit) + i + 1; h.Rank != want {
					t.Errorf("hit %d rank %d, want %d", i, h.Rank, want)
				}
			}
		})
	}
}

// The first page sends no offset at all, as before paging existed.
func TestFirstPageSendsNoOffset(t *testing.T) {
	srv := apiServer(t, fixture(t, "google_cse.json"), func(t *testing.T, r *http.Request) {
		for _, p := range []string{"start", "offset"} {
			if r.URL.Query().Has(p) {
				t.Errorf("%s sent for page 1: %s", p, r.URL.RawQuery)
			}
		}
	})
	for _, page := range []int{0, 1} {
		if _, err := only(t, Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: srv.URL}).Search(context.Background(), Query{Text: claim, Page: page}); err != nil {
			t.Fatal(err)
		}
	}
}

// Past what an API serves, and where it cannot page, a provider answers
// nothing without spending a request.
func TestPagePastTheEnd(t *testing.T) {
	srv := apiServer(t, fixture(t, "google_cse.json"), func(t *testing.T, r *http.Request) {
		t.Errorf("request sent: %s", r.URL)
	})
	for _, c := range []struct {
		opts Options
		q    Query
	}{
		{Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: srv.URL}, Query{Page: 11}}, // results 101-110
		{Options{BraveAPIKey: "k", BraveURL: srv.URL}, Query{Page: 11}},
		{Options{FactCheckAPIKey: "k", FactCheckURL: srv.URL}, Query{Page: 2}},
	} {
		c.q.Text = claim
		s := only(t, c.opts)
		if hits, err := s.Search(context.Background(), c.q); err != nil || len(hits) != 0 {
			t.Errorf("%s page %d: %d hits, err %v", s.Name(), c.q.Page, len(hits), err)
		}
	}
}

// A query's language and country reach each engine in its own terms.
func TestLanguageAndRegion(t *testing.T) {
	q := Query{Text: claim, Language: "pt", Region: "BR"}
	for _, c := range []struct {
		name, fixture string
		opts          func(url string) Options
		want          map[string]string
	}{
		{"searxng", "searxng.json", func(u string) Options { return Options{SearXNGURL: u} }, map[string]string{"language": "pt-BR"}},
		{"brave", "brave.json", func(u string) Options { return Options{BraveAPIKey: "k", BraveURL: u} },
			map[string]string{"search_lang": "pt-br", "country": "BR"}},
		{"google", "google_cse.json", func(u string) Options { return Options{GoogleCSEKey: "k", GoogleCSECX: "cx", GoogleCSEURL: u} },
			map[string]string{"lr": "lang_pt", "hl": "pt", "gl": "br"}},
		{"serpapi", "serpapi.json", func(u string) Options { return Options{SerpAPIKey: "k", SerpAPIURL: u} },
			map[string]string{"lr": "lang_pt", "hl": "pt", "gl": "br"}},
		{"factcheck", "factcheck.json", func(u string) Options { return Options{FactCheckAPIKey: "k", FactCheckURL: u} },
			map[string]string{"languageCode": "pt-BR"}},
	} {
		t.Run(c.name, func(t *testing.T) {
			calls := 0
			srv := apiServer(t, fixture(t, c.fixture), func(t *testing.T, r *http.Request) {
				calls++
				wantParams(t, r, c.want)
			})
			if _, err := only(t, c.opts(srv.URL)).Search(context.Background(), q); err != nil || calls != 1 {
				t.Errorf("err %v, %d calls", err, calls)
			}
		})
	}
	if got := braveLang("ja", ""); got != "jp" {
		t.Errorf("Brave's Japanese: %q", got)
	}
}

func TestSerperLanguage(t *testing.T) {
	srv := jsonServer(t, 200, fixture(t, "serper.json"), func(t *testing.T, r *http.Request, got map[string]any) {
		wantBody(t, got, map[string]any{"q": claim, "hl": "es", "gl": "mx"})
	})
	if _, err := only(t, Options{SerperAPIKey: "k", SerperURL: srv.URL}).Search(context.Background(),
		Query{Text: claim, Language: "es", Region: "MX"}); err != nil {
		t.Fatal(err)
	}
}
