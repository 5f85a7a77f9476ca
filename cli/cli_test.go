package cli

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"
	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/llm/llmtest"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/spend"
	"github.com/musecheck/muse/tui"
)

// isolate points every XDG folder into a temporary directory and clears
// the environment that would configure a provider, a model or a ratings
// file, so a command sees only what the test gives it. It returns the
// data folder ($XDG_DATA_HOME/muse).
func isolate(t testing.TB) string {
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
		"HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy", "MUSE_DATABASE_URL", "SERPER_API_KEY",
		"TAVILY_API_KEY", "EXA_API_KEY"} {
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
	page := filepath.Join("..", "sources", "extract", "testdata", "factcheck.html")
	out, errOut, code := run(t, "extract", "--json", "--url", "https://www.dailyledger.example/fact-check/hot-water-flu-cure/", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	// Every key is always there, for scripts.
	for _, k := range []string{"url", "canonical_url", "title", "publisher", "site", "author", "published", "published_partial", "modified",
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

// TestExtractPartialDate: a page whose only date is "since 2008" is
// published in 2008 as far as anyone can tell, never on 2008-01-01: the
// text says so and the JSON keeps "published" null beside
// "published_partial".
func TestExtractPartialDate(t *testing.T) {
	isolate(t)
	page := filepath.Join("..", "sources", "extract", "testdata", "precision", "since_2008.html")
	out, errOut, code := run(t, "extract", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !regexp.MustCompile(`(?m)^Published: +2008 \(the page states no day\)$`).MatchString(out) || strings.Contains(out, "2008-01-01") {
		t.Errorf("text output:\n%s", out)
	}
	out, errOut, code = run(t, "extract", "--json", page)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	var a map[string]any
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatalf("not one JSON object: %v\n%s", err, out)
	}
	if pub, ok := a["published"]; !ok || pub != nil {
		t.Errorf("published = %v (present %v), want null", pub, ok)
	}
	if a["published_partial"] != "2008" {
		t.Errorf("published_partial = %v, want \"2008\"", a["published_partial"])
	}

	// A page that states its day has no partial date.
	out, _, _ = run(t, "extract", "--json", filepath.Join("..", "sources", "extract", "testdata", "precision", "day_in_markup.html"))
	a = nil
	if err := json.Unmarshal([]byte(out), &a); err != nil {
		t.Fatal(err)
	}
	if p, _ := a["published"].(string); !strings.HasPrefix(p, "2023-02-14") || a["published_partial"] != nil {
		t.Errorf("published %v, published_partial %v", a["published"], a["published_partial"])
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

// TestMain lets the test binary run as the muse command itself (main's own
// path: process exit code, standard streams) when MUSE_TEST_AS_MUSE=1, so
// the command line is tested as a user meets it without a go build.
func TestMain(m *testing.M) {
	if os.Getenv("MUSE_TEST_AS_MUSE") == "1" {
		os.Exit(profiled(func() int { return mainWith(&App{}) }))
	}
	os.Exit(m.Run())
}

// muse runs the muse command (this binary, see TestMain) in the current
// environment (isolate's) plus env, with stdin, and returns what it printed
// and its exit code.
func muse(t testing.TB, stdin string, env []string, args ...string) (stdout, stderr string, code int) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MUSE_TEST_AS_MUSE=1"), env...)
	cmd.Stdin = strings.NewReader(stdin)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return out.String(), errOut.String(), code
}

// TestUsageErrors: every usage error exits 2 with a one-line reason; a
// bare word close to a command's name is "did you mean", not a paid check.
func TestUsageErrors(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"doctr"}, `unknown command "doctr" for "muse"; did you mean doctor?`},
		{[]string{"chek"}, "did you mean check?"},
		{[]string{"cases", "lsit"}, `unknown command "lsit" for "muse cases"`},
		{[]string{"cache", "stat"}, "did you mean stats?"},
		{[]string{"doctor", "--bogus"}, "unknown flag: --bogus"},
		{[]string{"sources", "rate"}, "requires at least 1 arg"},
		{[]string{"extract"}, "accepts 1 arg"},
		{[]string{"check", "--before", "last week", "a post"}, "--before"},
		{[]string{"check", "--hits", "0", "a post"}, "--hits 0"},
		{[]string{"cases", "export", "x", "--format", "claimreview", "--rating", ""}, "claimreview needs --rating"},
		{[]string{"batch", filepath.Join(t.TempDir(), "none.jsonl")}, "open posts"},
	} {
		out, errOut, code := muse(t, "", nil, tc.args...)
		if code != 2 || !strings.Contains(errOut, tc.want) || out != "" {
			t.Errorf("muse %q: exit %d, stdout %q, stderr %q; want exit 2 saying %q", tc.args, code, out, errOut, tc.want)
		}
	}
}

// TestNoTerminal: without a terminal (a script, a pipe) the commands that
// open the app are usage errors (exit 2) that say what to run instead,
// never the app failing to open; a single word is an unknown command.
func TestNoTerminal(t *testing.T) {
	isolate(t)
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"xyzzy"}, []string{`unknown command "xyzzy" for "muse"`, "muse check xyzzy"}},
		{[]string{"doctr"}, []string{"did you mean doctor?"}},
		{[]string{"5G", "towers", "spread", "covid"}, []string{"needs a terminal", "muse check TEXT"}},
		{nil, []string{"needs a terminal", "muse --help"}},
		{[]string{"cases", "open", "abc"}, []string{"needs a terminal", "muse cases export abc"}},
	} {
		out, errOut, code := muse(t, "", nil, tc.args...)
		if code != 2 || out != "" {
			t.Errorf("muse %q without a terminal: exit %d, stdout %q, stderr %q; want exit 2", tc.args, code, out, errOut)
		}
		for _, w := range tc.want {
			if !strings.Contains(errOut, w) {
				t.Errorf("muse %q without a terminal: stderr %q, want it to say %q", tc.args, errOut, w)
			}
		}
	}
}

// TestBareWordsStillRun: a post of several words, a word far from any
// command, and `muse check WORD` are posts.
func TestBareWordsStillRun(t *testing.T) {
	isolate(t)
	for _, args := range [][]string{{"5G", "towers", "spread", "covid"}, {"hydroxychloroquine"}, {"doctr is a word too"}} {
		var got *tui.Options
		app := &App{Stdin: strings.NewReader(""), Terminal: true, runApp: func(_ context.Context, o tui.Options) error { got = &o; return nil }}
		_, errOut, code := runApp(t, app, args...)
		if code != 0 || got == nil || got.Post.Text != strings.Join(args, " ") || !got.Start {
			t.Errorf("muse %q: exit %d, app opened with %+v; stderr %s", args, code, got, errOut)
		}
	}
	// `muse check doctr` is a check of the word (here stopped before any
	// model call: nothing can be searched), not "unknown command".
	_, errOut, code := muse(t, "", nil, "check", "doctr")
	if code != 2 || strings.Contains(errOut, "did you mean") || !strings.Contains(errOut, "nothing to search") {
		t.Errorf("muse check doctr: exit %d, stderr %q", code, errOut)
	}
}

// TestFirstRun: with nothing configured, `muse` and `muse "post"` open the
// app on the setup screen with what was looked for, ready to go on in the
// extractive mode; an Ollama with no model pulled gets the pull hint.
func TestFirstRun(t *testing.T) {
	isolate(t)
	ollama := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path == "/api/tags" {
			io.WriteString(w, `{"models":[]}`)
			return
		}
		http.NotFound(w, r)
	}))
	defer ollama.Close()
	t.Setenv("OLLAMA_HOST", ollama.URL)
	for _, args := range [][]string{nil, {"The post"}} {
		var got tui.Options
		app := &App{Stdin: strings.NewReader(""), Terminal: true, runApp: func(_ context.Context, o tui.Options) error { got = o; return nil }}
		_, errOut, code := runApp(t, app, args...)
		if code != 0 || got.Setup == nil || got.Runner == nil || got.Model != "no model (--no-llm)" {
			t.Fatalf("muse %q: exit %d, setup %v, runner %v, model %q; stderr %s", args, code, got.Setup, got.Runner, got.Model, errOut)
		}
		if got.Start != (args != nil) {
			t.Errorf("muse %q: start %v", args, got.Start)
		}
		names := map[string]setup.Finding{}
		for _, f := range got.Setup.Findings {
			names[f.Name] = f
		}
		for _, n := range []string{"OPENAI_API_KEY", "OPENAI_BASE_URL", "ollama", "searxng", "brave", "google", "serpapi", "factcheck", "archive"} {
			if f, ok := names[n]; !ok || f.Found {
				t.Errorf("finding %s: %+v", n, f)
			}
		}
		if f := names["ollama"]; !strings.Contains(f.Detail, "no model pulled") || !strings.Contains(f.Fix, "ollama pull") {
			t.Errorf("ollama finding %+v", f)
		}
	}
	// A model but nothing to search: the setup screen too, in the
	// extractive mode, so nothing is paid for.
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) { return llmtest.Reply{Text: "{}"}, nil })
	t.Setenv("OPENAI_BASE_URL", srv.BaseURL)
	t.Setenv("MUSE_MODEL", "gpt-4o")
	var got tui.Options
	app := &App{Stdin: strings.NewReader(""), Terminal: true, runApp: func(_ context.Context, o tui.Options) error { got = o; return nil }}
	if _, errOut, code := runApp(t, app, "The post"); code != 0 || got.Setup == nil || got.Setup.Model != "gpt-4o" ||
		got.Setup.Search || got.Model != "no model (--no-llm)" {
		t.Errorf("a model, nothing to search: exit %d, %+v; %s", code, got.Setup, errOut)
	}
	t.Setenv("OPENAI_BASE_URL", "")
	t.Setenv("MUSE_MODEL", "")
	// doctor says the same in its words.
	out, _, code := muse(t, "", nil, "doctor")
	if code != 1 || !strings.Contains(out, "no model pulled") || !strings.Contains(out, "ollama pull") {
		t.Errorf("doctor: exit %d:\n%s", code, out)
	}
	// `muse check` says the same, exit 2, before any call.
	_, errOut, code := muse(t, "", []string{"SEARXNG_URL=http://127.0.0.1:1"}, "check", "a post")
	if code != 2 || !strings.Contains(errOut, "has no model pulled: run `ollama pull llama3.1`") {
		t.Errorf("check with an empty Ollama: exit %d, %s", code, errOut)
	}
	_, errOut, code = muse(t, "", []string{"SEARXNG_URL=http://127.0.0.1:1", "OPENAI_BASE_URL=http://127.0.0.1:1/v1"}, "check", "a post")
	if code != 2 || !strings.Contains(errOut, "OPENAI_BASE_URL is set (http://127.0.0.1:1/v1) but no model is named") {
		t.Errorf("check with a URL and no model: exit %d, %s", code, errOut)
	}
	// A URL set but no model named is said so, not "no OPENAI_BASE_URL".
	out, _, _ = muse(t, "", []string{"OPENAI_BASE_URL=http://127.0.0.1:1/v1"}, "doctor")
	if !strings.Contains(out, "OPENAI_BASE_URL is set (http://127.0.0.1:1/v1) but no model is named") || !strings.Contains(out, "MUSE_MODEL") {
		t.Errorf("doctor with a URL and no model:\n%s", out)
	}
}

