package search

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
)

// Provider answers are outside data: a misconfigured endpoint, a proxy's
// error page or a hostile self-hosted instance may send anything. Each
// provider's decoder is fuzzed through its real Search, with the answer
// handed over in-process instead of over a socket.

const fuzzKey = "FUZZ-SECRET-KEY-0123456789"

// cannedTransport answers every request with the fuzzed status, content
// type and body.
type cannedTransport struct {
	status      int
	contentType string
	body        []byte
}

func (c cannedTransport) RoundTrip(r *http.Request) (*http.Response, error) {
	h := http.Header{}
	if c.contentType != "" {
		h.Set("Content-Type", c.contentType)
	}
	return &http.Response{StatusCode: c.status, Header: h, Body: io.NopCloser(bytes.NewReader(c.body)),
		ContentLength: int64(len(c.body)), Request: r}, nil
}

// fuzzProvider runs one provider over fuzzed answers and checks what any
// caller relies on: no panic, hits with a URL, the right provider name and
// consecutive ranks, no more hits than asked for, and never the API key in
// an error.
func fuzzProvider(f *testing.F, name string, opts func(*Options), fixtures ...string) {
	for _, fx := range fixtures {
		b, err := os.ReadFile(filepath.Join("testdata", fx))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(uint8(200), "application/json", b)
	}
	f.Add(uint8(200), "application/json", []byte(`{}`))
	f.Add(uint8(200), "application/json", []byte(`null`))
	f.Add(uint8(200), "", []byte(`{"results":[{"url":""}],"items":[{"link":null}],"organic_results":[1,2]}`))
	f.Add(uint8(200), "text/html", []byte(`<html><title>Login</title></html>`))
	f.Add(uint8(200), "application/json", []byte(`{"results":[{"url":"http://a.example/","publishedDate":"yesterday"}]}`))
	many := `{"url":"http://a.example/","link":"http://a.example/"}`
	many = `{"results":[` + strings.Repeat(many+",", 6) + many + `],"organic":[` + strings.Repeat(many+",", 6) + many + `]}`
	f.Add(uint8(200), "application/json", []byte(many)) // more hits than asked for
	f.Add(uint8(29), "application/json", []byte(`{"error":{"message":"quota","detail":"slow down"}}`))
	f.Add(uint8(1), "application/json", []byte(`{"error":"`+fuzzKey+`"}`))
	f.Fuzz(func(t *testing.T, status uint8, contentType string, body []byte) {
		code := 200
		switch {
		case status%8 == 1:
			code = 401
		case status%8 == 5:
			code = 429
		case status%8 == 7:
			code = 503
		}
		o := Options{Client: &http.Client{Transport: cannedTransport{code, contentType, body}},
			Retry: Retry{Attempts: 1, MaxWait: time.Millisecond, BaseDelay: time.Millisecond}}
		opts(&o)
		ps := Providers(o)
		if len(ps) != 1 || ps[0].Name() != name {
			t.Fatalf("want only %s", name)
		}
		q := Query{Text: "springfield bicycles", Count: 5, Before: time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)}
		hits, err := ps[0].Search(context.Background(), q)
		if err != nil {
			if hits != nil {
				t.Fatalf("hits with an error: %v", err)
			}
			if strings.Contains(err.Error(), fuzzKey) && !bytes.Contains(body, []byte(fuzzKey)) {
				t.Fatalf("error leaks the API key: %v", err)
			}
			return
		}
		if code != 200 {
			t.Fatalf("HTTP %d answered without an error", code)
		}
		if name != NameFactCheck && len(hits) > q.Count {
			t.Fatalf("%d hits, %d asked for", len(hits), q.Count)
		}
		for i, h := range hits {
			if h.URL == "" || h.Provider != name || h.Rank != i+1 || h.Query != q.Text {
				t.Fatalf("hit %d: %+v", i, h)
			}
		}
	})
}

func FuzzSearXNG(f *testing.F) {
	fuzzProvider(f, NameSearXNG, func(o *Options) { o.SearXNGURL = "http://searx.invalid" },
		"searxng.json", "searxng_unresponsive.json", "searxng_front.html")
}

