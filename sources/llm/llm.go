// Package llm is muse's client for OpenAI-compatible chat, streaming, JSON
// schema output, vision and embeddings. It wraps go-openai and adds what the
// Muse pipeline needs on top: temperature 0 that actually reaches the wire,
// structured output with a fallback for servers without schema support,
// retries that honour Retry-After, typed errors with advice, and token/cost
// accounting per task.
//
// The client talks to any server that speaks the OpenAI wire protocol:
// api.openai.com, Ollama (http://localhost:11434/v1), vLLM, llama.cpp,
// LiteLLM, OpenRouter and the like.
package llm

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Tasks name the pipeline steps that call a model. Config.Models is keyed by
// them and usage is accounted per task.
const (
	TaskQueries    = "queries"
	TaskEvidence   = "evidence"
	TaskCorrection = "correction"
	TaskVision     = "vision"
	TaskEmbeddings = "embeddings"
)

// Defaults used when the Config leaves a field empty.
const (
	DefaultBaseURL        = "https://api.openai.com/v1"
	DefaultModel          = "gpt-4o"
	DefaultEmbeddingModel = "text-embedding-3-small"
	DefaultTimeout        = 90 * time.Second
	DefaultMaxRetries     = 3
	DefaultRetryBaseDelay = time.Second
	DefaultMaxRetryWait   = 60 * time.Second
	// DefaultDeadline bounds a whole call, retries and stream included;
	// DefaultMaxAnswerBytes caps the answer text of one call. No
	// correction of a few sentences comes near either.
	DefaultDeadline       = 120 * time.Second
	DefaultMaxAnswerBytes = 64 << 10
)

// ZeroTemperature is the temperature muse sends. The paper runs at
// temperature 0, but go-openai drops a zero float32 from the JSON
// (omitempty), and the server then uses its own default (usually 1). This
// value is zero for every practical purpose (servers treat it as greedy
// decoding) and encodes on the wire as 0.000001, so it is never omitted.
const ZeroTemperature float32 = 1e-6

// Message is a chat message in the OpenAI format. Use MultiContent with
// ImagePart for vision input.
type Message = openai.ChatCompletionMessage

// Config configures a Client. The lead's pipeline/config fills it from flags,
// environment (OPENAI_BASE_URL, OPENAI_API_KEY, MUSE_MODEL) and config file.
type Config struct {
	// BaseURL of the OpenAI-compatible API, including the version path, as in
	// OPENAI_BASE_URL ("https://api.openai.com/v1", "http://localhost:11434/v1").
	// Empty means DefaultBaseURL.
	BaseURL string
	// APIKey is sent as a Bearer token. Required for api.openai.com; local
	// servers such as Ollama accept an empty key.
	APIKey string
	// Model is the chat model used for every task not named in Models (MUSE_MODEL).
	// Empty means DefaultModel when BaseURL is OpenAI's; other servers need a model.
	Model string
	// Models overrides the model per task: "queries", "evidence", "correction",
	// "vision", "embeddings".
	Models map[string]string
	// EmbeddingModel is used for Embed unless Models["embeddings"] is set.
	// Empty means DefaultEmbeddingModel.
	EmbeddingModel string
	// Timeout bounds one attempt of a non-streamed call; for a stream it bounds
	// the wait for the first byte and for each following chunk. 0 means DefaultTimeout.
	Timeout time.Duration
	// MaxRetries is how many times a call is retried after a rate limit, a 5xx,
	// a timeout or a dropped connection. 0 means DefaultMaxRetries; negative means none.
	MaxRetries int
	// RetryBaseDelay is the first backoff delay (doubling, with jitter) when the
	// server gives no Retry-After. 0 means DefaultRetryBaseDelay.
	RetryBaseDelay time.Duration
	// MaxRetryWait caps any single wait, including one asked by Retry-After.
	// 0 means DefaultMaxRetryWait.
	MaxRetryWait time.Duration
	// Prices, USD per million tokens keyed by model name (or name prefix),
	// extend and override DefaultPrices.
	Prices map[string]Price
	// HTTPClient carries proxies and TLS settings. nil means a plain client.
	// Its own Timeout should be 0 (streams are long); Config.Timeout applies.
	// A client from sources/httpcache (Cache.Client) makes repeated calls
	// free: replayed answers are counted in Usage.CachedCalls at no cost.
	HTTPClient *http.Client
	// SpendGuard, when set, is asked before every request (the per-day
	// cap); WithSpendGuard adds guards per context (the per-check cap).
	SpendGuard SpendGuard
	// Deadline bounds a whole call (every attempt, retry waits and the
	// stream); past it the call ends with ErrTimeout and a stream keeps the
	// text received. 0 means DefaultDeadline.
	Deadline time.Duration
	// MaxAnswerBytes caps the answer text of a call, and so (times 16) the
	// bytes read from the server for it: past it the call ends with
	// ErrTooLarge, keeping what was received. 0 means DefaultMaxAnswerBytes.
	MaxAnswerBytes int
	// ContextWindow is the model's context in tokens (prompt and answer);
	// 0 means ask the server (ContextWindow).
	ContextWindow int
	// Provider names the server's dialect when its host does not show it:
	// "azure" for Azure OpenAI behind another host name. Empty: read from
	// the host (*.openai.azure.com, *.cognitiveservices.azure.com are Azure).
	Provider string
	// AzureAPIVersion is the api-version query sent to an Azure OpenAI
	// deployment URL. Empty: the one in BaseURL's query, else
	// DefaultAzureAPIVersion. The /openai/v1 API needs none.
	AzureAPIVersion string
	// Capabilities, by model name, say which parameters a model takes
	// when its name does not (a reasoning model behind an alias); what
	// a server's 400 teaches is added to them for the process.
	Capabilities map[string]Capabilities
	// Learned are capabilities an earlier process learned from this
	// server's 400s (kept in the response cache), by model; a model named
	// in Capabilities keeps those. OnLearn is told each one learned now,
	// to keep it.
	Learned map[string]Capabilities
	OnLearn func(model string, cp Capabilities)
}