// TestConfigFile: init writes a commented file that decodes cleanly; show
// says where each setting came from with secrets masked; an unknown key is
// warned of by every command and failed by doctor; a wrong type stops
// every command but doctor and config.
func TestConfigFile(t *testing.T) {
	isolate(t)
	path := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "muse", "config.toml")
	if _, errOut, code := muse(t, "", nil, "config", "init"); code != 0 || !strings.Contains(errOut, path) {
		t.Fatalf("config init: exit %d, %s", code, errOut)
	}
	if _, errOut, code := muse(t, "", nil, "config", "init"); code != 2 || !strings.Contains(errOut, "--force") {
		t.Errorf("config init over a file: exit %d, %s", code, errOut)
	}
	b, _ := os.ReadFile(path)
	if string(b) != setup.ConfigTemplate {
		t.Error("config init did not write the template")
	}
	os.WriteFile(path, []byte("model = \"from-file\"\nmodle = \"x\"\n"), 0o644)
	const key = "sk-live-0123456789abcdef"
	out, errOut, code := muse(t, "", []string{"OPENAI_API_KEY=" + key, "MUSE_HITS_PER_QUERY=7"}, "--no-cache", "config", "show", "--json")
	if code != 0 {
		t.Fatalf("config show: exit %d, %s", code, errOut)
	}
	var settings []setup.Setting
	if err := json.Unmarshal([]byte(out), &settings); err != nil {
		t.Fatalf("config show --json is not an array of settings: %v\n%s", err, out)
	}
	from := map[string]setup.Setting{}
	for _, s := range settings {
		from[s.Key] = s
	}
	for k, want := range map[string]string{"model": "file", "openai_api_key": "env", "hits_per_query": "env", "no_cache": "flag", "searxng_url": "default"} {
		if from[k].Origin != want {
			t.Errorf("%s: origin %q, want %q", k, from[k].Origin, want)
		}
	}
	if strings.Contains(out+errOut, key) || from["openai_api_key"].Value == "" || from["hits_per_query"].Value != "7" {
		t.Errorf("secret not masked, or values wrong: %+v", from)
	}
	if !strings.Contains(errOut, "muse: warning: unknown config key modle (did you mean model?)") {
		t.Errorf("no warning of the unknown key: %q", errOut)
	}
	_, errOut, code = muse(t, "", nil, "sources", "rate", "reuters.com")
	if code != 0 || !strings.Contains(errOut, "unknown config key modle") {
		t.Errorf("sources rate with an unknown key: exit %d, %q", code, errOut)
	}
	os.WriteFile(path, []byte("hits_per_query = \"five\"\nmodel = \"m\"\n"), 0o644)
	_, errOut, code = muse(t, "", nil, "sources", "rate", "reuters.com")
	if code != 2 || !strings.Contains(errOut, "config key hits_per_query: ") || !strings.Contains(errOut, "want a whole number") {
		t.Errorf("wrong type: exit %d, %q", code, errOut)
	}
	out, _, _ = muse(t, "", nil, "doctor")
	if !strings.Contains(out, "[fail] configuration") || !strings.Contains(out, "hits_per_query") {
		t.Errorf("doctor does not fail the configuration:\n%s", out)
	}
}

// TestVersion: --version and `muse version` come from the build info.
func TestVersion(t *testing.T) {
	isolate(t)
	a, _, code1 := muse(t, "", nil, "--version")
	b, _, code2 := muse(t, "", nil, "version")
	if code1 != 0 || code2 != 0 || a != b || !strings.HasPrefix(a, "muse ") || !strings.Contains(a, runtime.Version()) || strings.Contains(a, "dev\n") {
		t.Errorf("--version %q, version %q", a, b)
	}
}

// snakeKeys fails t for any JSON object key that is not snake_case.
func snakeKeys(t *testing.T, what string, v any) {
	t.Helper()
	switch x := v.(type) {
	case map[string]any:
		for k, e := range x {
			if !regexp.MustCompile(`^[a-z0-9_]+$`).MatchString(k) {
				t.Errorf("%s: key %q is not snake_case", what, k)
			}
			snakeKeys(t, what, e)
		}
	case []any:
		for _, e := range x {
			snakeKeys(t, what, e)
		}
	}
}

// TestJSONEverywhere: every command that prints data has --json: an array
// for a list, an object for one record, snake_case keys.
func TestJSONEverywhere(t *testing.T) {
	dataDir := isolate(t)
	results := filepath.Join(t.TempDir(), "out.jsonl")
	os.WriteFile(results, []byte(`{"line":1,"key":"k1","status":"failed","error":"every model call failed"}`+"\n"+
		`{"line":1,"key":"k1","status":"done","check":{"correction":{"text":"This post is false."},"usage":{"cost_usd":0.01}}}`+"\n"+
		`{"line":2,"key":"k2","status":"failed","error":"no text"}`+"\n"+`{"torn`), 0o644)
	for _, tc := range []struct {
		args  []string
		array bool
	}{
		{[]string{"doctor", "--json"}, true},
		{[]string{"config", "show", "--json"}, true},
		{[]string{"sources", "rate", "--json", "reuters.com"}, true},
		{[]string{"cases", "--json"}, true},
		{[]string{"archive", "search", "--json", "flu"}, true},
		{[]string{"batch", "status", "--json", results}, true},
		{[]string{"cache", "stats", "--json"}, false},
		{[]string{"version", "--json"}, false},
	} {
		out, errOut, _ := muse(t, "", nil, tc.args...)
		var v any
		if err := json.Unmarshal([]byte(out), &v); err != nil {
			t.Errorf("muse %q: not JSON: %v\n%s\n%s", tc.args, err, out, errOut)
			continue
		}
		if _, isArray := v.([]any); isArray != tc.array {
			t.Errorf("muse %q: array %v, want %v:\n%s", tc.args, isArray, tc.array, out)
		}
		snakeKeys(t, strings.Join(tc.args, " "), v)
	}
	out, _, _ := muse(t, "", nil, "batch", "status", "--json", results)
	var st []map[string]any
	json.Unmarshal([]byte(out), &st)
	if len(st) != 2 || st[0]["status"] != "done" || st[0]["correction"] != "This post is false." || st[1]["error"] != "no text" {
		t.Errorf("batch status: %v", st)
	}
	out, _, code := muse(t, "", nil, "batch", "status", results)
	if code != 0 || !strings.Contains(out, "2 posts: 1 done, 1 failed; verdicts: 1 not enough evidence; $0.0100") || !strings.Contains(out, "line 2 failed: no text") {
		t.Errorf("batch status text: exit %d\n%s", code, out)
	}
	// The response cache lives under XDG_CACHE_HOME, not the data folder.
	out, _, _ = muse(t, "", nil, "cache", "stats", "--json")
	if !strings.Contains(out, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "muse", "cache.db")) || strings.Contains(out, dataDir) {
		t.Errorf("cache stats: %s", out)
	}
}

// TestStdinDash: `-` reads a list of inputs from standard input.
func TestStdinDash(t *testing.T) {
	isolate(t)
	out, errOut, code := muse(t, "reuters.com\n\n  apnews.com  \n", nil, "sources", "rate", "--json", "bbc.co.uk", "-")
	var rs []map[string]any
	if err := json.Unmarshal([]byte(out), &rs); err != nil || code != 0 || len(rs) != 3 || rs[0]["input"] != "bbc.co.uk" || rs[2]["input"] != "apnews.com" {
		t.Errorf("sources rate -: exit %d, %v, %s %s", code, err, out, errOut)
	}
	page, _ := filepath.Abs(filepath.Join("..", "sources", "extract", "testdata", "factcheck.html"))
	_, errOut, code = muse(t, page+"\n", nil, "archive", "add", "-")
	if code != 0 || !strings.Contains(errOut, "1 added, 0 failed") {
		t.Errorf("archive add -: exit %d, %s", code, errOut)
	}
	out, errOut, code = muse(t, "", nil, "cases", "--json")
	if code != 0 || strings.TrimSpace(out) != "[]" {
		t.Fatalf("cases: exit %d %s %s", code, out, errOut)
	}
	st, err := cases.Open(context.Background(), cases.DefaultPath(filepath.Join(os.Getenv("XDG_DATA_HOME"), "muse")))
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range []string{"20240101-aaaaaa", "20240101-bbbbbb"} {
		st.Save(context.Background(), &pipeline.Check{ID: id, Post: pipeline.Post{Text: "a post"}})
	}
	st.Close()
	out, errOut, code = muse(t, "20240101-aaaaaa\n20240101-bbbbbb\n", nil, "cases", "rm", "-")
	if code != 0 || strings.Count(out, "removed case") != 2 {
		t.Errorf("cases rm -: exit %d\n%s%s", code, out, errOut)
	}
	if _, errOut, code = muse(t, "", nil, "archive", "add", "-"); code != 2 || !strings.Contains(errOut, "standard input") {
		t.Errorf("archive add - with nothing on stdin: exit %d, %s", code, errOut)
	}
}

// TestCompletion: cobra's dynamic completion offers subcommands, flags,
// export formats and saved case IDs.
func TestCompletion(t *testing.T) {
	dataDir := isolate(t)
	st, err := cases.Open(context.Background(), cases.DefaultPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	c := &pipeline.Check{ID: "20240201-abcdef", Post: pipeline.Post{Text: "The mayor banned bicycles"}}
	if err := st.Save(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	st.Close()
	for _, tc := range []struct {
		args []string
		want []string
	}{
		{[]string{"__complete", "ca"}, []string{"cases", "cache"}},
		{[]string{"__complete", "check", "--"}, []string{"--before", "--hits", "--no-llm", "--json"}},
		{[]string{"__complete", "cases", "export", "x", "--format", ""}, []string{"md", "json", "note", "claimreview"}},
		{[]string{"__complete", "cases", "open", "2024"}, []string{"20240201-abcdef\tThe mayor banned bicycles"}},
		{[]string{"__complete", "completion", ""}, []string{"bash", "zsh", "fish"}},
	} {
		out, errOut, code := muse(t, "", nil, tc.args...)
		for _, w := range tc.want {
			if code != 0 || !strings.Contains(out, w+"\n") && !strings.Contains(out, w+"\t") {
				t.Errorf("muse %q: exit %d, no %q in\n%s%s", tc.args, code, w, out, errOut)
			}
		}
	}
}

// TestNoMoneyForNothing: with no search provider and an empty archive, a
// check stops before any model call, says how to fix it, exits 2.
func TestNoMoneyForNothing(t *testing.T) {
	isolate(t)
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: `{"queries":["a","b","c"]}`}, nil
	})
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=gpt-4o"}
	for _, args := range [][]string{{"check", "5G towers spread the virus"}, {"batch", "-"}} {
		_, errOut, code := muse(t, `{"text":"5G towers spread the virus"}`, env, args...)
		if code != 2 || !strings.Contains(errOut, "nothing to search") || !strings.Contains(errOut, "SEARXNG_URL") ||
			!strings.Contains(errOut, "BRAVE_API_KEY") || !strings.Contains(errOut, "muse archive add") {
			t.Errorf("muse %q: exit %d, stderr %q", args, code, errOut)
		}
	}
	if n := len(srv.ChatCalls()); n != 0 {
		t.Errorf("%d model calls paid for a check that could find nothing", n)
	}
}

