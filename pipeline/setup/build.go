package setup

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/rdap"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/spend"
)

// ModelSetupHint says exactly what to set when no model is configured.
const ModelSetupHint = "set OPENAI_API_KEY (and optionally MUSE_MODEL, default " +
	llm.DefaultModel + ") for OpenAI; or OPENAI_BASE_URL and MUSE_MODEL for any OpenAI-compatible server " +
	"(for Ollama: OPENAI_BASE_URL=http://localhost:11434/v1 MUSE_MODEL=llama3.1); or start Ollama on localhost; " +
	"or run with --no-llm for the extractive mode, which lists sources and gives no verdict"

// NewFromConfig builds the engine the way muse runs it: the model from
// OPENAI_* / MUSE_MODEL (or an Ollama found on localhost), the configured
// search providers plus the local archive, the safe fetcher, the extractor
// and the publisher ratings. close releases the archive. Without a model
// and without opts.NoLLM it returns an error wrapping ErrNoModel that says
// what to set (ModelSetupHint).
//
// Search and model requests go through the response cache
// (sources/httpcache, cfg.DataDir/cache.db; cfg.NoCache turns it off), so
// a rerun does not pay twice. cfg.SpendCapCheckUSD becomes
// opts.SpendCapCheckUSD unless that is set; cfg.SpendCapDayUSD is kept
// with the ledger of package spend (cfg.DataDir/spend.db).
func NewFromConfig(ctx context.Context, cfg *Config, opts pipeline.Options) (e *pipeline.Engine, closer func() error, err error) {
	var deps pipeline.Deps
	var closers []func() error
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	defer func() {
		if err != nil {
			closeAll()
		}
	}()
	// The model and search clients get transports of their own, so that
	// close can drop their idle keep-alive connections (which would
	// otherwise hold two goroutines each for 90 s) without touching
	// http.DefaultTransport, which others in the process share.
	modelTr, searchTr := newTransport(), newTransport()
	closers = append(closers, func() error {
		modelTr.CloseIdleConnections()
		searchTr.CloseIdleConnections()
		return nil
	})
	// The response cache and the archive are extras: when either cannot
	// be opened (corrupt, read-only, a data directory that is a file), the
	// check runs without it and each check says so in a warning.
	var warns []string
	cache, cerr := openCache(ctx, cfg)
	if cerr != nil {
		warns = append(warns, cerr.Error())
	} else {
		closers = append(closers, cache.Close)
	}
	if opts.SpendCapCheckUSD <= 0 {
		opts.SpendCapCheckUSD = cfg.SpendCapCheckUSD
	}
	if opts.FirstPassHits <= 0 {
		opts.FirstPassHits = cfg.HitsPerQuery
	}
	if opts.EvidenceTokens <= 0 {
		opts.EvidenceTokens = cfg.EvidencePageTokens.Tokens()
	}
	if !opts.NoLLM {
		var guard llm.SpendGuard
		if cfg.SpendCapDayUSD > 0 {
			ledger, err := spend.Open(ctx, cfg.LedgerPath())
			if err != nil {
				return nil, nil, err
			}
			closers = append(closers, ledger.Close)
			guard = ledger.DayGuard(cfg.SpendCapDayUSD)
		}
		client, err := newLLMClient(ctx, cfg, opts, cachedClient(cache, &http.Client{Transport: modelTr}),
			&http.Client{Timeout: ollamaDetectTimeout, Transport: modelTr}, guard, cache)
		if err != nil {
			return nil, nil, err
		}
		if err := checkCaps(cfg, opts.SpendCapCheckUSD, client); err != nil {
			return nil, nil, err
		}
		m := &pipeline.LLMModel{Client: client}
		deps.Model = m
		deps.Transcriber = client // a server without /audio/transcriptions: videos are read from their frames, saying so
		if cfg.EmbeddingModel != "" || cfg.Models[llm.TaskEmbeddings] != "" {
			m.Embeddings = true
			deps.Embedder = m
		}
	}
	rater, err := ratings.Load(RatingsOptions(cfg))
	if err != nil {
		return nil, nil, err
	}
	deps.Rater = newRaterAdapter(rater)
	fo := FetchOptions(cfg)
	store, aerr := openArchive(ctx, cfg)
	if aerr != nil {
		warns = append(warns, aerr.Error())
	} else {
		closers = append(closers, store.Close)
		deps.Archive = pipeline.ArchiveOf(store)
		if fs, ok := any(store).(fetch.Store); ok {
			fo.Store = fs
		}
	}
	if opts.PageProxy != nil {
		fo.Proxy = http.ProxyURL(opts.PageProxy)
	}
	fetcher := fetch.New(fo)
	deps.Fetcher = pipeline.RememberingFetcher(fetcher)
	if cfg.RDAP {
		// Through the page fetcher's guard: the bootstrap file names the
		// servers asked.
		rc := &rdap.Client{HTTP: fetcher.Client(), BootstrapURL: cfg.RDAPBootstrapURL}
		deps.DomainRegistered = rc.Registered
	}
	deps.Extract = func(body []byte, pageURL string) (*extract.Article, error) {
		return extract.Options{}.ExtractContent(body, "", pageURL) // HTML, or a PDF by its bytes
	}
	deps.Searchers = searchers(cfg, cache, store, searchTr)
	iso := SearchOptions(cfg)
	iso.Client = &http.Client{Timeout: searchTimeout, Transport: searchTr}
	deps.ImageSearchers = search.ImageSearchers(iso)
	io := images.Options{AllowPrivate: cfg.AllowPrivateAddresses}
	if opts.PageProxy != nil {
		io.Proxy = http.ProxyURL(opts.PageProxy)
	}
	deps.Images = pipeline.ImageLoader(io)
	opts.Posts.AllowPrivate = opts.Posts.AllowPrivate || cfg.AllowPrivateAddresses
	opts.Video = VideoOptions(cfg, opts.Video)
	vd := pipeline.VideoDownloader{AllowPrivate: cfg.AllowPrivateAddresses}
	if opts.PageProxy != nil {
		vd.Proxy = http.ProxyURL(opts.PageProxy)
	}
	deps.Videos = vd
	deps.Warnings = warns
	e, err = pipeline.New(deps, opts)
	if err != nil {
		return nil, nil, err
	}
	closers = append(closers, func() error { fetcher.CloseIdleConnections(); return nil })
	return e, closeAll, nil
}

