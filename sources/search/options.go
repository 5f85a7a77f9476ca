package search

import (
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// Default API roots; each provider appends its documented path.
const (
	DefaultBraveURL     = "https://api.search.brave.com"
	DefaultGoogleCSEURL = "https://www.googleapis.com"
	DefaultSerpAPIURL   = "https://serpapi.com"
	DefaultFactCheckURL = "https://factchecktools.googleapis.com"
	DefaultSerperURL    = "https://google.serper.dev"
	DefaultTavilyURL    = "https://api.tavily.com"
	DefaultExaURL       = "https://api.exa.ai"
)

// GoogleCSEEndOfLife is the day Google's Custom Search JSON API stops
// answering existing customers (it has been closed to new ones since 2025).
var GoogleCSEEndOfLife = time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)

// GoogleCSEWarning is what `muse doctor` says while GOOGLE_CSE_KEY is set.
const GoogleCSEWarning = "Google's Custom Search JSON API shuts down on 2027-01-01 and takes no new customers: " +
	"add SERPER_API_KEY (Google results), TAVILY_API_KEY, EXA_API_KEY or BRAVE_API_KEY before then"

// Provider names, as they appear in Hit.Provider and ProviderError.Provider.
const (
	NameSearXNG   = "searxng"
	NameBrave     = "brave"
	NameGoogle    = "google"
	NameSerpAPI   = "serpapi"
	NameFactCheck = "factcheck"
	NameSerper    = "serper"
	NameTavily    = "tavily"
	NameExa       = "exa"
)

// SetupHint tells a user with no web search provider what to configure.
const SetupHint = "no web search provider configured: set SEARXNG_URL (a self-hosted SearXNG with the json format enabled), " +
	"SERPER_API_KEY, TAVILY_API_KEY, EXA_API_KEY, BRAVE_API_KEY, SERPAPI_API_KEY, GOOGLE_CSE_KEY and GOOGLE_CSE_CX, or GOOGLE_FACTCHECK_API_KEY"

// Options configures the web search providers. A provider is on when its
// URL or key is set; pipeline/config fills this from flags, environment
// (the variable named on each field) and the config file.
type Options struct {
	// Client sends every provider request. The user chose these endpoints,
	// so an ordinary client is right (a self-hosted SearXNG on localhost must
	// work). Nil means a client with a 20s timeout that honours
	// HTTP_PROXY/HTTPS_PROXY/NO_PROXY.
	Client *http.Client
	// Retry bounds retries of 429 and 5xx answers and of network failures;
	// the zero value is sensible.
	Retry Retry
	// SiteRequests bounds the requests one query restricted to sites
	// (Query.Sites) may cost each provider; zero means DefaultSiteRequests.
	SiteRequests int

	// SearXNGURL is the instance's base URL, e.g. "http://localhost:8888"
	// (SEARXNG_URL); "/search" is appended. The instance must list json in
	// search.formats of its settings.yml.
	SearXNGURL string

	// BraveAPIKey is the Brave Search API subscription token (BRAVE_API_KEY).
	BraveAPIKey string
	// BraveURL overrides DefaultBraveURL; "/res/v1/web/search" is appended.
	BraveURL string

	// GoogleCSEKey and GoogleCSECX are the Programmable Search API key and
	// engine ID (GOOGLE_CSE_KEY, GOOGLE_CSE_CX); both are needed.
	GoogleCSEKey string
	GoogleCSECX  string
	// GoogleCSEURL overrides DefaultGoogleCSEURL; "/customsearch/v1" is appended.
	GoogleCSEURL string

	// SerpAPIKey is the SerpAPI key (SERPAPI_API_KEY).
	SerpAPIKey string
	// SerpAPIURL overrides DefaultSerpAPIURL; "/search.json" is appended.
	SerpAPIURL string

	// SerperAPIKey is the Serper key (SERPER_API_KEY): Google results
	// through google.serper.dev.
	SerperAPIKey string
	// SerperURL overrides DefaultSerperURL; "/search" is appended.
	SerperURL string

	// TavilyAPIKey is the Tavily key, "tvly-…" (TAVILY_API_KEY).
	TavilyAPIKey string
	// TavilyURL overrides DefaultTavilyURL; "/search" is appended.
	TavilyURL string
	// TavilySearchDepth is Tavily's search_depth: "basic" (one credit, the
	// default) or "advanced" (two credits, better snippets).
	TavilySearchDepth string

	// ExaAPIKey is the Exa key (EXA_API_KEY).
	ExaAPIKey string
	// ExaURL overrides DefaultExaURL; "/search" is appended.
	ExaURL string

	// FactCheckAPIKey is a Google API key with the Fact Check Tools API
	// enabled (GOOGLE_FACTCHECK_API_KEY).
	FactCheckAPIKey string
	// FactCheckURL overrides DefaultFactCheckURL; "/v1alpha1/claims:search" is appended.
	FactCheckURL string
	// FactCheckLanguage optionally restricts fact-checks to a BCP-47
	// language, e.g. "en".
	FactCheckLanguage string
	// FactCheckMaxAgeDays optionally drops fact-checks older than this many
	// days (the API's maxAgeDays); zero means no limit.
	FactCheckMaxAgeDays int
}

