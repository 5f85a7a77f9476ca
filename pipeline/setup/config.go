// Package setup turns muse's settings into a running engine: flags over
// environment over the config file ($XDG_CONFIG_HOME/muse/config.toml) over
// defaults (Load), the engine built from them (NewFromConfig), what is there
// to use on this machine (Detect) and `muse doctor`.
package setup

import (
	"cmp"
	"encoding"
	"errors"
	"fmt"
	"io/fs"
	"maps"
	"net/url"
	"os"
	"os/user"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/BurntSushi/toml"
	"github.com/agnivade/levenshtein"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/tomlguard"
)

// Config is everything muse can be configured with. The toml tags are the
// config file's keys; the env tags name the environment variables that
// override them; secret fields are masked wherever they are shown.
type Config struct {
	// Model (any OpenAI-compatible server).
	OpenAIBaseURL string `toml:"openai_base_url" env:"OPENAI_BASE_URL"`
	OpenAIAPIKey  string `toml:"openai_api_key" env:"OPENAI_API_KEY" secret:"true"`
	// Provider names the server's dialect when its host does not show it:
	// "azure" for Azure OpenAI (the key goes in the api-key header, the
	// model names the deployment). A *.openai.azure.com address is Azure
	// without it.
	Provider string `toml:"provider" env:"MUSE_PROVIDER"`
	// AzureAPIVersion is the api-version of Azure OpenAI deployment URLs
	// (empty: the one in openai_base_url, else llm.DefaultAzureAPIVersion).
	AzureAPIVersion string            `toml:"azure_api_version" env:"OPENAI_API_VERSION"`
	Model           string            `toml:"model" env:"MUSE_MODEL"`
	Models          map[string]string `toml:"models"` // per task: queries, evidence, correction, vision, embeddings
	EmbeddingModel  string            `toml:"embedding_model" env:"MUSE_EMBEDDING_MODEL"`
	// The LLM judge of `muse eval`, apart from the model under test: its
	// model, and its server and key when not the configured ones.
	JudgeModel   string           `toml:"judge_model" env:"MUSE_JUDGE_MODEL"`
	JudgeBaseURL string           `toml:"judge_base_url" env:"MUSE_JUDGE_BASE_URL"`
	JudgeAPIKey  string           `toml:"judge_api_key" env:"MUSE_JUDGE_API_KEY" secret:"true"`
	OllamaURL    string           `toml:"ollama_url" env:"OLLAMA_HOST"`
	Prices       map[string]Price `toml:"prices"` // USD per million tokens, by model name
	// Capabilities, by model name, say which request parameters a model
	// takes when its name does not show it; muse learns the rest from the
	// server's 400s as it goes.
	Capabilities map[string]ModelCapabilities `toml:"capabilities"`

	// Search providers.
	SearXNGURL      string `toml:"searxng_url" env:"SEARXNG_URL"`
	BraveAPIKey     string `toml:"brave_api_key" env:"BRAVE_API_KEY" secret:"true"`
	GoogleCSEKey    string `toml:"google_cse_key" env:"GOOGLE_CSE_KEY" secret:"true"`
	GoogleCSECX     string `toml:"google_cse_cx" env:"GOOGLE_CSE_CX"`
	SerpAPIKey      string `toml:"serpapi_api_key" env:"SERPAPI_API_KEY" secret:"true"`
	FactCheckAPIKey string `toml:"google_factcheck_api_key" env:"GOOGLE_FACTCHECK_API_KEY" secret:"true"`
	SerperAPIKey    string `toml:"serper_api_key" env:"SERPER_API_KEY" secret:"true"`
	TavilyAPIKey    string `toml:"tavily_api_key" env:"TAVILY_API_KEY" secret:"true"`
	ExaAPIKey       string `toml:"exa_api_key" env:"EXA_API_KEY" secret:"true"`
	// HitsPerQuery is how many hits each provider returns per query in the
	// first search (zero: the engine's default of 5).
	HitsPerQuery int `toml:"hits_per_query" env:"MUSE_HITS_PER_QUERY"`
	// EvidencePageTokens caps the page text sent to the model for each
	// page, in tokens: a page under it is sent whole, a longer one cut to
	// its passages most related to the post (zero: the engine's default,
	// pipeline.DefaultPageTokens; "thrifty": pipeline.ThriftyPageTokens).
	// In the file it is page_tokens of the [evidence] table, or the dotted
	// key evidence.page_tokens.
	EvidencePageTokens pipeline.PageTokens `toml:"evidence.page_tokens" env:"MUSE_EVIDENCE_PAGE_TOKENS"`

	// Videos: the most a post's video may weigh (MB) and last (minutes)
	// to be read (zero: 200 MB and 10 minutes), and the most keyframes
	// read of it (zero: 8).
	VideoMaxMB      float64 `toml:"video_max_mb" env:"MUSE_VIDEO_MAX_MB"`
	VideoMaxMinutes float64 `toml:"video_max_minutes" env:"MUSE_VIDEO_MAX_MINUTES"`
	VideoFrames     int     `toml:"video_frames" env:"MUSE_VIDEO_FRAMES"`
	// RDAP: ask the registries (RDAP, through IANA's bootstrap file at
	// RDAPBootstrapURL, empty for IANA's) when the domain of each page of
	// an unrated publisher was registered, to flag one set up weeks before
	// the post. Off by default: it tells the registries which domains a
	// check read.
	RDAP             bool   `toml:"rdap" env:"MUSE_RDAP"`
	RDAPBootstrapURL string `toml:"rdap_bootstrap_url" env:"MUSE_RDAP_BOOTSTRAP_URL"`
	// X's AI Note Writer API (`muse notes`): the writer's OAuth 1.0a keys
	// (its X app's API key and secret, its account's access token and
	// secret), the API's address (empty: https://api.x.com), and whether
	// notes may be submitted live — still only once the admission ledger
	// meets X's bar. In the file they are the [x] table's keys.
	XAPIKey            string `toml:"x.api_key" env:"X_API_KEY" secret:"true"`
	XAPIKeySecret      string `toml:"x.api_key_secret" env:"X_API_KEY_SECRET" secret:"true"`
	XAccessToken       string `toml:"x.access_token" env:"X_ACCESS_TOKEN" secret:"true"`
	XAccessTokenSecret string `toml:"x.access_token_secret" env:"X_ACCESS_TOKEN_SECRET" secret:"true"`
	XAPIURL            string `toml:"x.api_url" env:"MUSE_X_API_URL"`
	XLiveNotes         bool   `toml:"x.live_notes" env:"MUSE_X_LIVE_NOTES"`

	// Network.
	AllowPrivateAddresses bool `toml:"allow_private_addresses" env:"MUSE_ALLOW_PRIVATE_ADDRESSES"`
	IgnoreRobots          bool `toml:"ignore_robots" env:"MUSE_IGNORE_ROBOTS"`

	// Publisher ratings.
	RatingsFile   string `toml:"ratings" env:"MUSE_RATINGS"`
	OverridesFile string `toml:"overrides" env:"MUSE_OVERRIDES"`
	RatingsURL    string `toml:"ratings_url" env:"MUSE_RATINGS_URL"`

	// Cache of search and model responses (sources/httpcache). NoCache
	// turns it off for a run (--no-cache); CacheTTL is how long an answer
	// is served again (a Go duration such as "24h"; zero: the cache's
	// default of a day).
	NoCache  bool          `toml:"no_cache" env:"MUSE_NO_CACHE"`
	CacheTTL time.Duration `toml:"cache_ttl" env:"MUSE_CACHE_TTL"`

	// Spend caps in US dollars; zero means no cap. A model call whose
	// estimated cost would take the check's (or today's) spending past the
	// cap is not made and the stage fails saying so. A cap needs a price
	// for every model it would apply to (CheckCaps).
	SpendCapCheckUSD float64 `toml:"spend_cap_check_usd" env:"MUSE_SPEND_CAP_CHECK_USD"`
	SpendCapDayUSD   float64 `toml:"spend_cap_day_usd" env:"MUSE_SPEND_CAP_DAY_USD"`

	// Where things live; filled from XDG_* when not set.
	DataDir string `toml:"data_dir" env:"MUSE_DATA_DIR"`
	// DatabaseURL is a newsroom's PostgreSQL (postgres://…): the job
	// queue, the cases, the spend ledger, the response cache and the page
	// archive are kept there, shared by every muse that names it. Its
	// password is a secret.
	DatabaseURL string `toml:"database_url" env:"MUSE_DATABASE_URL" secret:"true"`
	// User names the checker in the case store: who made and changed each
	// case, in its audit trail and in `muse cases --mine`. Default: the
	// operating system's user name.
	User string `toml:"user" env:"MUSE_USER"`
	// TSAURL is the RFC 3161 time-stamping authority that stamps
	// evidence packs (`muse cases export --format pack`); none when empty.
	TSAURL string `toml:"tsa_url" env:"MUSE_TSA_URL"`
	// UserFromOS: User is the default, not a name the checker gave.
	UserFromOS bool   `toml:"-"`
	CacheDir   string `toml:"-"` // $XDG_CACHE_HOME/muse: the response cache
	ConfigDir  string `toml:"-"`
	File       string `toml:"-"` // the config file read, if any

	// QueueRescueAfter is how long a queued check may run before its
	// worker is taken to be dead and the job is given to another worker
	// (zero: the job queue's default of 31 minutes); a check that takes
	// longer is stopped and retried from its saved case.
	QueueRescueAfter time.Duration `toml:"queue_rescue_after" env:"MUSE_QUEUE_RESCUE_AFTER"`

	// Problems are what is wrong in the config file (unknown keys, values
	// of the wrong type), one sentence each; every command warns of them
	// and doctor lists them.
	Problems []string `toml:"-"`
	// Origins says where each setting's value came from, by its TOML key:
	// "file", "env" or "flag" (absent: the default).
	Origins map[string]string `toml:"-"`
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Prompt     float64 `toml:"prompt"`
	Completion float64 `toml:"completion"`
	// CachedPrompt is the rate of prompt tokens the server reads from its
	// prompt cache; 0: they are priced as other prompt tokens.
	CachedPrompt float64 `toml:"cached_prompt"`
}

