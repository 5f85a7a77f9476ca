package fetch

import (
	"context"
	"fmt"
	"net/http"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/musecheck/muse/sources/fetch/fetchtest"
)

// newsSites serves two real-looking publishers, as the engine's end-to-end
// tests do through the loopback proxy.
func newsSites(t *testing.T, hits *atomic.Int32) http.Handler {
	page := fixture(t, "article.html")
	mux := http.NewServeMux()
	mux.HandleFunc("www.reuters.com/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "User-agent: *\nDisallow: /private/\n")
	})
	mux.HandleFunc("www.reuters.com/world/africa/lagos-photo-2024-03-12/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Header().Set("X-Seen-Host", r.Host)
		w.Write(page)
	})
	mux.HandleFunc("www.reuters.com/old-link", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "https://apnews.com/article/lagos-flood-photo", http.StatusMovedPermanently)
	})
	mux.HandleFunc("www.reuters.com/to-metadata", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://169.254.169.254/latest/meta-data/", http.StatusFound)
	})
	mux.HandleFunc("apnews.com/article/lagos-flood-photo", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		if r.TLS == nil {
			http.Error(w, "expected https", http.StatusBadRequest)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(page)
	})
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprintf(w, "<html><body><p>host %s</p></body></html>", r.Host)
	})
	return mux
}

func noDNS(_ context.Context, host string) ([]netip.Addr, error) {
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

func TestProxyKeepsRealHosts(t *testing.T) {
	var hits atomic.Int32
	proxy := fetchtest.Start(t, newsSites(t, &hits))
	// Without AllowPrivate: the proxy is on loopback but is the user's.
	f := newFetcher(t, Options{Proxy: proxy.ProxyFunc(), TLSConfig: proxy.TLSConfig(), LookupIP: noDNS})

	u := "http://www.reuters.com/world/africa/lagos-photo-2024-03-12/"
	p, err := f.Fetch(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if p.FinalURL != u || !strings.Contains(string(p.Body), "Photo does not show flooding in Lagos") {
		t.Errorf("FinalURL %q body %.60q", p.FinalURL, p.Body)
	}

	// A redirect to another publisher over https, through a CONNECT tunnel.
	p, err = f.Fetch(context.Background(), "http://www.reuters.com/old-link")
	if err != nil {
		t.Fatal(err)
	}
	if p.FinalURL != "https://apnews.com/article/lagos-flood-photo" || p.URL != "http://www.reuters.com/old-link" {
		t.Errorf("URL %q FinalURL %q", p.URL, p.FinalURL)
	}

	// robots.txt comes through the proxy too.
	fetchErr(t, f, "http://www.reuters.com/private/memo", ErrRobots)
}

func TestProxyTargetsChecked(t *testing.T) {
	var hits atomic.Int32
	proxy := fetchtest.Start(t, newsSites(t, &hits))
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "wiki.corp.example" {
			return []netip.Addr{netip.MustParseAddr("10.20.30.40")}, nil
		}
		return noDNS(context.Background(), host)
	}
	f := newFetcher(t, Options{Proxy: proxy.ProxyFunc(), TLSConfig: proxy.TLSConfig(), LookupIP: lookup})
	for _, u := range []string{
		"http://127.0.0.1:8080/admin",
		"http://localhost/admin",
		"http://[::ffff:169.254.169.254]/latest/meta-data/",
		"https://wiki.corp.example/page",
		"http://www.reuters.com/to-metadata",
	} {
		fetchErr(t, f, u, ErrPrivateAddress)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("refused targets reached the proxy's sites %d times", n)
	}
	// AllowPrivate lets them through to the proxy.
	open := newFetcher(t, Options{AllowPrivate: true, Proxy: proxy.ProxyFunc(), LookupIP: lookup})
	p, err := open.Fetch(context.Background(), "http://wiki.corp.example/page")
	if err != nil || !strings.Contains(string(p.Body), "host wiki.corp.example") {
		t.Errorf("AllowPrivate through proxy: %v", err)
	}
}
