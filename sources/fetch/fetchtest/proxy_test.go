package fetchtest

import (
	"fmt"
	"io"
	"net/http"
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
