package fetch

import (
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/andybalholm/brotli"
)

func noProxy(*http.Request) (*url.URL, error) { return nil, nil }

// newFetcher returns a fetcher for loopback test servers.
func newFetcher(t *testing.T, opts Options) *Fetcher {
	t.Helper()
	if opts.Proxy == nil {
		opts.Proxy = noProxy
	}
	if opts.Timeout == 0 {
		opts.Timeout = 5 * time.Second
	}
	f := New(opts)
	t.Cleanup(f.CloseIdleConnections)
	return f
}

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func serve(t *testing.T, mux *http.ServeMux) *httptest.Server {
	t.Helper()
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func htmlHandler(body []byte, contentType string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if contentType != "" {
			w.Header().Set("Content-Type", contentType)
		}
		w.Write(body)
	}
}

// fetchErr fetches u, wants an error matching target, and checks that the
// error is one line naming the URL.
func fetchErr(t *testing.T, f *Fetcher, u string, target error) error {
	t.Helper()
	p, err := f.Fetch(context.Background(), u)
	if err == nil {
		t.Fatalf("Fetch(%s) = page %q, want error %v", u, p.FinalURL, target)
	}
	if !errors.Is(err, target) {
		t.Fatalf("Fetch(%s) error = %v, want %v", u, err, target)
	}
	t.Log(err)
	if strings.Contains(err.Error(), "\n") {
		t.Errorf("error is not one line: %q", err)
	}
	if !strings.Contains(err.Error(), strings.TrimSpace(u)) && !strings.Contains(err.Error(), fmt.Sprintf("%q", u)) {
		t.Errorf("error %q does not name the URL %s", err, u)
	}
	return err
}

func TestFetchHTML(t *testing.T) {
	page := fixture(t, "article.html")
	var gotUA, gotAE string
	mux := http.NewServeMux()
	mux.HandleFunc("/world/lagos-photo", func(w http.ResponseWriter, r *http.Request) {
		gotUA, gotAE = r.Header.Get("User-Agent"), r.Header.Get("Accept-Encoding")
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("ETag", `"v1"`)
		w.Header().Set("Last-Modified", "Tue, 12 Mar 2024 10:00:00 GMT")
		w.Write(page)
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})
	before := time.Now()
	p, err := f.Fetch(context.Background(), srv.URL+"/world/lagos-photo#comments")
	if err != nil {
		t.Fatal(err)
	}
	if p.URL != srv.URL+"/world/lagos-photo#comments" || p.FinalURL != srv.URL+"/world/lagos-photo" {
		t.Errorf("URL %q FinalURL %q", p.URL, p.FinalURL)
	}
	if p.Status != 200 || p.ContentType != "text/html" || p.Charset != "utf-8" {
		t.Errorf("status %d type %q charset %q", p.Status, p.ContentType, p.Charset)
	}
	if !bytes.Equal(p.Body, page) || !bytes.Equal(p.Raw, page) {
		t.Errorf("body differs from the page served")
	}
	if p.ETag != `"v1"` || p.LastModified != "Tue, 12 Mar 2024 10:00:00 GMT" {
		t.Errorf("validators %q %q", p.ETag, p.LastModified)
	}
	if p.FetchedAt.Before(before.Add(-time.Second)) || p.FetchedAt.After(time.Now().Add(time.Second)) {
		t.Errorf("FetchedAt %v", p.FetchedAt)
	}
	if !strings.HasPrefix(gotUA, "muse/") || !strings.Contains(gotUA, "github.com/musecheck/muse") {
		t.Errorf("User-Agent %q does not name muse", gotUA)
	}
	if gotAE != "gzip, deflate, br" {
		t.Errorf("Accept-Encoding %q", gotAE)
	}
}

func TestBadURLs(t *testing.T) {
	f := newFetcher(t, Options{})
	for _, u := range []string{"ftp://example.com/file", "javascript:alert(1)", "file:///etc/passwd", "/relative/path", "", "http://", "mailto:desk@example.com"} {
		_, err := f.Fetch(context.Background(), u)
		if !errors.Is(err, ErrBadURL) {
			t.Errorf("Fetch(%q) error = %v, want ErrBadURL", u, err)
		}
	}
}

