package fetch

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/fetch/fetchtest"
)

func clientGet(t *testing.T, c *http.Client, u string) ([]byte, *http.Response, error) {
	t.Helper()
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, u, nil)
	if err != nil {
		t.Fatal(err)
	}
	resp, err := c.Do(req)
	if err != nil {
		return nil, nil, err
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	return b, resp, err
}

func TestClientRefusesPrivateAddresses(t *testing.T) {
	var hits atomic.Int32
	srv := countingServer(t, &hits)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "intranet.example" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return net.DefaultResolver.LookupNetIP(context.Background(), "ip", host)
	}
	c := newFetcher(t, Options{LookupIP: lookup}).Client()
	for _, u := range []string{srv.URL + "/x.png", "http://localhost:" + port + "/x.png", "http://intranet.example:" + port + "/x.png"} {
		_, _, err := clientGet(t, c, u)
		var ae *AddressError
		if !errors.Is(err, ErrPrivateAddress) || !errors.As(err, &ae) || ae.Kind != "loopback" {
			t.Errorf("%s: err = %v, want loopback refused", u, err)
		}
	}
	if _, _, err := clientGet(t, c, "ftp://example.com/x"); !errors.Is(err, ErrBadURL) {
		t.Errorf("ftp: err = %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests", n)
	}
	body, resp, err := clientGet(t, newFetcher(t, Options{LookupIP: lookup, AllowPrivate: true}).Client(), "http://intranet.example:"+port+"/x")
	if err != nil || resp.StatusCode != 200 || len(body) == 0 {
		t.Fatalf("AllowPrivate: %v", err)
	}
}

func TestClientRedirects(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	ln.Close()
	mux := http.NewServeMux()
	mux.HandleFunc("/img", func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "ua=%s", r.UserAgent())
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/img", http.StatusFound) })
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) { http.Redirect(w, r, "/loop", http.StatusFound) })
	mux.HandleFunc("/far", func(w http.ResponseWriter, r *http.Request) {
		n, _ := strconv.Atoi(r.URL.Query().Get("n"))
		http.Redirect(w, r, "/far?n="+strconv.Itoa(n+1), http.StatusFound)
	})
	mux.HandleFunc("/to-ftp", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "ftp://example.com/", http.StatusFound)
	})
	mux.HandleFunc("/to-private", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://"+ln.Addr().String()+"/admin", http.StatusFound)
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{UserAgent: "tester/1"})
	exemptFirstLoopback(f)
	c := f.Client()
	body, _, err := clientGet(t, c, srv.URL+"/short")
	if err != nil || string(body) != "ua=tester/1" {
		t.Fatalf("redirect: %q, %v", body, err)
	}
	for path, want := range map[string]error{"/loop": ErrRedirectLoop, "/far": ErrRedirects, "/to-ftp": ErrBadURL, "/to-private": ErrPrivateAddress} {
		if _, _, err := clientGet(t, c, srv.URL+path); !errors.Is(err, want) {
			t.Errorf("%s: err = %v, want %v", path, err, want)
		}
	}
}

func TestClientCapsBodies(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/exact", func(w http.ResponseWriter, r *http.Request) { w.Write(make([]byte, 100)) })
	mux.HandleFunc("/long", func(w http.ResponseWriter, r *http.Request) {
		w.(http.Flusher).Flush() // chunked: no Content-Length to go by
		w.Write(make([]byte, 101))
	})
	mux.HandleFunc("/declared", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Length", "5000")
		w.Write(make([]byte, 5000))
	})
	srv := serve(t, mux)
	c := newFetcher(t, Options{AllowPrivate: true, MaxBytes: 100}).Client()
	if b, _, err := clientGet(t, c, srv.URL+"/exact"); err != nil || len(b) != 100 {
		t.Errorf("100 bytes at a limit of 100: %d, %v", len(b), err)
	}
	for _, path := range []string{"/long", "/declared"} {
		b, _, err := clientGet(t, c, srv.URL+path)
		if !errors.Is(err, ErrTooLarge) || len(b) > 100 {
			t.Errorf("%s: %d bytes, err = %v, want ErrTooLarge", path, len(b), err)
		}
	}
}

func TestClientPerHostLimit(t *testing.T) {
	var inFlight, most atomic.Int32
	srv := serve(t, func() *http.ServeMux {
		mux := http.NewServeMux()
		mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
			n := inFlight.Add(1)
			defer inFlight.Add(-1)
			for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
			}
			time.Sleep(20 * time.Millisecond)
			fmt.Fprint(w, "ok")
		})
		return mux
	}())
	c := newFetcher(t, Options{AllowPrivate: true, PerHost: 1}).Client()
	done := make(chan error, 4)
	for range 4 {
		go func() {
			_, _, err := clientGet(t, c, srv.URL+"/")
			done <- err
		}()
	}
	for range 4 {
		if err := <-done; err != nil {
			t.Fatal(err)
		}
	}
	if most.Load() != 1 {
		t.Errorf("%d requests at once with PerHost 1", most.Load())
	}
}

func TestClientProxyTargetsChecked(t *testing.T) {
	var hits atomic.Int32
	proxy := fetchtest.Start(t, newsSites(t, &hits))
	c := newFetcher(t, Options{Proxy: proxy.ProxyFunc(), TLSConfig: proxy.TLSConfig(), LookupIP: noDNS}).Client()
	body, _, err := clientGet(t, c, "http://www.reuters.com/some/image")
	if err != nil || !strings.Contains(string(body), "host www.reuters.com") {
		t.Fatalf("through the proxy: %q, %v", body, err)
	}
	for _, u := range []string{"http://127.0.0.1:8080/admin", "http://localhost/admin", "http://www.reuters.com/to-metadata"} {
		if _, _, err := clientGet(t, c, u); !errors.Is(err, ErrPrivateAddress) {
			t.Errorf("%s: err = %v, want refused", u, err)
		}
	}
	if n := hits.Load(); n != 1 {
		t.Errorf("the proxy's sites were reached %d times, want 1", n)
	}
}