func FuzzBrave(f *testing.F) {
	fuzzProvider(f, NameBrave, func(o *Options) { o.BraveAPIKey = fuzzKey; o.BraveURL = "http://brave.invalid" },
		"brave.json", "brave_401.json")
}

func FuzzGoogleCSE(f *testing.F) {
	fuzzProvider(f, NameGoogle, func(o *Options) {
		o.GoogleCSEKey, o.GoogleCSECX, o.GoogleCSEURL = fuzzKey, "cx", "http://google.invalid"
	}, "google_cse.json", "google_403.json")
}

func FuzzSerpAPI(f *testing.F) {
	fuzzProvider(f, NameSerpAPI, func(o *Options) { o.SerpAPIKey = fuzzKey; o.SerpAPIURL = "http://serpapi.invalid" },
		"serpapi.json", "serpapi_empty.json")
}

func FuzzFactCheck(f *testing.F) {
	fuzzProvider(f, NameFactCheck, func(o *Options) { o.FactCheckAPIKey = fuzzKey; o.FactCheckURL = "http://factcheck.invalid" },
		"factcheck.json")
}

func FuzzSerper(f *testing.F) {
	fuzzProvider(f, NameSerper, func(o *Options) { o.SerperAPIKey = fuzzKey; o.SerperURL = "http://serper.invalid" },
		"serper.json", "serper_403.json")
}

func FuzzTavily(f *testing.F) {
	fuzzProvider(f, NameTavily, func(o *Options) { o.TavilyAPIKey = fuzzKey; o.TavilyURL = "http://tavily.invalid" },
		"tavily.json", "tavily_401.json", "tavily_432.json")
}

func FuzzExa(f *testing.F) {
	fuzzProvider(f, NameExa, func(o *Options) { o.ExaAPIKey = fuzzKey; o.ExaURL = "http://exa.invalid" },
		"exa.json", "exa_401.json")
}

// FuzzRetryAfter: the wait a server asks for is never negative and never
// overflows into the past, whatever the headers say.
func FuzzRetryAfter(f *testing.F) {
	for _, s := range [][3]string{{"120", "", ""}, {"Wed, 21 Oct 2015 07:28:00 GMT", "", ""}, {"", "0, 5", "1, 3600"},
		{"-1", "", ""}, {"99999999999999999999", "", ""}, {"", "0,0,0", "1,2"}, {"", "x", "9223372036854775807"}} {
		f.Add(s[0], s[1], s[2])
	}
	now := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	f.Fuzz(func(t *testing.T, after, remaining, reset string) {
		h := http.Header{}
		h.Set("Retry-After", after)
		h.Set("X-RateLimit-Remaining", remaining)
		h.Set("X-RateLimit-Reset", reset)
		if d := retryAfter(h, now); d < 0 {
			t.Fatalf("retryAfter = %v", d)
		}
		_ = errorMessage("application/json", []byte(after+remaining+reset))
	})
}

// Found by FuzzBrave, FuzzGoogleCSE and FuzzFactCheck: an HTML answer whose title tag holds an
// invalid UTF-8 byte made htmlHint slice out of range and panic, taking
// the whole check down.
func TestHTMLHintInvalidUTF8(t *testing.T) {
	for _, b := range []string{"<title\xaa>", "<TITLE>\xff\xfeLogin</TITLE>", "<title>caf\xe9</title\xc6>"} {
		_ = htmlHint([]byte(b))
	}
	if got := htmlHint([]byte("<TITLE>\xffSign in</TITLE>")); !strings.Contains(got, "Sign in") {
		t.Errorf("htmlHint = %q", got)
	}
}

// Found by FuzzRetryAfter: "Retry-After: 10000000000" (seconds) overflowed
// a Duration into a negative wait, which read as "no wait asked".
func TestRetryAfterTooLong(t *testing.T) {
	now := time.Date(2024, 2, 1, 0, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		h    http.Header
		want time.Duration
	}{
		{http.Header{"Retry-After": {"10000000000"}}, sources.MaxRetryAfter},
		{http.Header{"X-Ratelimit-Remaining": {"0"}, "X-Ratelimit-Reset": {"9223372036854775807"}}, maxRetryAfter},
	} {
		if d := retryAfter(c.h, now); d != c.want {
			t.Errorf("retryAfter(%v) = %v, want %v", c.h, d, c.want)
		}
	}
}
