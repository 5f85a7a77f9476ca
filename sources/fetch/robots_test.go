package fetch

import (
	"context"
	"net/http"
	"strings"
	"testing"
)

func TestRobotsRedirectingToPrivate(t *testing.T) {
	// A public site whose robots.txt points at a private address: the
	// robots.txt is not read (noted), the page itself is fetched.
	mux := http.NewServeMux()
	mux.HandleFunc("/robots.txt", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "http://10.0.0.1/robots.txt", http.StatusFound)
	})
	mux.HandleFunc("/story", htmlHandler(fixture(t, "article.html"), "text/html"))
	srv := serve(t, mux)
	f := newFetcher(t, Options{})
	exemptFirstLoopback(f)
	p, err := f.Fetch(context.Background(), srv.URL+"/story")
	if err != nil {
		t.Fatal(err)
	}
	if len(p.Notes) != 1 || !strings.Contains(p.Notes[0], "robots.txt unavailable") || !strings.Contains(p.Notes[0], "10.0.0.1") {
		t.Errorf("notes %q", p.Notes)
	}
}