func TestStatusError(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/gone", func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) })
	srv := serve(t, mux)
	_, err := newFetcher(t, Options{AllowPrivate: true}).Fetch(context.Background(), srv.URL+"/gone")
	var se *StatusError
	if !errors.As(err, &se) || se.Code != 410 {
		t.Fatalf("error %v, want StatusError 410", err)
	}
	if want := "fetch " + srv.URL + "/gone: HTTP 410 Gone"; err.Error() != want {
		t.Errorf("error %q, want %q", err, want)
	}
}

func TestRedirects(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/hop/{n}", func(w http.ResponseWriter, r *http.Request) {
		var n int
		fmt.Sscan(r.PathValue("n"), &n)
		if n == 0 {
			w.Header().Set("Content-Type", "text/html")
			fmt.Fprint(w, "<html><body><p>arrived</p></body></html>")
			return
		}
		http.Redirect(w, r, fmt.Sprintf("/hop/%d", n-1), http.StatusFound)
	})
	mux.HandleFunc("/loop/a", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/b", http.StatusMovedPermanently)
	})
	mux.HandleFunc("/loop/b", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop/a", http.StatusTemporaryRedirect)
	})
	mux.HandleFunc("/self", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/self", http.StatusFound) })
	mux.HandleFunc("/noloc", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusFound) })
	mux.HandleFunc("/tofile", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Location", "file:///etc/passwd")
		w.WriteHeader(http.StatusFound)
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})

	p, err := f.Fetch(context.Background(), srv.URL+"/hop/5")
	if err != nil {
		t.Fatalf("5 redirects: %v", err)
	}
	if p.FinalURL != srv.URL+"/hop/0" || p.URL != srv.URL+"/hop/5" {
		t.Errorf("URL %q FinalURL %q", p.URL, p.FinalURL)
	}
	err = fetchErr(t, f, srv.URL+"/hop/6", ErrRedirects)
	if errors.Is(err, ErrRedirectLoop) {
		t.Errorf("a long chain is not a loop: %v", err)
	}
	fetchErr(t, f, srv.URL+"/loop/a", ErrRedirectLoop)
	fetchErr(t, f, srv.URL+"/self", ErrRedirectLoop)
	fetchErr(t, f, srv.URL+"/loop/a", ErrRedirects) // a loop is also "too many redirects"
	fetchErr(t, f, srv.URL+"/noloc", ErrRedirects)
	fetchErr(t, f, srv.URL+"/tofile", ErrBadURL)

	none := newFetcher(t, Options{AllowPrivate: true, MaxRedirects: -1})
	fetchErr(t, none, srv.URL+"/hop/1", ErrRedirects)
}

func TestRedirectCookieBounce(t *testing.T) {
	// A site that sets a cookie and sends the reader back is not a loop.
	mux := http.NewServeMux()
	mux.HandleFunc("/story", func(w http.ResponseWriter, r *http.Request) {
		if _, err := r.Cookie("consent"); err != nil {
			http.Redirect(w, r, "/consent", http.StatusFound)
			return
		}
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>the story</p></body></html>")
	})
	mux.HandleFunc("/consent", func(w http.ResponseWriter, r *http.Request) {
		http.SetCookie(w, &http.Cookie{Name: "consent", Value: "1", Path: "/"})
		http.Redirect(w, r, "/story", http.StatusFound)
	})
	srv := serve(t, mux)
	p, err := newFetcher(t, Options{AllowPrivate: true}).Fetch(context.Background(), srv.URL+"/story")
	if err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(p.Body, []byte("the story")) {
		t.Errorf("body %q", p.Body)
	}
}

func TestTooLarge(t *testing.T) {
	big := append([]byte("<html><body><p>"), bytes.Repeat([]byte("word "), 1000)...)
	mux := http.NewServeMux()
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Header().Set("Content-Length", fmt.Sprint(len(big)))
		w.Write(big)
	})
	mux.HandleFunc("/chunked", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		for i := 0; i < len(big); i += 500 {
			w.Write(big[i:min(i+500, len(big))])
			w.(http.Flusher).Flush()
		}
	})
	mux.HandleFunc("/fits", htmlHandler(big[:900], "text/html"))
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true, MaxBytes: 1000})
	err := fetchErr(t, f, srv.URL+"/declared", ErrTooLarge)
	if !strings.Contains(err.Error(), fmt.Sprintf("declared %d bytes", len(big))) {
		t.Errorf("declared length not mentioned: %v", err)
	}
	fetchErr(t, f, srv.URL+"/chunked", ErrTooLarge)
	if _, err := f.Fetch(context.Background(), srv.URL+"/fits"); err != nil {
		t.Errorf("900 bytes under a 1000 byte cap: %v", err)
	}
}

