package httpcache_test

import (
	"bytes"
	"context"
	"database/sql"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

const (
	openaiKey = "sk-test-OPENAIKEY-0123456789abcdef"
	braveKey  = "BSA-brave-TOKEN-9876543210"
	googleKey = "AIzaGOOGLEKEY-abcdefghijklmnop"
	serpKey   = "serpapi-KEY-5555555555555555"
	azureKey  = "azure-API-KEY-77777777777"
)

func openCache(t *testing.T, o httpcache.Options) *httpcache.Cache {
	t.Helper()
	if o.Path == "" {
		o.Path = filepath.Join(t.TempDir(), "muse", "cache.db")
	}
	c, err := httpcache.Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { c.Close() })
	return c
}

func chatReq(text string) llm.Request {
	return llm.Request{Task: llm.TaskCorrection, Messages: []llm.Message{{Role: "user", Content: text}}}
}

// TestModelCallsServedFromCache runs the real llm client against an
// OpenAI-like server: an identical second call, plain or streamed, makes
// no upstream call and gives the same answer.
func TestModelCallsServedFromCache(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		return "This post is false: " + llmtest.LastUser(req), nil
	}, llmtest.WithAPIKey(openaiKey))
	cache := openCache(t, httpcache.Options{})
	client, err := llm.New(llm.Config{BaseURL: srv.BaseURL, APIKey: openaiKey, Model: "test-model", HTTPClient: cache.Client(nil)})
	if err != nil {
		t.Fatal(err)
	}
	first, err := client.Complete(ctx, chatReq("bikes were banned"))
	if err != nil {
		t.Fatal(err)
	}
	second, err := client.Complete(ctx, chatReq("bikes were banned"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatCalls()); n != 1 {
		t.Errorf("%d upstream calls for two identical requests, want 1", n)
	}
	if second.Text != first.Text || second.Usage.PromptTokens != first.Usage.PromptTokens {
		t.Errorf("cached answer %+v differs from %+v", second, first)
	}
	if _, err := client.Complete(ctx, chatReq("cars were banned")); err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatCalls()); n != 2 {
		t.Errorf("a different body must miss: %d upstream calls, want 2", n)
	}

	var deltas1, deltas2 []string
	s1, err := client.Stream(ctx, chatReq("streamed claim"), func(d string) { deltas1 = append(deltas1, d) })
	if err != nil {
		t.Fatal(err)
	}
	s2, err := client.Stream(ctx, chatReq("streamed claim"), func(d string) { deltas2 = append(deltas2, d) })
	if err != nil {
		t.Fatal(err)
	}
	if n := len(srv.ChatCalls()); n != 3 {
		t.Errorf("stream replay: %d upstream calls, want 3", n)
	}
	if s1.Text != "This post is false: streamed claim" || s2.Text != s1.Text || strings.Join(deltas2, "") != s1.Text ||
		len(deltas2) != len(deltas1) || s2.FinishReason != "stop" {
		t.Errorf("replayed stream %q (%d deltas, finish %q), first %q (%d deltas)", s2.Text, len(deltas2), s2.FinishReason, s1.Text, len(deltas1))
	}
	st, err := cache.Stats(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if st.Hits != 2 || st.Misses != 3 || st.Stored != 3 || st.Entries != 3 || st.Bytes == 0 {
		t.Errorf("stats = %+v", st)
	}
}

func TestBrokenStreamNotStored(t *testing.T) {
	ctx := context.Background()
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "a long answer that will be cut off half way", ChunkRunes: 3, CutAfter: 2}, nil
	})
	cache := openCache(t, httpcache.Options{})
	client, _ := llm.New(llm.Config{BaseURL: srv.BaseURL, Model: "test-model", MaxRetries: -1, HTTPClient: cache.Client(nil)})
	client.Stream(ctx, chatReq("x"), func(string) {})
	client.Stream(ctx, chatReq("x"), func(string) {})
	if n := len(srv.ChatCalls()); n != 2 {
		t.Errorf("a cut stream was replayed: %d upstream calls, want 2", n)
	}
	if st, _ := cache.Stats(ctx); st.Entries != 0 {
		t.Errorf("cut stream stored: %+v", st)
	}
}