// VideoOptions are o with what cfg sets of videos: the caps, and muse's
// cache directory for the files a video's reading writes.
func VideoOptions(cfg *Config, o pipeline.VideoOptions) pipeline.VideoOptions {
	o.CacheDir = cmp.Or(o.CacheDir, cfg.CacheDir, cfg.DataDir)
	if cfg.VideoMaxMB > 0 && o.Limits.MaxBytes == 0 {
		o.Limits.MaxBytes = int64(cfg.VideoMaxMB * 1e6)
	}
	if cfg.VideoMaxMinutes > 0 && o.Limits.MaxDuration == 0 {
		o.Limits.MaxDuration = time.Duration(cfg.VideoMaxMinutes * float64(time.Minute))
	}
	if cfg.VideoFrames > 0 && o.Limits.MaxFrames == 0 {
		o.Limits.MaxFrames = cfg.VideoFrames
	}
	return o
}

// searchTimeout bounds one search-provider request, as sources/search's
// own default client does.
const searchTimeout = 20 * time.Second

// RatingsOptions is how muse loads publisher ratings under cfg.
func RatingsOptions(cfg *Config) ratings.Options {
	return ratings.Options{File: cfg.RatingsFile, DataDir: cfg.DataDir, OverridesFile: cfg.OverridesFile}
}

// FetchOptions is how muse fetches pages under cfg; the caller adds a
// Store (the archive) or a Proxy where it has one.
func FetchOptions(cfg *Config) fetch.Options {
	return fetch.Options{AllowPrivate: cfg.AllowPrivateAddresses, IgnoreRobots: cfg.IgnoreRobots}
}