// Providers returns a Searcher for each configured provider, in a fixed
// order (SearXNG, Brave, Serper, Tavily, Exa, Google, SerpAPI, Fact Check)
// that Run uses to break ties. It returns none when nothing is configured; see Problems and SetupHint.
func Providers(opts Options) []Searcher {
	client := opts.Client
	if client == nil {
		client = defaultClient()
	}
	siteRequests := opts.SiteRequests
	if siteRequests <= 0 {
		siteRequests = DefaultSiteRequests
	}
	ep := func(advice func(int) string) endpoint {
		return endpoint{client: client, retry: opts.Retry, advice: advice, siteRequests: siteRequests}
	}
	var out []Searcher
	if opts.SearXNGURL != "" {
		out = append(out, &searxng{endpoint: ep(searxngAdvice), base: opts.SearXNGURL})
	}
	if opts.BraveAPIKey != "" {
		out = append(out, &brave{endpoint: ep(keyAdvice("BRAVE_API_KEY")), base: or(opts.BraveURL, DefaultBraveURL), key: opts.BraveAPIKey})
	}
	if opts.SerperAPIKey != "" {
		out = append(out, &serper{endpoint: ep(keyAdvice("SERPER_API_KEY")), base: or(opts.SerperURL, DefaultSerperURL), key: opts.SerperAPIKey})
	}
	if opts.TavilyAPIKey != "" {
		out = append(out, &tavily{endpoint: ep(tavilyAdvice), base: or(opts.TavilyURL, DefaultTavilyURL), key: opts.TavilyAPIKey,
			depth: or(opts.TavilySearchDepth, "basic")})
	}
	if opts.ExaAPIKey != "" {
		out = append(out, &exa{endpoint: ep(keyAdvice("EXA_API_KEY")), base: or(opts.ExaURL, DefaultExaURL), key: opts.ExaAPIKey})
	}
	if opts.GoogleCSEKey != "" && opts.GoogleCSECX != "" {
		out = append(out, &googleCSE{endpoint: ep(googleAdvice("GOOGLE_CSE_KEY and GOOGLE_CSE_CX", "Custom Search API")),
			base: or(opts.GoogleCSEURL, DefaultGoogleCSEURL), key: opts.GoogleCSEKey, cx: opts.GoogleCSECX})
	}
	if opts.SerpAPIKey != "" {
		out = append(out, &serpAPI{endpoint: ep(keyAdvice("SERPAPI_API_KEY")), base: or(opts.SerpAPIURL, DefaultSerpAPIURL), key: opts.SerpAPIKey})
	}
	if opts.FactCheckAPIKey != "" {
		out = append(out, &factCheck{endpoint: ep(googleAdvice("GOOGLE_FACTCHECK_API_KEY", "Fact Check Tools API")),
			base: or(opts.FactCheckURL, DefaultFactCheckURL), key: opts.FactCheckAPIKey,
			language: opts.FactCheckLanguage, maxAgeDays: opts.FactCheckMaxAgeDays})
	}
	return out
}

// Problems lists configuration mistakes that leave a provider off or
// broken, such as a Programmable Search key without its engine ID.
func (o Options) Problems() []string {
	var p []string
	if o.SearXNGURL != "" {
		if u, err := url.Parse(o.SearXNGURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
			p = append(p, fmt.Sprintf("SEARXNG_URL %q is not an http(s) URL such as http://localhost:8888", o.SearXNGURL))
		}
	}
	if (o.GoogleCSEKey == "") != (o.GoogleCSECX == "") {
		p = append(p, "Google Programmable Search needs both GOOGLE_CSE_KEY and GOOGLE_CSE_CX; it is off")
	}
	if d := o.TavilySearchDepth; d != "" && d != "basic" && d != "advanced" {
		p = append(p, fmt.Sprintf("Tavily search depth %q is neither basic nor advanced", d))
	}
	return p
}

func defaultClient() *http.Client {
	t := http.DefaultTransport.(*http.Transport).Clone()
	t.Proxy = http.ProxyFromEnvironment // stated, not inherited: the proxy environment is part of the contract
	return &http.Client{Timeout: 20 * time.Second, Transport: t}
}

func or(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// join appends an API path to a configured root, tolerating a trailing slash.
func join(base, path string) string {
	return strings.TrimRight(base, "/") + path
}

func keyAdvice(env string) func(int) string {
	return func(status int) string {
		switch status {
		case http.StatusUnauthorized, http.StatusForbidden:
			return "check " + env
		case http.StatusTooManyRequests:
			return "rate limit or quota reached for " + env
		}
		return ""
	}
}

func googleAdvice(env, api string) func(int) string {
	return func(status int) string {
		switch status {
		case http.StatusBadRequest, http.StatusUnauthorized:
			return "check " + env
		case http.StatusForbidden:
			return "check " + env + " and that the " + api + " is enabled for the key's project"
		case http.StatusTooManyRequests:
			return "daily quota of the " + api + " may be used up"
		}
		return ""
	}
}

func tavilyAdvice(status int) string {
	switch status {
	case http.StatusUnauthorized, http.StatusForbidden:
		return "check TAVILY_API_KEY"
	case http.StatusTooManyRequests:
		return "Tavily's per-minute rate limit for TAVILY_API_KEY was reached"
	case 432, 433: // Tavily's own codes: plan limit, pay-as-you-go limit
		return "TAVILY_API_KEY's plan or spending limit is used up"
	}
	return ""
}

func searxngAdvice(status int) string {
	switch status {
	case http.StatusForbidden:
		return "enable the json format in the instance's settings.yml: search: formats: [html, json]"
	case http.StatusNotFound:
		return "check that SEARXNG_URL is the instance's base URL"
	case http.StatusTooManyRequests:
		return "the instance's limiter refused us; disable server.limiter for a private instance"
	}
	return ""
}