// searchServer answers like Brave (token header) and Google CSE / SerpAPI
// (key in the query), echoing the key back in the body as some APIs echo
// their request parameters.
func searchServer(t *testing.T) (*httptest.Server, *atomic.Int64) {
	var calls atomic.Int64
	mux := http.NewServeMux()
	mux.HandleFunc("GET /res/v1/web/search", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.Header.Get("X-Subscription-Token") != braveKey {
			http.Error(w, `{"error":"unauthorized"}`, http.StatusUnauthorized)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.Header().Set("Set-Cookie", "session="+braveKey)
		fmt.Fprintf(w, `{"type":"search","query":{"original":%q},"web":{"results":[{"title":"Council approves lanes","url":"https://www.reuters.com/a"}]}}`, r.URL.Query().Get("q"))
	})
	mux.HandleFunc("GET /customsearch/v1", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("key") != googleKey {
			w.WriteHeader(http.StatusForbidden)
			return
		}
		w.Header().Set("Content-Type", "application/json; charset=UTF-8")
		fmt.Fprintf(w, `{"kind":"customsearch#search","queries":{"request":[{"searchTerms":%q,"echo":%q}]},"items":[{"link":"https://apnews.com/b"}]}`,
			r.URL.Query().Get("q"), r.URL.RawQuery)
	})
	mux.HandleFunc("GET /search.json", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		if r.URL.Query().Get("api_key") == "" {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"search_metadata":{"status":"Success"},"organic_results":[{"link":"https://bbc.co.uk/c"}]}`)
	})
	mux.HandleFunc("POST /openai/deployments/x/chat/completions", func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		io.Copy(io.Discard, r.Body)
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"choices":[{"message":{"role":"assistant","content":"ok"}}]}`)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv, &calls
}

func get(t *testing.T, hc *http.Client, u string, hdr map[string]string) (int, string, http.Header) {
	t.Helper()
	req, _ := http.NewRequest(http.MethodGet, u, nil)
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b), resp.Header
}

func TestSearchRequestsCachedAndTTL(t *testing.T) {
	srv, calls := searchServer(t)
	now := time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC)
	cache := openCache(t, httpcache.Options{TTL: time.Hour, Now: func() time.Time { return now }})
	hc := cache.Client(&http.Client{Timeout: 5 * time.Second})
	brave := srv.URL + "/res/v1/web/search?q=bike+ban&count=10"
	tok := map[string]string{"X-Subscription-Token": braveKey, "Accept": "application/json"}

	_, b1, _ := get(t, hc, brave, tok)
	code, b2, h2 := get(t, hc, brave, tok)
	if calls.Load() != 1 || code != 200 || b2 != b1 || h2.Get(httpcache.HeaderCache) != "hit" || h2.Get("Content-Type") != "application/json" {
		t.Errorf("second identical search: calls=%d code=%d hit=%q body=%q", calls.Load(), code, h2.Get(httpcache.HeaderCache), b2)
	}
	if h2.Get("Set-Cookie") != "" {
		t.Error("Set-Cookie was stored and replayed")
	}
	// A different key still hits: credentials are not part of the key.
	get(t, hc, brave, map[string]string{"X-Subscription-Token": "another-token-123", "Accept": "application/json"})
	if calls.Load() != 1 {
		t.Errorf("auth header changed the cache key: %d calls", calls.Load())
	}
	get(t, hc, srv.URL+"/res/v1/web/search?q=bike+ban&count=20", tok)
	if calls.Load() != 2 {
		t.Errorf("different query must miss: %d calls", calls.Load())
	}

	// Only 200s are kept.
	get(t, hc, srv.URL+"/customsearch/v1?key=wrong-key-000&cx=abc&q=bikes", nil)
	get(t, hc, srv.URL+"/customsearch/v1?key=wrong-key-000&cx=abc&q=bikes", nil)
	if calls.Load() != 4 {
		t.Errorf("a 403 was served from cache: %d calls", calls.Load())
	}

	now = now.Add(59 * time.Minute)
	get(t, hc, brave, tok)
	if calls.Load() != 4 {
		t.Errorf("entry expired early: %d calls", calls.Load())
	}
	now = now.Add(2 * time.Minute)
	get(t, hc, brave, tok)
	if calls.Load() != 5 {
		t.Errorf("entry served after its TTL: %d calls", calls.Load())
	}
	get(t, hc, brave, tok)
	if calls.Load() != 5 {
		t.Errorf("refreshed entry not served: %d calls", calls.Load())
	}
}

func TestBypassSkipAndClear(t *testing.T) {
	ctx := context.Background()
	srv, calls := searchServer(t)
	path := filepath.Join(t.TempDir(), "cache.db")
	serp := srv.URL + "/search.json?engine=google&q=bikes&api_key=" + serpKey

	off := openCache(t, httpcache.Options{Path: path, Bypass: true})
	hc := off.Client(nil)
	get(t, hc, serp, nil)
	get(t, hc, serp, nil)
	if st, _ := off.Stats(ctx); calls.Load() != 2 || st.Entries != 0 || st.Hits != 0 {
		t.Errorf("bypass: calls=%d stats=%+v", calls.Load(), st)
	}

	on := openCache(t, httpcache.Options{Path: path, Skip: func(r *http.Request) bool { return r.URL.Query().Get("fresh") != "" }})
	hc = on.Client(nil)
	get(t, hc, serp, nil)
	get(t, hc, serp, nil)
	get(t, hc, serp+"&fresh=1", nil)
	get(t, hc, serp+"&fresh=1", nil)
	req, _ := http.NewRequestWithContext(httpcache.WithoutCache(ctx), http.MethodGet, serp, nil)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
	if calls.Load() != 6 {
		t.Errorf("skip/WithoutCache: calls=%d, want 6", calls.Load())
	}
	// The bypassing httpcache.Cache on the same file sees the entry for Clear.
	if st, _ := off.Stats(ctx); st.Entries != 1 {
		t.Errorf("entries = %d, want 1", st.Entries)
	}
	n, err := off.Clear(ctx)
	if err != nil || n != 1 {
		t.Errorf("Clear = %d, %v", n, err)
	}
	get(t, hc, serp, nil)
	if calls.Load() != 7 {
		t.Errorf("served after Clear: calls=%d", calls.Load())
	}
}

