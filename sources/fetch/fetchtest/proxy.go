// Package fetchtest serves pages under real-looking hosts to code that
// fetches over HTTP, without the internet: a loopback HTTP proxy answers
// every request, for any host, from one http.Handler. Point a client at it
// (fetch.Options.Proxy, or HTTP_PROXY/HTTPS_PROXY) and
// http://www.reuters.com/world/x reaches the handler with r.Host
// "www.reuters.com" and r.URL.Path "/world/x".
//
// https:// URLs work too: CONNECT tunnels are answered with TLS using a
// certificate for the requested host, signed by a CA made for this proxy;
// trust it with Proxy.TLSConfig (fetch.Options.TLSConfig).
//
// StartForwarding adds what a real forwarding proxy does with an address:
// a host that getaddrinfo reads as one ("127.1", "0x7f000001", "[::1]") is
// connected to, so a test can see whether such a URL reaches a loopback
// server behind the proxy.
package fetchtest

import (
	"bufio"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"math/big"
	"net"
	"net/http"
	"net/http/httptest"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// Proxy is a running test proxy.
type Proxy struct {
	// URL is the proxy's address, e.g. http://127.0.0.1:41234.
	URL *url.URL

	handler http.Handler
	caCert  *x509.Certificate
	caKey   *ecdsa.PrivateKey
	pool    *x509.CertPool

	mu    sync.Mutex
	certs map[string]*tls.Certificate

	tunnels *tunnelListener

	forward   bool
	forwarded atomic.Int32
}

// NewProxy starts a proxy that serves every request, whatever its host,
// with h, and returns its URL. It stops when the test ends.
func NewProxy(t testing.TB, h http.Handler) *url.URL {
	t.Helper()
	return Start(t, h).URL
}

// Start is NewProxy returning the Proxy, for https:// pages (TLSConfig).
func Start(t testing.TB, h http.Handler) *Proxy {
	t.Helper()
	p := &Proxy{handler: h, certs: map[string]*tls.Certificate{}}
	if err := p.makeCA(); err != nil {
		t.Fatalf("fetchtest: make CA: %v", err)
	}
	// Tunnelled TLS connections are served as plain HTTP/1.1 by a server of
	// their own, fed by the CONNECT handler.
	p.tunnels = newTunnelListener()
	inner := &http.Server{Handler: originHandler(h), ReadHeaderTimeout: 10 * time.Second}
	go func() { _ = inner.Serve(p.tunnels) }()

	srv := httptest.NewServer(http.HandlerFunc(p.serve))
	t.Cleanup(func() {
		srv.Close()
		_ = inner.Close()
	})
	p.URL, _ = url.Parse(srv.URL)
	return p
}

// CertPool holds the proxy's CA, the issuer of every https:// page.
func (p *Proxy) CertPool() *x509.CertPool { return p.pool }

// TLSConfig trusts the proxy's CA (and nothing else).
func (p *Proxy) TLSConfig() *tls.Config {
	return &tls.Config{RootCAs: p.pool, MinVersion: tls.VersionTLS12}
}

// ProxyFunc is for http.Transport.Proxy or fetch.Options.Proxy: every
// request goes through this proxy.
func (p *Proxy) ProxyFunc() func(*http.Request) (*url.URL, error) {
	return http.ProxyURL(p.URL)
}

func (p *Proxy) serve(w http.ResponseWriter, r *http.Request) {
	if p.forward {
		if addr, ok := forwardAddr(r); ok {
			p.forwarded.Add(1)
			p.forwardTo(w, r, addr)
			return
		}
	}
	if r.Method == http.MethodConnect {
		p.tunnel(w, r)
		return
	}
	if !r.URL.IsAbs() {
		http.Error(w, "fetchtest proxy: expected an absolute URL (a proxy request)", http.StatusBadRequest)
		return
	}
	originHandler(p.handler).ServeHTTP(w, r)
}

// originHandler hands h the request as the origin server would see it.
func originHandler(h http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		r2 := r.Clone(r.Context())
		if r.URL.Host != "" {
			r2.Host = r.URL.Host
		}
		r2.URL = &url.URL{Path: r.URL.Path, RawPath: r.URL.RawPath, RawQuery: r.URL.RawQuery}
		r2.RequestURI = r2.URL.RequestURI()
		r2.Header.Del("Proxy-Connection")
		r2.Header.Del("Proxy-Authorization")
		h.ServeHTTP(w, r2)
	})
}

