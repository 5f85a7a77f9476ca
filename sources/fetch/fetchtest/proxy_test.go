package fetchtest

import (
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
)

func TestProxyServesAnyHost(t *testing.T) {
	p := Start(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprintf(w, "%s %s %s tls=%v proxy-header=%q", r.Host, r.URL.Path, r.URL.RawQuery, r.TLS != nil, r.Header.Get("Proxy-Connection"))
	}))
	client := &http.Client{Transport: &http.Transport{Proxy: p.ProxyFunc(), TLSClientConfig: p.TLSConfig()}}
	defer client.CloseIdleConnections()
	for u, want := range map[string]string{
		"http://www.reuters.com/world/story?id=7":   "www.reuters.com /world/story id=7 tls=false proxy-header=\"\"",
		"https://www.bbc.co.uk/news/articles/c123":  "www.bbc.co.uk /news/articles/c123  tls=true proxy-header=\"\"",
		"https://apnews.com/article/x?utm_source=a": "apnews.com /article/x utm_source=a tls=true proxy-header=\"\"",
	} {
		resp, err := client.Get(u)
		if err != nil {
			t.Fatalf("GET %s: %v", u, err)
		}
		b, _ := io.ReadAll(resp.Body)
		resp.Body.Close()
		if string(b) != want {
			t.Errorf("GET %s: handler saw %q, want %q", u, b, want)
		}
	}
	// Someone talking to the proxy as if it were a web server is told so.
	resp, err := http.Get(p.URL.String() + "/page")
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusBadRequest {
		t.Errorf("direct request: HTTP %d", resp.StatusCode)
	}
}

func TestNewProxyURL(t *testing.T) {
	u := NewProxy(t, http.NotFoundHandler())
	if u.Scheme != "http" || !strings.HasPrefix(u.Host, "127.0.0.1:") {
		t.Errorf("proxy URL %s", u)
	}
}

// TestForwardingReadsInetAton: the forwarding proxy reaches a loopback
// server for every inet_aton spelling, plain and through CONNECT, so a
// client test that sees zero requests there has really been refused.
func TestForwardingReadsInetAton(t *testing.T) {
	inner := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "inner "+r.URL.Path)
	}))
	defer inner.Close()
	tlsInner := httptest.NewTLSServer(inner.Config.Handler)
	defer tlsInner.Close()
	_, port, _ := net.SplitHostPort(inner.Listener.Addr().String())
	_, tlsPort, _ := net.SplitHostPort(tlsInner.Listener.Addr().String())
	p := StartForwarding(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		fmt.Fprint(w, "named "+r.Host)
	}))
	tr := tlsInner.Client().Transport.(*http.Transport).Clone()
	tr.Proxy = p.ProxyFunc()
	tr.TLSClientConfig.InsecureSkipVerify = true // the test server's cert names 127.0.0.1, not "127.1"
	client := &http.Client{Transport: tr}
	defer client.CloseIdleConnections()
	for _, host := range []string{"127.1", "127.0.1", "2130706433", "0x7f000001", "0x7f.0.0.1", "0177.0.0.1", "017700000001", "127.000.000.001", "0x7f.1", "[::ffff:127.0.0.1]"} {
		for _, u := range []string{"http://" + host + ":" + port + "/p", "https://" + host + ":" + tlsPort + "/p"} {
			resp, err := client.Get(u)
			if err != nil {
				t.Errorf("GET %s: %v", u, err)
				continue
			}
			b, _ := io.ReadAll(resp.Body)
			resp.Body.Close()
			if string(b) != "inner /p" {
				t.Errorf("GET %s: %q, want the inner server", u, b)
			}
		}
	}
	resp, err := client.Get("http://www.example.org/")
	if err != nil {
		t.Fatal(err)
	}
	b, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if string(b) != "named www.example.org" {
		t.Errorf("a name: %q", b)
	}
	if p.Forwarded() != 20 {
		t.Errorf("Forwarded() = %d, want 20", p.Forwarded())
	}
}