func TestLargeResponsePassesThrough(t *testing.T) {
	big := bytes.Repeat([]byte("x"), 5000)
	var calls atomic.Int64
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		w.Write(big)
	}))
	defer srv.Close()
	cache := openCache(t, httpcache.Options{MaxBody: 1000})
	hc := cache.Client(nil)
	for range 2 {
		if _, b, _ := get(t, hc, srv.URL, nil); len(b) != len(big) {
			t.Fatalf("body cut to %d bytes", len(b))
		}
	}
	if calls.Load() != 2 {
		t.Errorf("oversized answer cached: %d calls", calls.Load())
	}
}

func TestBadInputs(t *testing.T) {
	if _, err := httpcache.Open(context.Background(), httpcache.Options{}); err == nil {
		t.Error("empty path must fail")
	}
	bad := filepath.Join(t.TempDir(), "cache.db")
	os.WriteFile(bad, bytes.Repeat([]byte("garbage!"), 200), 0o600)
	if _, err := httpcache.Open(context.Background(), httpcache.Options{Path: bad}); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("garbage file: err = %v", err)
	}
}

// TestNoSecretInCacheFiles sends requests carrying every kind of credential
// muse uses (Bearer token, Brave token header, key= and api_key= in the
// URL, an api-key header), with servers echoing some of them back, and
// scans every file in the data directory for any of them.
func TestNoSecretInCacheFiles(t *testing.T) {
	ctx := context.Background()
	dir := t.TempDir()
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) { return "ok", nil }, llmtest.WithAPIKey(openaiKey))
	search, _ := searchServer(t)
	cache := openCache(t, httpcache.Options{Path: httpcache.DefaultPath(dir)})
	client, _ := llm.New(llm.Config{BaseURL: srv.BaseURL, APIKey: openaiKey, Model: "test-model", HTTPClient: cache.Client(nil)})
	if _, err := client.Complete(ctx, chatReq("hello")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Stream(ctx, chatReq("hello stream"), func(string) {}); err != nil {
		t.Fatal(err)
	}
	hc := cache.Client(nil)
	get(t, hc, search.URL+"/res/v1/web/search?q=x", map[string]string{"X-Subscription-Token": braveKey})
	_, body, _ := get(t, hc, search.URL+"/customsearch/v1?cx=abc&q=x&key="+googleKey, nil)
	if !strings.Contains(body, googleKey) {
		t.Fatal("the search server should echo the key on the first (live) answer")
	}
	_, body, _ = get(t, hc, search.URL+"/customsearch/v1?cx=abc&q=x&key="+googleKey, nil)
	if strings.Contains(body, googleKey) || !strings.Contains(body, "[redacted]") {
		t.Errorf("replayed body still holds the echoed key: %s", body)
	}
	get(t, hc, search.URL+"/search.json?q=x&api_key="+serpKey, nil)
	req, _ := http.NewRequest(http.MethodPost, search.URL+"/openai/deployments/x/chat/completions?api-version=1",
		strings.NewReader(`{"messages":[{"role":"user","content":"hi"}]}`))
	req.Header.Set("Api-Key", azureKey)
	resp, err := hc.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if st, _ := cache.Stats(ctx); st.Entries != 6 {
		t.Errorf("entries = %d, want 6 (every request stored)", st.Entries)
	}
	var urls []string
	db, err := sql.Open("sqlite", httpcache.DefaultPath(dir))
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows, err := db.QueryContext(ctx, "SELECT url FROM entries")
	if err != nil {
		t.Fatal(err)
	}
	for rows.Next() {
		var u string
		rows.Scan(&u)
		urls = append(urls, u)
	}
	rows.Close()
	if j, _ := json.Marshal(urls); !strings.Contains(string(j), "key=REDACTED") || !strings.Contains(string(j), "api_key=REDACTED") {
		t.Errorf("stored URLs = %s", j)
	}
	ScanForSecrets(t, dir, openaiKey, braveKey, googleKey, serpKey, azureKey)
	cache.Close()
	ScanForSecrets(t, dir, openaiKey, braveKey, googleKey, serpKey, azureKey)
}

// ScanForSecrets fails t when any file under dir holds one of secrets.
func ScanForSecrets(t *testing.T, dir string, secrets ...string) {
	t.Helper()
	files := 0
	err := filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			return err
		}
		files++
		for _, s := range secrets {
			if bytes.Contains(b, []byte(s)) {
				t.Errorf("%s holds secret %q", p, s[:6]+"…")
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if files == 0 {
		t.Fatal("no files to scan")
	}
}
