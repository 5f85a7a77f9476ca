package fetchtest

import (
	"context"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

// StartForwarding is Start with forwarding to addresses: a request or
// CONNECT whose host getaddrinfo(3) would read as an address literal is
// sent on to that address, as squid or tinyproxy would, whatever the
// address (loopback included). Hosts that are names are still served by h.
// IPv4 is read the inet_aton(3) way ("127.1", "2130706433", "0x7f.1",
// "0177.0.0.1"), which Go's own parser refuses; this is the proxy's
// reading, written apart from the code under test.
func StartForwarding(t testing.TB, h http.Handler) *Proxy {
	t.Helper()
	p := Start(t, h)
	p.forward = true
	return p
}

// Forwarded is how many requests and tunnels the proxy sent on to an
// address (StartForwarding).
func (p *Proxy) Forwarded() int { return int(p.forwarded.Load()) }

// forwardAddr is the address r's target host names, if it is one.
func forwardAddr(r *http.Request) (string, bool) {
	hostport := r.Host
	if r.Method != http.MethodConnect && r.URL.Host != "" {
		hostport = r.URL.Host
	}
	port := "80"
	if r.Method == http.MethodConnect || r.URL.Scheme == "https" {
		port = "443"
	}
	host := hostport
	if h, pt, err := net.SplitHostPort(hostport); err == nil {
		host, port = h, pt
	}
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		return net.JoinHostPort(ip.WithZone("").String(), port), true
	}
	if ip, ok := atonLike(host); ok {
		return net.JoinHostPort(ip.String(), port), true
	}
	return "", false
}

// atonLike reads one to four parts, each in Go's base-0 integer syntax
// (decimal, 0x hex, leading-0 octal), the last filling the rest.
func atonLike(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var v uint64
	for i, part := range parts {
		n, err := strconv.ParseUint(part, 0, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		if i < len(parts)-1 {
			if n > 255 {
				return netip.Addr{}, false
			}
			v |= n << (24 - 8*i)
			continue
		}
		if n >= 1<<(8*(5-len(parts))) {
			return netip.Addr{}, false
		}
		v |= n
	}
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// forwardTo sends r on to addr: a CONNECT becomes a byte pipe, any other
// request is repeated to addr and its response copied back.
func (p *Proxy) forwardTo(w http.ResponseWriter, r *http.Request, addr string) {
	if r.Method == http.MethodConnect {
		up, err := net.DialTimeout("tcp", addr, 5*time.Second)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadGateway)
			return
		}
		hj, ok := w.(http.Hijacker)
		if !ok {
			up.Close()
			http.Error(w, "fetchtest proxy: cannot hijack", http.StatusInternalServerError)
			return
		}
		conn, rw, err := hj.Hijack()
		if err != nil {
			up.Close()
			return
		}
		if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
			conn.Close()
			up.Close()
			return
		}
		go func() {
			_, _ = io.Copy(up, rw.Reader)
			up.Close()
		}()
		_, _ = io.Copy(conn, up)
		conn.Close()
		return
	}
	tr := &http.Transport{DialContext: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, addr)
	}}
	defer tr.CloseIdleConnections()
	out := r.Clone(r.Context())
	out.RequestURI = ""
	out.Header.Del("Proxy-Connection")
	resp, err := tr.RoundTrip(out)
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	defer resp.Body.Close()
	for k, vs := range resp.Header {
		w.Header()[k] = vs
	}
	w.WriteHeader(resp.StatusCode)
	_, _ = io.Copy(w, resp.Body)
}

// Internal starts a loopback server standing for an internal service (an
// admin console) and returns its port and a count of the connections it
// has received: a guard that holds leaves it at zero.
func Internal(t testing.TB) (port string, conns func() int) {
	t.Helper()
	var n atomic.Int32
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		io.WriteString(w, "<html><body><article><p>internal admin console: the keys are here</p></article></body></html>")
	}))
	srv.Config.ConnState = func(_ net.Conn, s http.ConnState) {
		if s == http.StateNew {
			n.Add(1)
		}
	}
	srv.Start()
	t.Cleanup(srv.Close)
	_, port, _ = net.SplitHostPort(srv.Listener.Addr().String())
	return port, func() int { return int(n.Load()) }
}
