package llm

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"regexp"
	"strconv"
	"strings"

	"github.com/musecheck/muse/sources/httpcache"
	openai "github.com/sashabaranov/go-openai"
)

// A model's context window holds the prompt and the answer together. The
// client learns it once per model — from Config.ContextWindow, else by
// asking the server — and sizes every call's max_tokens so that both fit;
// callers size what they send with ContextWindow and EstimateTokens.

// OllamaDefaultContext is the context Ollama gives a model whose num_ctx is
// not set (Ollama ≥ 0.6); Ollama cuts a longer prompt silently.
const OllamaDefaultContext = 4096

// Window is what the client knows of a model's context window.
type Window struct {
	// Tokens is the window, 0 when unknown.
	Tokens int
	// Source says where it came from: "configured", "/v1/models",
	// "/props", "ollama num_ctx", "ollama default", "server error".
	Source string
	// Ollama is true when the server is Ollama, which truncates a prompt
	// longer than the window instead of refusing it.
	Ollama bool
}

// EstimateTokens is a deliberately high estimate of the tokens of text
// (one per three bytes), used only to budget a call before it is made.
func EstimateTokens(text string) int { return (len(text) + 2) / 3 }

// MessagesTokens estimates the prompt tokens of msgs, with the few tokens
// each message's role and framing take.
func MessagesTokens(msgs []Message) int {
	n := 0
	for _, m := range msgs {
		n += 8 + EstimateTokens(m.Content)
		for _, p := range m.MultiContent {
			n += EstimateTokens(p.Text)
			if p.ImageURL != nil {
				n += 800 // an image, at OpenAI's high-detail tile cost for a typical picture
			}
		}
	}
	return n
}

// ContextWindow is the context window of the model used for task.
func (c *Client) ContextWindow(ctx context.Context, task string) Window {
	model := c.ModelFor(task)
	if c.cfg.ContextWindow > 0 {
		return Window{Tokens: c.cfg.ContextWindow, Source: "configured"}
	}
	c.winMu.Lock()
	defer c.winMu.Unlock()
	if w, ok := c.windows[model]; ok {
		return w
	}
	w := c.discoverWindow(ctx, model)
	if ctx.Err() == nil {
		c.windows[model] = w
	}
	return w
}

// learnWindow records a window a server named in a context-length error.
func (c *Client) learnWindow(model string, tokens int) {
	if tokens <= 0 || c.cfg.ContextWindow > 0 {
		return
	}
	c.winMu.Lock()
	defer c.winMu.Unlock()
	w := c.windows[model]
	w.Tokens, w.Source = tokens, "server error"
	c.windows[model] = w
}

// discoverWindow asks the server: vLLM's /v1/models max_model_len,
// OpenRouter's and LM Studio's context_length, llama.cpp's /v1/models meta
// and /props n_ctx, then Ollama's /api/show (num_ctx, else Ollama's
// default, never more than the model's own context_length).
func (c *Client) discoverWindow(ctx context.Context, model string) Window {
	ctx = httpcache.WithoutCache(ctx) // a server's num_ctx can change between runs: ask it, not the cache
	hc := c.cfg.HTTPClient
	if hc == nil {
		hc = http.DefaultClient
	}
	base := c.cfg.BaseURL
	root := strings.TrimSuffix(base, "/v1")
	var list struct {
		Data []struct {
			ID            string `json:"id"`
			MaxModelLen   int    `json:"max_model_len"`
			ContextLength int    `json:"context_length"`
			Meta          struct {
				NCtx      int `json:"n_ctx"`
				NCtxTrain int `json:"n_ctx_train"`
			} `json:"meta"`
		} `json:"data"`
	}
	if c.getJSON(ctx, hc, http.MethodGet, base+"/models", nil, &list) == nil {
		for _, m := range list.Data {
			if m.ID != model && len(list.Data) > 1 {
				continue
			}
			for _, n := range []int{m.MaxModelLen, m.Meta.NCtx, m.ContextLength} {
				if n > 0 {
					return Window{Tokens: n, Source: "/v1/models"}
				}
			}
		}
	}
	var props struct {
		NCtx    int `json:"n_ctx"`
		Default struct {
			NCtx int `json:"n_ctx"`
		} `json:"default_generation_settings"`
	}
	if c.getJSON(ctx, hc, http.MethodGet, root+"/props", nil, &props) == nil {
		if n := max(props.NCtx, props.Default.NCtx); n > 0 {
			return Window{Tokens: n, Source: "/props"}
		}
	}
	var show struct {
		Parameters string         `json:"parameters"`
		ModelInfo  map[string]any `json:"model_info"`
		Modelfile  string         `json:"modelfile"`
		Template   string         `json:"template"`
	}
	body, _ := json.Marshal(map[string]string{"model": model})
	// Only Ollama's answer is Ollama's: its model_info, modelfile,
	// template or parameters, not any JSON a proxy sends to every path.
	if c.getJSON(ctx, hc, http.MethodPost, root+"/api/show", body, &show) == nil &&
		(len(show.ModelInfo) > 0 || show.Modelfile != "" || show.Template != "" || show.Parameters != "") {
		w := Window{Tokens: OllamaDefaultContext, Source: "ollama default", Ollama: true}
		if m := numCtxRe.FindStringSubmatch(show.Parameters); m != nil {
			w.Tokens, _ = strconv.Atoi(m[1])
			w.Source = "ollama num_ctx"
		}
		for k, v := range show.ModelInfo {
			if n, ok := v.(float64); ok && strings.HasSuffix(k, ".context_length") && n > 0 && int(n) < w.Tokens {
				w.Tokens = int(n)
			}
		}
		return w
	}
	return Window{}
}