// Request is one chat call.
type Request struct {
	// Task selects the model (Config.Models) and the usage bucket. Empty means "correction".
	Task     string
	Messages []Message
	// Schema asks for structured JSON output; nil means plain text.
	Schema *Schema
	// MaxTokens caps the completion; 0 leaves it to the server.
	MaxTokens int
	// Shorten, when set, is called once if the server reports that the prompt
	// exceeds the model's context; it returns shorter messages (for example the
	// same prompt with the article cut in half) and the call is retried with
	// them. Returning nil gives up with ErrContextLength.
	Shorten func() []Message
}

// Response is the answer to a chat call.
type Response struct {
	// Text is the answer; for a cut stream, the part received before the cut.
	Text string
	// Usage of this call (Calls is 1, tokens as the server reported them).
	Usage Usage
	// Model is the model the server says answered.
	Model string
	// FinishReason as reported ("stop", "length", ...).
	FinishReason string
	// Structured is true when the server enforced the JSON schema; false when
	// the answer came from the plain-text fallback and needs lenient parsing.
	Structured bool
	// Shortened is true when Request.Shorten was used.
	Shortened bool
	// Enlarged is true when the answer was cut at Request.MaxTokens and
	// the call was made again with a larger limit (FinishReason is then
	// the second answer's: "length" if it was cut again).
	Enlarged bool
}

// Client calls one OpenAI-compatible server. It is safe for concurrent use.
type Client struct {
	cfg      Config
	provider string // the dialect: "Azure", "OpenRouter" or ""
	api      *openai.Client
	prices   map[string]Price

	// The server told us it cannot do these; don't ask again.
	noSchema      atomic.Bool
	noStreamUsage atomic.Bool

	// sleep waits between retries; tests replace it to record waits.
	sleep func(ctx context.Context, d time.Duration) error

	mu     sync.Mutex
	byTask map[string]Usage

	capsMu sync.Mutex
	caps   map[string]Capabilities // learned, by model

	winMu   sync.Mutex
	windows map[string]Window // by model
}

