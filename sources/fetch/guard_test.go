package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"sync/atomic"
	"testing"
)

func TestAddressKind(t *testing.T) {
	refused := map[string]string{
		"127.0.0.1":        "loopback",
		"127.9.9.9":        "loopback",
		"::1":              "loopback",
		"::ffff:127.0.0.1": "loopback",
		"10.1.2.3":         "private",
		"172.16.0.1":       "private",
		"192.168.1.1":      "private",
		"fd12:3456::1":     "private",
		"169.254.169.254":  "link-local",
		"fe80::1":          "link-local",
		"224.0.0.251":      "multicast",
		"ff02::1":          "multicast",
		"0.0.0.0":          "unspecified",
		"::":               "unspecified",
		"0.1.2.3":          "unspecified",
		"100.64.0.1":       "shared (carrier-grade NAT)",
		"255.255.255.255":  "broadcast",
		"64:ff9b::a00:1":   "private (via NAT64)",
		"2002:7f00:1::1":   "loopback (via 6to4)",
		// Reserved ranges the classifier once took for public (issue 12).
		"192.0.2.10":          "documentation (TEST-NET-1)",
		"198.51.100.7":        "documentation (TEST-NET-2)",
		"203.0.113.200":       "documentation (TEST-NET-3)",
		"::808:808":           "IPv4-compatible",
		"::127.0.0.1":         "loopback (IPv4-compatible)",
		"::ffff:1.1.1.1":      "IPv4-mapped",
		"::ffff:0:1.1.1.1":    "reserved",
		"64:ff9b:1::808:808":  "local-use NAT64",
		"2001:0:4136:e378::1": "Teredo",
		"100::1":              "discard-only",
		"2001:db8::1":         "documentation",
		"3fff::1":             "documentation",
		"198.18.0.1":          "benchmarking",
		"192.88.99.1":         "reserved",
		"240.0.0.1":           "reserved",
		"fec0::1":             "site-local",
		"fe80::1%eth0":        "link-local",
		"2001:db8::1%eth0":    "documentation",
	}
	for s, want := range refused {
		if got := addressKind(netip.MustParseAddr(s)); got != want {
			t.Errorf("addressKind(%s) = %q, want %q", s, got, want)
		}
	}
	// ::ffff:1.1.1.1 was public here before issue 12: an IPv4-mapped literal
	// is now refused (DNS answers and sockets are unmapped before they are
	// judged, so 1.1.1.1 itself stays public).
	for _, s := range []string{"8.8.8.8", "93.184.216.34", "151.101.1.69", "2606:4700::1111", "64:ff9b::808:808", "2002:808:808::1", "2a00:1450:4001::1"} {
		if got := addressKind(netip.MustParseAddr(s)); got != "" {
			t.Errorf("addressKind(%s) = %q, want public", s, got)
		}
	}
}

