package setup

import (
	"context"
	"errors"
	"maps"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

func env(m map[string]string) func(string) string { return func(k string) string { return m[k] } }

func TestPrecedenceEnvOverFile(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "muse"), 0o755); err != nil {
		t.Fatal(err)
	}
	file := "model = \"from-file\"\nsearxng_url = \"http://searx.local\"\n[prices.gpt-x]\nprompt = 1.5\ncompletion = 3\ncached_prompt = 0.75\n"
	if err := os.WriteFile(filepath.Join(dir, "muse", "config.toml"), []byte(file), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load("", env(map[string]string{"XDG_CONFIG_HOME": dir, "XDG_DATA_HOME": "/data", "MUSE_MODEL": "from-env"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.Model != "from-env" {
		t.Errorf("Model = %q, want the environment's", c.Model)
	}
	if c.SearXNGURL != "http://searx.local" {
		t.Errorf("SearXNGURL = %q, want the file's", c.SearXNGURL)
	}
	if c.Prices["gpt-x"].Completion != 3 || c.Prices["gpt-x"].CachedPrompt != 0.75 {
		t.Errorf("prices not read: %+v", c.Prices)
	}
	if c.DataDir != "/data/muse" || c.ArchivePath() != "/data/muse/archive.db" {
		t.Errorf("DataDir = %q", c.DataDir)
	}
	if !c.SearchConfigured() {
		t.Error("SearXNG configured but SearchConfigured is false")
	}
}

func TestMissingDefaultFileIsFine(t *testing.T) {
	c, err := Load("", env(map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "HOME": "/home/x"}))
	if err != nil {
		t.Fatal(err)
	}
	if c.File != "" || c.DataDir != "/home/x/.local/share/muse" || c.SearchConfigured() {
		t.Errorf("unexpected defaults: %+v", c)
	}
}

func TestBadInputs(t *testing.T) {
	if _, err := Load(filepath.Join(t.TempDir(), "nope.toml"), env(nil)); err == nil {
		t.Error("a named config file that is missing must be an error")
	}
	bad := filepath.Join(t.TempDir(), "bad.toml")
	os.WriteFile(bad, []byte("model = = 3"), 0o644)
	if _, err := Load(bad, env(nil)); err == nil || !strings.Contains(err.Error(), bad) {
		t.Errorf("malformed file: err = %v, want one naming the file", err)
	}
	_, err := Load("", env(map[string]string{"XDG_CONFIG_HOME": t.TempDir(), "MUSE_ALLOW_PRIVATE_ADDRESSES": "maybe"}))
	if err == nil || !strings.Contains(err.Error(), "MUSE_ALLOW_PRIVATE_ADDRESSES") {
		t.Errorf("bad boolean: err = %v", err)
	}
}

// The keys of the search providers added in issue 15 configure their
// providers, from the environment or the file, and are kept secret.
func TestNewSearchProviderKeys(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "muse"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "muse", "config.toml"), []byte("exa_api_key = \"exa-from-file\"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := Load("", env(map[string]string{"XDG_CONFIG_HOME": dir, "SERPER_API_KEY": "serper-secret", "TAVILY_API_KEY": "tvly-secret"}))
	if err != nil {
		t.Fatal(err)
	}
	if !c.SearchConfigured() {
		t.Error("SearchConfigured is false with Serper, Tavily and Exa keys")
	}
	var names []string
	for _, s := range searchers(c, nil, nil, nil) {
		names = append(names, s.Name())
	}
	if got := strings.Join(names, ","); got != "serper,tavily,exa" {
		t.Errorf("searchers = %s", got)
	}
	secrets := strings.Join(c.Secrets(), " ")
	for _, k := range []string{"serper-secret", "tvly-secret", "exa-from-file"} {
		if !strings.Contains(secrets, k) {
			t.Errorf("Secrets() leaves out %s", k)
		}
	}
}

// TestTemplateHasEveryKey: the file `muse config init` writes names every
// key, and with every line uncommented it is a config with no problem.
func TestTemplateHasEveryKey(t *testing.T) {
	for _, k := range Keys() {
		if !strings.Contains(ConfigTemplate, "# "+k+" = ") && !strings.Contains(ConfigTemplate, "# ["+k) {
			t.Errorf("the template lacks %s", k)
		}
	}
	var lines []string
	for _, l := range strings.Split(ConfigTemplate, "\n") {
		if strings.HasPrefix(l, "# ") && !strings.HasPrefix(l, "## ") {
			if rest := strings.TrimPrefix(l, "# "); strings.Contains(rest, " = ") || strings.HasPrefix(rest, "[") {
				lines = append(lines, rest)
			}
		}
	}
	// A TOML file lists the plain keys before the tables.
	var plain, tables []string
	inTable := false
	for _, l := range lines {
		if strings.HasPrefix(l, "[") {
			inTable = true
		} else if !slices.ContainsFunc([]string{"prompt", "completion", "queries", "correction",
			"temperature", "token_limit", "response_format", "stream_options"}, func(k string) bool { return strings.HasPrefix(l, k+" ") }) {
			inTable = false
		}
		if inTable {
			tables = append(tables, l)
		} else {
			plain = append(plain, l)
		}
	}
	file := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(file, []byte(strings.Join(append(plain, tables...), "\n")), 0o644)
	c, err := Load(file, env(map[string]string{"HOME": t.TempDir()}))
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("uncommented template: %v %q", err, c.Problems)
	}
	if c.Model != "gpt-4o" || c.Models["queries"] != "gpt-4o-mini" || c.HitsPerQuery != 5 || c.SpendCapDayUSD != 5 || c.EvidencePageTokens != 5000 {
		t.Errorf("uncommented template read as %+v", c)
	}
}

func TestProblemsAndOrigins(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(file, []byte("modle = \"x\"\nspend_cap_check_usd = \"lots\"\nsearxng_url = \"http://s\"\n[prices.m]\npromt = 1\n"), 0o644)
	c, err := Load(file, env(map[string]string{"HOME": "/h", "MUSE_MODEL": "m", "OPENAI_BASE_URL": "http://u:pa55word@h/v1"}))
	if !errors.Is(err, ErrConfig) || c == nil {
		t.Fatalf("a wrong type: err %v", err)
	}
	want := []string{"config key spend_cap_check_usd: want a number such as 0.50",
		"unknown config key modle (did you mean model?); it is ignored", "unknown config key prices.m.promt; it is ignored"}
	for _, w := range want {
		if !slices.Contains(c.Problems, w) {
			t.Errorf("problems %q lack %q", c.Problems, w)
		}
	}
	if c.Origins["searxng_url"] != "file" || c.Origins["model"] != "env" || c.Origins["ratings"] != "" || c.SpendCapCheckUSD != 0 {
		t.Errorf("origins %v, cap %v", c.Origins, c.SpendCapCheckUSD)
	}
	if !slices.Contains(c.Secrets(), "pa55word") {
		t.Errorf("the URL's password is not a secret: %q", c.Secrets())
	}
	for _, s := range c.Settings() {
		if strings.Contains(s.Value, "pa55word") {
			t.Errorf("%s shows the password: %s", s.Key, s.Value)
		}
	}
	if got := maskURL("http://u:pa55word@h/v1"); got != "http://u:****@h/v1" {
		t.Errorf("maskURL = %q", got)
	}
}

// With database_url set, every shared store (ledger, cache, queue, archive)
// lives in that database; without it, each is a file under the data
// directory.
func TestStoresFollowDatabaseURL(t *testing.T) {
	c := &Config{DataDir: "/data/muse", DatabaseURL: "postgres://muse@db.example/muse"}
	if c.ArchivePath() != c.DatabaseURL || c.LedgerPath() != c.DatabaseURL || c.CachePath() != c.DatabaseURL ||
		c.QueueOptions().DatabaseURL != c.DatabaseURL {
		t.Errorf("with database_url: archive %q, ledger %q, cache %q, queue %+v", c.ArchivePath(), c.LedgerPath(), c.CachePath(), c.QueueOptions())
	}
	c.DatabaseURL = ""
	if c.ArchivePath() != "/data/muse/archive.db" {
		t.Errorf("without database_url: archive %q", c.ArchivePath())
	}
}

// TestAzureSettings: provider and azure_api_version (and their
// environment variables) reach the model client: muse then talks to a
// loopback Azure OpenAI resource that checks the path, api-version and
// api-key header as Azure does; the deployment's address alone names the
// model. An unknown provider is a problem, not silence.
func TestAzureSettings(t *testing.T) {
	az := &llmtest.Azure{Key: "azure-key-1", Deployments: []string{"muse-gpt4o"}, Versions: []string{"2024-06-01"}, Text: "ok"}
	srv := httptest.NewServer(az)
	defer srv.Close()
	for name, env := range map[string]map[string]string{
		"provider and api version": {"OPENAI_BASE_URL": srv.URL, "OPENAI_API_KEY": "azure-key-1", "MUSE_MODEL": "muse-gpt4o",
			"MUSE_PROVIDER": "azure", "OPENAI_API_VERSION": "2024-06-01"},
		"deployment address": {"OPENAI_BASE_URL": srv.URL + "/openai/deployments/muse-gpt4o/chat/completions?api-version=2024-06-01",
			"OPENAI_API_KEY": "azure-key-1", "MUSE_PROVIDER": "azure"},
	} {
		t.Run(name, func(t *testing.T) {
			env["HOME"] = t.TempDir()
			cfg, err := Load("", func(k string) string { return env[k] })
			if err != nil {
				t.Fatal(err)
			}
			c, err := NewLLMClient(context.Background(), cfg, pipeline.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}}); err != nil {
				t.Fatalf("%v (requests %+v)", err, az.Requests())
			}
		})
	}
	cfg, _ := Load("", func(k string) string { return map[string]string{"HOME": t.TempDir(), "MUSE_PROVIDER": "azur"}[k] })
	if !strings.Contains(strings.Join(cfg.Problems, "\n"), `provider "azur"`) {
		t.Errorf("problems %q do not name the unknown provider", cfg.Problems)
	}
}