// New checks cfg and returns a client. It makes no network call.
func New(cfg Config) (*Client, error) {
	if cfg.BaseURL == "" {
		cfg.BaseURL = DefaultBaseURL
	}
	u, err := url.Parse(cfg.BaseURL)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		return nil, fmt.Errorf("llm: base URL %q is not an http(s) URL (set OPENAI_BASE_URL, e.g. https://api.openai.com/v1)", cfg.BaseURL)
	}
	cfg.BaseURL = strings.TrimRight(cfg.BaseURL, "/")
	provider := providerOf(cfg.BaseURL)
	if strings.EqualFold(cfg.Provider, "azure") {
		provider = "Azure"
	}
	var az azureTarget
	if provider == "Azure" {
		az = azureConfig(cfg, u)
		cfg.BaseURL = az.base
		if cfg.Model == "" {
			cfg.Model = az.deployment
		}
		if cfg.APIKey == "" {
			return nil, fmt.Errorf("llm: no API key for Azure OpenAI at %s: set OPENAI_API_KEY to the resource's key (muse sends it as the api-key header)", u.Host)
		}
	}
	official := u.Host == "api.openai.com"
	if official && cfg.APIKey == "" {
		return nil, fmt.Errorf("llm: no API key for %s: set OPENAI_API_KEY, or OPENAI_BASE_URL for another server", cfg.BaseURL)
	}
	if cfg.Model == "" {
		if !official {
			return nil, fmt.Errorf("llm: no model configured for %s: set MUSE_MODEL to one of the server's models", cfg.BaseURL)
		}
		cfg.Model = DefaultModel
	}
	if cfg.EmbeddingModel == "" {
		cfg.EmbeddingModel = DefaultEmbeddingModel
	}
	if cfg.Timeout <= 0 {
		cfg.Timeout = DefaultTimeout
	}
	if cfg.MaxRetries == 0 {
		cfg.MaxRetries = DefaultMaxRetries
	} else if cfg.MaxRetries < 0 {
		cfg.MaxRetries = 0
	}
	if cfg.RetryBaseDelay <= 0 {
		cfg.RetryBaseDelay = DefaultRetryBaseDelay
	}
	if cfg.MaxRetryWait <= 0 {
		cfg.MaxRetryWait = DefaultMaxRetryWait
	}
	if cfg.Deadline <= 0 {
		cfg.Deadline = DefaultDeadline
	}
	if cfg.MaxAnswerBytes <= 0 {
		cfg.MaxAnswerBytes = DefaultMaxAnswerBytes
	}
	hc := cfg.HTTPClient
	if hc == nil {
		hc = &http.Client{}
	}
	oc := openai.DefaultConfig(cfg.APIKey)
	oc.BaseURL = cfg.BaseURL
	doer := headerDoer{hc: hc}
	if az.on {
		oc = az.clientConfig(cfg.APIKey, cfg.Model)
		doer.apiKey = cfg.APIKey
	}
	oc.HTTPClient = doer
	prices := DefaultPrices()
	for k, v := range cfg.Prices {
		prices[k] = v
	}
	caps := map[string]Capabilities{}
	for model, cp := range cfg.Learned {
		if _, set := cfg.Capabilities[model]; !set {
			caps[model] = cp
		}
	}
	return &Client{
		cfg:      cfg,
		provider: provider,
		api:      openai.NewClientWithConfig(oc),
		prices:   prices,
		sleep:    sleepCtx,
		byTask:   map[string]Usage{},
		caps:     caps,
		windows:  map[string]Window{},
	}, nil
}

// BaseURL is the server the client talks to.
func (c *Client) BaseURL() string { return c.cfg.BaseURL }

// ModelFor is the model used for a task.
func (c *Client) ModelFor(task string) string {
	if m := c.cfg.Models[task]; m != "" {
		return m
	}
	if task == TaskEmbeddings {
		return c.cfg.EmbeddingModel
	}
	return c.cfg.Model
}

// SchemaSupported reports whether the client still sends response_format
// json_schema; it turns false once the server has rejected it.
func (c *Client) SchemaSupported() bool { return !c.noSchema.Load() }

// Totals is the usage of every call made through this client so far, per task.
func (c *Client) Totals() map[string]Usage {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make(map[string]Usage, len(c.byTask))
	for k, v := range c.byTask {
		out[k] = v
	}
	return out
}

