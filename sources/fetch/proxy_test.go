package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"net/url"
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

// TestProxyRefusesEverySpelling is issue 12's attack: behind a forwarding
// proxy that reads hosts with getaddrinfo, loopback written the inet_aton
// way reached an internal service. Every spelling, as a plain proxied
// request, as a CONNECT tunnel, as a redirect's target, and through
// Client, must be refused before anything is sent, and the internal server
// must see no connection at all.
func TestProxyRefusesEverySpelling(t *testing.T) {
	port, conns := fetchtest.Internal(t)

	spellings := append([]string{"[::ffff:127.0.0.1]", "[::127.0.0.1]", "[::ffff:7f00:1]", "[64:ff9b::7f00:1]", "[2002:7f00:1::1]", "１２７．０．０．１"}, inetAtonLoopback...)
	mux := http.NewServeMux()
	mux.HandleFunc("www.reuters.com/go", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, r.URL.Query().Get("to"), http.StatusFound)
	})
	proxy := fetchtest.StartForwarding(t, mux)
	f := newFetcher(t, Options{Proxy: proxy.ProxyFunc(), TLSConfig: proxy.TLSConfig(), LookupIP: noDNS})
	client := f.Client()
	for _, host := range spellings {
		for _, scheme := range []string{"http", "https"} {
			target := scheme + "://" + host + ":" + port + "/admin"
			// (A fullwidth host is named percent-encoded in the error, which
			// fetchErr would not recognise as the URL.)
			_, err := f.Fetch(context.Background(), target)
			if !errors.Is(err, ErrPrivateAddress) || !strings.Contains(err.Error(), "loopback") {
				t.Errorf("%s: the error does not say loopback: %v", target, err)
			}
			fetchErr(t, f, "http://www.reuters.com/go?to="+url.QueryEscape(target), ErrPrivateAddress)
			if resp, err := client.Get(target); !errors.Is(err, ErrPrivateAddress) {
				if err == nil {
					resp.Body.Close()
				}
				t.Errorf("Client().Get(%s) = %v, want ErrPrivateAddress", target, err)
			}
			if err := f.Allowed(context.Background(), target); !errors.Is(err, ErrPrivateAddress) {
				t.Errorf("Allowed(%s) = %v", target, err)
			}
		}
	}
	if n := conns(); n != 0 {
		t.Errorf("the internal server got %d connections through the proxy", n)
	}
	if n := proxy.Forwarded(); n != 0 {
		t.Errorf("the proxy forwarded %d requests to an address", n)
	}
	// A numeric-looking host that is no address is not left to the proxy.
	fetchErr(t, f, "http://127.0.0.1.1:"+port+"/admin", ErrBadURL)
	if err := f.Allowed(context.Background(), "https://www.reuters.com/world/"); err != nil {
		t.Errorf("Allowed(a publisher) = %v", err)
	}
	// The test would notice a leak: with AllowPrivate the same spelling does
	// reach the internal server through this proxy.
	open := newFetcher(t, Options{AllowPrivate: true, Proxy: proxy.ProxyFunc(), LookupIP: noDNS})
	p, err := open.Fetch(context.Background(), "http://0x7f.1:"+port+"/admin")
	if err != nil || !strings.Contains(string(p.Body), "internal admin console") || conns() == 0 {
		t.Fatalf("AllowPrivate through the forwarding proxy: %v (conns %d)", err, conns())
	}
}

// TestDirectRefusesEverySpelling: without a proxy the dial-time guard
// reads the same spellings the same way.
func TestDirectRefusesEverySpelling(t *testing.T) {
	var hits atomic.Int32
	srv := countingServer(t, &hits)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	f := newFetcher(t, Options{LookupIP: noDNS})
	for _, host := range inetAtonLoopback {
		fetchErr(t, f, "http://"+host+":"+port+"/story", ErrPrivateAddress)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests", n)
	}
}

// TestAllowPrivateStillRefusesBadHosts: a numeric-looking host that is no
// address is a bad URL with or without --allow-private-addresses, proxy or
// not.
func TestAllowPrivateStillRefusesBadHosts(t *testing.T) {
	var hits atomic.Int32
	proxy := fetchtest.StartForwarding(t, newsSites(t, &hits))
	for _, opts := range []Options{{AllowPrivate: true, Proxy: proxy.ProxyFunc()}, {AllowPrivate: true}} {
		f := newFetcher(t, opts)
		fetchErr(t, f, "http://127.0.0.1.1/admin", ErrBadURL)
		if err := f.Allowed(context.Background(), "http://08.0.0.1/"); !errors.Is(err, ErrBadURL) {
			t.Errorf("Allowed = %v", err)
		}
	}
	if hits.Load() != 0 || proxy.Forwarded() != 0 {
		t.Errorf("requests sent: %d served, %d forwarded", hits.Load(), proxy.Forwarded())
	}
}
