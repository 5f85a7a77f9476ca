package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/search"
)

// isolate points every XDG folder into a temporary directory and clears
// the environment that would configure a provider, a model or a ratings
// file, so a command sees only what the test gives it. It returns the
// data folder ($XDG_DATA_HOME/muse).
func isolate(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	for k, v := range map[string]string{
		"HOME": dir, "XDG_CONFIG_HOME": filepath.Join(dir, "config"), "XDG_DATA_HOME": filepath.Join(dir, "data"),
		"XDG_CACHE_HOME": filepath.Join(dir, "cache"),
	} {
		t.Setenv(k, v)
	}
	for _, k := range []string{"SEARXNG_URL", "BRAVE_API_KEY", "GOOGLE_CSE_KEY", "GOOGLE_CSE_CX", "SERPAPI_API_KEY",
		"GOOGLE_FACTCHECK_API_KEY", "OPENAI_API_KEY", "OPENAI_BASE_URL", "MUSE_MODEL", "OLLAMA_HOST",
		"MUSE_RATINGS", "MUSE_OVERRIDES", "MUSE_RATINGS_URL", "MUSE_DATA_DIR", "MUSE_ALLOW_PRIVATE_ADDRESSES",
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy"} {
		t.Setenv(k, "")
	}
	return filepath.Join(dir, "data", "muse")
}

// run executes the command line in-process, as main does, and returns what
// it printed and the exit code main would give.
func run(t *testing.T, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	return runApp(t, &App{Stdin: strings.NewReader("")}, args...)
}

// runApp is run with an App prepared by the test (its seams, its stdin).
func runApp(t *testing.T, app *App, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	var out, errOut bytes.Buffer
	app.Stdout, app.Stderr = &out, &errOut
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	code = app.execute(ctx, args)
	return out.String(), errOut.String(), code
}

func TestSourcesRateJSON(t *testing.T) {
	isolate(t)
	out, errOut, code := run(t, "sources", "rate", "--json", "https://www.reuters.com/world/some-story/", "apnews.com", "https://x.com/someone/status/1")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var rs []map[string]any
	if err := json.Unmarshal([]byte(out), &rs); err != nil || len(rs) != 3 {
		t.Fatalf("want a JSON array of one object per argument (%v):\n%s", err, out)
	}
	for _, r := range rs {
		for _, k := range []string{"input", "domain", "publisher", "factuality", "bias", "tier", "origin"} {
			if _, ok := r[k]; !ok {
				t.Errorf("%v has no %q", r, k)
			}
		}
	}
	if rs[0]["input"] != "https://www.reuters.com/world/some-story/" || rs[0]["domain"] != "reuters.com" || rs[0]["publisher"] != "Reuters" || rs[0]["tier"] != "high" {
		t.Errorf("first line: %v", rs[0])
	}
	if rs[1]["domain"] != "apnews.com" || rs[1]["factuality"] == "" {
		t.Errorf("second line: %v", rs[1])
	}
	if rs[2]["user_content"] != true {
		t.Errorf("a post on X is user content: %v", rs[2])
	}

	if _, errOut, code := run(t, "sources", "rate"); code != 2 || !strings.Contains(errOut, "arg") {
		t.Errorf("no arguments: exit %d, stderr %q", code, errOut)
	}
}