// TestCapabilitiesSetting: [capabilities."model"] reaches the model
// client, so a model that takes neither temperature nor max_tokens gets
// its first request right; a value muse does not know is a problem.
func TestCapabilitiesSetting(t *testing.T) {
	picky := &llmtest.Picky{NoTemperature: true, NoMaxTokens: true, Text: "ok"}
	srv := httptest.NewServer(picky)
	defer srv.Close()
	dir := t.TempDir()
	file := filepath.Join(dir, "config.toml")
	text := "[capabilities.house-reasoner]\ntemperature = false\ntoken_limit = \"max_completion_tokens\"\n" +
		"[capabilities.other]\nresponse_format = \"xml\"\n"
	if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
		t.Fatal(err)
	}
	cfg, err := Load(file, env(map[string]string{"HOME": dir, "OPENAI_BASE_URL": srv.URL + "/v1", "MUSE_MODEL": "house-reasoner"}))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(strings.Join(cfg.Problems, "\n"), `capabilities.other.response_format "xml"`) {
		t.Errorf("problems %q", cfg.Problems)
	}
	c, err := NewLLMClient(context.Background(), cfg, pipeline.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := c.Complete(context.Background(), llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 200}); err != nil {
		t.Fatal(err)
	}
	if n := len(picky.Bodies()); n != 1 {
		t.Errorf("%d requests, want 1: the configured capabilities were not used", n)
	}
	var shown string
	for _, s := range cfg.Settings() {
		if s.Key == "capabilities" {
			shown = s.Value
		}
	}
	if !strings.Contains(shown, "house-reasoner={temperature=false token_limit=max_completion_tokens}") {
		t.Errorf("config show: %q", shown)
	}
}