// TestSpendCapNeedsPrices: a cap with a model that has no price stops at
// start-up; doctor shows which models have prices.
func TestSpendCapNeedsPrices(t *testing.T) {
	isolate(t)
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "{}"}, nil
	}, llmtest.WithModels("llama3.1"))
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL, "MUSE_MODEL=llama3.1", "SEARXNG_URL=http://127.0.0.1:1"}
	_, errOut, code := muse(t, "", append(env, "MUSE_SPEND_CAP_CHECK_USD=0.50"), "check", "a post")
	if code != 2 || !strings.Contains(errOut, "llama3.1 has no price") || !strings.Contains(errOut, `[prices."llama3.1"]`) {
		t.Errorf("cap on an unpriced model: exit %d, %q", code, errOut)
	}
	if n := len(srv.ChatCalls()); n != 0 {
		t.Errorf("%d model calls made", n)
	}
	out, _, _ := muse(t, "", env, "doctor")
	if !strings.Contains(out, "[warn] prices: priced: none; no price (cost shown as $0): llama3.1") {
		t.Errorf("doctor prices:\n%s", out)
	}
	out, _, _ = muse(t, "", []string{"OPENAI_BASE_URL=" + srv.BaseURL, "MUSE_MODEL=gpt-4o-mini"}, "doctor")
	if !strings.Contains(out, "[ok] prices: priced: gpt-4o-mini $0.15/$0.6 per million tokens") {
		t.Errorf("doctor prices of a priced model:\n%s", out)
	}
}

// TestExitNoEvidence: a check where every page fails exits 3 with the
// reason, through main's exit-code table (the runner seam stands in for
// the engine's pipeline.ErrNoEvidence until the engine returns it).
func TestExitNoEvidence(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		http.Error(w, "upstream down", http.StatusBadGateway)
	}))
	defer down.Close()
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + down.URL}
	out, errOut, code := muse(t, "", env, "check", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	last := errOut[strings.LastIndex(strings.TrimRight(errOut, "\n"), "\n")+1:]
	if code != 3 || !strings.Contains(last, "no evidence could be obtained") || !strings.Contains(last, "every page failed to be read") {
		t.Errorf("exit %d, last line %q\n%s", code, last, errOut)
	}
	if !strings.Contains(out, "# Correction") {
		t.Errorf("stdout lacks the report:\n%s", out)
	}
	for code, err := range map[int]error{3: fmt.Errorf("x: %w", pipeline.ErrNoEvidence), 2: usagef("bad"), 1: errors.New("x"), 0: nil} {
		if got := exitCode(err); got != code {
			t.Errorf("exitCode(%v) = %d, want %d", err, got, code)
		}
	}
}

// TestCachedPromptTokensThroughTheBinary: a model server that reports
// part of each prompt as read from its prompt cache, as OpenAI does, has
// those tokens in `muse check --json` apart (usage.cached_prompt_tokens,
// prompt_tokens the rest), priced at the cached rate of the config's price,
// and said in the usage line on stderr.
func TestCachedPromptTokensThroughTheBinary(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		rep, err := w.Model.Handle(req)
		rep.PromptTokens, rep.CachedPromptTokens, rep.CompletionTokens = 1000, 600, 50
		return rep, err
	})
	conf := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "muse", "config.toml")
	if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(conf, []byte("[prices.\"test-model\"]\nprompt = 10.0\ncached_prompt = 1.0\ncompletion = 20.0\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	env := []string{"OPENAI_BASE_URL=" + srv.BaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_NO_CACHE=1"}
	out, errOut, code := muse(t, "", env, "check", "--json", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	var c struct {
		Usage struct {
			LLMCalls           int     `json:"llm_calls"`
			PromptTokens       int     `json:"prompt_tokens"`
			CachedPromptTokens int     `json:"cached_prompt_tokens"`
			CompletionTokens   int     `json:"completion_tokens"`
			CostUSD            float64 `json:"cost_usd"`
		} `json:"usage"`
	}
	if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
		t.Fatalf("check: exit %d\n%s", code, errOut)
	}
	u, n := c.Usage, c.Usage.LLMCalls
	if n == 0 || u.CachedPromptTokens != 600*n || u.PromptTokens != 400*n || u.CompletionTokens != 50*n {
		t.Errorf("usage %+v: want per call 400 prompt, 600 cached prompt and 50 completion tokens", u)
	}
	if want := float64(n) * (400*10.0 + 600*1.0 + 50*20.0) / 1e6; math.Abs(u.CostUSD-want) > 1e-9 {
		t.Errorf("cost $%.6f, want $%.6f (all prompt tokens at the prompt rate: $%.6f)", u.CostUSD, want, float64(n)*(1000*10.0+50*20.0)/1e6)
	}
	if want := fmt.Sprintf("(%d prompt tokens from the server's prompt cache)", 600*n); !strings.Contains(errOut, want) {
		t.Errorf("stderr lacks %q:\n%s", want, errOut)
	}
}

// mountTmpfs mounts a tmpfs of size at dir for the test (root only).
func mountTmpfs(t *testing.T, dir, size string) {
	t.Helper()
	if os.Getuid() != 0 {
		t.Skip("needs root to mount a tmpfs")
	}
	os.MkdirAll(dir, 0o755)
	if err := syscall.Mount("tmpfs", dir, "tmpfs", 0, "size="+size); err != nil {
		t.Skipf("cannot mount a tmpfs: %v", err)
	}
	t.Cleanup(func() { syscall.Unmount(dir, syscall.MNT_DETACH) })
}