func (c *Client) record(task string, u Usage) {
	c.mu.Lock()
	defer c.mu.Unlock()
	t := c.byTask[task]
	t.Add(u)
	c.byTask[task] = t
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return nil
	case <-ctx.Done():
		return context.Cause(ctx)
	}
}

// headerDoer lets the retry loop see response headers (Retry-After) that
// go-openai does not expose on errors. The headers go to a holder carried in
// the request context, so nothing is shared between calls. It also caps the
// bytes read from a response (maxBytes) and notes a stream's "[DONE]", so
// that a stream ended by it is complete with or without a finish reason.
// For Azure OpenAI it sends the key as the api-key header in place of a
// bearer token (apiKey set), as Azure wants for a resource key.
type headerDoer struct {
	hc     *http.Client
	apiKey string
}

// maxEmbeddingBytes caps an embeddings response: 128 texts of 3,072
// dimensions in JSON floats stay well below it.
const maxEmbeddingBytes = 64 << 20

type respInfoKey struct{}

type respInfo struct {
	mu     sync.Mutex
	status int
	header http.Header
	done   bool // a "data: [DONE]" line was read
	// maxBytes caps the response body (0: maxEmbeddingBytes).
	maxBytes int64
	// head is the start of the body, up to headBytes: what an error body
	// or a 200 without choices said beyond what go-openai keeps (Azure's
	// innererror, OpenRouter's error object and metadata).
	head []byte
}

// headBytes is how much of a body is kept in respInfo.head: every error
// body the servers send fits.
const headBytes = 16 << 10

func (d headerDoer) Do(req *http.Request) (*http.Response, error) {
	if d.apiKey != "" {
		req.Header.Del("Authorization")
		req.Header.Set(openai.AzureAPIKeyHeader, d.apiKey)
	}
	resp, err := d.hc.Do(req)
	if err != nil {
		return resp, err
	}
	info, _ := req.Context().Value(respInfoKey{}).(*respInfo)
	limit := int64(maxEmbeddingBytes)
	if info != nil && info.maxBytes > 0 {
		limit = info.maxBytes
	}
	if info != nil {
		info.mu.Lock()
		info.status = resp.StatusCode
		info.header = resp.Header.Clone()
		info.mu.Unlock()
	}
	resp.Body = &cappedBody{rc: resp.Body, left: limit, max: limit, info: info}
	return resp, nil
}

// ErrTooLarge: the server sent more than the client accepts for one call.
var ErrTooLarge = errors.New("answer too large")

// cappedBody ends a response body after max bytes with ErrTooLarge, so a
// server that never stops (or sends one endless line) cannot grow memory.
type cappedBody struct {
	rc        io.ReadCloser
	left, max int64
	info      *respInfo
	tail      []byte
}

var doneLine = []byte("[DONE]")

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.left <= 0 {
		return 0, fmt.Errorf("read more than %d bytes from the server: %w", b.max, ErrTooLarge)
	}
	if int64(len(p)) > b.left {
		p = p[:b.left]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.info != nil && n > 0 {
		b.info.mu.Lock()
		if keep := headBytes - len(b.info.head); keep > 0 {
			b.info.head = append(b.info.head, p[:min(n, keep)]...)
		}
		b.info.mu.Unlock()
		seen := append(b.tail, p[:n]...)
		if bytes.Contains(seen, doneLine) {
			b.info.mu.Lock()
			b.info.done = true
			b.info.mu.Unlock()
		}
		b.tail = append(b.tail[:0], seen[max(0, len(seen)-len(doneLine)):]...)
	}
	return n, err
}

func (b *cappedBody) Close() error { return b.rc.Close() }

func (i *respInfo) sawDone() bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.done
}

// body is the start of the response body (respInfo.head).
func (i *respInfo) body() []byte {
	if i == nil {
		return nil
	}
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.head
}

func (i *respInfo) get() (int, http.Header) {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.status, i.header
}

// errorsAsAPI is errors.As for the two go-openai error types.
func errorsAsAPI(err error) (*openai.APIError, *openai.RequestError) {
	var ae *openai.APIError
	if errors.As(err, &ae) {
		return ae, nil
	}
	var re *openai.RequestError
	if errors.As(err, &re) {
		return nil, re
	}
	return nil, nil
}
