package ratings

import (
	"bytes"
	"context"
	"net/http"
	"net/http/httptest"
	"os"
	"strings"
	"sync"
	"testing"
)

// ratingsServer serves whatever body and status the test sets, like the
// GitHub Pages host of the MBFC extension's data.
type ratingsServer struct {
	mu     sync.Mutex
	status int
	body   []byte
	hits   int
}

func (s *ratingsServer) set(status int, body []byte) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.status, s.body = status, body
}

func (s *ratingsServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.hits++
	if r.URL.Path != "/mbfcext/v5/data/combined.json" {
		http.NotFound(w, r)
		return
	}
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(s.status)
	w.Write(s.body)
}

func TestUpdate(t *testing.T) {
	good, err := os.ReadFile("testdata/combined.json")
	if err != nil {
		t.Fatal(err)
	}
	srv := &ratingsServer{}
	ts := httptest.NewServer(srv)
	defer ts.Close()
	dataDir := t.TempDir()
	opts := UpdateOptions{URL: ts.URL + "/mbfcext/v5/data/combined.json", DataDir: dataDir, Client: ts.Client(), MinSources: 5}
	ctx := context.Background()

	srv.set(http.StatusOK, good)
	res, err := Update(ctx, opts)
	if err != nil {
		t.Fatalf("good download: %v", err)
	}
	if res.Count != 10 || res.Date != "2026-03-14" || res.Path != InstalledPath(dataDir) || res.Previous != 0 {
		t.Errorf("result %+v", res)
	}
	installed, _ := os.ReadFile(InstalledPath(dataDir))
	if !bytes.Equal(installed, good) {
		t.Fatal("installed file differs from the download")
	}
	// Load finds the installed file when no file is named.
	if g := load(t, Options{DataDir: dataDir}).Rate("gazette.example"); g.Origin != "mbfc combined.json 2026-03-14" {
		t.Errorf("installed file not used: %+v", g)
	}

	// A newer good file replaces it.
	newer := bytes.Replace(good, []byte("2026-03-14T08:00:00.000Z"), []byte("2026-04-01T08:00:00.000Z"), 1)
	srv.set(http.StatusOK, newer)
	if res, err := Update(ctx, opts); err != nil || res.Date != "2026-04-01" || res.Previous != 10 {
		t.Fatalf("newer download: %+v, %v", res, err)
	}

	few := []byte(`{"version":5,"date":"2026-05-01T00:00:00Z","aliases":{},"sources":[{"domain":"a.example","name":"A","bias":"center","reporting":"high"}]}`)
	bad := map[string]struct {
		status int
		body   []byte
		want   string
	}{
		"server error": {http.StatusInternalServerError, []byte("oops"), "HTTP 500"},
		"not found":    {http.StatusNotFound, []byte("<html>404</html>"), "HTTP 404"},
		"truncated":    {http.StatusOK, good[:len(good)/2], "downloaded file is bad"},
		"html page":    {http.StatusOK, []byte("<!doctype html><title>Rate limited</title>"), "downloaded file is bad"},
		"bad values":   {http.StatusOK, bytes.Replace(newer, []byte(`"reporting": "very-high", "credibility"`), []byte(`"reporting": "superb", "credibility"`), 1), `unknown factuality "superb"`},
		"too few":      {http.StatusOK, few, "rates only 1 publishers, want at least 5"},
	}
	for name, c := range bad {
		srv.set(c.status, c.body)
		_, err := Update(ctx, opts)
		if err == nil || !strings.Contains(err.Error(), c.want) || !strings.Contains(err.Error(), "kept the previous file") {
			t.Errorf("%s: err = %v; want %q and that the previous file was kept", name, err, c.want)
		}
		if now, _ := os.ReadFile(InstalledPath(dataDir)); !bytes.Equal(now, newer) {
			t.Fatalf("%s: the installed file changed", name)
		}
	}

	// A file under half the size of the installed one is a broken export.
	opts.MinSources = 1
	srv.set(http.StatusOK, few)
	if _, err := Update(ctx, opts); err == nil || !strings.Contains(err.Error(), "under half of the 10 installed") {
		t.Errorf("shrunken file: %v", err)
	}
	// So is one over the size cap.
	opts.MaxBytes = 100
	srv.set(http.StatusOK, newer)
	if _, err := Update(ctx, opts); err == nil || !strings.Contains(err.Error(), "larger than 100 bytes") {
		t.Errorf("oversized file: %v", err)
	}
	if now, _ := os.ReadFile(InstalledPath(dataDir)); !bytes.Equal(now, newer) {
		t.Fatal("the installed file changed")
	}

	// A broken installed file is replaced by a good download.
	os.WriteFile(InstalledPath(dataDir), []byte("{broken"), 0o644)
	opts.MaxBytes = 0
	srv.set(http.StatusOK, good)
	if res, err := Update(ctx, opts); err != nil || res.Previous != 0 {
		t.Errorf("replacing a broken file: %+v, %v", res, err)
	}

	if _, err := Update(ctx, UpdateOptions{URL: opts.URL}); err == nil {
		t.Error("no data folder accepted")
	}
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	if _, err := Update(cctx, opts); err == nil || !strings.Contains(err.Error(), "context canceled") {
		t.Errorf("cancelled: %v", err)
	}
}