// Searchers are the searches a check makes under cfg: the configured web
// providers through the response cache, then the local archive. As in a
// check, a cache or archive that cannot be opened is left out and warn
// (which may be nil) is told why, as it is of setup problems and of there
// being no web provider; the error comes only when nothing at all can be
// searched. close releases the cache and the archive and drops idle
// connections.
func Searchers(ctx context.Context, cfg *Config, warn func(string)) (s []search.Searcher, close func() error, err error) {
	say := func(m string) {
		if warn != nil {
			warn(m)
		}
	}
	for _, p := range SearchOptions(cfg).Problems() {
		say(p)
	}
	tr := newTransport()
	closers := []func() error{func() error { tr.CloseIdleConnections(); return nil }}
	cache, err := openCache(ctx, cfg)
	if err != nil {
		say(err.Error())
	} else {
		closers = append(closers, cache.Close)
	}
	store, aerr := openArchive(ctx, cfg)
	if aerr == nil {
		closers = append(closers, store.Close)
	}
	closeAll := func() error {
		var errs []error
		for i := len(closers) - 1; i >= 0; i-- {
			errs = append(errs, closers[i]())
		}
		return errors.Join(errs...)
	}
	s = searchers(cfg, cache, store, tr)
	web := len(s)
	if store != nil {
		web--
	}
	switch {
	case web == 0 && aerr != nil:
		closeAll()
		return nil, nil, fmt.Errorf("%s; and %w", search.SetupHint, aerr)
	case aerr != nil:
		say(aerr.Error())
	case web == 0:
		say(search.SetupHint + " (searching the local archive only)")
	}
	return s, closeAll, nil
}

// archiveSearchBudget bounds one archive search inside a check; what was
// ranked by then is used and the cut is warned of.
const archiveSearchBudget = 2 * time.Second

// searchers are the web providers cfg configures, through cache when it
// is not nil, then store's search when it is not nil.
func searchers(cfg *Config, cache *httpcache.Cache, store *archive.Store, tr http.RoundTripper) []search.Searcher {
	so := SearchOptions(cfg)
	so.Client = cachedClient(cache, &http.Client{Timeout: searchTimeout, Transport: tr})
	s := search.Providers(so)
	if store != nil {
		// A slow archive search is cut and reported, never blocks a check.
		s = append(s, store.SearcherWith(archive.SearcherOptions{Budget: archiveSearchBudget}))
	}
	return s
}

// openArchive opens the local archive cfg names; its error says the
// archive is left out.
func openArchive(ctx context.Context, cfg *Config) (*archive.Store, error) {
	st, err := archive.Open(ctx, cfg.ArchivePath())
	if err != nil {
		return nil, fmt.Errorf("the local archive is left out (pages are neither kept nor searched there): %w", err)
	}
	return st, nil
}

// openCache opens the response cache cfg names; its error says the calls
// will go uncached.
func openCache(ctx context.Context, cfg *Config) (*httpcache.Cache, error) {
	c, err := httpcache.Open(ctx, httpcache.Options{Path: cfg.CachePath(), TTL: cfg.CacheTTL,
		Bypass: cfg.NoCache, Secrets: cfg.Secrets(), Skip: isModelListing})
	if err != nil {
		return nil, fmt.Errorf("the response cache is left out (model and search calls are not cached): open the response cache: %w", err)
	}
	return c, nil
}

// cachedClient is hc through cache, or hc itself without a cache.
func cachedClient(cache *httpcache.Cache, hc *http.Client) *http.Client {
	if cache == nil {
		return hc
	}
	return cache.Client(hc)
}

// ollamaDetectTimeout bounds the look for an Ollama on localhost, as
// llm.DetectOllama's own default client does.
const ollamaDetectTimeout = 2 * time.Second

// newTransport is a transport like http.DefaultTransport (proxy from the
// environment, HTTP/2, its timeouts) but not shared with the process.
func newTransport() *http.Transport {
	return http.DefaultTransport.(*http.Transport).Clone()
}

