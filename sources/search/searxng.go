package search

import (
	"context"
	"encoding/json"
	"fmt"
	"html"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// searxng queries a SearXNG instance's JSON API: GET /search?q=…&format=json.
// SearXNG can only restrict to the last day/week/month/year, not to before a
// date, so the cutoff is left to Run's filter on publishedDate.
type searxng struct {
	endpoint
	base string
}

func (s *searxng) Name() string { return NameSearXNG }

type searxngResult struct {
	URL           string  `json:"url"`
	Title         string  `json:"title"`
	Content       string  `json:"content"`
	PublishedDate *string `json:"publishedDate"`
	Engine        string  `json:"engine"`
}

type searxngAnswer struct {
	Results []searxngResult `json:"results"`
	// Each entry is [engine, reason]; kept raw because instances differ.
	Unresponsive []json.RawMessage `json:"unresponsive_engines"`
}

func (s *searxng) Search(ctx context.Context, q Query) ([]Hit, error) {
	return bySiteOperators(ctx, q, googleLimit, s.siteRequests, s.search)
}

func (s *searxng) search(ctx context.Context, q Query) ([]Hit, error) {
	endpoint := strings.TrimRight(s.base, "/")
	if !strings.HasSuffix(endpoint, "/search") {
		endpoint += "/search"
	}
	params := url.Values{"q": {q.Text}, "format": {"json"}, "pageno": {strconv.Itoa(q.page())}}
	if q.Language != "" {
		params.Set("language", bcp47(q.Language, q.Region))
	}
	var ans searxngAnswer
	if err := s.get(ctx, endpoint+"?"+params.Encode(), &ans); err != nil {
		return nil, err
	}
	now := time.Now()
	hits := rankHits(ans.Results, q, NameSearXNG, q.skipped(0), count(q, 0), func(r searxngResult) Hit {
		h := Hit{URL: r.URL, Title: clean(r.Title), Snippet: clean(r.Content)}
		if r.PublishedDate != nil {
			h.Published = parseDate(*r.PublishedDate, now)
		}
		return h
	})
	if len(hits) == 0 && len(ans.Unresponsive) > 0 {
		return nil, fmt.Errorf("no results; every engine failed: %s", unresponsive(ans.Unresponsive))
	}
	return hits, nil
}

// unresponsive renders SearXNG's [["google","timeout"],…] for an error message.
func unresponsive(raw []json.RawMessage) string {
	var parts []string
	for _, r := range raw {
		var pair []string
		if json.Unmarshal(r, &pair) == nil && len(pair) > 0 {
			s := pair[0]
			if len(pair) > 1 && pair[1] != "" {
				s += " (" + pair[1] + ")"
			}
			parts = append(parts, s)
			continue
		}
		parts = append(parts, clip(string(r), 40))
	}
	return strings.Join(parts, ", ")
}

// count is the number of hits wanted, capped at what the API can return in
// one page (limit; zero for no cap).
func count(q Query, limit int) int {
	n := q.Count
	if n <= 0 {
		n = 10
	}
	if limit > 0 && n > limit {
		n = limit
	}
	return n
}

// clean collapses the whitespace and strips the <strong>/<b> highlighting
// some APIs leave in titles and snippets.
func clean(s string) string {
	if strings.ContainsRune(s, '<') {
		for _, tag := range []string{"<strong>", "</strong>", "<b>", "</b>", "<em>", "</em>"} {
			s = strings.ReplaceAll(s, tag, "")
		}
	}
	return strings.Join(strings.Fields(html.UnescapeString(s)), " ")
}