func compress(t *testing.T, enc string, b []byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	var w interface {
		Write([]byte) (int, error)
		Close() error
	}
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	case "raw-deflate":
		w, _ = flate.NewWriter(&buf, flate.BestCompression)
	case "br":
		w = brotli.NewWriter(&buf)
	}
	if _, err := w.Write(b); err != nil {
		t.Fatal(err)
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

func encodedHandler(header string, body []byte) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("Content-Encoding", header)
		w.Write(body)
	}
}

func TestContentEncodings(t *testing.T) {
	page := fixture(t, "article.html")
	mux := http.NewServeMux()
	mux.HandleFunc("/gzip", encodedHandler("gzip", compress(t, "gzip", page)))
	mux.HandleFunc("/deflate", encodedHandler("deflate", compress(t, "deflate", page)))
	mux.HandleFunc("/raw-deflate", encodedHandler("deflate", compress(t, "raw-deflate", page)))
	mux.HandleFunc("/br", encodedHandler("br", compress(t, "br", page)))
	mux.HandleFunc("/gzip-br", encodedHandler("br, gzip", compress(t, "gzip", compress(t, "br", page))))
	mux.HandleFunc("/corrupt", encodedHandler("gzip", append(compress(t, "gzip", page)[:40], bytes.Repeat([]byte{0xff}, 40)...)))
	mux.HandleFunc("/zstd", encodedHandler("zstd", page))
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})
	for _, path := range []string{"/gzip", "/deflate", "/raw-deflate", "/br", "/gzip-br"} {
		p, err := f.Fetch(context.Background(), srv.URL+path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if !bytes.Equal(p.Raw, page) || !bytes.Equal(p.Body, page) {
			t.Errorf("%s: decoded body differs from the page", path)
		}
	}
	fetchErr(t, f, srv.URL+"/corrupt", ErrDecode)
	fetchErr(t, f, srv.URL+"/zstd", ErrDecode)
}

func TestCompressionBomb(t *testing.T) {
	// 64 MiB of spaces compress to about 64 KiB: well under the cap on the
	// wire, far over it decoded.
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write([]byte("<html><body>"))
	chunk := bytes.Repeat([]byte(" "), 1<<20)
	for range 64 {
		zw.Write(chunk)
	}
	zw.Close()
	bomb := buf.Bytes()
	mux := http.NewServeMux()
	mux.HandleFunc("/bomb", encodedHandler("gzip", bomb))
	mux.HandleFunc("/brbomb", encodedHandler("br", compress(t, "br", bytes.Repeat([]byte("a"), 16<<20))))
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true, MaxBytes: 1 << 20})
	err := fetchErr(t, f, srv.URL+"/bomb", ErrTooLarge)
	if !strings.Contains(err.Error(), "compression bomb") {
		t.Errorf("error does not say why: %v", err)
	}
	fetchErr(t, f, srv.URL+"/brbomb", ErrTooLarge)
}