// TestCapabilitiesRemembered: what a model server's 400s taught one
// process of a model (no temperature, max_completion_tokens) is kept in
// the response cache, so the next process gets its first request right;
// `muse cache clear` forgets it.
func TestCapabilitiesRemembered(t *testing.T) {
	ctx := context.Background()
	picky := &llmtest.Picky{NoTemperature: true, NoMaxTokens: true, Text: "ok"}
	srv := httptest.NewServer(picky)
	defer srv.Close()
	dir := t.TempDir()
	cfg, err := Load("", env(map[string]string{"HOME": dir, "OPENAI_BASE_URL": srv.URL + "/v1", "MUSE_MODEL": "house-alias"}))
	if err != nil {
		t.Fatal(err)
	}
	requests := func() int {
		t.Helper()
		cache, err := openCache(ctx, cfg)
		if err != nil {
			t.Fatal(err)
		}
		defer cache.Close()
		c, err := newLLMClient(ctx, cfg, pipeline.Options{}, nil, nil, nil, cache)
		if err != nil {
			t.Fatal(err)
		}
		before := len(picky.Bodies())
		if _, err := c.Complete(ctx, llm.Request{Messages: []llm.Message{{Role: "user", Content: "hi"}}, MaxTokens: 200}); err != nil {
			t.Fatal(err)
		}
		return len(picky.Bodies()) - before
	}
	if n := requests(); n != 3 {
		t.Fatalf("first process: %d requests, want 3 (two rejected)", n)
	}
	if n := requests(); n != 1 {
		t.Errorf("second process: %d requests, want 1: what the first learned was not kept", n)
	}
	cache, err := openCache(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := cache.Clear(ctx); err != nil {
		t.Fatal(err)
	}
	cache.Close()
	if n := requests(); n != 3 {
		t.Errorf("after muse cache clear: %d requests, want 3", n)
	}
}

// TestEvidencePageTokens: evidence.page_tokens is read as a dotted key or
// from the [evidence] table, as a number or the thrifty preset, from the
// environment over the file; a value under the floor is a problem.
func TestEvidencePageTokens(t *testing.T) {
	for _, tc := range []struct {
		file string
		env  map[string]string
		want int
		bad  string
	}{
		{"evidence.page_tokens = 3000\n", nil, 3000, ""},
		{"[evidence]\npage_tokens = \"thrifty\"\n", nil, 1500, ""},
		{"evidence.page_tokens = 3000\n", map[string]string{"MUSE_EVIDENCE_PAGE_TOKENS": "thrifty"}, 1500, ""},
		{"", nil, 5000, ""},
		{"evidence.page_tokens = 10\n", nil, 5000, "config key evidence.page_tokens"},
		{"evidence.page_tokns = 10\n", nil, 5000, "unknown config key evidence.page_tokns (did you mean evidence.page_tokens?)"},
		{"", map[string]string{"MUSE_EVIDENCE_PAGE_TOKENS": "lots"}, 5000, "environment MUSE_EVIDENCE_PAGE_TOKENS"},
	} {
		file := filepath.Join(t.TempDir(), "config.toml")
		os.WriteFile(file, []byte(tc.file), 0o644)
		e := map[string]string{"HOME": t.TempDir()}
		maps.Copy(e, tc.env)
		c, _ := Load(file, env(e))
		if c == nil {
			t.Fatalf("%q: no config", tc.file)
		}
		if got := c.EvidencePageTokens.Tokens(); got != tc.want {
			t.Errorf("%q %v: %d tokens a page, want %d", tc.file, tc.env, got, tc.want)
		}
		joined := strings.Join(c.Problems, "\n")
		if tc.bad == "" && joined != "" || tc.bad != "" && !strings.Contains(joined, tc.bad) {
			t.Errorf("%q %v: problems %q, want %q", tc.file, tc.env, joined, tc.bad)
		}
	}
}

// TestXKeys: the AI Note Writer keys are read from the [x] table, the
// environment over the file; they are secrets, masked wherever settings
// are shown.
func TestXKeys(t *testing.T) {
	file := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(file, []byte("[x]\napi_key = \"file-app-key\"\napi_key_secret = \"file-app-secret\"\naccess_token = \"file-token\"\naccess_token_secret = \"file-token-secret\"\nlive_notes = true\n"), 0o644)
	c, err := Load(file, env(map[string]string{"HOME": t.TempDir(), "X_ACCESS_TOKEN_SECRET": "env-token-secret"}))
	if err != nil || len(c.Problems) > 0 {
		t.Fatalf("load: %v %v", err, c.Problems)
	}
	if c.XAPIKey != "file-app-key" || c.XAPIKeySecret != "file-app-secret" || c.XAccessToken != "file-token" ||
		c.XAccessTokenSecret != "env-token-secret" || !c.XLiveNotes {
		t.Errorf("keys: %+v", c)
	}
	secrets := strings.Join(c.Secrets(), " ")
	for _, s := range []string{"file-app-key", "file-app-secret", "file-token", "env-token-secret"} {
		if !strings.Contains(secrets, s) {
			t.Errorf("%s is not a secret", s)
		}
	}
	for _, s := range c.Settings() {
		if strings.Contains(s.Value, "file-app-secret") || strings.Contains(s.Value, "env-token-secret") {
			t.Errorf("setting %s shows its secret: %q", s.Key, s.Value)
		}
	}
}
