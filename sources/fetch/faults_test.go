package fetch

import (
	"context"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"
)

// TestDripFeed: a server that never stalls but sends one byte at a time
// defeats per-read deadlines; the whole-fetch Timeout must still end it,
// with an error that says so.
func TestDripFeed(t *testing.T) {
	mux := http.NewServeMux()
	mux.HandleFunc("/drip", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		w.Write([]byte("<html><body><p>"))
		fl := w.(http.Flusher)
		tick := time.NewTicker(20 * time.Millisecond)
		defer tick.Stop()
		for {
			select {
			case <-r.Context().Done():
				return
			case <-tick.C:
				w.Write([]byte("a"))
				fl.Flush()
			}
		}
	})
	srv := serve(t, mux)
	f := newFetcher(t, Options{AllowPrivate: true, Timeout: 400 * time.Millisecond})
	start := time.Now()
	_, err := f.Fetch(context.Background(), srv.URL+"/drip")
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "400ms") {
		t.Fatalf("drip feed: %v", err)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("a 400ms timeout took %v", d)
	}
}