// TestReadOnlyDataDirectory: `muse cases`, `cases export` and `cases open`
// read a case store on a read-only mount.
func TestReadOnlyDataDirectory(t *testing.T) {
	dataDir := isolate(t)
	mountTmpfs(t, filepath.Dir(dataDir), "8m")
	st, err := cases.Open(context.Background(), cases.DefaultPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	c := &pipeline.Check{ID: "20240201-readonly", Post: pipeline.Post{Text: "The mayor banned bicycles"},
		Correction: pipeline.Correction{Text: "This post is false: no such order exists."}}
	if err := st.Save(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	st.Close()
	if err := syscall.Mount("", filepath.Dir(dataDir), "", syscall.MS_REMOUNT|syscall.MS_RDONLY, ""); err != nil {
		t.Fatal(err)
	}
	out, errOut, code := muse(t, "", nil, "cases")
	if code != 0 || !strings.Contains(out, c.ID) || !strings.Contains(errOut, "read-only") {
		t.Errorf("muse cases on a read-only mount: exit %d\n%s%s", code, out, errOut)
	}
	out, errOut, code = muse(t, "", nil, "cases", "export", "20240201-read", "--format", "md")
	if code != 0 || !strings.Contains(out, "no such order exists") {
		t.Errorf("export: exit %d\n%s%s", code, out, errOut)
	}
	var got *pipeline.Check
	app := &App{Stdin: strings.NewReader(""), Terminal: true, runApp: func(_ context.Context, o tui.Options) error { got = o.Case; return nil }}
	_, errOut, code = runApp(t, app, "cases", "open", "20240201-read")
	if code != 0 || got == nil || got.ID != c.ID {
		t.Errorf("cases open: exit %d, case %v; %s", code, got, errOut)
	}
}

// TestFullDisk: on a full disk the check ends non-zero saying its case is
// not kept, prints its result, and no half-saved case is listed after.
func TestFullDisk(t *testing.T) {
	dataDir := isolate(t)
	mountTmpfs(t, filepath.Dir(dataDir), "2m")
	w := testworld.New(t, nil)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	muse(t, "", env, "cases") // the databases exist; then the disk fills up
	muse(t, "", env, "archive", "search", "x")
	filler, _ := os.Create(filepath.Join(dataDir, "filler"))
	for {
		if _, err := filler.Write(make([]byte, 64<<10)); err != nil {
			break
		}
	}
	filler.Close()
	out, errOut, code := muse(t, "", env, "check", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	last := errOut[strings.LastIndex(strings.TrimRight(errOut, "\n"), "\n")+1:]
	if code != 1 || !strings.Contains(last, "its case could not be kept") || !strings.Contains(out, "This post is false") {
		t.Errorf("full disk: exit %d, last line %q\nstdout:\n%s\nstderr:\n%s", code, last, out, errOut)
	}
	os.Remove(filepath.Join(dataDir, "filler"))
	out, errOut, _ = muse(t, "", env, "cases", "--json")
	if strings.TrimSpace(out) != "[]" {
		t.Errorf("after the disk is freed, cases lists %s%s; want no half-saved case", out, errOut)
	}
}

// TestSecretsNeverLeave: a key the model echoes, and the password in
// OPENAI_BASE_URL's userinfo, are redacted wherever muse writes: stdout,
// stderr, `muse batch -o`, every export format, doctor, the data and cache
// directories.
func TestSecretsNeverLeave(t *testing.T) {
	dataDir := isolate(t)
	const key, pass = "sk-echoed-0123456789abcdef", "hunter2-secret-pass"
	w := testworld.New(t, nil)
	w.Model.CorrectionReply = &llmtest.Reply{Text: "This post is false: the order was never signed (key " + key +
		", password " + pass + ") http://www.reuters.com/world/us/springfield-mayor-bicycle-ban-fact-check/"}
	base := strings.Replace(w.Cfg.OpenAIBaseURL, "http://", "http://muse:"+pass+"@", 1)
	env := []string{"OPENAI_BASE_URL=" + base, "OPENAI_API_KEY=" + key, "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	leaked := func(what, s string) {
		t.Helper()
		if strings.Contains(s, key) || strings.Contains(s, pass) {
			t.Errorf("%s holds a secret:\n%s", what, s)
		}
	}
	out, errOut, code := muse(t, "", env, "check", "--json", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if code != 0 || !strings.Contains(out, "[redacted]") {
		t.Fatalf("check: exit %d; want the echoed key redacted in stdout\n%s\n%s", code, out, errOut)
	}
	leaked("check stdout", out)
	leaked("check stderr", errOut)
	var c pipeline.Check
	json.Unmarshal([]byte(out), &c)
	for _, f := range []string{"md", "json", "note", "note-json"} {
		o, e, _ := muse(t, "", env, "cases", "export", c.ID, "--format", f)
		leaked("export "+f, o+e)
	}
	file := filepath.Join(t.TempDir(), "note.md")
	muse(t, "", env, "cases", "export", c.ID, "--format", "md", "-o", file)
	b, _ := os.ReadFile(file)
	leaked("export -o", string(b))
	results := filepath.Join(t.TempDir(), "results.jsonl")
	post, _ := json.Marshal(map[string]string{"text": testworld.Post, "posted_at": testworld.Cutoff.Format(time.RFC3339)})
	_, errOut, _ = muse(t, string(post)+"\n", env, "batch", "-", "-o", results)
	b, _ = os.ReadFile(results)
	if !strings.Contains(string(b), "[redacted]") {
		t.Errorf("batch -o wrote no redacted correction:\n%s\n%s", b, errOut)
	}
	leaked("batch -o", string(b)+errOut)
	out, errOut, _ = muse(t, "", env, "doctor")
	if !strings.Contains(out, "muse:****@") {
		t.Errorf("doctor does not show the URL with its password masked:\n%s", out)
	}
	leaked("doctor", out+errOut)
	out, _, _ = muse(t, "", env, "config", "show")
	leaked("config show", out)
	for _, dir := range []string{dataDir, filepath.Join(os.Getenv("XDG_CACHE_HOME"), "muse")} {
		filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
			if err == nil && !d.IsDir() {
				b, _ := os.ReadFile(p)
				leaked(p, string(b))
			}
			return nil
		})
	}
}

// readmeTable returns the rows (cells trimmed) of the first Markdown table
// after heading in the Markdown document readme.
func readmeTable(t *testing.T, readme, heading string) [][]string {
	t.Helper()
	i := strings.Index(readme, "\n"+heading+"\n")
	if i < 0 {
		t.Fatalf("README has no %q section", heading)
	}
	var rows [][]string
	started := false
	for _, line := range strings.Split(readme[i+len(heading)+2:], "\n") {
		if !strings.HasPrefix(line, "|") {
			if started {
				break
			}
			continue
		}
		started = true
		line = strings.ReplaceAll(line, `\|`, "\x00")
		var cells []string
		for _, c := range strings.Split(strings.Trim(line, "|"), "|") {
			cells = append(cells, strings.ReplaceAll(strings.TrimSpace(c), "\x00", "|"))
		}
		if strings.HasPrefix(cells[0], "---") {
			continue
		}
		rows = append(rows, cells)
	}
	return rows[1:] // the header
}

// TestReadmeTables: the README's tables of commands and exit codes, and
// docs/settings.md's of configuration keys, are the command tree's, the
// exit-code table's and the Config struct's, so they cannot drift (links
// are checked by the root package's TestDocsLinks).
func TestReadmeTables(t *testing.T) {
	b, err := os.ReadFile(filepath.Join("..", "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	readme := string(b)
	root := newRoot(&App{})
	root.InitDefaultCompletionCmd()
	tree := map[string]*cobra.Command{}
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if c.Hidden || c.Name() == "help" {
			return
		}
		if c.Name() == "completion" || !c.HasSubCommands() || c == root || c.Name() == "batch" || c.Name() == "cases" || c.Name() == "eval" || c.Name() == "watch" {
			tree[c.CommandPath()] = c
		}
		if c.Name() != "completion" {
			for _, s := range c.Commands() {
				walk(s)
			}
		}
	}
	walk(root)
	inReadme := map[string]bool{}
	for _, row := range readmeTable(t, readme, "#### Commands") {
		var path []string
		for _, w := range strings.Fields(strings.Trim(row[0], "`")) {
			if !regexp.MustCompile(`^[a-z]+$`).MatchString(w) {
				break
			}
			path = append(path, w)
		}
		p := strings.Join(path, " ")
		inReadme[p] = true
		c, ok := tree[p]
		if !ok {
			t.Errorf("README lists %q, which is not a command", p)
			continue
		}
		hasJSON := c.Flags().Lookup("json") != nil
		if hasJSON == strings.HasPrefix(row[2], "—") {
			t.Errorf("README: %q --json column %q, but the command has --json: %v", p, row[2], hasJSON)
		}
		if hasJSON && !strings.Contains(c.Flags().Lookup("json").Usage, map[bool]string{true: "JSON array", false: "JSON object"}[strings.Contains(row[2], "array")]) {
			t.Errorf("%s --help says %q, the README %q", p, c.Flags().Lookup("json").Usage, row[2])
		}
	}
	for p := range tree {
		if !inReadme[p] {
			t.Errorf("command %q is not in the README's table", p)
		}
	}
	var codes []string
	for _, row := range readmeTable(t, readme, "#### Exit codes") {
		codes = append(codes, row[0])
	}
	var want []string
	for _, e := range exitTable {
		want = append(want, fmt.Sprint(e.Code))
	}
	if strings.Join(codes, ",") != strings.Join(want, ",") {
		t.Errorf("README exit codes %v, the table has %v", codes, want)
	}
	settingsDoc, err := os.ReadFile(filepath.Join("..", "docs", "settings.md"))
	if err != nil {
		t.Fatal(err)
	}
	settings := (&setup.Config{}).Settings()
	rows := readmeTable(t, string(settingsDoc), "## Every setting")
	if len(rows) != len(settings) {
		t.Errorf("docs/settings.md lists %d settings, the Config has %d", len(rows), len(settings))
	}
	for i, s := range settings {
		if i >= len(rows) {
			break
		}
		env := ""
		if s.Env != "" {
			env = "`" + s.Env + "`"
		}
		if rows[i][0] != "`"+s.Key+"`" || rows[i][1] != env {
			t.Errorf("docs/settings.md setting %d is %s %s; the Config's is %s %s", i+1, rows[i][0], rows[i][1], s.Key, s.Env)
		}
		if f := strings.Fields(strings.Trim(rows[i][2], "`")); len(f) > 0 {
			name := strings.TrimPrefix(f[0], "--")
			if root.PersistentFlags().Lookup(name) == nil && root.Flags().Lookup(name) == nil {
				t.Errorf("docs/settings.md names flag %s for %s, which muse does not have", f[0], s.Key)
			}
		}
	}
	for _, name := range []string{"DESIGN.md", "STYLE.md", "Go 1.26 or newer"} {
		if strings.Contains(readme, name) {
			t.Errorf("README mentions %q", name)
		}
	}
	if mod, _ := os.ReadFile(filepath.Join("..", "go.mod")); !strings.Contains(readme, "Go "+strings.TrimSpace(regexp.MustCompile(`(?m)^go (\S+)`).FindStringSubmatch(string(mod))[1])) {
		t.Error("README does not name go.mod's exact Go version")
	}
}

// TestHitsPerQuery: --hits (and hits_per_query) set how many hits each
// provider gives per query in the first search.
func TestHitsPerQuery(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	env := []string{"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	firstPass := func(extra []string, args ...string) (most int) {
		t.Helper()
		out, errOut, code := muse(t, "", append(env, extra...), append([]string{"check", "--json", "--no-llm", "--no-save"}, append(args, testworld.Post)...)...)
		var c pipeline.Check
		if err := json.Unmarshal([]byte(out), &c); err != nil || code != 0 {
			t.Fatalf("exit %d, %v\n%s", code, err, errOut)
		}
		per := map[string]int{}
		for _, h := range c.Hits {
			if h.Provider == "searxng" && h.Pass == 1 {
				per[h.Query]++
				most = max(most, per[h.Query])
			}
		}
		return most
	}
	if n := firstPass(nil); n != 4 { // the world's SearXNG has 4 results per query; the default asks 5
		t.Errorf("default: %d hits per query, want 4", n)
	}
	if n := firstPass(nil, "--hits", "2"); n != 2 {
		t.Errorf("--hits 2: %d hits per query", n)
	}
	if n := firstPass([]string{"MUSE_HITS_PER_QUERY=1"}); n != 1 {
		t.Errorf("MUSE_HITS_PER_QUERY=1: %d hits per query", n)
	}
}

// TestKillDuringStreamKeepsTheWords: kill -9 while the correction streams
// loses at most about a second of it: the case holds what had arrived.
func TestKillDuringStreamKeepsTheWords(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	full := "This post is false: " + strings.Repeat("the mayor signed no order about bicycles on Main Street. ", 12)
	w.Model.CorrectionReply = &llmtest.Reply{Text: full, ChunkRunes: 4, ChunkDelay: 50 * time.Millisecond}
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_TEST_AS_MUSE=1"}
	cmd := exec.Command(os.Args[0], "check", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	cmd.Env = append(os.Environ(), env...)
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	started := make(chan struct{})
	go func() {
		sc := bufio.NewScanner(stderr)
		once := false
		for sc.Scan() {
			if !once && strings.Contains(sc.Text(), "correction…") {
				once = true
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(60 * time.Second):
		cmd.Process.Kill()
		t.Fatal("the correction never started")
	}
	const streamFor = 2500 * time.Millisecond // 50 chunks of 4 runes at most
	time.Sleep(streamFor)
	cmd.Process.Kill() // SIGKILL
	cmd.Wait()
	out, errOut, code := muse(t, "", env, "cases", "--json")
	var list []cases.Summary
	if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 1 {
		t.Fatalf("cases after the kill: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	out, _, _ = muse(t, "", env, "cases", "export", list[0].ID, "--format", "json")
	var c pipeline.Check
	json.Unmarshal([]byte(out), &c)
	kept := c.Correction.Text
	// Arrived by the kill: up to streamFor/50ms chunks; kept: at least what
	// had arrived a second (plus a second of slack for a busy machine)
	// before it.
	atLeast := int((streamFor-2*time.Second)/(50*time.Millisecond)) * 4
	if !strings.HasPrefix(full, kept) || len([]rune(kept)) < atLeast {
		t.Errorf("kept %d runes of the streamed correction (want at least %d, a prefix of the answer): %q", len([]rune(kept)), atLeast, kept)
	}
	t.Logf("kept %d runes after %v of streaming", len([]rune(kept)), streamFor)
}

// TestQueuedBatchThroughWorkers: `muse batch --queue` prints the batch ID
// on the last line; two `muse worker` processes check every post once
// (counted at the model); `muse batch status` and `muse batch results`
// report them; SIGTERM stops the workers cleanly. On SQLite here, and on
// the newsroom's PostgreSQL when a test cluster is configured.
func TestQueuedBatchThroughWorkers(t *testing.T) {
	queueDatabases(t, func(t *testing.T, db string) {
		w := testworld.New(t, nil)
		env := queueEnv(w, w.Cfg.OpenAIBaseURL, db)
		id := enqueuePosts(t, env, "", " Share!", " RT", "") // the last repeats the first
		workers := []*exec.Cmd{startWorker(t, env, "-j", "2"), startWorker(t, env, "-j", "2")}
		if st := waitBatch(t, env, id, 60*time.Second); st.Total != 4 || st.Done != 4 {
			t.Fatalf("status %+v, want 4 done", st)
		}
		if n := callsPerTask(w.LLM)["queries"]; n != 3 {
			t.Errorf("%d query calls for 3 distinct posts: a post was checked twice or not at all", n)
		}
		rs := batchResults(t, env, id)
		if len(rs) != 4 {
			t.Fatalf("%d results, want 4", len(rs))
		}
		for i, r := range rs {
			if r.Line != i+1 || r.Status != "done" || r.Check == nil || !strings.HasPrefix(r.Check.Correction.Text, "This post is") {
				t.Errorf("result %d: %+v", i, r)
			}
		}
		stopWorkers(t, workers...)
		if _, errOut, code := muse(t, "", env, "batch", "status", "b-20000101-000000-00000000"); code != 2 || !strings.Contains(errOut, "no such batch") {
			t.Errorf("unknown batch: exit %d\n%s", code, errOut)
		}
	})
}

// TestQueuedBatchCarriesItsOptions: the flags `muse batch --queue` is
// given reach the worker that checks its posts, as they would `muse batch`
// without a queue: --hits 1 asks the search for one hit per query,
// --correction-language es has the correction written in Spanish, --no-llm
// calls no model, --no-save keeps no case; a batch queued without them is
// checked with the defaults. One worker serves all four batches.
func TestQueuedBatchCarriesItsOptions(t *testing.T) {
	queueDatabases(t, func(t *testing.T, db string) {
		w := testworld.New(t, nil)
		env := queueEnv(w, w.Cfg.OpenAIBaseURL, db)
		ids := []string{
			enqueuePostsWith(t, env, []string{"--hits", "1", "--correction-language", "Spanish"}, ""),
			enqueuePostsWith(t, env, []string{"--no-llm"}, " Share!"),
			enqueuePosts(t, env, " RT"),
			enqueuePostsWith(t, env, []string{"--no-save"}, " Wow"),
		}
		worker := startWorker(t, env, "-j", "2")
		var checks []*pipeline.Check
		for _, id := range ids {
			if st := waitBatch(t, env, id, 60*time.Second); st.Done != 1 {
				t.Fatalf("batch %s: %+v, want 1 done", id, st)
			}
			rs := batchResults(t, env, id)
			if len(rs) != 1 || rs[0].Check == nil {
				t.Fatalf("batch %s results %+v", id, rs)
			}
			checks = append(checks, rs[0].Check)
		}
		stopWorkers(t, worker)
		if n := testworld.MostHitsPerQuery(checks[0]); n != 1 {
			t.Errorf("--hits 1: a query got %d hits", n)
		}
		if n := testworld.MostHitsPerQuery(checks[2]); n < 2 {
			t.Errorf("defaults: a query got at most %d hits, want the world's 4", n)
		}
		if !checks[1].NoLLM || checks[1].Usage.LLMCalls != 0 || checks[0].NoLLM || checks[2].NoLLM {
			t.Errorf("no_llm %t/%t/%t; the --no-llm check made %d model calls", checks[0].NoLLM, checks[1].NoLLM, checks[2].NoLLM, checks[1].Usage.LLMCalls)
		}
		// The world's model writes English whatever it is asked, so muse
		// asks for the Spanish correction once more (and then warns).
		if spanish, other := testworld.CorrectionsIn(w.LLM, "Spanish (es)"); spanish != 2 || other != 2 {
			t.Errorf("correction calls: %d asking for Spanish, %d not; want 2 and 2", spanish, other)
		}
		out, errOut, code := muse(t, "", env, "cases", "--json")
		var kept []cases.Summary
		if code != 0 || json.Unmarshal([]byte(out), &kept) != nil {
			t.Fatalf("cases: exit %d %q\n%s", code, out, errOut)
		}
		keptIDs := map[string]bool{}
		for _, sm := range kept {
			keptIDs[sm.ID] = true
		}
		if !keptIDs[checks[0].ID] || !keptIDs[checks[2].ID] || keptIDs[checks[3].ID] {
			t.Errorf("cases kept %v; want the checks %s and %s kept and %s (--no-save) not", keptIDs, checks[0].ID, checks[2].ID, checks[3].ID)
		}
	})
}

// TestWorkerWithoutAModel: a `muse worker` with no model configured (no
// OPENAI_*, no Ollama) starts; it checks the post queued with --no-llm in
// the extractive mode and fails the one queued to be checked with a model
// at once, saying why, in `muse batch status` and `muse batch results`; it
// keeps working after that failure and stops cleanly on SIGTERM.
func TestWorkerWithoutAModel(t *testing.T) {
	queueDatabases(t, func(t *testing.T, db string) {
		w := testworld.New(t, nil)
		env := queueEnv(w, w.Cfg.OpenAIBaseURL, db) // the newsroom queues with a model
		needs := enqueuePosts(t, env, "")
		extractive := enqueuePostsWith(t, env, []string{"--no-llm"}, " Share!")
		worker := startWorker(t, append(env, "OPENAI_BASE_URL=", "OPENAI_API_KEY=", "MUSE_MODEL=", "OLLAMA_HOST=http://127.0.0.1:1"), "-j", "1")
		if st := waitBatch(t, env, extractive, 60*time.Second); st.Total != 1 || st.Done != 1 {
			t.Fatalf("the --no-llm batch: %+v, want 1 done", st)
		}
		rs := batchResults(t, env, extractive)
		if len(rs) != 1 || rs[0].Status != "done" || rs[0].Check == nil || !rs[0].Check.NoLLM {
			t.Fatalf("the --no-llm batch: results %+v", rs)
		}
		if n := len(w.LLM.ChatCalls()); n != 0 {
			t.Errorf("%d model calls", n)
		}
		if worker.ProcessState != nil {
			t.Fatalf("the worker exited: %v", worker.ProcessState)
		}
		// The post needing a model waits for a worker that has one.
		time.Sleep(time.Second) // the worker polls its queue every 200 ms
		var st jobs.Status
		if out, errOut, code := muse(t, "", env, "batch", "status", "--json", needs); code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("status: exit %d %q\n%s", code, out, errOut)
		}
		if st.Total != 1 || st.Queued != 1 {
			t.Errorf("the batch needing a model, with only a model-less worker: %+v, want 1 queued", st)
		}
		withModel := startWorker(t, env, "-j", "1")
		if st := waitBatch(t, env, needs, 60*time.Second); st.Total != 1 || st.Done != 1 {
			t.Errorf("the batch needing a model, once a worker with one runs: %+v, want 1 done", st)
		}
		if rs := batchResults(t, env, needs); len(rs) != 1 || rs[0].Check == nil || rs[0].Check.NoLLM || len(w.LLM.ChatCalls()) == 0 {
			t.Errorf("the batch needing a model: results %+v, %d model calls", rs, len(w.LLM.ChatCalls()))
		}
		stopWorkers(t, worker, withModel)
	})
}

// TestProxySSRFThroughTheBinary: with HTTP_PROXY set to a proxy that reads
// hosts the getaddrinfo way, loopback spelled as inet_aton does (127.1,
// 2130706433, 0x7f.1, 0177.0.0.1) is refused by muse before anything is
// sent, whether it comes as a page to extract, a page to archive, an image
// or a post URL: the internal service sees no connection.
func TestProxySSRFThroughTheBinary(t *testing.T) {
	isolate(t)
	port, conns := fetchtest.Internal(t)
	proxy := fetchtest.StartForwarding(t, http.NotFoundHandler())
	sx := testworld.SearXNG(t, func(string) []string { return nil })
	env := []string{"HTTP_PROXY=" + proxy.URL.String(), "HTTPS_PROXY=" + proxy.URL.String(), "SEARXNG_URL=" + sx.URL}
	for _, host := range []string{"127.1", "2130706433", "0x7f.1", "0177.0.0.1", "127.000.000.001"} {
		u := "http://" + host + ":" + port + "/admin"
		for _, args := range [][]string{{"extract", u}, {"archive", "add", u}, {"check", "--no-llm", "--no-save", "--image", u + ".png", "a post with a picture"}} {
			_, errOut, code := muse(t, "", env, args...)
			if code == 0 && args[0] != "check" {
				t.Errorf("muse %s: exit 0", strings.Join(args, " "))
			}
			if !strings.Contains(errOut, "loopback address") {
				t.Errorf("muse %s: stderr does not say the address is refused:\n%s", strings.Join(args, " "), errOut)
			}
		}
	}
	if n := conns(); n != 0 || proxy.Forwarded() != 0 {
		t.Errorf("the internal service saw %d connections, the proxy forwarded %d", n, proxy.Forwarded())
	}
}

// --language and --correction-language take a language in any usual
// spelling; anything else is a usage error before any work.
func TestLanguageFlag(t *testing.T) {
	isolate(t)
	_, errOut, code := muse(t, "", nil, "check", "--no-llm", "--language", "klingon-x", "a post")
	if code != 2 || !strings.Contains(errOut, "--language") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
	_, errOut, code = muse(t, "", nil, "check", "--no-llm", "--correction-language", "klingon-x", "a post")
	if code != 2 || !strings.Contains(errOut, "--correction-language") {
		t.Errorf("exit %d\n%s", code, errOut)
	}
}

// TestTwoCheckersOnOneDatabase: two `muse check` processes with different
// MUSE_USER run at once on one PostgreSQL database; a third muse lists both
// cases with the right created_by, --mine and --by filter them, and the
// case's trail says who ran and exported it.
func TestTwoCheckersOnOneDatabase(t *testing.T) {
	db := pgdbtest.Fresh(t)
	isolate(t)
	w := testworld.New(t, nil)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_DATABASE_URL=" + db}
	posts := map[string]string{"alice": testworld.Post, "bob": testworld.Post + " Share!"}
	type kept struct{ user, id string }
	done := make(chan kept, len(posts))
	for user, post := range posts {
		go func() {
			out, errOut, code := muse(t, "", append(env, "MUSE_USER="+user), "check", "--json", "--before", testworld.Cutoff.Format(time.RFC3339), post)
			var c pipeline.Check
			if code != 0 || json.Unmarshal([]byte(out), &c) != nil || c.ID == "" || !strings.Contains(errOut, "kept as case "+c.ID) {
				t.Errorf("%s's check: exit %d\n%s", user, code, errOut)
				done <- kept{user, ""}
				return
			}
			done <- kept{user, c.ID}
		}()
	}
	ids := map[string]string{}
	for range posts {
		k := <-done
		ids[k.user] = k.id
	}
	if t.Failed() {
		t.FailNow()
	}
	list := func(args ...string) map[string]cases.Summary {
		t.Helper()
		out, errOut, code := muse(t, "", append(env, "MUSE_USER=carol"), append([]string{"cases", "--json"}, args...)...)
		var l []cases.Summary
		if code != 0 || json.Unmarshal([]byte(out), &l) != nil {
			t.Fatalf("cases %v: exit %d %q\n%s", args, code, out, errOut)
		}
		byID := map[string]cases.Summary{}
		for _, sm := range l {
			byID[sm.ID] = sm
		}
		return byID
	}
	all := list()
	if len(all) != 2 {
		t.Fatalf("a third muse lists %d cases, want both: %+v", len(all), all)
	}
	for user, id := range ids {
		if sm := all[id]; sm.CreatedBy != user || sm.UpdatedBy != user || !strings.HasPrefix(sm.CorrectionLine, "This post is") {
			t.Errorf("%s's case listed as %+v", user, sm)
		}
	}
	if l := list("--by", "bob"); len(l) != 1 || l[ids["bob"]].CreatedBy != "bob" {
		t.Errorf("--by bob: %+v", l)
	}
	if l := list("--mine"); len(l) != 0 {
		t.Errorf("--mine as carol, who made none: %+v", l)
	}
	out, errOut, code := muse(t, "", append(env, "MUSE_USER=alice"), "cases", "--json", "--mine")
	var mine []cases.Summary
	if code != 0 || json.Unmarshal([]byte(out), &mine) != nil || len(mine) != 1 || mine[0].ID != ids["alice"] {
		t.Errorf("--mine as alice: exit %d %q\n%s", code, out, errOut)
	}
	if _, errOut, code := muse(t, "", append(env, "MUSE_USER=carol"), "cases", "export", ids["alice"], "--format", "md"); code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	out, errOut, code = muse(t, "", env, "cases", "log", "--json", ids["alice"])
	var trail []cases.Entry
	if code != 0 || json.Unmarshal([]byte(out), &trail) != nil {
		t.Fatalf("cases log: exit %d %q\n%s", code, out, errOut)
	}
	var got []string
	for _, e := range trail {
		got = append(got, e.User+" "+e.Action)
	}
	if strings.Join(got, ", ") != "alice created, alice ran, carol exported" {
		t.Errorf("trail of alice's case: %v", got)
	}
	if out, _, code := muse(t, "", env, "cases", "log", ids["bob"]); code != 0 || !strings.Contains(out, "bob") || !strings.Contains(out, "ran") {
		t.Errorf("cases log (table): exit %d\n%s", code, out)
	}
}

// queueDatabases runs test on the SQLite queue and, when a test cluster is
// configured, on a fresh PostgreSQL database (db is its URL; "" for
// SQLite), each in an isolated environment.
func queueDatabases(t *testing.T, test func(t *testing.T, db string)) {
	t.Run("sqlite", func(t *testing.T) { isolate(t); test(t, "") })
	t.Run("postgres", func(t *testing.T) {
		isolate(t)
		test(t, pgdbtest.Fresh(t)) // skips, saying so, without a cluster
	})
}

// queueEnv is the environment of muse processes working a queue in the
// world w, with its model at modelURL and the queue (and ledger) in db.
// The response cache is off, so every model call the test counts reaches
// the model.
func queueEnv(w *testworld.Env, modelURL, db string) []string {
	return []string{"OPENAI_BASE_URL=" + modelURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_DATABASE_URL=" + db, "MUSE_NO_CACHE=1"}
}

// enqueuePosts queues one post per suffix of the world's post with
// `muse batch - --queue` and returns the batch ID.
func enqueuePosts(t testing.TB, env []string, suffixes ...string) string {
	t.Helper()
	return enqueuePostsWith(t, env, nil, suffixes...)
}

// enqueuePostsWith is enqueuePosts with more flags of muse batch.
func enqueuePostsWith(t testing.TB, env []string, flags []string, suffixes ...string) string {
	t.Helper()
	var posts strings.Builder
	for _, s := range suffixes {
		b, _ := json.Marshal(map[string]string{"text": testworld.Post + s, "posted_at": testworld.Cutoff.Format(time.RFC3339)})
		posts.Write(append(b, '\n'))
	}
	out, errOut, code := muse(t, posts.String(), env, append([]string{"batch", "-", "--queue"}, flags...)...)
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if id := lines[len(lines)-1]; code == 0 && batch.IsBatchID(id) {
		return id
	}
	t.Fatalf("batch --queue: exit %d, stdout %q\n%s", code, out, errOut)
	return ""
}

// startWorker starts `muse worker args...`; the test's end kills it if it
// is still running. Its stderr is logged when the test fails.
func startWorker(t testing.TB, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], append([]string{"worker"}, args...)...)
	cmd.Env = append(append(os.Environ(), "MUSE_TEST_AS_MUSE=1"), env...)
	stderr := &syncBuffer{}
	cmd.Stderr = stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		cmd.Process.Kill()
		cmd.Wait()
		if t.Failed() {
			t.Logf("worker %d stderr:\n%s", cmd.Process.Pid, stderr.String())
		}
	})
	return cmd
}

// stopWorkers sends SIGTERM to the workers and waits for each to exit.
func stopWorkers(t testing.TB, workers ...*exec.Cmd) {
	t.Helper()
	for _, cmd := range workers {
		cmd.Process.Signal(syscall.SIGTERM)
	}
	for _, cmd := range workers {
		done := make(chan error, 1)
		go func() { done <- cmd.Wait() }()
		select {
		case err := <-done:
			if err != nil {
				t.Errorf("worker after SIGTERM: %v", err)
			}
		case <-time.After(40 * time.Second):
			t.Error("a worker did not stop on SIGTERM")
		}
	}
}

// waitBatch polls `muse batch status --json` until nothing of the batch is
// queued or running, failing the test after within.
func waitBatch(t testing.TB, env []string, id string, within time.Duration) jobs.Status {
	t.Helper()
	deadline := time.Now().Add(within)
	for {
		var st jobs.Status
		out, errOut, code := muse(t, "", env, "batch", "status", "--json", id)
		if code != 0 || json.Unmarshal([]byte(out), &st) != nil {
			t.Fatalf("status: exit %d %q\n%s", code, out, errOut)
		}
		if st.Queued+st.Running == 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch not finished within %v: %+v", within, st)
		}
		time.Sleep(300 * time.Millisecond)
	}
}

// batchResults is `muse batch results ID`, decoded.
func batchResults(t *testing.T, env []string, id string) []batch.Result {
	t.Helper()
	out, errOut, code := muse(t, "", env, "batch", "results", id)
	if code != 0 {
		t.Fatalf("results: exit %d\n%s", code, errOut)
	}
	var rs []batch.Result
	for l := range strings.Lines(out) {
		var r batch.Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result line %q: %v", l, err)
		}
		rs = append(rs, r)
	}
	return rs
}

// callsPerTask counts the model's chat requests so far by task: the
// schema's name, or "correction" for the streamed note, which has none.
func callsPerTask(srv *llmtest.Server) map[string]int {
	n := map[string]int{}
	for _, c := range srv.ChatCalls() {
		n[cmp.Or(llmtest.SchemaName(*c.Chat), "correction")]++
	}
	return n
}

// TestKilledWorkerJobFinishedByAnother: a `muse worker` killed with SIGKILL
// while its correction call is in flight (the model holds the call until
// told) leaves the job to River's rescuer (MUSE_QUEUE_RESCUE_AFTER=10s
// here), and a second worker on the same database finishes it, resuming
// the saved case: the model sees one queries call, the evidence calls of
// one check, and two correction calls (the killed one and the one that
// finished). One case holds the check.
func TestKilledWorkerJobFinishedByAnother(t *testing.T) {
	queueDatabases(t, func(t *testing.T, db string) {
		w := testworld.New(t, nil)
		inFlight, release := make(chan struct{}), make(chan struct{})
		var corrections atomic.Int32
		srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
			if llmtest.SchemaName(req) == "" && corrections.Add(1) == 1 {
				close(inFlight)
				<-release
			}
			return w.Model.Handle(req)
		})
		t.Cleanup(func() { close(release) }) // before the server closes
		env := append(queueEnv(w, srv.BaseURL, db), "MUSE_QUEUE_RESCUE_AFTER=10s")
		id := enqueuePosts(t, env, "")
		first := startWorker(t, env, "-j", "1")
		select {
		case <-inFlight:
		case <-time.After(60 * time.Second):
			t.Fatal("the first worker's correction call never came")
		}
		atKill := callsPerTask(srv)
		second := startWorker(t, env, "-j", "1")
		if err := first.Process.Kill(); err != nil { // SIGKILL, mid-call
			t.Fatal(err)
		}
		first.Wait()
		t0 := time.Now()
		st := waitBatch(t, env, id, 90*time.Second)
		t.Logf("the job was finished %.1fs after the kill", time.Since(t0).Seconds())
		if st.Total != 1 || st.Done != 1 {
			t.Fatalf("status %+v, want the job done", st)
		}
		got := callsPerTask(srv)
		if got["queries"] != 1 || got["evidence"] != atKill["evidence"] || got["evidence"] == 0 || got["correction"] != 2 {
			t.Errorf("model calls per stage %v (at the kill %v); want 1 queries call, the evidence calls unrepeated and 2 correction calls", got, atKill)
		}
		rs := batchResults(t, env, id)
		if len(rs) != 1 || rs[0].Status != "done" || rs[0].Check == nil || !strings.HasPrefix(rs[0].Check.Correction.Text, "This post is") {
			t.Fatalf("results %+v", rs)
		}
		out, errOut, code := muse(t, "", env, "cases", "--json")
		var list []cases.Summary
		if err := json.Unmarshal([]byte(out), &list); err != nil || code != 0 || len(list) != 1 || list[0].ID != rs[0].Check.ID {
			t.Errorf("cases: exit %d, %v, %s\n%s; want the one case %s", code, err, out, errOut, rs[0].Check.ID)
		}
		stopWorkers(t, second)
	})
}