func TestCharsets(t *testing.T) {
	latin1 := fixture(t, "latin1.html")
	cp1252 := fixture(t, "cp1252.html")
	// No declaration anywhere, first non-ASCII byte past the 1024 bytes the
	// library sniffs.
	late := []byte("<html><body><p>" + strings.Repeat("plain ascii text ", 80) + "then “quotes” and café</p></body></html>")
	brokenUTF8 := append([]byte(`<html><head><meta charset="utf-8"></head><body><p>`), bytes.Repeat([]byte{0x93, 0xe9, 0xfa, 0x81, ' '}, 40)...)
	oneBadByte := []byte("<html><body><p>caf\xe9 is caf\xc3\xa9 with one stray byte</p></body></html>")
	mux := http.NewServeMux()
	mux.HandleFunc("/latin1", htmlHandler(latin1, "text/html"))
	mux.HandleFunc("/cp1252", htmlHandler(cp1252, "text/html; charset=windows-1252"))
	mux.HandleFunc("/late", htmlHandler(late, "text/html"))
	mux.HandleFunc("/broken", htmlHandler(brokenUTF8, "text/html"))
	mux.HandleFunc("/onebad", htmlHandler(oneBadByte, "text/html; charset=utf-8"))
	mux.HandleFunc("/unknown-label", htmlHandler(fixture(t, "article.html"), "text/html; charset=x-no-such-charset"))
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})

	cases := []struct {
		path, charset string
		want          []string
		raw           []byte
	}{
		{"/latin1", "windows-1252", []string{"Vérification", "pris à Montréal", "Déjà démenti", "réapparaît"}, latin1},
		{"/cp1252", "windows-1252", []string{"“Miracle cure”", "post’s claim — that", "€12"}, cp1252},
		{"/late", "utf-8", []string{"“quotes” and café"}, late},
		{"/onebad", "utf-8", []string{"caf\uFFFD is café"}, oneBadByte},
		{"/unknown-label", "utf-8", []string{"Ana Pérez · 12 March", "this week’s floods"}, nil},
	}
	for _, c := range cases {
		p, err := f.Fetch(context.Background(), srv.URL+c.path)
		if err != nil {
			t.Errorf("%s: %v", c.path, err)
			continue
		}
		if p.Charset != c.charset {
			t.Errorf("%s: charset %q, want %q", c.path, p.Charset, c.charset)
		}
		for _, w := range c.want {
			if !bytes.Contains(p.Body, []byte(w)) {
				t.Errorf("%s: body lacks %q", c.path, w)
			}
		}
		if c.raw != nil && !bytes.Equal(p.Raw, c.raw) {
			t.Errorf("%s: Raw is not the bytes served", c.path)
		}
	}
	fetchErr(t, f, srv.URL+"/broken", ErrCharset)
}

func TestContentTypes(t *testing.T) {
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR\x00\x00\x00\x01\x00\x00\x00\x01\x08\x06\x00\x00\x00\x1f\x15\xc4\x89")
	pdf := []byte("%PDF-1.7\n1 0 obj\n<< /Type /Catalog >>\nendobj\n")
	page := fixture(t, "article.html")
	mux := http.NewServeMux()
	mux.HandleFunc("/png", htmlHandler(png, "image/png"))
	mux.HandleFunc("/pdf", htmlHandler(pdf, "application/pdf"))
	mux.HandleFunc("/json", htmlHandler([]byte(`{"a":1}`), "application/json"))
	mux.HandleFunc("/octet-png", htmlHandler(png, "application/octet-stream"))
	mux.HandleFunc("/lying-html", htmlHandler(png, "text/html"))
	mux.HandleFunc("/octet-html", htmlHandler(page, "application/octet-stream"))
	mux.HandleFunc("/xhtml", htmlHandler(page, "application/xhtml+xml; charset=utf-8"))
	mux.HandleFunc("/untyped", func(w http.ResponseWriter, r *http.Request) {
		w.Header()["Content-Type"] = nil // keep net/http from sniffing for us
		w.Write(page)
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})
	mux.HandleFunc("/octet-pdf", htmlHandler(pdf, "application/octet-stream"))
	mux.HandleFunc("/lying-pdf", htmlHandler(png, "application/pdf"))
	for _, path := range []string{"/png", "/lying-pdf", "/json", "/octet-png", "/lying-html"} {
		fetchErr(t, f, srv.URL+path, ErrNotHTML)
	}
	// A PDF is handed over as served, for extraction.
	for _, path := range []string{"/pdf", "/octet-pdf"} {
		p, err := f.Fetch(context.Background(), srv.URL+path)
		if err != nil || p.ContentType != "application/pdf" || !bytes.Equal(p.Body, pdf) || p.Charset != "" {
			t.Errorf("%s: %+v, %v", path, p, err)
		}
	}
	for path, want := range map[string]string{"/octet-html": "text/html", "/xhtml": "application/xhtml+xml", "/untyped": "text/html"} {
		p, err := f.Fetch(context.Background(), srv.URL+path)
		if err != nil {
			t.Errorf("%s: %v", path, err)
			continue
		}
		if p.ContentType != want {
			t.Errorf("%s: content type %q, want %q", path, p.ContentType, want)
		}
	}
}

func TestEmpty(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/empty", htmlHandler(nil, "text/html"))
	mux.HandleFunc("/blank", htmlHandler([]byte(" \n\t \r\n"), "text/html"))
	mux.HandleFunc("/nocontent", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(http.StatusNoContent) })
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})
	for _, path := range []string{"/empty", "/blank", "/nocontent"} {
		fetchErr(t, f, srv.URL+path, ErrEmpty)
	}
}

