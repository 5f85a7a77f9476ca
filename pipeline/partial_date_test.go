package pipeline

import (
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/search"
)

// A page whose only date is "Family-run since 2008" is read by the real
// extractor: it gives the year, never 2008-01-01, so with a cutoff the page
// is undated (a year alone is not compared with the cutoff or the post),
// and the check's JSON holds "published_partial": "2008" and no
// "published".
func TestYearOnlyPageStaysUndated(t *testing.T) {
	page, err := os.ReadFile(filepath.Join("..", "sources", "extract", "testdata", "precision", "since_2008.html"))
	if err != nil {
		t.Fatal(err)
	}
	const bakery = "https://harbourlanebakery.example/about"
	w := newWorld()
	w.pages[bakery] = fakePage{title: "About us"}
	w.results[5] = append(w.results[5], bakery)
	m := &fakeModel{evidence: quoting}
	e, err := New(Deps{Model: m, Searchers: []search.Searcher{w}, Fetcher: w, Rater: w, Archive: w,
		Extract: func(body []byte, u string) (*extract.Article, error) {
			if u == bakery {
				return extract.Extract(page, u)
			}
			return w.extract(body, u)
		}}, Options{})
	if err != nil {
		t.Fatal(err)
	}
	// The post is from 2008 too: a page from "2008" can be neither before
	// nor after it. The world's other pages are from 2024, so after the
	// cutoff, and the check ends with no evidence.
	posted := time.Date(2008, 6, 1, 0, 0, 0, 0, time.UTC)
	c := e.NewCheck(Post{Text: post, PostedAt: posted}, posted)
	if _, err := runCheck(t, e, c); err != nil && !errors.Is(err, ErrNoEvidence) {
		t.Fatal(err)
	}
	s := c.SourceByURL(bakery)
	if s == nil {
		t.Fatal("the bakery's page is not among the sources")
	}
	if !s.Published.IsZero() || s.PublishedPartial.String() != "2008" {
		t.Errorf("published %v, partial %q; want no day and the year 2008", s.Published, s.PublishedPartial)
	}
	if s.Status != StatusUndated || !strings.Contains(s.Reason, "gives only 2008") {
		t.Errorf("status %s (%s), want undated naming the year", s.Status, s.Reason)
	}
	b, err := json.Marshal(s)
	if err != nil {
		t.Fatal(err)
	}
	var j map[string]any
	if err := json.Unmarshal(b, &j); err != nil {
		t.Fatal(err)
	}
	if _, ok := j["published"]; ok || j["published_partial"] != "2008" {
		t.Errorf("JSON published %v, published_partial %v", j["published"], j["published_partial"])
	}
	// A saved check reads it back.
	var back Source
	if err := json.Unmarshal(b, &back); err != nil || back.PublishedPartial != s.PublishedPartial || !back.Published.IsZero() {
		t.Errorf("read back: partial %+v, published %v (%v)", back.PublishedPartial, back.Published, err)
	}
}