// TestDayCapHeldByFourWorkers: four `muse worker` processes share the day
// cap through the ledger on the shared database: what the ledger holds
// (settled calls and the reservations in flight), sampled throughout, never
// passes the cap, nor does what the finished checks cost; the cap stops
// some posts and each of them fails at once with the cap's reason.
func TestDayCapHeldByFourWorkers(t *testing.T) {
	queueDatabases(t, func(t *testing.T, db string) {
		w := testworld.New(t, nil)
		const capUSD = 0.10 // about four checks' calls at the price below
		conf := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "muse", "config.toml")
		if err := os.MkdirAll(filepath.Dir(conf), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(conf, []byte("[prices.\"test-model\"]\nprompt = 10.0\ncompletion = 10.0\n"), 0o644); err != nil {
			t.Fatal(err)
		}
		// Pages cut to 250 tokens: the evidence call of a check whose pages
		// go whole would cost more than the cap on its own.
		env := append(queueEnv(w, w.Cfg.OpenAIBaseURL, db), fmt.Sprintf("MUSE_SPEND_CAP_DAY_USD=%.2f", capUSD), "MUSE_EVIDENCE_PAGE_TOKENS=250")
		id := enqueuePosts(t, env, " #1", " #2", " #3", " #4", " #5", " #6", " #7", " #8", " #9", " #10", " #11", " #12")
		ledger, err := spend.Open(context.Background(), cmp.Or(db, filepath.Join(os.Getenv("XDG_DATA_HOME"), "muse", "spend.db")))
		if err != nil {
			t.Fatal(err)
		}
		defer ledger.Close()
		var workers []*exec.Cmd
		for range 4 {
			workers = append(workers, startWorker(t, env, "-j", "2"))
		}
		var most atomic.Value // the most the ledger held, sampled every 10 ms
		most.Store(0.0)
		samples := 0
		stop, sampled := make(chan struct{}), make(chan struct{})
		go func() {
			defer close(sampled)
			for {
				if spent, err := ledger.Today(context.Background()); err == nil {
					most.Store(max(most.Load().(float64), spent))
					samples++
				}
				select {
				case <-stop:
					return
				case <-time.After(10 * time.Millisecond):
				}
			}
		}()
		st := waitBatch(t, env, id, 120*time.Second)
		stopWorkers(t, workers...)
		close(stop)
		<-sampled
		spent, err := ledger.Today(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		if m := max(most.Load().(float64), spent); m > capUSD+1e-9 {
			t.Errorf("the ledger held $%.4f with a $%.2f cap", m, capUSD)
		}
		rs := batchResults(t, env, id)
		checks, calls := 0.0, 0
		for _, r := range rs {
			if r.Check != nil {
				checks += r.Check.Usage.CostUSD
				calls += r.Check.Usage.LLMCalls
			}
			if r.Status != "done" && !strings.Contains(r.Error, fmt.Sprintf("spend cap of $%.2f per day reached", capUSD)) {
				t.Errorf("line %d failed for another reason than the cap: %s", r.Line, r.Error)
			}
		}
		if checks > capUSD+1e-9 || math.Abs(checks-spent) > 1e-6 {
			t.Errorf("the checks cost $%.4f, the ledger holds $%.4f, with a $%.2f cap: want the same, within the cap", checks, spent, capUSD)
		}
		if st.Done == 0 || st.Failed == 0 || st.Done+st.Failed != 12 {
			t.Errorf("status %+v: want some posts checked and the rest stopped by the cap", st)
		}
		t.Logf("%d done, %d stopped by the cap; %d model calls, $%.4f in the checks, the ledger at most $%.4f over %d samples (cap $%.2f)",
			st.Done, st.Failed, calls, checks, most.Load(), samples, capUSD)
	})
}

// BenchmarkQueueThroughput: posts per minute checked by 1, 2 and 4 `muse
// worker` processes (-j 1 each) with a loopback model that answers every
// call after 1 s, against the latency-bound ideal: a check's model calls
// one after the other (a text post's: queries, evidence, correction and
// the support map's judgement, 4 s), the rest taken as free, so that a
// worker checks at most 15 posts a minute. The calls are counted as the
// model receives them (calls that overlap count once), so the ideal moves
// with the pipeline. Each worker gets 5 posts, twice:
//
//   - of-ideal: a newsroom's workers run all day, so the posts are
//     enqueued while the workers are up and waiting on the queue (started,
//     then left idle for queueSettle); the clock runs from the first post's
//     enqueueing (its job's created_at) to the last check's end.
//   - cold-of-ideal: the posts are enqueued first and the workers started
//     after; the clock runs from the workers' start (process start-up
//     included) to the last check's end.
//   - steady-of-ideal (of the cold run) leaves out what the ideal cannot
//     hold and a long-running worker pays once: each worker's start-up
//     before its first job, and the wait of workers that ran out of jobs
//     for the last ones to finish (each worker's first job to its last).
//
// The log says where the seconds went (model calls, the rest of each
// check and its slowest stages, between jobs, start-up or the wait for the
// first job). On the SQLite queue and, with MUSE_TEST_DATABASE_URL, on
// PostgreSQL. On demand only (a minute or two of wall time per engine):
//
//	MUSE_QUEUE_BENCH=1 go test -run '^$' -bench QueueThroughput -benchtime 1x .
func BenchmarkQueueThroughput(b *testing.B) {
	if os.Getenv("MUSE_QUEUE_BENCH") != "1" {
		b.Skip("set MUSE_QUEUE_BENCH=1 to run worker processes against a 1 s model (a minute or two)")
	}
	const perWorker, call = 5, time.Second
	for _, engine := range []string{"sqlite", "postgres"} {
		for _, workers := range []int{1, 2, 4} {
			b.Run(fmt.Sprintf("%s/workers=%d", engine, workers), func(b *testing.B) {
				isolate(b)
				db := ""
				if engine == "postgres" {
					db = pgdbtest.Fresh(b)
				}
				w := testworld.New(b, nil, llmtest.WithDelay(call))
				model := newCallLog(b, w.Cfg.OpenAIBaseURL)
				env := queueEnv(w, model.BaseURL, db)
				q, err := jobs.Open(context.Background(), jobs.Options{DatabaseURL: db,
					Path: filepath.Join(os.Getenv("XDG_DATA_HOME"), "muse", "queue.db")})
				if err != nil {
					b.Fatal(err)
				}
				defer q.Close()
				tags := func(run int) []string {
					var suffixes []string
					for p := range perWorker * workers {
						suffixes = append(suffixes, fmt.Sprintf(" #%d-%d", run, p))
					}
					return suffixes
				}
				var cold, waiting queueRun
				b.ResetTimer()
				for i := range b.N {
					// Cold: the posts wait for the workers to start.
					id := enqueuePosts(b, env, tags(2*i)...)
					t0 := time.Now()
					var procs []*exec.Cmd
					for range workers {
						procs = append(procs, startWorker(b, env, "-j", "1"))
					}
					rs := waitQueued(b, q, id)
					stopWorkers(b, procs...)
					cold.add(b, rs, model.calls(), t0, workers)

					// Waiting: the workers wait for the posts.
					procs = procs[:0]
					for range workers {
						procs = append(procs, startWorker(b, env, "-j", "1"))
					}
					workersReady(b, procs...)
					time.Sleep(queueSettle)
					id = enqueuePosts(b, env, tags(2*i+1)...)
					rs = waitQueued(b, q, id)
					stopWorkers(b, procs...)
					t0 = rs[0].Queued
					for _, r := range rs {
						if r.Queued.Before(t0) {
							t0 = r.Queued
						}
					}
					waiting.add(b, rs, model.calls(), t0, workers)
				}
				b.StopTimer()
				posts := cold.posts + waiting.posts
				callsPerCheck := float64(cold.times.waves+waiting.times.waves) / float64(posts)
				ideal := float64(workers) * time.Minute.Seconds() / (callsPerCheck * call.Seconds())
				b.ReportMetric(callsPerCheck, "calls/check")
				b.ReportMetric(waiting.perMin(), "posts/min")
				b.ReportMetric(ideal, "ideal-posts/min")
				b.ReportMetric(waiting.perMin()/ideal, "of-ideal")
				b.ReportMetric(cold.perMin()/ideal, "cold-of-ideal")
				b.ReportMetric(float64(cold.posts)/cold.busy.Minutes()/ideal, "steady-of-ideal")
				b.Logf("workers waiting, %d posts, %d workers, %.1fs from the first enqueued: %s", waiting.posts, workers,
					waiting.elapsed.Seconds(), waiting.times.explain(waiting.posts, workers, "from the first post enqueued to its first job"))
				b.Logf("cold, %d posts, %d workers, %.1fs from the workers' start: %s", cold.posts, workers,
					cold.elapsed.Seconds(), cold.times.explain(cold.posts, workers, "start-up to the first job"))
			})
		}
	}
}

// queueSettle is how long BenchmarkQueueThroughput's waiting workers wait
// on the queue, once they say they are checking queued posts, before the
// posts are enqueued: their River clients are up, listening and polling.
const queueSettle = 2 * time.Second

// queueRun sums the runs of one kind of BenchmarkQueueThroughput: the
// posts, the seconds from the clock's start to the last check's end, the
// workers' seconds from their first job to their last, and where the
// seconds went.
type queueRun struct {
	posts         int
	elapsed, busy time.Duration
	times         queueTimes
}

// add counts a run whose clock started at t0, from its jobs rs.
func (r *queueRun) add(t testing.TB, rs []jobs.Result, calls []modelCall, t0 time.Time, workers int) {
	t.Helper()
	// The batch ended when its last job did (rather than when the poll
	// saw it).
	var t1 time.Time
	for _, j := range rs {
		if j.Finished != nil && j.Finished.After(t1) {
			t1 = *j.Finished
		}
	}
	r.posts += len(rs)
	r.elapsed += t1.Sub(t0)
	qt := timesOf(t, rs, calls, t0, t1)
	r.busy += qt.busy / time.Duration(workers)
	r.times.add(qt)
}

func (r queueRun) perMin() float64 { return float64(r.posts) / r.elapsed.Minutes() }

// waitQueued polls the queue, every 200 ms so as to weigh little on the
// workers, until the batch id is done, and returns its jobs.
func waitQueued(t testing.TB, q *jobs.Queue, id string) []jobs.Result {
	t.Helper()
	for {
		rs, err := q.Results(context.Background(), id)
		if err != nil {
			t.Fatal(err)
		}
		if !slices.ContainsFunc(rs, func(r jobs.Result) bool { return r.State == jobs.Queued || r.State == jobs.Running }) {
			for _, r := range rs {
				if r.State != jobs.Done {
					t.Fatalf("line %d: %s (%s)", r.Line, r.State, r.Error)
				}
			}
			return rs
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// workersReady waits until each worker says it is checking queued posts.
func workersReady(t testing.TB, workers ...*exec.Cmd) {
	t.Helper()
	deadline := time.Now().Add(60 * time.Second)
	for _, cmd := range workers {
		for !strings.Contains(cmd.Stderr.(*syncBuffer).String(), "worker checking queued posts") {
			if time.Now().After(deadline) {
				t.Fatalf("worker %d not ready within a minute", cmd.Process.Pid)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
}

// syncBuffer is a bytes.Buffer a process writes while a test reads it.
type syncBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// callLog stands in front of a model server and notes when each of its
// calls started and ended, and for which post (the bench's "#i-p" in the
// request).
type callLog struct {
	BaseURL string
	mu      sync.Mutex
	log     []modelCall
}

type modelCall struct {
	post       string
	start, end time.Time
}

var benchPostTag = regexp.MustCompile(`#\d+-\d+`)

func newCallLog(t testing.TB, baseURL string) *callLog {
	u, err := url.Parse(baseURL)
	if err != nil {
		t.Fatal(err)
	}
	l := &callLog{}
	proxy := httputil.NewSingleHostReverseProxy(&url.URL{Scheme: u.Scheme, Host: u.Host})
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		start := time.Now()
		proxy.ServeHTTP(w, r)
		if r.Method == http.MethodPost {
			l.mu.Lock()
			l.log = append(l.log, modelCall{string(benchPostTag.Find(body)), start, time.Now()})
			l.mu.Unlock()
		}
	}))
	t.Cleanup(srv.Close)
	l.BaseURL = srv.URL + u.Path
	return l
}

func (l *callLog) calls() []modelCall {
	l.mu.Lock()
	defer l.mu.Unlock()
	return slices.Clone(l.log)
}

// queueTimes sums where a queued batch's worker-seconds went: each
// worker's start-up before its first job, the jobs (their model calls
// and the rest), the time between a worker's jobs, and its wait at the
// end for the others.
type queueTimes struct {
	startup, model, rest, between, tail, busy time.Duration
	// calls are the model calls; waves count calls that overlap once.
	calls, waves, jobs, runs int
	maxStartup               time.Duration
	// stages sums the checks' seconds by stage, as each check counts them.
	stages map[string]float64
	// gaps sums, by place, the time no model call of a check was in
	// flight: before its first call, between its first and second wave of
	// calls, and so on, and after its last.
	gaps []time.Duration
}

func (q *queueTimes) gap(i int, d time.Duration) {
	for len(q.gaps) <= i {
		q.gaps = append(q.gaps, 0)
	}
	q.gaps[i] += d
}

func (q *queueTimes) add(o queueTimes) {
	q.startup += o.startup
	q.model += o.model
	q.rest += o.rest
	q.between += o.between
	q.tail += o.tail
	q.busy += o.busy
	q.calls += o.calls
	q.waves += o.waves
	q.jobs += o.jobs
	q.runs += o.runs
	q.maxStartup = max(q.maxStartup, o.maxStartup)
	if q.stages == nil {
		q.stages = map[string]float64{}
	}
	for st, s := range o.stages {
		q.stages[st] += s
	}
	for i, d := range o.gaps {
		q.gap(i, d)
	}
}

// timesOf reads the batch's jobs (when each started and ended, on which
// worker) and the model's calls between t0 (the workers' start) and t1
// (the batch seen done).
func timesOf(t testing.TB, rs []jobs.Result, calls []modelCall, t0, t1 time.Time) queueTimes {
	q := queueTimes{runs: 1, stages: map[string]float64{}}
	byWorker := map[string][]jobs.Result{}
	for _, r := range rs {
		if r.Started == nil || r.Finished == nil || r.Worker == "" || r.Tries != 1 {
			t.Fatalf("job %d: started %v, finished %v, worker %q, %d attempts", r.JobID, r.Started, r.Finished, r.Worker, r.Tries)
		}
		byWorker[r.Worker] = append(byWorker[r.Worker], r)
	}
	byPost := map[string][]modelCall{}
	for _, c := range calls {
		if c.start.After(t0) {
			byPost[c.post] = append(byPost[c.post], c)
		}
	}
	for _, js := range byWorker {
		slices.SortFunc(js, func(a, b jobs.Result) int { return a.Started.Compare(*b.Started) })
		up := js[0].Started.Sub(t0)
		q.startup += up
		q.maxStartup = max(q.maxStartup, up)
		q.tail += t1.Sub(*js[len(js)-1].Finished)
		q.busy += js[len(js)-1].Finished.Sub(*js[0].Started)
		for i, j := range js {
			if i > 0 {
				q.between += j.Started.Sub(*js[i-1].Finished)
			}
			var out struct {
				Check struct {
					Post   struct{ Text string }
					Stages []pipeline.StageInfo
				} `json:"check"`
			}
			json.Unmarshal(j.Output, &out)
			for _, st := range out.Check.Stages {
				q.stages[string(st.Stage)] += st.Seconds
			}
			tag := benchPostTag.FindString(out.Check.Post.Text)
			cs := byPost[tag]
			if tag == "" || len(cs) == 0 {
				t.Fatalf("job %d (post %q): no model call of its own", j.JobID, tag)
			}
			slices.SortFunc(cs, func(a, b modelCall) int { return a.start.Compare(b.start) })
			var inCalls time.Duration // the time some call of the job was in flight
			last, wave := *j.Started, 0
			for _, c := range cs {
				if !c.start.Before(last) {
					q.gap(wave, c.start.Sub(last))
					q.waves++
					wave++
					inCalls += c.end.Sub(c.start)
				} else if c.end.After(last) {
					inCalls += c.end.Sub(last)
				}
				if c.end.After(last) {
					last = c.end
				}
				q.calls++
			}
			q.gap(wave, j.Finished.Sub(last))
			q.model += inCalls
			q.rest += j.Finished.Sub(*j.Started) - inCalls
			q.jobs++
		}
	}
	return q
}

// explain says where the worker-seconds went, per check.
// first names the time before each worker's first job.
func (q queueTimes) explain(posts, workers int, first string) string {
	per := func(d time.Duration) string { return fmt.Sprintf("%.2fs", d.Seconds()/float64(posts)) }
	var stages []string
	for _, st := range pipeline.Stages {
		if s, ok := q.stages[string(st)]; ok {
			stages = append(stages, fmt.Sprintf("%s %.2fs", st, s/float64(posts)))
		}
	}
	var gaps []string
	for _, d := range q.gaps {
		gaps = append(gaps, per(d))
	}
	n := float64(workers * max(q.runs, 1))
	return fmt.Sprintf("per check: %.2f model calls in flight for %s, the rest of the check %s (before, between and after the waves of calls: %s; "+
		"by stage, model calls included: %s), between jobs %s; per worker: %s %.2fs (longest %.2fs), idle at the end %.2fs",
		float64(q.calls)/float64(posts), per(q.model), per(q.rest), strings.Join(gaps, " | "), strings.Join(stages, ", "), per(q.between),
		first, q.startup.Seconds()/n, q.maxStartup.Seconds(), q.tail.Seconds()/n)
}

// TestArchiveAddClaimReview: fact-checks imported with `muse archive add
// --claimreview` from a file (a Data Commons DataFeed) and a URL (a saved
// Fact Check Tools answer) are shown first by a check of a post that
// repeats their claim.
func TestArchiveAddClaimReview(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	reuters := testworld.PageURL("www.reuters.com", w.Pages["www.reuters.com"])
	feed := filepath.Join(t.TempDir(), "feed.json")
	os.WriteFile(feed, []byte(`{"@context": "https://schema.org", "@type": "DataFeed", "dataFeedElement": [
  {"@type": "DataFeedItem", "item": [{"@type": "ClaimReview", "url": "`+reuters+`",
    "claimReviewed": "Springfield city council banned bicycles from Main Street", "datePublished": "2024-01-20",
    "author": {"@type": "Organization", "name": "Reuters"}, "reviewRating": {"@type": "Rating", "alternateName": "False"}}]}]}`), 0o644)
	api := httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		rw.Header().Set("Content-Type", "application/json")
		io.WriteString(rw, `{"claims": [{"text": "5G towers spread the coronavirus", "claimReview": [{"publisher": {"name": "PolitiFact"},
  "url": "https://www.politifact.com/factchecks/2020/may/01/5g/", "reviewDate": "2020-05-01T00:00:00Z", "textualRating": "Pants on Fire"}]}]}`)
	}))
	defer api.Close()
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "NO_PROXY=127.0.0.1"}
	_, errOut, code := muse(t, "", env, "archive", "add", "--claimreview", feed, api.URL+"/claims.json")
	if code != 0 || !strings.Contains(errOut, "2 fact-checks added, 0 files or URLs failed") {
		t.Fatalf("archive add --claimreview: exit %d\n%s", code, errOut)
	}
	if _, errOut, code = muse(t, "", env, "archive", "add", "--claimreview", "main.go"); code != 1 || !strings.Contains(errOut, "--claimreview main.go: ") {
		t.Errorf("a file without fact-checks: exit %d\n%s", code, errOut)
	}
	out, errOut, code := muse(t, "", env, "check", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	want := "Already checked by Reuters, rated False, 2024-01-20 (<" + reuters + ">)\n" // the page linked, as an autolink
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("check: exit %d; stdout starts %q, want %q\n%s", code, out[:min(len(out), 200)], want, errOut)
	}
	out, errOut, code = muse(t, "", env, "check", "--json", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	var c struct {
		FactChecks []struct {
			Reviewer, Rating, URL string
		} `json:"fact_checks"`
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil || len(c.FactChecks) != 1 || c.FactChecks[0].URL != reuters {
		t.Errorf("check --json: exit %d, fact_checks %+v (%v)\n%s", code, c.FactChecks, err, errOut)
	}
}

// TestFactChecksAloneAreSomethingToSearch: with no search provider and an
// archive holding only imported fact-checks, a check still runs, shows the
// matching fact-check first and does not say the search found nothing.
func TestFactChecksAloneAreSomethingToSearch(t *testing.T) {
	isolate(t)
	feed := filepath.Join(t.TempDir(), "claims.json")
	os.WriteFile(feed, []byte(`{"claims": [{"text": "Spain bans cycling in central Madrid from Monday under a new government decree",
  "claimant": "Facebook posts", "claimReview": [{"publisher": {"name": "Maldita"}, "url": "https://maldita.es/bulo-bicicleta-madrid",
  "reviewDate": "2024-02-12T00:00:00Z", "textualRating": "False"}]}]}`), 0o644)
	post := "BREAKING: Spain bans cycling in central Madrid from Monday under a new government decree. Share!"
	if _, errOut, code := muse(t, "", nil, "check", "--no-llm", "--no-save", post); code != 2 || !strings.Contains(errOut, "nothing to search") {
		t.Fatalf("an empty archive and no provider: exit %d\n%s", code, errOut)
	}
	if _, errOut, code := muse(t, "", nil, "archive", "add", "--claimreview", feed); code != 0 {
		t.Fatalf("archive add --claimreview: exit %d\n%s", code, errOut)
	}
	out, errOut, code := muse(t, "", nil, "check", "--no-llm", "--no-save", "--before", "2024-03-01", post)
	want := "Already checked by Maldita, rated False, 2024-02-12 (<https://maldita.es/bulo-bicicleta-madrid>)\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("check: exit %d; stdout starts %q, want %q\n%s", code, out[:min(len(out), 200)], want, errOut)
	}
	if strings.Contains(errOut, "the search found nothing") {
		t.Errorf("the matched fact-check was a hit, yet:\n%s", errOut)
	}
}

// TestFactCheckLanguageThroughTheBinary: a fact-check imported from a feed
// that declares its language (inLanguage) carries it: `muse check --json`
// has it in fact_checks[].language and the Markdown's first line names it.
func TestFactCheckLanguageThroughTheBinary(t *testing.T) {
	isolate(t)
	feed := filepath.Join(t.TempDir(), "feed.json")
	os.WriteFile(feed, []byte(`{"@context": "https://schema.org", "@type": "DataFeed", "inLanguage": "es", "dataFeedElement": [
  {"@type": "DataFeedItem", "item": [{"@type": "ClaimReview", "url": "https://maldita.es/bulo-bicicleta-madrid",
    "claimReviewed": "El Gobierno prohíbe las bicicletas en el centro de Madrid desde el lunes", "datePublished": "2024-02-12",
    "author": {"@type": "Organization", "name": "Maldita"}, "reviewRating": {"@type": "Rating", "alternateName": "Falso"}}]}]}`), 0o644)
	if _, errOut, code := muse(t, "", nil, "archive", "add", "--claimreview", feed); code != 0 {
		t.Fatalf("archive add --claimreview: exit %d\n%s", code, errOut)
	}
	post := "¡URGENTE! El Gobierno prohíbe las bicicletas en el centro de Madrid desde el lunes. ¡Compartid!"
	out, errOut, code := muse(t, "", nil, "check", "--no-llm", "--no-save", "--language", "Spanish", "--before", "2024-03-01", post)
	want := "Already checked by Maldita, rated Falso, 2024-02-12, in Spanish (<https://maldita.es/bulo-bicicleta-madrid>)\n"
	if code != 0 || !strings.HasPrefix(out, want) {
		t.Errorf("check: exit %d; stdout starts %q, want %q\n%s", code, out[:min(len(out), 200)], want, errOut)
	}
	out, errOut, code = muse(t, "", nil, "check", "--json", "--no-llm", "--no-save", "--before", "2024-03-01", post)
	var c struct {
		FactChecks []struct{ Reviewer, Language string } `json:"fact_checks"`
	}
	if err := json.Unmarshal([]byte(out), &c); code != 0 || err != nil || len(c.FactChecks) != 1 || c.FactChecks[0].Language != "es" {
		t.Errorf("check --json: exit %d, fact_checks %+v (%v)\n%s", code, c.FactChecks, err, errOut)
	}
}