func TestExtractJSONFile(t *testing.T) {
	isolate(t)
	page := filepath.Join("sources", "extract", "testdata", "factcheck.html")
	out, errOut, code := run(t, "extract", "--json", "--url", "https://www.dailyledger.example/fact-check/hot-water-flu-cure/", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	// Every key is always there, for scripts.
	for _, k := range []string{"url", "canonical_url", "title", "publisher", "site", "author", "published", "modified",
		"language", "image", "words", "claim_reviews", "text", "paragraphs"} {
		if _, ok := a[k]; !ok {
			t.Errorf("no %q key", k)
		}
	}
	if a["title"] != "Fact Check: No, drinking hot water does not cure the flu" || a["author"] != "Maria Okafor" {
		t.Errorf("title %q author %q", a["title"], a["author"])
	}
	if p, _ := a["published"].(string); !strings.HasPrefix(p, "2023-01-28") {
		t.Errorf("published %v", a["published"])
	}
	crs, _ := a["claim_reviews"].([]any)
	if len(crs) != 1 || crs[0].(map[string]any)["rating"] != "False" {
		t.Errorf("claim_reviews %v", a["claim_reviews"])
	}
	if text, _ := a["text"].(string); !strings.Contains(text, "influenza viruses infect cells") || strings.Contains(text, "Privacy") {
		t.Errorf("text %q", text)
	}

	_, errOut, code = run(t, "extract", "--json", filepath.Join(t.TempDir(), "missing.html"))
	if code == 0 || !strings.Contains(errOut, "missing.html") || strings.Count(strings.TrimSpace(errOut), "\n") != 0 {
		t.Errorf("missing file: exit %d, stderr %q; want a one-line error naming the file", code, errOut)
	}
}

func TestSearchArchiveOnly(t *testing.T) {
	dataDir := isolate(t)
	ctx := context.Background()
	store, err := archive.Open(ctx, filepath.Join(dataDir, "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	err = store.Add(ctx, archive.Doc{
		URL:       "https://www.dailyledger.example/fact-check/hot-water-flu-cure/",
		Title:     "Fact Check: No, drinking hot water does not cure the flu",
		Text:      "A post claims that drinking hot water every hour kills the flu virus. Doctors say influenza is not affected by the temperature of a drink.",
		Publisher: "The Daily Ledger",
		Published: time.Date(2023, 1, 28, 19, 2, 0, 0, time.UTC),
	})
	if cerr := store.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		t.Fatal(err)
	}

	out, errOut, code := run(t, "search", "--json", "hot water flu")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(errOut, search.SetupHint) || !strings.Contains(errOut, "local archive only") {
		t.Errorf("stderr does not say that only the archive was searched: %q", errOut)
	}
	var hits []map[string]any
	if err := json.Unmarshal([]byte(out), &hits); err != nil {
		t.Fatalf("not a JSON array: %v\n%s", err, out)
	}
	if len(hits) != 1 || hits[0]["provider"] != "archive" || hits[0]["url"] != "https://www.dailyledger.example/fact-check/hot-water-flu-cure/" ||
		hits[0]["query"] != "hot water flu" || hits[0]["rank"] != float64(1) {
		t.Errorf("hits: %v", hits)
	}

	// Nothing matches: an empty array, still exit 0.
	out, errOut, code = run(t, "search", "--json", "zeppelin")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Errorf("no hits: exit %d, stdout %q, stderr %q", code, out, errOut)
	}
	// The text form.
	out, _, code = run(t, "search", "hot water flu")
	if code != 0 || !strings.Contains(out, " 1. Fact Check: No, drinking hot water") || !strings.Contains(out, "archive #1 · 2023-01-28") {
		t.Errorf("text: exit %d:\n%s", code, out)
	}
	// A bad --before is a usage error.
	_, errOut, code = run(t, "search", "--before", "last week", "flu")
	if code != 2 || !strings.Contains(errOut, "--before") {
		t.Errorf("bad --before: exit %d, stderr %q", code, errOut)
	}
}

// TestSearchUsesResponseCache: `muse search` goes through the response
// cache as a check does, so the same query twice reaches SearXNG once.
func TestSearchUsesResponseCache(t *testing.T) {
	isolate(t)
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Header().Set("Content-Type", "application/json")
		io.WriteString(w, `{"query":"hot water flu","results":[{"url":"https://www.dailyledger.example/fact-check/hot-water-flu-cure/",`+
			`"title":"Fact Check: No, drinking hot water does not cure the flu","content":"Doctors say influenza is not affected.",`+
			`"engine":"duckduckgo","engines":["duckduckgo"],"score":1.0}]}`)
	}))
	defer srv.Close()
	t.Setenv("SEARXNG_URL", srv.URL)
	for i := range 2 {
		out, errOut, code := run(t, "search", "--json", "hot water flu")
		if code != 0 || !strings.Contains(out, "hot-water-flu-cure") {
			t.Fatalf("run %d: exit %d\nstdout %s\nstderr %s", i+1, code, out, errOut)
		}
	}
	if n := calls.Load(); n != 1 {
		t.Errorf("SearXNG asked %d times for the same query; want 1 (the second from the cache)", n)
	}
}