// ModelCapabilities are a model's [capabilities."name"] table. Unset
// fields keep muse's default (or what the server teaches).
type ModelCapabilities struct {
	// Temperature false: the model takes only its default temperature.
	Temperature *bool `toml:"temperature"`
	// TokenLimit is the parameter that caps the answer: "max_tokens" or
	// "max_completion_tokens".
	TokenLimit string `toml:"token_limit"`
	// ResponseFormat is what a structured answer is asked with:
	// "json_schema", "json_object" or "none".
	ResponseFormat string `toml:"response_format"`
	// StreamOptions false: send no stream_options (a stream then reports
	// no usage).
	StreamOptions *bool `toml:"stream_options"`
}

func (m ModelCapabilities) String() string {
	var parts []string
	if m.Temperature != nil {
		parts = append(parts, fmt.Sprintf("temperature=%v", *m.Temperature))
	}
	if m.TokenLimit != "" {
		parts = append(parts, "token_limit="+m.TokenLimit)
	}
	if m.ResponseFormat != "" {
		parts = append(parts, "response_format="+m.ResponseFormat)
	}
	if m.StreamOptions != nil {
		parts = append(parts, fmt.Sprintf("stream_options=%v", *m.StreamOptions))
	}
	return "{" + strings.Join(parts, " ") + "}"
}