func TestSlowServer(t *testing.T) {
	release := make(chan struct{})
	mux := http.NewServeMux()
	mux.HandleFunc("/slow-headers", func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	mux.HandleFunc("/slow-body", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body><p>first half"))
		w.(http.Flusher).Flush()
		select {
		case <-release:
		case <-r.Context().Done():
		}
	})
	srv := serve(t, mux)
	t.Cleanup(func() { close(release) }) // runs before srv.Close
	f := newFetcher(t, Options{AllowPrivate: true, Timeout: 300 * time.Millisecond})
	for _, path := range []string{"/slow-headers", "/slow-body"} {
		start := time.Now()
		err := fetchErr(t, f, srv.URL+path, ErrTimeout)
		if d := time.Since(start); d > 3*time.Second {
			t.Errorf("%s: took %v with a 300ms timeout", path, d)
		}
		if !strings.Contains(err.Error(), "300ms") {
			t.Errorf("%s: error does not say the limit: %v", path, err)
		}
	}
	// The caller's own cancellation is not reported as our timeout.
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := f.Fetch(ctx, srv.URL+"/slow-headers"); err == nil || errors.Is(err, ErrTimeout) || !errors.Is(err, context.Canceled) {
		t.Errorf("cancelled context: %v", err)
	}
}

func TestRobots(t *testing.T) {
	var robotsHits atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		robotsHits.Add(1)
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n\nUser-agent: muse\nDisallow: /no-muse/\nDisallow: /search?\n")
	})
	page := htmlHandler(fixture(t, "article.html"), "text/html")
	mux.HandleFunc("/no-muse/story", page)
	mux.HandleFunc("/private/story", page)
	mux.HandleFunc("/search", page)
	mux.HandleFunc("/news/story", page)
	mux.HandleFunc("/to-no-muse", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/no-muse/story", http.StatusFound) })
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true})
	fetchErr(t, f, srv.URL+"/no-muse/story", ErrRobots)
	fetchErr(t, f, srv.URL+"/search?q=flood", ErrRobots)
	fetchErr(t, f, srv.URL+"/to-no-muse", ErrRobots) // checked again after a redirect
	// The muse group replaces the * group, so /private/ is allowed for muse.
	for _, path := range []string{"/news/story", "/private/story", "/search"} {
		if _, err := f.Fetch(context.Background(), srv.URL+path); err != nil {
			t.Errorf("%s: %v", path, err)
		}
	}
	if n := robotsHits.Load(); n != 1 {
		t.Errorf("robots.txt fetched %d times, want once (cached)", n)
	}

	ignoring := newFetcher(t, Options{AllowPrivate: true, IgnoreRobots: true})
	if _, err := ignoring.Fetch(context.Background(), srv.URL+"/no-muse/story"); err != nil {
		t.Errorf("IgnoreRobots: %v", err)
	}
	if n := robotsHits.Load(); n != 1 {
		t.Errorf("IgnoreRobots still fetched robots.txt")
	}

	// A custom User-Agent is matched by its own name.
	other := newFetcher(t, Options{AllowPrivate: true, UserAgent: "OtherBot/2.0"})
	fetchErr(t, other, srv.URL+"/private/story", ErrRobots)
}

func TestRobotsUnavailable(t *testing.T) {
	for _, c := range []struct {
		status int
		note   bool
	}{{404, false}, {403, false}, {500, true}, {503, true}} {
		mux := http.NewServeMux()
		mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "User-agent: *\nDisallow: /", c.status)
		})
		mux.HandleFunc("/story", htmlHandler(fixture(t, "article.html"), "text/html"))
		srv := serve(t, mux)
		p, err := newFetcher(t, Options{AllowPrivate: true}).Fetch(context.Background(), srv.URL+"/story")
		if err != nil {
			t.Errorf("robots.txt HTTP %d: %v", c.status, err)
			continue
		}
		hasNote := len(p.Notes) == 1 && strings.Contains(p.Notes[0], fmt.Sprint(c.status))
		if hasNote != c.note {
			t.Errorf("robots.txt HTTP %d: notes %q", c.status, p.Notes)
		}
	}
}

// memStore is a Store kept in memory.
type memStore struct {
	mu     sync.Mutex
	pages  map[string]*Page
	lose   bool // Cached fails, as if the archive lost the page
	saved  int
	cached int
}

func (s *memStore) Validators(_ context.Context, u string) (string, string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p := s.pages[u]
	if p == nil {
		return "", "", false
	}
	return p.ETag, p.LastModified, true
}

