// Package config gathers muse's settings: flags over environment over the
// config file ($XDG_CONFIG_HOME/muse/config.toml) over defaults. It only
// reads; each package takes the part it needs as its own Options struct.
package setup

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/BurntSushi/toml"
)

// Config is everything muse can be configured with. The TOML keys are the
// config file's; the env tags name the environment variables that override
// them.
type Config struct {
	// Model (any OpenAI-compatible server).
	OpenAIBaseURL  string            `toml:"openai_base_url" env:"OPENAI_BASE_URL"`
	OpenAIAPIKey   string            `toml:"openai_api_key" env:"OPENAI_API_KEY"`
	Model          string            `toml:"model" env:"MUSE_MODEL"`
	Models         map[string]string `toml:"models"` // per task: queries, evidence, correction, vision, embeddings
	EmbeddingModel string            `toml:"embedding_model" env:"MUSE_EMBEDDING_MODEL"`
	OllamaURL      string            `toml:"ollama_url" env:"OLLAMA_HOST"`
	Prices         map[string]Price  `toml:"prices"` // USD per million tokens, by model name

	// Search providers.
	SearXNGURL      string `toml:"searxng_url" env:"SEARXNG_URL"`
	BraveAPIKey     string `toml:"brave_api_key" env:"BRAVE_API_KEY"`
	GoogleCSEKey    string `toml:"google_cse_key" env:"GOOGLE_CSE_KEY"`
	GoogleCSECX     string `toml:"google_cse_cx" env:"GOOGLE_CSE_CX"`
	SerpAPIKey      string `toml:"serpapi_api_key" env:"SERPAPI_API_KEY"`
	FactCheckAPIKey string `toml:"google_factcheck_api_key" env:"GOOGLE_FACTCHECK_API_KEY"`
	SerperAPIKey    string `toml:"serper_api_key" env:"SERPER_API_KEY"`
	TavilyAPIKey    string `toml:"tavily_api_key" env:"TAVILY_API_KEY"`
	ExaAPIKey       string `toml:"exa_api_key" env:"EXA_API_KEY"`

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
	// cap is not made and the stage fails saying so.
	SpendCapCheckUSD float64 `toml:"spend_cap_check_usd" env:"MUSE_SPEND_CAP_CHECK_USD"`
	SpendCapDayUSD   float64 `toml:"spend_cap_day_usd" env:"MUSE_SPEND_CAP_DAY_USD"`

	// Where things live; filled from XDG_* when not set.
	DataDir   string `toml:"data_dir" env:"MUSE_DATA_DIR"`
	ConfigDir string `toml:"-"`
	File      string `toml:"-"` // the config file read, if any
}

// Price is what a model costs, in US dollars per million tokens.
type Price struct {
	Prompt     float64 `toml:"prompt"`
	Completion float64 `toml:"completion"`
}

// Load reads the config file (path, or the default one when path is "")
// and then the environment through getenv. A missing default config file is
// fine; a named file that is missing or malformed is an error.
func Load(path string, getenv func(string) string) (*Config, error) {
	c := &Config{}
	c.ConfigDir = xdgDir(getenv, "XDG_CONFIG_HOME", ".config")
	explicit := path != ""
	if !explicit {
		path = filepath.Join(c.ConfigDir, "config.toml")
	}
	if _, err := toml.DecodeFile(path, c); err != nil {
		if !explicit && errors.Is(err, fs.ErrNotExist) {
			path = ""
		} else {
			return nil, fmt.Errorf("read config %s: %w", path, err)
		}
	}
	c.File = path
	if err := applyEnv(c, getenv); err != nil {
		return nil, err
	}
	if c.DataDir == "" {
		c.DataDir = xdgDir(getenv, "XDG_DATA_HOME", filepath.Join(".local", "share"))
	}
	if c.OverridesFile == "" {
		c.OverridesFile = filepath.Join(c.ConfigDir, "overrides.toml")
	}
	return c, nil
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

func applyEnv(c *Config, getenv func(string) string) error {
	strs := map[string]*string{
		"OPENAI_BASE_URL": &c.OpenAIBaseURL, "OPENAI_API_KEY": &c.OpenAIAPIKey, "MUSE_MODEL": &c.Model,
		"MUSE_EMBEDDING_MODEL": &c.EmbeddingModel, "OLLAMA_HOST": &c.OllamaURL,
		"SEARXNG_URL": &c.SearXNGURL, "BRAVE_API_KEY": &c.BraveAPIKey, "GOOGLE_CSE_KEY": &c.GoogleCSEKey,
		"GOOGLE_CSE_CX": &c.GoogleCSECX, "SERPAPI_API_KEY": &c.SerpAPIKey,
		"GOOGLE_FACTCHECK_API_KEY": &c.FactCheckAPIKey, "SERPER_API_KEY": &c.SerperAPIKey,
		"TAVILY_API_KEY": &c.TavilyAPIKey, "EXA_API_KEY": &c.ExaAPIKey, "MUSE_RATINGS": &c.RatingsFile,
		"MUSE_OVERRIDES": &c.OverridesFile, "MUSE_RATINGS_URL": &c.RatingsURL, "MUSE_DATA_DIR": &c.DataDir,
	}
	for k, p := range strs {
		if v := strings.TrimSpace(getenv(k)); v != "" {
			*p = v
		}
	}
	bools := map[string]*bool{"MUSE_ALLOW_PRIVATE_ADDRESSES": &c.AllowPrivateAddresses, "MUSE_IGNORE_ROBOTS": &c.IgnoreRobots,
		"MUSE_NO_CACHE": &c.NoCache}
	for k, p := range bools {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			continue
		}
		b, err := strconv.ParseBool(v)
		if err != nil {
			return fmt.Errorf("environment %s=%q: want 1, 0, true or false", k, v)
		}
		*p = b
	}
	floats := map[string]*float64{"MUSE_SPEND_CAP_CHECK_USD": &c.SpendCapCheckUSD, "MUSE_SPEND_CAP_DAY_USD": &c.SpendCapDayUSD}
	for k, p := range floats {
		v := strings.TrimSpace(getenv(k))
		if v == "" {
			continue
		}
		f, err := strconv.ParseFloat(strings.TrimPrefix(v, "$"), 64)
		if err != nil || f < 0 {
			return fmt.Errorf("environment %s=%q: want an amount in US dollars such as 0.50", k, v)
		}
		*p = f
	}
	if v := strings.TrimSpace(getenv("MUSE_CACHE_TTL")); v != "" {
		d, err := time.ParseDuration(v)
		if err != nil || d < 0 {
			return fmt.Errorf("environment MUSE_CACHE_TTL=%q: want a duration such as 24h or 30m", v)
		}
		c.CacheTTL = d
	}
	return nil
}

// Secrets returns every credential in the configuration (empty ones
// left out): what the case store, the cache, exports and logs must never
// write down.
func (c *Config) Secrets() []string {
	var out []string
	for _, s := range []string{c.OpenAIAPIKey, c.BraveAPIKey, c.GoogleCSEKey, c.SerpAPIKey, c.FactCheckAPIKey,
		c.SerperAPIKey, c.TavilyAPIKey, c.ExaAPIKey} {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// ArchivePath is the SQLite database of every page muse reads.
func (c *Config) ArchivePath() string { return filepath.Join(c.DataDir, "archive.db") }

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
