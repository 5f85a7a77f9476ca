package cases

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestDataDirHoldsNoKey configures keys the way a user does (environment),
// runs model and search requests through the cache, saves a case whose
// messages quote a key (as a careless error message might), exports it in
// every format into the data directory, and scans every file there.
func TestDataDirHoldsNoKey(t *testing.T) {
	ctx := context.Background()
	const openaiKey, braveKey = "sk-proj-LEAKCHECK-4f9a8b7c6d5e", "BSAleakcheckBRAVEtoken42"
	dataHome := t.TempDir()
	env := map[string]string{"XDG_DATA_HOME": dataHome, "XDG_CONFIG_HOME": t.TempDir(),
		"OPENAI_API_KEY": openaiKey, "BRAVE_API_KEY": braveKey}
	cfg, err := setup.Load("", func(k string) string { return env[k] })
	if err != nil {
		t.Fatal(err)
	}
	secrets := []string{cfg.OpenAIAPIKey, cfg.BraveAPIKey, cfg.GoogleCSEKey, cfg.SerpAPIKey, cfg.FactCheckAPIKey}

	model := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		return "This post is false: https://www.reuters.com/a", nil
	}, llmtest.WithAPIKey(cfg.OpenAIAPIKey))
	search := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Header.Get("X-Subscription-Token") != braveKey {
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		fmt.Fprintf(w, `{"web":{"results":[{"url":"https://www.reuters.com/a"}]},"debug":%q}`, r.Header.Get("X-Subscription-Token"))
	}))
	defer search.Close()

	cache, err := httpcache.Open(ctx, httpcache.Options{Path: httpcache.DefaultPath(cfg.DataDir), Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	client, err := llm.New(llm.Config{BaseURL: model.BaseURL, APIKey: cfg.OpenAIAPIKey, Model: "test-model", HTTPClient: cache.Client(nil)})
	if err != nil {
		t.Fatal(err)
	}
	var text string
	for range 2 {
		resp, err := client.Stream(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "post"}}}, func(string) {})
		if err != nil {
			t.Fatal(err)
		}
		text = resp.Text
	}
	req, _ := http.NewRequest(http.MethodGet, search.URL+"/res/v1/web/search?q=bikes", nil)
	req.Header.Set("X-Subscription-Token", cfg.BraveAPIKey)
	resp, err := cache.Client(nil).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	io.Copy(io.Discard, resp.Body)
	resp.Body.Close()
	if st, _ := cache.Stats(ctx); st.Entries != 2 || st.Hits != 1 {
		t.Fatalf("cache did not take part: %+v", st)
	}

	store, err := OpenOptions(ctx, Options{Path: DefaultPath(cfg.DataDir), Secrets: secrets})
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := sampleCheck()
	c.Correction.Text = text
	c.Events = append(c.Events, pipeline.Event{Kind: pipeline.EventWarning,
		Message: "search brave: 401 for token " + braveKey + " (Authorization: Bearer " + openaiKey + ")"})
	if err := store.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	store.SaveDraft(ctx, c.ID, text, false)
	store.SaveSnapshot(ctx, c.ID, "https://www.reuters.com/a", "", time.Now(), "page", []byte("<p>page</p>"))
	saved, err := store.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	exports := filepath.Join(cfg.DataDir, "exports")
	os.MkdirAll(exports, 0o700)
	for _, f := range export.Formats {
		b, err := export.Render(saved, export.Options{Format: f, Reviewer: export.Reviewer{Name: "X", URL: "https://x.example"},
			Rating: export.Rating{AlternateName: "False"}})
		if err != nil {
			t.Fatalf("export %s: %v", f, err)
		}
		os.WriteFile(filepath.Join(exports, "case."+f), b, 0o600)
	}
	if md, _ := os.ReadFile(filepath.Join(exports, "case.json")); !bytes.Contains(md, []byte("[redacted]")) {
		t.Error("the leaked key in the event was not replaced in the stored case")
	}
	scanDirFor(t, dataHome, openaiKey)
	scanDirFor(t, dataHome, braveKey)
	cache.Close()
	store.Close()
	scanDirFor(t, dataHome, openaiKey)
	scanDirFor(t, dataHome, braveKey)
}