func (s *memStore) Cached(_ context.Context, u string) (*Page, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.cached++
	if s.lose || s.pages[u] == nil {
		return nil, errors.New("not in archive")
	}
	return s.pages[u], nil
}

func (s *memStore) SavePage(_ context.Context, p *Page) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.saved++
	s.pages[p.URL] = p
	return nil
}

func TestRevalidation(t *testing.T) {
	page := fixture(t, "article.html")
	var full, notModified atomic.Int32
	var lastINM, lastIMS string
	mux := http.NewServeMux()
	mux.HandleFunc("/story", func(w http.ResponseWriter, r *http.Request) {
		lastINM, lastIMS = r.Header.Get("If-None-Match"), r.Header.Get("If-Modified-Since")
		w.Header().Set("ETag", `"abc123"`)
		w.Header().Set("Last-Modified", "Tue, 12 Mar 2024 10:00:00 GMT")
		if lastINM == `"abc123"` {
			notModified.Add(1)
			w.WriteHeader(http.StatusNotModified)
			return
		}
		full.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	srv := serve(t, mux)
	store := &memStore{pages: map[string]*Page{}}
	f := newFetcher(t, Options{AllowPrivate: true, Store: store})
	u := srv.URL + "/story"

	first, err := f.Fetch(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if first.FromCache || store.saved != 1 || lastINM != "" {
		t.Fatalf("first fetch: FromCache %v saved %d If-None-Match %q", first.FromCache, store.saved, lastINM)
	}
	second, err := f.Fetch(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if lastINM != `"abc123"` || lastIMS != "Tue, 12 Mar 2024 10:00:00 GMT" {
		t.Errorf("refetch sent If-None-Match %q If-Modified-Since %q", lastINM, lastIMS)
	}
	if !second.FromCache || !bytes.Equal(second.Body, page) || notModified.Load() != 1 || full.Load() != 1 {
		t.Errorf("304: FromCache %v, 304s %d, full %d", second.FromCache, notModified.Load(), full.Load())
	}
	if store.saved != 1 {
		t.Errorf("a page served from the archive was saved again")
	}
	if first.FromCache {
		t.Errorf("the stored page was changed by the 304 path")
	}

	// The archive has validators but lost the page: fetch it whole again.
	store.lose = true
	third, err := f.Fetch(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if third.FromCache || full.Load() != 2 || !bytes.Equal(third.Body, page) {
		t.Errorf("lost page: FromCache %v full fetches %d", third.FromCache, full.Load())
	}
}

func TestPerHostLimit(t *testing.T) {
	var inFlight, peak atomic.Int32
	mux := http.NewServeMux()
	mux.HandleFunc("/story/{n}", func(w http.ResponseWriter, r *http.Request) {
		n := inFlight.Add(1)
		defer inFlight.Add(-1)
		for {
			p := peak.Load()
			if n <= p || peak.CompareAndSwap(p, n) {
				break
			}
		}
		time.Sleep(40 * time.Millisecond)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>story</p></body></html>")
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true, PerHost: 2, IgnoreRobots: true})
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for i := range 8 {
		wg.Go(func() {
			_, err := f.Fetch(context.Background(), fmt.Sprintf("%s/story/%d", srv.URL, i))
			errs <- err
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Error(err)
		}
	}
	if p := peak.Load(); p > 2 || p < 1 {
		t.Errorf("peak concurrency on one host %d, want at most 2", p)
	}
}

type failingStore struct{ memStore }

func (s *failingStore) SavePage(context.Context, *Page) error { return errors.New("disk full") }

func TestArchiveFailureIsANote(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/story", htmlHandler(fixture(t, "article.html"), "text/html"))
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true, Store: &failingStore{memStore{pages: map[string]*Page{}}}})
	p, err := f.Fetch(context.Background(), srv.URL+"/story")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 || p.Notes[0] != "archive: disk full" {
		t.Errorf("notes %q", p.Notes)
	}
}

func TestConnectionRefused(t *testing.T) {
	srv := httptest.NewServer(http.NotFoundHandler())
	u := srv.URL + "/story"
	srv.Close() // nothing listens on the port any more
	_, err := newFetcher(t, Options{AllowPrivate: true}).Fetch(context.Background(), u)
	if err == nil || !strings.Contains(err.Error(), "connection refused") || !strings.HasPrefix(err.Error(), "fetch "+u+": ") {
		t.Errorf("error %v", err)
	}
}
