package search

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"
	"time"
)

const postImage = "https://pbs.twimg.com/media/EWx3b9kXgAE1pQz.jpg"

func lensOpts(base string) Options {
	return Options{SerpAPIKey: "serp-key", SerpAPIURL: base, Retry: Retry{BaseDelay: time.Millisecond}}
}

func TestLensVisualMatches(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_lens.json"), func(t *testing.T, r *http.Request) {
		wantPath(t, r, "/search.json")
		wantParams(t, r, map[string]string{"engine": "google_lens", "url": postImage, "api_key": "serp-key", "type": ""})
	})
	ss := ImageSearchers(lensOpts(srv.URL))
	if len(ss) != 1 || ss[0].Name() != "serpapi-lens" {
		t.Fatalf("ImageSearchers = %v", ss)
	}
	hits, err := ss[0].ReverseImage(context.Background(), postImage)
	if err != nil {
		t.Fatal(err)
	}
	// The match without a link is skipped; ranks close up.
	want := []string{
		"https://www.reuters.com/article/uk-factcheck-flooded-subway-idUSKBN2300ZX",
		"https://en.wikipedia.org/wiki/Effects_of_Hurricane_Sandy_in_New_York",
		"https://www.apimages.com/metadata/Index/Superstorm-Sandy/1a2b3c",
	}
	if len(hits) != len(want) {
		t.Fatalf("got %d hits, want %d: %+v", len(hits), len(want), hits)
	}
	for i, h := range hits {
		if h.URL != want[i] || h.Rank != i+1 || h.Provider != "serpapi-lens" || h.Query != postImage || h.Title == "" {
			t.Errorf("hit %d = %+v", i, h)
		}
	}
	if !strings.HasPrefix(hits[0].Title, "Fact check: Photo of flooded subway") {
		t.Errorf("title = %q", hits[0].Title)
	}
}

func TestLensExactMatchesFirst(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_lens_exact.json"), func(t *testing.T, r *http.Request) {
		wantParams(t, r, map[string]string{"engine": "google_lens", "type": "exact_matches"})
	})
	l := NewLens(lensOpts(srv.URL))
	l.Type = "exact_matches"
	hits, err := l.ReverseImage(context.Background(), postImage)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 3 {
		t.Fatalf("got %d hits, want 3 (Reuters appears in both lists once): %+v", len(hits), hits)
	}
	if !strings.Contains(hits[0].URL, "theguardian.com") || !hits[0].Published.Equal(date("2012-10-30T00:00:00Z")) {
		t.Errorf("first hit = %+v, want the Guardian dated 2012-10-30", hits[0])
	}
	if !strings.Contains(hits[1].URL, "reuters.com") || hits[1].Published.IsZero() {
		t.Errorf("second hit = %+v, want Reuters with a relative date", hits[1])
	}
	if !strings.Contains(hits[2].URL, "nytimes.com") || hits[2].Rank != 3 {
		t.Errorf("third hit = %+v", hits[2])
	}
}

func TestReverseImageEngine(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_reverse_image.json"), func(t *testing.T, r *http.Request) {
		wantParams(t, r, map[string]string{"engine": "google_reverse_image", "image_url": postImage, "api_key": "serp-key"})
	})
	hits, err := NewReverseImage(lensOpts(srv.URL)).ReverseImage(context.Background(), postImage)
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) != 2 || hits[0].Provider != "serpapi-reverse-image" || !strings.Contains(hits[0].URL, "factcheck.afp.com") ||
		!strings.HasPrefix(hits[0].Snippet, "A photo shared") || !hits[0].Published.Equal(date("2020-05-21T00:00:00Z")) {
		t.Errorf("hits = %+v", hits)
	}
}

func TestLensNoResults(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_lens_empty.json"), nil)
	hits, err := NewLens(lensOpts(srv.URL)).ReverseImage(context.Background(), "https://example.org/blank.png")
	if err != nil || len(hits) != 0 {
		t.Errorf("hits %v, err %v; want none and no error", hits, err)
	}
}

func TestLensErrors(t *testing.T) {
	if NewLens(Options{}) != nil || NewReverseImage(Options{}) != nil || len(ImageSearchers(Options{})) != 0 {
		t.Error("image searchers configured without a SerpAPI key")
	}
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		if r.URL.Query().Get("url") == "https://example.org/busy.jpg" {
			w.Header().Set("Retry-After", "0")
			w.WriteHeader(http.StatusTooManyRequests)
			w.Write([]byte(`{"error": "Your account has run out of searches."}`))
			return
		}
		if r.URL.Query().Get("url") == "https://example.org/odd.jpg" {
			w.Write([]byte(`{"error": "Couldn't get valid results."}`))
			return
		}
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error": "Invalid API key. Your API key should be here: https://serpapi.com/manage-api-key"}`))
	}))
	defer srv.Close()
	l := NewLens(lensOpts(srv.URL))
	_, err := l.ReverseImage(context.Background(), postImage)
	var se *StatusError
	if !errors.As(err, &se) || se.Status != 401 || !strings.Contains(err.Error(), "check SERPAPI_API_KEY") {
		t.Errorf("401: err = %v", err)
	}
	if strings.Contains(err.Error(), "serp-key") {
		t.Errorf("error leaks the key: %v", err)
	}
	calls.Store(0)
	_, err = l.ReverseImage(context.Background(), "https://example.org/busy.jpg")
	if !errors.As(err, &se) || se.Status != 429 || calls.Load() != 4 || !strings.Contains(err.Error(), "run out of searches") {
		t.Errorf("429: err = %v after %d calls, want 4 attempts", err, calls.Load())
	}
	_, err = l.ReverseImage(context.Background(), "https://example.org/odd.jpg")
	if err == nil || !strings.Contains(err.Error(), "Couldn't get valid results") {
		t.Errorf("error field: err = %v", err)
	}
	calls.Store(0)
	for _, bad := range []string{"/home/me/photo.jpg", "data:image/png;base64,AAAA", "file:///tmp/x.png", ""} {
		if _, err := l.ReverseImage(context.Background(), bad); err == nil || !strings.Contains(err.Error(), "public http(s) URL") {
			t.Errorf("%q: err = %v", bad, err)
		}
	}
	if calls.Load() != 0 {
		t.Errorf("%d searches spent on images SerpAPI cannot fetch", calls.Load())
	}
}

func TestRunImages(t *testing.T) {
	srv := apiServer(t, fixture(t, "serpapi_lens.json"), nil)
	searchers := ImageSearchers(lensOpts(srv.URL))
	second := "https://cdn.bsky.app/img/feed_fullsize/plain/did:plc:x/bafkrei@jpeg"
	hits, failures := RunImages(context.Background(), searchers, []string{postImage, second}, time.Time{})
	if len(failures) != 0 {
		t.Fatalf("failures: %v", failures)
	}
	// Both images find the same three pages; merged, each records the other image.
	if len(hits) != 3 {
		t.Fatalf("got %d merged hits, want 3", len(hits))
	}
	if hits[0].Query != postImage || len(hits[0].Also) != 1 || hits[0].Also[0].Query != second {
		t.Errorf("first hit = %+v", hits[0])
	}
}