// countingServer is a loopback server that counts every request it gets.
func countingServer(t *testing.T, hits *atomic.Int32) *httptest.Server {
	t.Helper()
	page := fixture(t, "article.html")
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		hits.Add(1)
		w.Header().Set("Content-Type", "text/html")
		w.Write(page)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func TestLoopbackRefused(t *testing.T) {
	var hits atomic.Int32
	srv := countingServer(t, &hits)
	f := newFetcher(t, Options{})
	err := fetchErr(t, f, srv.URL+"/story", ErrPrivateAddress)
	var ae *AddressError
	if !errors.As(err, &ae) || ae.Kind != "loopback" || !strings.Contains(err.Error(), "--allow-private-addresses") {
		t.Errorf("error %v: want a loopback *AddressError that says how to allow it", err)
	}
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	fetchErr(t, f, "http://localhost:"+port+"/story", ErrPrivateAddress)
	fetchErr(t, f, "http://[::ffff:127.0.0.1]:"+port+"/story", ErrPrivateAddress)
	if n := hits.Load(); n != 0 {
		t.Errorf("the loopback server got %d requests", n)
	}
	// The same fetcher with AllowPrivate reaches it.
	if _, err := newFetcher(t, Options{AllowPrivate: true}).Fetch(context.Background(), srv.URL+"/story"); err != nil {
		t.Errorf("AllowPrivate: %v", err)
	}
}

func TestNameResolvingToPrivateRefused(t *testing.T) {
	var hits atomic.Int32
	srv := countingServer(t, &hits)
	_, port, _ := net.SplitHostPort(srv.Listener.Addr().String())
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		if host == "intranet.example" {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	f := newFetcher(t, Options{LookupIP: lookup})
	err := fetchErr(t, f, "http://intranet.example:"+port+"/story", ErrPrivateAddress)
	if !strings.Contains(err.Error(), "intranet.example (127.0.0.1)") {
		t.Errorf("error does not name the host and its address: %v", err)
	}
	if n := hits.Load(); n != 0 {
		t.Errorf("server got %d requests", n)
	}
	// With AllowPrivate the fake name reaches the server: the lookup hook
	// is what the dialer uses.
	p, err := newFetcher(t, Options{LookupIP: lookup, AllowPrivate: true}).Fetch(context.Background(), "http://intranet.example:"+port+"/story")
	if err != nil || hits.Load() == 0 {
		t.Fatalf("AllowPrivate via fake name: %v, hits %d", err, hits.Load())
	}
	if p.FinalURL != "http://intranet.example:"+port+"/story" {
		t.Errorf("FinalURL %q", p.FinalURL)
	}
}

func TestResolveKeepsOnlyPublicAnswers(t *testing.T) {
	g := newGuard(false, 0, func(_ context.Context, host string) ([]netip.Addr, error) {
		return []netip.Addr{netip.MustParseAddr("10.0.0.7"), netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("::ffff:192.168.0.1")}, nil
	})
	ips, err := g.resolve(context.Background(), "mixed.example")
	if err != nil || len(ips) != 1 || ips[0] != netip.MustParseAddr("93.184.216.34") {
		t.Errorf("resolve = %v, %v; want only the public answer", ips, err)
	}
	// Behind a proxy the proxy picks the address, so one private answer is
	// enough to refuse.
	if err := g.checkTarget(context.Background(), "mixed.example"); !errors.Is(err, ErrPrivateAddress) {
		t.Errorf("checkTarget(mixed) = %v", err)
	}
}

func TestDialerControlRefuses(t *testing.T) {
	// The socket-level hook on its own, as used for every connection.
	var accepted atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			c.Close()
		}
	}()
	g := newGuard(false, 0, nil)
	_, err = g.dialer.DialContext(context.Background(), "tcp", ln.Addr().String())
	if !errors.Is(err, ErrPrivateAddress) {
		t.Fatalf("dial loopback through the guarded dialer: %v", err)
	}
	c, err := newGuard(true, 0, nil).dialer.DialContext(context.Background(), "tcp", ln.Addr().String())
	if err != nil {
		t.Fatalf("AllowPrivate dial: %v", err)
	}
	c.Close()
	if err := g.control("tcp", "8.8.8.8:443", nil); err != nil {
		t.Errorf("public address refused: %v", err)
	}
}

// exemptFirstLoopback makes 127.0.0.1 count as public for f, so a loopback
// server can play a public site that redirects to a "private" 127.0.0.2.
func exemptFirstLoopback(f *Fetcher) {
	f.guard.kind = func(ip netip.Addr) string {
		if ip.Unmap() == netip.MustParseAddr("127.0.0.1") {
			return ""
		}
		return addressKind(ip)
	}
}

func TestRedirectToPrivateRefusedAtDial(t *testing.T) {
	var inner atomic.Int32
	ln, err := net.Listen("tcp", "127.0.0.2:0")
	if err != nil {
		t.Skipf("cannot listen on 127.0.0.2: %v", err)
	}
	secret := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		inner.Add(1)
		w.Header().Set("Content-Type", "text/html")
		fmt.Fprint(w, "<html><body><p>admin console</p></body></html>")
	}))
	secret.Listener.Close()
	secret.Listener = ln
	secret.Start()
	t.Cleanup(secret.Close)
	_, secretPort, _ := net.SplitHostPort(ln.Addr().String())

	mux := http.NewServeMux()
	mux.HandleFunc("/to-literal", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, secret.URL+"/admin", http.StatusFound)
	})
	mux.HandleFunc("/to-name", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://sneaky.example:"+secretPort+"/admin", http.StatusFound)
	})
	mux.HandleFunc("/story", htmlHandler(fixture(t, "article.html"), "text/html"))
	public := serve(t, mux)
	_, publicPort, _ := net.SplitHostPort(public.Listener.Addr().String())

	// rebind.example answers 127.0.0.1 ("public") the first time and
	// 127.0.0.2 after, as a DNS rebinding attack would.
	var rebinds atomic.Int32
	lookup := func(_ context.Context, host string) ([]netip.Addr, error) {
		switch host {
		case "sneaky.example":
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		case "rebind.example":
			if rebinds.Add(1) == 1 {
				return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
			}
			return []netip.Addr{netip.MustParseAddr("127.0.0.2")}, nil
		}
		return nil, fmt.Errorf("no such host %s", host)
	}
	f := newFetcher(t, Options{LookupIP: lookup})
	exemptFirstLoopback(f)
	if _, err := f.Fetch(context.Background(), public.URL+"/story"); err != nil {
		t.Fatalf("the exempt address must be reachable: %v", err)
	}
	fetchErr(t, f, public.URL+"/to-literal", ErrPrivateAddress)
	fetchErr(t, f, public.URL+"/to-name", ErrPrivateAddress)
	// The first answer is "public" and the page is read; once the
	// connection is gone, the next dial resolves again and is refused.
	if _, err := f.Fetch(context.Background(), "http://rebind.example:"+publicPort+"/story"); err != nil {
		t.Fatalf("first rebind.example fetch: %v", err)
	}
	f.CloseIdleConnections()
	fetchErr(t, f, "http://rebind.example:"+publicPort+"/story", ErrPrivateAddress)
	if rebinds.Load() < 2 {
		t.Errorf("rebind.example looked up %d times", rebinds.Load())
	}
	if n := inner.Load(); n != 0 {
		t.Errorf("the private server got %d requests", n)
	}
}