// problems says what in m muse cannot use.
func (m ModelCapabilities) problems(model string) []string {
	var out []string
	if m.TokenLimit != "" && m.TokenLimit != "max_tokens" && m.TokenLimit != "max_completion_tokens" {
		out = append(out, fmt.Sprintf(`capabilities.%s.token_limit %q is not max_tokens or max_completion_tokens; it is ignored`, model, m.TokenLimit))
	}
	if m.ResponseFormat != "" && !slices.Contains([]string{"json_schema", "json_object", "none"}, m.ResponseFormat) {
		out = append(out, fmt.Sprintf(`capabilities.%s.response_format %q is not json_schema, json_object or none; it is ignored`, model, m.ResponseFormat))
	}
	return out
}

// ErrConfig is wrapped by Load's error when the configuration cannot be
// used as it is: a value of the wrong type in the file or the environment.
var ErrConfig = errors.New("configuration error")

// Load reads the config file (path, or the default one when path is "")
// and then the environment through getenv. A missing default config file is
// fine; a named file that is missing, or a file that is not TOML, is an
// error. Unknown keys are Problems. A value of the wrong type is a Problem
// too, and Load then returns the Config (for doctor and `config show`)
// with an error wrapping ErrConfig.
func Load(path string, getenv func(string) string) (*Config, error) {
	c := &Config{Origins: map[string]string{}}
	c.ConfigDir = xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
	explicit := path != ""
	if !explicit {
		path = filepath.Join(c.ConfigDir, "config.toml")
	}
	var bad []string
	switch b, err := tomlguard.ReadFile(path, maxConfigBytes); {
	case err == nil:
		typeErrs, err := decodeFile(c, string(b))
		if err != nil {
			return nil, fmt.Errorf("read config %s: %w", path, err)
		}
		bad = append(bad, typeErrs...)
		c.File = path
	case !explicit && errors.Is(err, fs.ErrNotExist):
	default:
		return nil, fmt.Errorf("read config %s: %w", path, err)
	}
	bad = append(bad, applyEnv(c, getenv)...)
	if p := userProblem(c.User); p != "" {
		bad = append(bad, p)
	}
	c.Problems = append(c.Problems, bad...)
	for _, model := range slices.Sorted(maps.Keys(c.Capabilities)) {
		c.Problems = append(c.Problems, c.Capabilities[model].problems(model)...)
	}
	if p := strings.ToLower(c.Provider); p != "" && p != "azure" && p != "openai" {
		c.Problems = append(c.Problems, fmt.Sprintf("provider %q is not one muse knows (azure, openai); it is ignored", c.Provider))
	}
	if c.DataDir == "" {
		c.DataDir = xdgDir(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	}
	c.CacheDir = xdgDir(getenv, "XDG_CACHE_HOME", ".cache")
	if c.User == "" {
		c.User, c.UserFromOS = osUser(getenv), true
	}
	if c.OverridesFile == "" {
		c.OverridesFile = filepath.Join(c.ConfigDir, "overrides.toml")
	}
	if len(bad) > 0 {
		return c, fmt.Errorf("%w: %s", ErrConfig, strings.Join(bad, "; "))
	}
	return c, nil
}

// maxConfigBytes is the largest config file read; the commented template
// is under 20 KiB.
const maxConfigBytes = 1 << 20

// decodeFile decodes a config file key by key, so that one value of the
// wrong type is reported without losing the others; unknown keys (the TOML
// decoder's undecoded keys) become c.Problems. It returns the type errors;
// err is for a file that is not TOML at all.
func decodeFile(c *Config, text string) (typeErrs []string, err error) {
	var prims map[string]toml.Primitive
	md, err := toml.Decode(text, &prims)
	if err != nil {
		return nil, err
	}
	fields := fieldsByKey(c)
	unknown := func(k string) {
		msg := "unknown config key " + k
		if s := closest(k, slices.Collect(maps.Keys(fields))); s != "" {
			msg += fmt.Sprintf(" (did you mean %s?)", s)
		}
		c.Problems = append(c.Problems, msg+"; it is ignored")
	}
	decode := func(key string, prim toml.Primitive) {
		f, ok := fields[key]
		if !ok {
			unknown(key)
			return
		}
		if err := md.PrimitiveDecode(prim, f.Addr().Interface()); err != nil {
			typeErrs = append(typeErrs, fmt.Sprintf("config key %s: %s", key, plainTOMLError(err, f.Type())))
			f.SetZero()
			return
		}
		c.Origins[key] = "file"
	}
	for _, key := range slices.Sorted(maps.Keys(prims)) {
		// A table of dotted keys ([evidence] page_tokens = …, or
		// evidence.page_tokens = … at the top): each key on its own.
		var table map[string]toml.Primitive
		if _, ok := fields[key]; !ok && hasTable(fields, key) && md.PrimitiveDecode(prims[key], &table) == nil {
			for _, sub := range slices.Sorted(maps.Keys(table)) {
				decode(key+"."+sub, table[sub])
			}
			continue
		}
		decode(key, prims[key])
	}
	// Keys inside a known table that its type has no place for
	// ([prices.gpt-4o] promt = 1): the decoder's undecoded keys.
	for _, k := range md.Undecoded() {
		if _, ok := fields[k[0]]; ok && len(k) > 1 {
			unknown(k.String())
		}
	}
	return typeErrs, nil
}

// hasTable says some key of fields is in the table named key.
func hasTable(fields map[string]reflect.Value, key string) bool {
	for k := range fields {
		if strings.HasPrefix(k, key+".") {
			return true
		}
	}
	return false
}

// plainTOMLError says what was wanted instead of the decoder's Go types.
func plainTOMLError(err error, want reflect.Type) string {
	var pe toml.ParseError
	if errors.As(err, &pe) {
		return pe.Message
	}
	return "want " + kindWord(want)
}

// kindWord names a setting's type as the config file writes it.
func kindWord(t reflect.Type) string {
	switch {
	case t == reflect.TypeFor[time.Duration]():
		return `a duration such as "24h"`
	case t.Kind() == reflect.String:
		return "a quoted string"
	case t.Kind() == reflect.Bool:
		return "true or false"
	case t.Kind() == reflect.Float64:
		return "a number such as 0.50"
	case t.Kind() == reflect.Int:
		return "a whole number"
	case t.Kind() == reflect.Map:
		return "a table"
	}
	return t.String()
}

// fieldsByKey maps each config file key to its field in c.
func fieldsByKey(c *Config) map[string]reflect.Value {
	out := map[string]reflect.Value{}
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		if k := v.Type().Field(i).Tag.Get("toml"); k != "" && k != "-" {
			out[k] = v.Field(i)
		}
	}
	return out
}

