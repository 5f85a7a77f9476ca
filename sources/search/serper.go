package search

import (
	"context"
	"net/http"
	"strings"
	"time"
)

// serper queries Google through Serper (POST google.serper.dev/search, key
// in X-API-KEY). The cutoff goes in Google's custom date range,
// tbs=cdr:1,cd_max:MM/DD/YYYY, as for SerpAPI; pages are numbered from 1.
type serper struct {
	endpoint
	base, key string
}

func (s *serper) Name() string { return NameSerper }

type serperRequest struct {
	Q    string `json:"q"`
	Num  int    `json:"num,omitempty"`
	Page int    `json:"page,omitempty"`
	Tbs  string `json:"tbs,omitempty"`
	HL   string `json:"hl,omitempty"` // interface and result language
	GL   string `json:"gl,omitempty"` // country
}

type serperAnswer struct {
	Organic []serpResult `json:"organic"`
}

func (s *serper) Search(ctx context.Context, q Query) ([]Hit, error) {
	return bySiteOperators(ctx, q, googleLimit, s.siteRequests, s.search)
}

func (s *serper) search(ctx context.Context, q Query) ([]Hit, error) {
	req := serperRequest{Q: q.Text, Num: count(q, 100), HL: q.Language, GL: strings.ToLower(q.Region)}
	if q.page() > 1 {
		req.Page = q.page()
	}
	if !q.Before.IsZero() {
		req.Tbs = "cdr:1,cd_max:" + lastDay(q.Before).Format("01/02/2006")
	}
	var ans serperAnswer
	if err := s.post(ctx, join(s.base, "/search"), http.Header{"X-Api-Key": {s.key}}, req, &ans); err != nil {
		return nil, err
	}
	now := time.Now()
	return rankHits(ans.Organic, q, NameSerper, q.skipped(100), req.Num, func(r serpResult) Hit { return r.hit(now) }), nil
}