func (p *Proxy) tunnel(w http.ResponseWriter, r *http.Request) {
	host := r.Host
	if h, _, err := net.SplitHostPort(host); err == nil {
		host = h
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		http.Error(w, "fetchtest proxy: cannot hijack", http.StatusInternalServerError)
		return
	}
	conn, rw, err := hj.Hijack()
	if err != nil {
		return
	}
	if _, err := rw.WriteString("HTTP/1.1 200 Connection established\r\n\r\n"); err != nil || rw.Flush() != nil {
		conn.Close()
		return
	}
	tlsConn := tls.Server(&bufferedConn{Conn: conn, r: rw.Reader}, &tls.Config{
		MinVersion: tls.VersionTLS12,
		NextProtos: []string{"http/1.1"},
		GetCertificate: func(hello *tls.ClientHelloInfo) (*tls.Certificate, error) {
			name := hello.ServerName
			if name == "" {
				name = host
			}
			return p.leaf(name)
		},
	})
	p.tunnels.push(tlsConn)
}

// leaf returns (making once) a certificate for host signed by the CA.
func (p *Proxy) leaf(host string) (*tls.Certificate, error) {
	host = strings.ToLower(host)
	p.mu.Lock()
	defer p.mu.Unlock()
	if c := p.certs[host]; c != nil {
		return c, nil
	}
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	tmpl := &x509.Certificate{
		SerialNumber: big.NewInt(time.Now().UnixNano()),
		Subject:      pkix.Name{CommonName: host},
		NotBefore:    time.Now().Add(-time.Hour),
		NotAfter:     time.Now().Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
	}
	if ip := net.ParseIP(host); ip != nil {
		tmpl.IPAddresses = []net.IP{ip}
	} else {
		tmpl.DNSNames = []string{host}
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, p.caCert, &key.PublicKey, p.caKey)
	if err != nil {
		return nil, err
	}
	c := &tls.Certificate{Certificate: [][]byte{der}, PrivateKey: key}
	p.certs[host] = c
	return c, nil
}

func (p *Proxy) makeCA() error {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return err
	}
	tmpl := &x509.Certificate{
		SerialNumber:          big.NewInt(1),
		Subject:               pkix.Name{CommonName: "fetchtest proxy CA"},
		NotBefore:             time.Now().Add(-time.Hour),
		NotAfter:              time.Now().Add(24 * time.Hour),
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
		BasicConstraintsValid: true,
		IsCA:                  true,
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, tmpl, &key.PublicKey, key)
	if err != nil {
		return err
	}
	cert, err := x509.ParseCertificate(der)
	if err != nil {
		return err
	}
	p.caCert, p.caKey = cert, key
	p.pool = x509.NewCertPool()
	p.pool.AddCert(cert)
	return nil
}

// bufferedConn keeps bytes the HTTP server already read past the CONNECT
// request (a client may send its TLS hello without waiting).
type bufferedConn struct {
	net.Conn
	r *bufio.Reader
}

func (c *bufferedConn) Read(b []byte) (int, error) { return c.r.Read(b) }

// tunnelListener is a net.Listener whose connections are the TLS ends of
// CONNECT tunnels.
type tunnelListener struct {
	conns chan net.Conn
	done  chan struct{}
	once  sync.Once
}

func newTunnelListener() *tunnelListener {
	return &tunnelListener{conns: make(chan net.Conn), done: make(chan struct{})}
}

func (l *tunnelListener) push(c net.Conn) {
	select {
	case l.conns <- c:
	case <-l.done:
		c.Close()
	}
}

func (l *tunnelListener) Accept() (net.Conn, error) {
	select {
	case c := <-l.conns:
		return c, nil
	case <-l.done:
		return nil, net.ErrClosed
	}
}

func (l *tunnelListener) Close() error {
	l.once.Do(func() { close(l.done) })
	return nil
}

func (l *tunnelListener) Addr() net.Addr { return &net.TCPAddr{IP: net.IPv4(127, 0, 0, 1)} }