// closest is the key nearest to k within two edits, or "".
func closest(k string, keys []string) string {
	best, bestD := "", 3
	for _, c := range slices.Sorted(slices.Values(keys)) {
		if d := levenshtein.ComputeDistance(k, c); d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// xdgDir returns $VAR/muse, or ~/fallback/muse when VAR is unset.
func xdgDir(getenv func(string) string, v, fallback string) string {
	if d := getenv(v); d != "" && filepath.IsAbs(d) {
		return filepath.Join(d, "muse")
	}
	home := getenv("HOME")
	if home == "" {
		home, _ = os.UserHomeDir()
	}
	return filepath.Join(home, fallback, "muse")
}

// applyEnv sets each field with an env tag from its environment variable,
// when set, and returns a sentence for each value that cannot be read.
func applyEnv(c *Config, getenv func(string) string) (bad []string) {
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		name := sf.Tag.Get("env")
		val := strings.TrimSpace(getenv(name))
		if name == "" || val == "" {
			continue
		}
		if err := setFromString(v.Field(i), val); err != nil {
			bad = append(bad, fmt.Sprintf("environment %s=%q: %v", name, val, err))
			continue
		}
		c.Origins[sf.Tag.Get("toml")] = "env"
	}
	return bad
}

// setFromString sets f from an environment variable's text.
func setFromString(f reflect.Value, s string) error {
	if u, ok := f.Addr().Interface().(encoding.TextUnmarshaler); ok {
		return u.UnmarshalText([]byte(s))
	}
	switch {
	case f.Type() == reflect.TypeFor[time.Duration]():
		d, err := time.ParseDuration(s)
		if err != nil || d < 0 {
			return errors.New("want a duration such as 24h or 30m")
		}
		f.SetInt(int64(d))
	case f.Kind() == reflect.String:
		f.SetString(s)
	case f.Kind() == reflect.Bool:
		b, err := strconv.ParseBool(s)
		if err != nil {
			return errors.New("want 1, 0, true or false")
		}
		f.SetBool(b)
	case f.Kind() == reflect.Float64:
		x, err := strconv.ParseFloat(strings.TrimPrefix(s, "$"), 64)
		if err != nil || x < 0 {
			return errors.New("want an amount in US dollars such as 0.50")
		}
		f.SetFloat(x)
	case f.Kind() == reflect.Int:
		n, err := strconv.Atoi(s)
		if err != nil || n < 0 {
			return errors.New("want a whole number such as 5")
		}
		f.SetInt(int64(n))
	default:
		return fmt.Errorf("cannot be set from the environment")
	}
	return nil
}

// Secrets returns every credential in the configuration (empty ones left
// out), and the password of any URL's userinfo: what the case store, the
// cache, exports and logs must never write down (see Redactor).
func (c *Config) Secrets() []string {
	var out []string
	v := reflect.ValueOf(c).Elem()
	for i := range v.NumField() {
		sf := v.Type().Field(i)
		if sf.Type.Kind() != reflect.String {
			continue
		}
		s := strings.TrimSpace(v.Field(i).String())
		if sf.Tag.Get("secret") == "true" && s != "" {
			out = append(out, s)
		}
		if strings.Contains(s, "@") {
			if u, err := url.Parse(s); err == nil && u.User != nil {
				if p, ok := u.User.Password(); ok && p != "" {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// ArchivePath is where the archive of every page muse reads lives: the
// newsroom's database when DatabaseURL is set (so every checker finds what
// the others read), else archive.db under the data directory. Show it as
// archive.Store.Path does, without the password.
func (c *Config) ArchivePath() string {
	return cmp.Or(c.DatabaseURL, filepath.Join(c.DataDir, "archive.db"))
}

// CachePath is the response cache: under $XDG_CACHE_HOME/muse, since it
// can be deleted at any time (in the data directory for a Config not made
// by Load, which has no CacheDir).
func (c *Config) CachePath() string {
	if c.DatabaseURL != "" {
		return c.DatabaseURL
	}
	return filepath.Join(cmp.Or(c.CacheDir, c.DataDir), "cache.db")
}

// MaxUserLen is the longest checker name (MUSE_USER, user) in bytes: it
// goes into every save's audit row and into the PostgreSQL notification
// of it, whose payload is limited to 8000 bytes.
const MaxUserLen = 128

// userProblem says what is wrong with a checker's name, "" when nothing.
func userProblem(u string) string {
	switch {
	case len(u) > MaxUserLen:
		return fmt.Sprintf("user (MUSE_USER) is %d bytes long; a checker's name is at most %d", len(u), MaxUserLen)
	case !utf8.ValidString(u) || strings.ContainsFunc(u, unicode.IsControl):
		return "user (MUSE_USER) holds control characters or invalid UTF-8; a checker's name is one line of text"
	}
	return ""
}

// osUser is the operating system's name for the user running muse ($USER
// when the user database cannot say).
func osUser(getenv func(string) string) string {
	if u, err := user.Current(); err == nil && u.Username != "" {
		return u.Username
	}
	return getenv("USER")
}

// CasesPath is where the cases live: the newsroom's database when
// DatabaseURL is set, so that every checker sees every case, else cases.db
// under the data directory.
func (c *Config) CasesPath() string {
	return cmp.Or(c.DatabaseURL, filepath.Join(c.DataDir, "cases.db"))
}

// LedgerPath is where the spend ledger lives: the newsroom's database when
// DatabaseURL is set (so the day cap counts every process), else spend.db
// under the data directory.
func (c *Config) LedgerPath() string {
	return cmp.Or(c.DatabaseURL, filepath.Join(c.DataDir, "spend.db"))
}

// QueueOptions say where the job queue of `muse batch --queue` and
// `muse worker` lives: the newsroom's database, else queue.db under the
// data directory.
func (c *Config) QueueOptions() jobs.Options {
	return jobs.Options{DatabaseURL: c.DatabaseURL, Path: filepath.Join(c.DataDir, "queue.db"), RescueAfter: c.QueueRescueAfter}
}

// InstalledRatingsPath is where `muse sources update` keeps the ratings file.
func (c *Config) InstalledRatingsPath() string {
	return filepath.Join(c.DataDir, "ratings", "combined.json")
}

// SearchConfigured reports whether any web search provider is set up (the
// local archive is always on and does not count).
func (c *Config) SearchConfigured() bool {
	return c.SearXNGURL != "" || c.BraveAPIKey != "" || (c.GoogleCSEKey != "" && c.GoogleCSECX != "") ||
		c.SerpAPIKey != "" || c.FactCheckAPIKey != "" || c.SerperAPIKey != "" || c.TavilyAPIKey != "" || c.ExaAPIKey != ""
}