// isModelListing tells the cache to let model listings through: Ollama's
// /api/tags and the OpenAI-style /models say what is installed now.
func isModelListing(r *http.Request) bool {
	p := strings.TrimRight(r.URL.Path, "/")
	return r.Method == http.MethodGet && (strings.HasSuffix(p, "/api/tags") || strings.HasSuffix(p, "/models"))
}

// SearchOptions is the search part of the configuration.
func SearchOptions(cfg *Config) search.Options {
	return search.Options{SearXNGURL: cfg.SearXNGURL, BraveAPIKey: cfg.BraveAPIKey, GoogleCSEKey: cfg.GoogleCSEKey,
		GoogleCSECX: cfg.GoogleCSECX, SerpAPIKey: cfg.SerpAPIKey, FactCheckAPIKey: cfg.FactCheckAPIKey,
		SerperAPIKey: cfg.SerperAPIKey, TavilyAPIKey: cfg.TavilyAPIKey, ExaAPIKey: cfg.ExaAPIKey}
}

// NewLLMClient makes the model client from the configuration: the
// OpenAI-compatible server it names, or else an Ollama answering on
// localhost (OLLAMA_HOST), or else an error wrapping ErrNoModel.
func NewLLMClient(ctx context.Context, cfg *Config, opts pipeline.Options) (*llm.Client, error) {
	return newLLMClient(ctx, cfg, opts, nil, nil, nil, nil)
}

// newLLMClient is NewLLMClient with the HTTP client for model calls (the
// response cache's), the one that looks for Ollama (nil: a plain one) and
// the per-day spend guard; the model capabilities learned are kept in
// cache when it is not nil.
func newLLMClient(ctx context.Context, cfg *Config, opts pipeline.Options, hc, detect *http.Client, guard llm.SpendGuard, cache *httpcache.Cache) (*llm.Client, error) {
	lc := llm.Config{BaseURL: cfg.OpenAIBaseURL, APIKey: cfg.OpenAIAPIKey, Model: cfg.Model, Models: cfg.Models,
		EmbeddingModel: cfg.EmbeddingModel, Timeout: opts.LLMTimeout, RetryBaseDelay: opts.LLMRetryDelay,
		Deadline: opts.LLMDeadline, MaxAnswerBytes: opts.LLMMaxAnswerBytes, ContextWindow: opts.ContextWindow,
		Prices: map[string]llm.Price{}, HTTPClient: hc, SpendGuard: guard,
		Provider: cfg.Provider, AzureAPIVersion: cfg.AzureAPIVersion}
	if len(cfg.Capabilities) > 0 {
		lc.Capabilities = map[string]llm.Capabilities{}
	}
	for name, m := range cfg.Capabilities {
		lc.Capabilities[name] = llmCapabilities(m)
	}
	for name, p := range cfg.Prices {
		lc.Prices[name] = llm.Price{PromptPerMTok: p.Prompt, CompletionPerMTok: p.Completion, CachedPromptPerMTok: p.CachedPrompt}
	}
	if lc.BaseURL == "" && lc.APIKey == "" {
		base := OllamaURL(cfg)
		models, ok := llm.DetectOllama(ctx, detect, base)
		chat, embed := llm.SplitEmbeddingModels(models)
		switch {
		case ok && len(chat) == 0 && lc.Model == "":
			return nil, fmt.Errorf("%w: Ollama answers at %s but has no model pulled: run `ollama pull llama3.1` (or any chat model); or %s",
				pipeline.ErrNoModel, base, ModelSetupHint)
		case !ok:
			return nil, fmt.Errorf("%w: %s", pipeline.ErrNoModel, ModelSetupHint)
		}
		lc.BaseURL = llm.OllamaBaseURL(base)
		lc.Model = cmp.Or(lc.Model, first(chat))
		if lc.EmbeddingModel == "" {
			lc.EmbeddingModel = first(embed)
		}
	}
	// An Azure deployment's address names the model (its deployment).
	if lc.BaseURL != "" && lc.Model == "" && !isOpenAI(lc.BaseURL) && !strings.Contains(lc.BaseURL, "/openai/deployments/") {
		return nil, fmt.Errorf("%w: OPENAI_BASE_URL is set (%s) but no model is named for it: set MUSE_MODEL (or model in config.toml) to one of the server's models",
			pipeline.ErrNoModel, maskURL(lc.BaseURL))
	}
	if cache != nil {
		rememberCapabilities(ctx, &lc, cache)
	}
	c, err := llm.New(lc)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", pipeline.ErrNoModel, err)
	}
	return c, nil
}

