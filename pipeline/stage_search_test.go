package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/search"
)

// recordingSearcher answers every query with its own pages and records the
// queries sent.
type recordingSearcher struct {
	mu   sync.Mutex
	sent []search.Query
	open []string // answers to the open query, page 1
	more []string // page 2
	site []string // answers to a query restricted to sites
}

func (s *recordingSearcher) Name() string { return "rec" }

func (s *recordingSearcher) Search(ctx context.Context, q search.Query) ([]search.Hit, error) {
	s.mu.Lock()
	s.sent = append(s.sent, q)
	s.mu.Unlock()
	urls := s.open
	switch {
	case len(q.Sites) > 0:
		urls = s.site
	case q.Page == 2:
		urls = s.more
	}
	var out []search.Hit
	for i, u := range urls {
		out = append(out, search.Hit{URL: u, Title: "t", Provider: "rec", Query: q.Text, Rank: i + 1})
	}
	return out, nil
}

// credibleWorld is the fake world whose rater names its credible sites.
type credibleWorld struct{ *fakeWorld }

func (credibleWorld) CredibleDomains() []string { return []string{"reuters.com", "apnews.com"} }

// Each query is also sent restricted to the credible publishers' sites (as
// the paper searches its rated publishers), and its hits say so; with too
// few credible hits on the first page, the second is asked for. Every
// query carries the post's time.
func TestCredibleFirstSearchAndPaging(t *testing.T) {
	w := credibleWorld{newWorld()}
	rec := &recordingSearcher{
		open: []string{"https://lowsite.example/d", "https://weather.example/i"},
		more: []string{"https://www.bbc.co.uk/c"},
		site: []string{"https://www.reuters.com/a", "https://apnews.com/b"},
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{rec}, Fetcher: w,
		Extract: w.extract, Rater: w}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	restricted, page2 := 0, 0
	for _, q := range rec.sent {
		if !q.Posted.Equal(c.Post.PostedAt) {
			t.Errorf("query %q (page %d) carries the post's time %v; want %v (the archive ranks by it)", q.Text, q.Page, q.Posted, c.Post.PostedAt)
		}
		if slices.Equal(q.Sites, w.CredibleDomains()) {
			restricted++
		}
		if q.Page == 2 {
			page2++
		}
	}
	if restricted == 0 {
		t.Errorf("no query restricted to the credible sites: %+v", rec.sent)
	}
	if page2 == 0 {
		t.Errorf("one credible hit in the open search and no second page asked for: %+v", rec.sent)
	}
	for _, h := range c.Hits {
		want := h.URL == "https://www.reuters.com/a" || h.URL == "https://apnews.com/b"
		if h.Restricted != want {
			t.Errorf("hit %s restricted=%v", h.URL, h.Restricted)
		}
	}
	if c.SourceByURL("https://www.bbc.co.uk/c") == nil {
		t.Error("the second page's hit is not a source")
	}
	if s := c.SourceByURL("https://www.reuters.com/a"); s == nil || s.Status != StatusUsed {
		t.Errorf("the credible page found by the restricted search: %+v", s)
	}

	// With OpenSearchOnly and enough credible hits, neither is sent.
	rec2 := &recordingSearcher{open: []string{"https://www.reuters.com/a", "https://apnews.com/b", "https://www.bbc.co.uk/c"}}
	e2, _ := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{rec2}, Fetcher: w,
		Extract: w.extract, Rater: w}, Options{OpenSearchOnly: true})
	c2 := e2.NewCheck(Post{Text: post, PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	runCheck(t, e2, c2)
	for _, q := range rec2.sent {
		if len(q.Sites) > 0 || q.Page == 2 {
			t.Errorf("sent %+v", q)
		}
	}
}

// A Spanish post: its language is detected before the queries, the queries
// written in Spanish ask the engines for Spanish pages, an English query
// asks for no language, and the prompts name the language.
func TestPostLanguage(t *testing.T) {
	w := newWorld()
	rec := &recordingSearcher{open: []string{"https://www.reuters.com/a"}}
	m := &fakeModel{evidence: quoting, queries: func(QueriesInput) ([]string, bool, error) {
		return []string{"Springfield prohíbe las bicicletas en la calle Mayor desde el lunes", "Springfield bicycle ban Main Street"}, true, nil
	}}
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{rec}, Fetcher: w, Extract: w.extract, Rater: w},
		Options{OpenSearchOnly: true, MinCredibleHits: -1})
	if err != nil {
		t.Fatal(err)
	}
	c := e.NewCheck(Post{Text: "ÚLTIMA HORA: el ayuntamiento de Springfield prohíbe todas las bicicletas en la calle Mayor desde el lunes. ¡Compartid antes de que lo borren!",
		PostedAt: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}, time.Time{})
	runCheck(t, e, c)
	if c.Post.Language != "es" {
		t.Fatalf("post language %q, want es", c.Post.Language)
	}
	langs := map[string]string{}
	for _, q := range rec.sent {
		langs[q.Text] = q.Language
	}
	if langs["Springfield prohíbe las bicicletas en la calle Mayor desde el lunes"] != "es" || langs["Springfield bicycle ban Main Street"] != "" {
		t.Errorf("query languages %v", langs)
	}
	pp := promptPost(c.Post, nil, nil)
	msgs, err := prompts.Queries(pp, 3)
	if err != nil {
		t.Fatal(err)
	}
	cm, err := prompts.Correction(pp, nil, "")
	if err != nil {
		t.Fatal(err)
	}
	for name, m := range map[string]string{"queries": msgs[len(msgs)-1].Content, "correction": cm[len(cm)-1].Content} {
		if !strings.Contains(m, "Spanish (es)") {
			t.Errorf("the %s prompt does not name the language:\n%s", name, m)
		}
	}
	// A checker's choice is kept, and English says nothing in the prompts.
	c2 := e.NewCheck(Post{Text: "El ayuntamiento prohíbe las bicicletas en la calle Mayor", Language: "pt"}, time.Time{})
	runCheck(t, e, c2)
	if c2.Post.Language != "pt" {
		t.Errorf("the checker's language was replaced: %q", c2.Post.Language)
	}
	if promptPost(Post{Text: "x", Language: "en"}, nil, nil).Language != "" {
		t.Error("English named in the prompts")
	}
}
