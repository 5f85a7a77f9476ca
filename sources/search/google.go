package search

import (
	"context"
	"net/url"
	"strconv"
	"strings"
	"time"
)

// googleCSE queries Google Programmable Search (Custom Search JSON API), the
// engine the Muse paper used. The cutoff is a date restriction,
// sort=date:r:YYYYMMDD:YYYYMMDD, which keeps only pages Google has a date for.
type googleCSE struct {
	endpoint
	base, key, cx string
}

func (g *googleCSE) Name() string { return NameGoogle }

type cseItem struct {
	Title   string `json:"title"`
	Link    string `json:"link"`
	Snippet string `json:"snippet"`
	Pagemap struct {
		Metatags []map[string]any `json:"metatags"`
	} `json:"pagemap"`
}

type cseAnswer struct {
	Items []cseItem `json:"items"`
}

// publishedMeta are the metatags that carry a page's publication date, most
// trustworthy first.
var publishedMeta = []string{"article:published_time", "datepublished", "og:article:published_time",
	"pubdate", "publishdate", "dc.date", "dc.date.issued", "date", "sailthru.date", "parsely-pub-date"}

func (g *googleCSE) Search(ctx context.Context, q Query) ([]Hit, error) {
	return bySiteOperators(ctx, q, googleLimit, g.siteRequests, g.search)
}

func (g *googleCSE) search(ctx context.Context, q Query) ([]Hit, error) {
	// The API returns at most 10 items a request, and none past the 100th.
	num := count(q, 10)
	start := (q.page()-1)*num + 1
	if start+num-1 > 100 {
		return nil, nil
	}
	params := url.Values{"key": {g.key}, "cx": {g.cx}, "q": {q.Text}, "num": {strconv.Itoa(num)}}
	googleLanguage(params, q)
	if start > 1 {
		params.Set("start", strconv.Itoa(start))
	}
	if !q.Before.IsZero() {
		params.Set("sort", "date:r:"+firstDay().Format("20060102")+":"+lastDay(q.Before).Format("20060102"))
	}
	var ans cseAnswer
	if err := g.get(ctx, join(g.base, "/customsearch/v1")+"?"+params.Encode(), &ans); err != nil {
		return nil, err
	}
	now := time.Now()
	return rankHits(ans.Items, q, NameGoogle, start-1, 0, func(it cseItem) Hit {
		pub, snippet := snippetDate(clean(it.Snippet), now)
		if d := metaDate(it.Pagemap.Metatags, now); !d.IsZero() {
			pub = d
		}
		return Hit{URL: it.Link, Title: clean(it.Title), Snippet: snippet, Published: pub}
	}), nil
}

func metaDate(tags []map[string]any, now time.Time) time.Time {
	for _, name := range publishedMeta {
		for _, m := range tags {
			if s, ok := m[name].(string); ok {
				if t := parseDate(s, now); !t.IsZero() {
					return t
				}
			}
		}
	}
	return time.Time{}
}

// googleLanguage sets Google's language and country parameters, which CSE
// and SerpAPI share: lr restricts results to the language, hl is the
// interface language (it shapes snippets and dates), gl the country.
func googleLanguage(params url.Values, q Query) {
	if q.Language != "" {
		params.Set("lr", "lang_"+q.Language)
		params.Set("hl", q.Language)
	}
	if q.Region != "" {
		params.Set("gl", strings.ToLower(q.Region))
	}
}