// llmCapabilities is a [capabilities."model"] table as the model client
// takes it; a value it does not know (a Problem of Load) is left out.
func llmCapabilities(m ModelCapabilities) llm.Capabilities {
	cp := llm.Capabilities{
		NoTemperature:       m.Temperature != nil && !*m.Temperature,
		MaxCompletionTokens: m.TokenLimit == "max_completion_tokens",
		NoStreamOptions:     m.StreamOptions != nil && !*m.StreamOptions,
	}
	switch m.ResponseFormat {
	case llm.FormatJSONObject, llm.FormatNone:
		cp.Format = m.ResponseFormat
	}
	return cp
}

// OllamaURL is where an Ollama server is looked for: OLLAMA_HOST (with or
// without a scheme) or localhost:11434.
func OllamaURL(cfg *Config) string {
	h := strings.TrimSpace(cfg.OllamaURL)
	if h == "" {
		return llm.DefaultOllamaURL
	}
	if !strings.Contains(h, "://") {
		h = "http://" + h
	}
	return h
}

func first(s []string) string {
	if len(s) == 0 {
		return ""
	}
	return s[0]
}

type raterAdapter struct {
	r     *ratings.Rater
	sites func() []string // the credible domains, listed once per engine
}

func newRaterAdapter(r *ratings.Rater) raterAdapter {
	return raterAdapter{r: r, sites: sync.OnceValue(r.CredibleDomains)}
}

// CredibleDomains lists the high- then medium-tier domains the ratings
// know, for the search restricted to credible publishers. Rating the few
// thousand rows is done once, not on every search.
func (a raterAdapter) CredibleDomains() []string { return a.sites() }

func (a raterAdapter) Rate(u string) pipeline.Rating {
	rt := a.r.Rate(u)
	return pipeline.Rating{Domain: cmp.Or(rt.Domain, sources.HostOf(u)), Publisher: rt.Publisher, Factuality: rt.Factuality,
		Bias: rt.Bias, Tier: rt.Tier, Origin: rt.Origin, UserContent: rt.UserContent, Boost: rt.Boost, Drop: rt.Drop}
}

// rememberCapabilities gives the client what earlier processes learned of
// the models of its server (a parameter a model does not take costs one
// rejected call, not one a process) and keeps what it learns. The cache
// is an extra: when it cannot be read or written, the client learns again.
func rememberCapabilities(ctx context.Context, lc *llm.Config, cache *httpcache.Cache) {
	server := capabilitiesServer(lc.BaseURL)
	kept, err := cache.Capabilities(ctx, server)
	if err != nil {
		return
	}
	for model, raw := range kept {
		var cp llm.Capabilities
		if json.Unmarshal(raw, &cp) != nil {
			continue
		}
		if lc.Learned == nil {
			lc.Learned = map[string]llm.Capabilities{}
		}
		lc.Learned[model] = cp
	}
	lc.OnLearn = func(model string, cp llm.Capabilities) {
		if raw, err := json.Marshal(cp); err == nil {
			_ = cache.SetCapabilities(context.WithoutCancel(ctx), server, model, raw)
		}
	}
}

// capabilitiesServer names a model server in the cache: its base URL
// without credentials, query or fragment.
func capabilitiesServer(base string) string {
	u, err := url.Parse(base)
	if err != nil {
		return base
	}
	u.User, u.RawQuery, u.Fragment = nil, "", ""
	return strings.TrimRight(u.String(), "/")
}
