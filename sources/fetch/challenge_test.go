package fetch_test

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/fetch"
)

// TestChallenges: the challenge and block pages of the common
// bot-protection services, as they serve them (gzipped too), are told
// apart from a missing page, a server error and a page about them.
func TestChallenges(t *testing.T) {
	article := testworld.ConsentHTML(testworld.WallArticle)
	type answer struct {
		status  int
		headers map[string]string
		body    string
		gzip    bool
	}
	rows := map[string]struct {
		a      answer
		vendor string // "" not a challenge
	}{
		"not found behind Imperva":    {answer{404, map[string]string{"X-Iinfo": "12-34-0 NNNN", "X-CDN": "Imperva"}, "<html><body><h1>Page not found</h1></body></html>", false}, ""},
		"not found behind Cloudflare": {answer{404, map[string]string{"Server": "cloudflare", "CF-RAY": "8f1c-IAD"}, "<html><title>Not found</title></html>", false}, ""},
		"server error":                {answer{503, map[string]string{"Server": "nginx"}, "<html><body>Service Unavailable</body></html>", false}, ""},
		"article about Cloudflare": {answer{200, map[string]string{"Server": "cloudflare"}, strings.Replace(article, "</article>",
			"<p>Sites behind Cloudflare show a page titled <code>&lt;title&gt;Just a moment...&lt;/title&gt;</code> and load /cdn-cgi/challenge-platform/ scripts.</p></article>", 1), false}, ""},
		"Cloudflare challenge served 200 with cf-mitigated": {answer{200, map[string]string{"cf-mitigated": "challenge"}, testworld.Challenges[0].Body, false}, "Cloudflare"},
		"Cloudflare challenge gzipped":                      {answer{403, testworld.Challenges[0].Headers, testworld.Challenges[0].Body, true}, "Cloudflare"},
	}
	for _, c := range testworld.Challenges {
		rows[c.Vendor] = struct {
			a      answer
			vendor string
		}{answer{c.Status, c.Headers, c.Body, false}, c.Vendor}
	}
	for name, row := range rows {
		t.Run(name, func(t *testing.T) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				for k, v := range row.a.headers {
					w.Header().Set(k, v)
				}
				w.Header().Set("Content-Type", "text/html; charset=utf-8")
				body := []byte(row.a.body)
				if row.a.gzip {
					var b bytes.Buffer
					zw := gzip.NewWriter(&b)
					zw.Write(body)
					zw.Close()
					body = b.Bytes()
					w.Header().Set("Content-Encoding", "gzip")
				}
				w.WriteHeader(row.a.status)
				w.Write(body)
			}))
			defer srv.Close()
			f := fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true})
			defer f.CloseIdleConnections()
			_, err := f.Fetch(context.Background(), srv.URL+"/news/story")
			var se *fetch.StatusError
			errors.As(err, &se)
			switch {
			case row.vendor == "" && errors.Is(err, fetch.ErrChallenge):
				t.Errorf("taken for a challenge: %v", err)
			case row.vendor == "":
			case !errors.Is(err, fetch.ErrChallenge) || se == nil:
				t.Errorf("not taken for a challenge: %v", err)
			case se.Challenge != row.vendor || se.Code != row.a.status:
				t.Errorf("challenge %q (HTTP %d), want %q (HTTP %d): %v", se.Challenge, se.Code, row.vendor, row.a.status, err)
			case !strings.Contains(err.Error(), row.vendor):
				t.Errorf("the error does not name %s: %v", row.vendor, err)
			}
		})
	}
}