// inetAtonLoopback is every spelling of 127.0.0.1 that inet_aton(3) reads
// and Go's netip does not (issue 12).
var inetAtonLoopback = []string{"127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1",
	"017700000001", "127.000.000.001", "0x7f.1", "0X7F.1", "127.0.0.1.", "0x7f.0x0.0x0.0x1", "0177.1"}

func TestParseInetAton(t *testing.T) {
	for _, s := range inetAtonLoopback {
		ip, _, literal, err := hostAddr(s)
		if err != nil || !literal || ip != netip.MustParseAddr("127.0.0.1") {
			t.Errorf("hostAddr(%q) = %v literal %v, %v; want 127.0.0.1", s, ip, literal, err)
		}
	}
	for s, want := range map[string]string{
		"10.1":             "10.0.0.1",
		"192.168.257":      "192.168.1.1",
		"0":                "0.0.0.0",
		"0x":               "0.0.0.0",
		"4294967295":       "255.255.255.255",
		"1.2.3.4":          "1.2.3.4",
		"0xa9.0xfe.0xa9fe": "169.254.169.254",
		"１２７．０．０．１":        "127.0.0.1", // fullwidth: Go IDNA-maps it before writing a CONNECT line
		"127。0。0。1":        "127.0.0.1",
		"[::ffff:7f00:1]":  "::ffff:127.0.0.1",
	} {
		ip, _, literal, err := hostAddr(s)
		if err != nil || !literal || ip != netip.MustParseAddr(want) {
			t.Errorf("hostAddr(%q) = %v literal %v, %v; want %s", s, ip, literal, err, want)
		}
	}
	// Numeric-looking but no address: refused, never left to a resolver.
	for _, s := range []string{"08.0.0.1", "1.2.3.4.5", "127.0.0.256", "127.16777216", "4294967296", "0x100000000", "127..1", "foo.123", "www.0x7f", "127.1 x", "a/b"} {
		if _, _, _, err := hostAddr(s); !errors.Is(err, ErrBadURL) {
			t.Errorf("hostAddr(%q) = %v, want ErrBadURL", s, err)
		}
	}
	// Names stay names.
	for _, s := range []string{"www.reuters.com", "127.0.0.1.nip.io", "0x7f.example", "3com.com", "bücher.de", "xn--bcher-kva.de", "WWW.BBC.CO.UK."} {
		if _, name, literal, err := hostAddr(s); err != nil || literal || name == "" {
			t.Errorf("hostAddr(%q) = name %q literal %v, %v; want a name", s, name, literal, err)
		}
	}
}

func FuzzHostAddr(f *testing.F) {
	for _, s := range inetAtonLoopback {
		f.Add(s)
	}
	f.Add("www.example.org")
	f.Add("[::ffff:127.0.0.1]")
	f.Fuzz(func(t *testing.T, s string) {
		ip, name, literal, err := hostAddr(s)
		if err != nil {
			return
		}
		if literal != ip.IsValid() {
			t.Fatalf("hostAddr(%q): literal %v with address %v", s, literal, ip)
		}
		if !literal && (name == "" || endsInNumber(name)) {
			t.Fatalf("hostAddr(%q): name %q", s, name)
		}
		// A literal is read the same way a second time.
		if literal {
			if ip2, _, lit2, err2 := hostAddr(ip.String()); err2 != nil || !lit2 || ip2 != ip {
				t.Fatalf("hostAddr(%q) = %v, but its String %q reads as %v %v", s, ip, ip.String(), ip2, err2)
			}
		}
	})
}