var numCtxRe = regexp.MustCompile(`(?m)^\s*num_ctx\s+(\d+)`)

func (c *Client) getJSON(ctx context.Context, hc *http.Client, method, url string, body []byte, v any) error {
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	switch {
	case c.provider == "Azure":
		req.Header.Set(openai.AzureAPIKeyHeader, c.cfg.APIKey)
	case c.cfg.APIKey != "":
		req.Header.Set("Authorization", "Bearer "+c.cfg.APIKey)
	}
	resp, err := hc.Do(req)
	if err != nil {
		return err
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s %s: HTTP %d", method, url, resp.StatusCode)
	}
	return json.NewDecoder(io.LimitReader(resp.Body, 1<<20)).Decode(v)
}

// windowInMessage reads the window a context-length error names: OpenAI's
// and vLLM's "maximum context length is 4096 tokens", llama.cpp's n_ctx.
var windowInMessage = regexp.MustCompile(`(?i)(?:maximum context length is|context (?:length|size|window) (?:is|of)|"?n_ctx"?\s*[:=])\s*(\d{3,7})`)

func windowFrom(msg string) int {
	if m := windowInMessage.FindStringSubmatch(msg); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n
	}
	return 0
}

// minAnswerTokens is the least room for an answer worth asking for.
const minAnswerTokens = 64

// fitAnswer sizes max_tokens so that prompt and answer fit the window. It
// refuses a prompt that leaves no room for an answer, with ErrContextLength
// (and, for Ollama, which would cut the prompt silently, says so).
func (c *Client) fitAnswer(ctx context.Context, ci callInfo, req Request, msgs []Message) (int, error) {
	w := c.ContextWindow(ctx, req.Task)
	if w.Tokens <= 0 {
		return req.MaxTokens, nil
	}
	prompt := MessagesTokens(msgs)
	room := w.Tokens - prompt
	if room < minAnswerTokens {
		e := ci.newError(ErrContextLength, fmt.Sprintf("the prompt (about %d tokens) leaves no room for an answer in the model's context of %d tokens (%s)",
			prompt, w.Tokens, w.Source))
		e.Status = 0
		if w.Ollama {
			e.Message = fmt.Sprintf("Ollama's context (num_ctx %d, %s) is smaller than the prompt (about %d tokens): Ollama would cut it silently, so it was not sent",
				w.Tokens, w.Source, prompt)
			e.Advice = "raise num_ctx (OLLAMA_CONTEXT_LENGTH, or PARAMETER num_ctx in a Modelfile) or set context_window"
		} else {
			e.Advice = "muse sends less (fewer, shorter pages); use a model with a longer context if it keeps happening"
		}
		return 0, e
	}
	if req.MaxTokens <= 0 || req.MaxTokens > room {
		return room, nil
	}
	return req.MaxTokens, nil
}
