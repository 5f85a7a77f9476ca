package search

import (
	"context"
	"net/http"
	"net/url"
	"strconv"
	"time"
)

// brave queries the Brave Search web API. The cutoff goes in freshness as a
// "YYYY-MM-DDtoYYYY-MM-DD" range, the form Brave documents for custom dates.
type brave struct {
	endpoint
	base, key string
}

func (b *brave) Name() string { return NameBrave }

type braveResult struct {
	Title       string `json:"title"`
	URL         string `json:"url"`
	Description string `json:"description"`
	PageAge     string `json:"page_age"` // ISO 8601, when Brave dated the page
	Age         string `json:"age"`      // human form: "May 1, 2023" or "2 days ago"
}

type braveAnswer struct {
	Web struct {
		Results []braveResult `json:"results"`
	} `json:"web"`
}

func (b *brave) Search(ctx context.Context, q Query) ([]Hit, error) {
	return bySiteOperators(ctx, q, braveLimit, b.siteRequests, b.search)
}

func (b *brave) search(ctx context.Context, q Query) ([]Hit, error) {
	// offset counts pages of count results, at most 9.
	if q.page() > 10 {
		return nil, nil
	}
	params := url.Values{"q": {q.Text}, "count": {strconv.Itoa(count(q, 20))}}
	if q.Language != "" {
		params.Set("search_lang", braveLang(q.Language, q.Region))
	}
	if q.Region != "" {
		params.Set("country", q.Region)
	}
	if q.page() > 1 {
		params.Set("offset", strconv.Itoa(q.page()-1))
	}
	if !q.Before.IsZero() {
		params.Set("freshness", firstDay().Format(time.DateOnly)+"to"+lastDay(q.Before).Format(time.DateOnly))
	}
	var ans braveAnswer
	err := b.getJSON(ctx, func(ctx context.Context) (*http.Request, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, join(b.base, "/res/v1/web/search")+"?"+params.Encode(), nil)
		if err == nil {
			req.Header.Set("X-Subscription-Token", b.key)
		}
		return req, err
	}, &ans)
	if err != nil {
		return nil, err
	}
	now := time.Now()
	return rankHits(ans.Web.Results, q, NameBrave, q.skipped(20), 0, func(r braveResult) Hit {
		pub := parseDate(r.PageAge, now)
		if pub.IsZero() {
			pub = parseDate(r.Age, now)
		}
		return Hit{URL: r.URL, Title: clean(r.Title), Snippet: clean(r.Description), Published: pub}
	}), nil
}
