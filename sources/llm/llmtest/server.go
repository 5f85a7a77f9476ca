// Package llmtest is a loopback OpenAI-compatible server for tests of code
// that calls a model through sources/llm (or any OpenAI client).
//
// It speaks the real wire protocol: POST /v1/chat/completions (plain JSON
// and SSE streams of chat.completion.chunk objects ending in a usage chunk
// and "data: [DONE]"), POST /v1/embeddings, GET /v1/models and Ollama's
// GET /api/tags; failures use OpenAI's error body
// {"error":{"message","type","param","code"}}. Every request is recorded,
// raw body included, so tests can assert what went on the wire.
//
//	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
//		switch llmtest.SchemaName(req) {
//		case "queries":
//			return `{"queries":["a","b","c"]}`, nil
//		}
//		return "This post is missing context ...", nil
//	})
//	client, _ := llm.New(llm.Config{BaseURL: srv.BaseURL, Model: "test-model"})
//
// Handlers run on the server's goroutines, possibly concurrently.
package llmtest

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"hash/fnv"
	"io"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
	"unicode"

	openai "github.com/sashabaranov/go-openai"
)

// Reply is the fake model's answer to one chat request.
type Reply struct {
	// Text is the answer content.
	Text string
	// Refusal, when set, is sent in message.refusal (delta.refusal when
	// streaming) instead of content, as OpenAI does for structured outputs.
	Refusal string
	// FinishReason defaults to "stop".
	FinishReason string
	// PromptTokens and CompletionTokens reported in usage; 0 means counted as
	// whitespace-separated words of the request's messages and of Text.
	PromptTokens, CompletionTokens int
	// CachedPromptTokens > 0 reports that many of PromptTokens as read from
	// the server's prompt cache, in usage.prompt_tokens_details.cached_tokens
	// as OpenAI does; 0 leaves prompt_tokens_details out, as llama.cpp and
	// Ollama do.
	CachedPromptTokens int
	// Delay before answering (added to the server's WithDelay); the wait ends
	// early if the client goes away.
	Delay time.Duration
	// ChunkRunes is how many runes go in each streamed content chunk; 0 means 4.
	ChunkRunes int
	// ChunkDelay is a pause before every streamed content chunk after the
	// first, to watch text arrive or to make a stream stall.
	ChunkDelay time.Duration
	// CutAfter > 0 drops the connection abruptly after that many content
	// chunks of a stream, with no finish reason and no [DONE].
	CutAfter int
	// NoFinish ends a stream cleanly after the content but without a finish
	// reason, usage chunk or [DONE] (a server that gave up mid-answer).
	NoFinish bool
	// NoUsage leaves usage out of the answer.
	NoUsage bool
	// Model reported in the answer; defaults to the requested model.
	Model string
	// Reasoning is sent the way reasoning servers do beside the answer:
	// message.reasoning_content and message.reasoning (delta.* when
	// streaming), before the content.
	Reasoning string
	// DoneNoFinish ends a stream with "data: [DONE]" but never a finish
	// reason (some llama.cpp and proxy builds): the answer is complete.
	DoneNoFinish bool
	// Endless streams Text over and over and never ends (ChunkDelay apart;
	// 0 means as fast as the connection takes it).
	Endless bool
}

// Context-limit styles for WithContextLimit: how each server says a
// request does not fit, or (Ollama) does not say it.
const (
	LimitOpenAI      = "openai"       // 400 context_length_exceeded
	LimitVLLM        = "vllm"         // 400 "This model's maximum context length is N tokens…"
	LimitLlamaCpp    = "llamacpp"     // 400 exceed_context_size_error with n_ctx
	LimitLlamaCppOld = "llamacpp-old" // 500 "the request exceeds the available context size…"
	LimitOllama      = "ollama"       // no error: the prompt's start is cut silently
)

// Error makes the server fail a request with an OpenAI error body.
type Error struct {
	Status  int    // HTTP status; 0 means 500
	Message string // error.message
	Type    string // error.type; defaults from the status
	Code    string // error.code; "" sends null
	Param   string // error.param; "" sends null
	// RetryAfter is sent as the Retry-After header when not empty ("0", "2",
	// an HTTP date); RetryAfterMs as OpenAI's retry-after-ms.
	RetryAfter, RetryAfterMs string
}

func (e *Error) Error() string { return fmt.Sprintf("HTTP %d: %s", e.Status, e.Message) }

// Common errors, as api.openai.com sends them.
var (
	ErrBadKey = &Error{Status: 401, Type: "invalid_request_error", Code: "invalid_api_key",
		Message: "Incorrect API key provided: sk-test. You can find your API key at https://platform.openai.com/account/api-keys."}
	ErrContextLength = &Error{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
		Message: "This model's maximum context length is 8192 tokens. However, your messages resulted in 12000 tokens. Please reduce the length of the messages."}
	ErrRateLimit = &Error{Status: 429, Type: "requests", Code: "rate_limit_exceeded", RetryAfterMs: "20",
		Message: "Rate limit reached for requests. Please try again in 20ms."}
	ErrServer = &Error{Status: 500, Type: "server_error",
		Message: "The server had an error while processing your request. Sorry about that!"}
)

// ModelNotFound is the 404 OpenAI sends for an unknown model.
func ModelNotFound(model string) *Error {
	return &Error{Status: 404, Type: "invalid_request_error", Code: "model_not_found",
		Message: fmt.Sprintf("The model `%s` does not exist or you do not have access to it.", model)}
}

// Call is one recorded request.
type Call struct {
	Method, Path string
	Header       http.Header
	// Body is the raw request body.
	Body []byte
	// Chat is the decoded body of a chat completion request, nil otherwise.
	Chat *openai.ChatCompletionRequest
	// Embeddings holds the inputs of an embeddings request.
	Embeddings []string
	// Status the server answered with.
	Status int
}

// Wire decodes the raw body as generic JSON, for asserting exact fields
// (for example that "temperature" is present).
func (c Call) Wire() map[string]any {
	var m map[string]any
	_ = json.Unmarshal(c.Body, &m)
	return m
}

// Option configures a Server.
type Option func(*Server)

// WithDelay delays every chat and embeddings answer by d.
func WithDelay(d time.Duration) Option { return func(s *Server) { s.delay = d } }

// WithEmbedder replaces the default HashEmbed(text, 256) embedder.
func WithEmbedder(f func(texts []string) ([][]float32, error)) Option {
	return func(s *Server) { s.embed = f }
}

// WithoutSchemaSupport makes the server reject response_format json_schema
// with a 400, like servers without structured output.
func WithoutSchemaSupport() Option { return func(s *Server) { s.noSchema = true } }

// WithoutStreamOptions makes the server reject stream_options with a 400.
func WithoutStreamOptions() Option { return func(s *Server) { s.noStreamOptions = true } }

// WithModels sets the models listed by /v1/models and /api/tags.
func WithModels(models ...string) Option { return func(s *Server) { s.models = models } }

// WithContextLimit makes the server a model with a context of n tokens
// (prompt words plus max_tokens) that answers a request over it the way
// style's server does, and announces n where that server does (/v1/models
// max_model_len for vLLM, /props n_ctx for llama.cpp, /api/show num_ctx for
// Ollama; OpenAI announces nothing). Truncated() counts Ollama's silent cuts.
func WithContextLimit(n int, style string) Option {
	return func(s *Server) { s.ctxLimit, s.ctxStyle = n, style }
}

// Truncated is how many prompts an Ollama-style server cut silently.
func (s *Server) Truncated() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.truncated
}

// overLimit answers a request that does not fit the context, or cuts it
// (Ollama). ok is false when it answered.
func (s *Server) overLimit(w http.ResponseWriter, req *openai.ChatCompletionRequest) (int, bool) {
	if s.ctxLimit <= 0 {
		return 0, true
	}
	prompt := promptWords(*req)
	want := max(req.MaxTokens, req.MaxCompletionTokens)
	if prompt+want <= s.ctxLimit && prompt <= s.ctxLimit {
		return 0, true
	}
	switch s.ctxStyle {
	case LimitOllama:
		if prompt > s.ctxLimit {
			s.mu.Lock()
			s.truncated++
			s.mu.Unlock()
			req.Messages = req.Messages[len(req.Messages)-1:] // the system message and the start are gone
		}
		return 0, true
	case LimitVLLM:
		return writeError(w, &Error{Status: 400, Type: "BadRequestError", Message: fmt.Sprintf(
			"This model's maximum context length is %d tokens. However, you requested %d tokens (%d in the messages, %d in the completion). Please reduce the length of the messages or completion.",
			s.ctxLimit, prompt+want, prompt, want)}), false
	case LimitLlamaCpp:
		writeJSON(w, 400, map[string]any{"error": map[string]any{"code": 400, "type": "exceed_context_size_error",
			"message": "the request exceeds the available context size, try increasing it", "n_prompt_tokens": prompt, "n_ctx": s.ctxLimit}})
		return 400, false
	case LimitLlamaCppOld:
		writeJSON(w, 500, map[string]any{"error": map[string]any{"code": 500, "type": "server_error",
			"message": "the request exceeds the available context size, try increasing the context size or enable context shift"}})
		return 500, false
	}
	return writeError(w, &Error{Status: 400, Type: "invalid_request_error", Code: "context_length_exceeded", Param: "messages",
		Message: fmt.Sprintf("This model's maximum context length is %d tokens. However, your messages resulted in %d tokens. Please reduce the length of the messages.", s.ctxLimit, prompt+want)}), false
}

// WithAPIKey makes the server answer 401 unless "Authorization: Bearer key".
func WithAPIKey(key string) Option { return func(s *Server) { s.apiKey = key } }

// WithTranscriber serves POST /v1/audio/transcriptions with t.
func WithTranscriber(t *Transcriber) Option { return func(s *Server) { s.transcriber = t } }

// Server is a running fake. It is closed by t.Cleanup.
type Server struct {
	*httptest.Server
	// BaseURL is the OpenAI base URL to configure clients with (URL + "/v1").
	BaseURL string

	handler         func(openai.ChatCompletionRequest) (Reply, error)
	delay           time.Duration
	embed           func([]string) ([][]float32, error)
	noSchema        bool
	noStreamOptions bool
	models          []string
	apiKey          string
	ctxLimit        int
	ctxStyle        string
	truncated       int
	transcriber     *Transcriber

	mu    sync.Mutex
	calls []Call
}

// NewServer starts a fake whose handler returns the answer text or an error
// (an *Error for a specific status and body; any other error is a 500).
// A nil handler answers chat requests with a 500 (for embeddings-only tests).
func NewServer(t testing.TB, handler func(req openai.ChatCompletionRequest) (string, error), opts ...Option) *Server {
	if handler == nil {
		handler = func(openai.ChatCompletionRequest) (string, error) {
			return "", errors.New("llmtest: this server has no chat handler")
		}
	}
	return NewReplyServer(t, func(req openai.ChatCompletionRequest) (Reply, error) {
		text, err := handler(req)
		return Reply{Text: text}, err
	}, opts...)
}

// NewReplyServer starts a fake whose handler controls the whole answer:
// usage, refusals, delays, cut streams.
func NewReplyServer(t testing.TB, handler func(req openai.ChatCompletionRequest) (Reply, error), opts ...Option) *Server {
	t.Helper()
	s := &Server{handler: handler, embed: hashEmbedAll, models: []string{"test-model", "test-embed"}}
	for _, o := range opts {
		o(s)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("POST /v1/chat/completions", s.serveChat)
	mux.HandleFunc("POST /v1/embeddings", s.serveEmbeddings)
	mux.HandleFunc("GET /v1/models", s.serveModels)
	mux.HandleFunc("GET /api/tags", s.serveTags)
	mux.HandleFunc("GET /props", s.serveProps)
	mux.HandleFunc("POST /api/show", s.serveShow)
	if s.transcriber != nil {
		mux.Handle("POST /v1/audio/transcriptions", s.transcriber)
	}
	s.Server = httptest.NewServer(mux)
	s.BaseURL = s.URL + "/v1"
	t.Cleanup(s.Close)
	return s
}

// Calls returns every request received so far, in arrival order.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

// ChatCalls returns the chat completion requests received so far.
func (s *Server) ChatCalls() []Call {
	var out []Call
	for _, c := range s.Calls() {
		if c.Chat != nil {
			out = append(out, c)
		}
	}
	return out
}

// Count is how many requests reached path ("/v1/chat/completions").
func (s *Server) Count(path string) int {
	n := 0
	for _, c := range s.Calls() {
		if c.Path == path {
			n++
		}
	}
	return n
}

func (s *Server) record(r *http.Request, body []byte, chat *openai.ChatCompletionRequest, emb []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls = append(s.calls, Call{Method: r.Method, Path: r.URL.Path, Header: r.Header.Clone(), Body: body, Chat: chat, Embeddings: emb})
	return len(s.calls) - 1
}

func (s *Server) setStatus(i, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.calls[i].Status = status
}

func (s *Server) authorized(w http.ResponseWriter, r *http.Request) bool {
	if s.apiKey == "" || r.Header.Get("Authorization") == "Bearer "+s.apiKey {
		return true
	}
	writeError(w, ErrBadKey)
	return false
}

func (s *Server) serveChat(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req openai.ChatCompletionRequest
	if err := json.Unmarshal(body, &req); err != nil {
		i := s.record(r, body, nil, nil)
		s.setStatus(i, 400)
		writeError(w, &Error{Status: 400, Type: "invalid_request_error", Message: "We could not parse the JSON body of your request: " + err.Error()})
		return
	}
	i := s.record(r, body, &req, nil)
	status := s.chat(w, r, req)
	s.setStatus(i, status)
}

func (s *Server) chat(w http.ResponseWriter, r *http.Request, req openai.ChatCompletionRequest) int {
	if !s.authorized(w, r) {
		return 401
	}
	if s.noSchema && req.ResponseFormat != nil && req.ResponseFormat.Type == openai.ChatCompletionResponseFormatTypeJSONSchema {
		return writeError(w, &Error{Status: 400, Type: "invalid_request_error", Param: "response_format",
			Message: "Invalid parameter: 'response_format' of type 'json_schema' is not supported with this model."})
	}
	if s.noStreamOptions && req.StreamOptions != nil {
		return writeError(w, &Error{Status: 400, Type: "invalid_request_error", Param: "stream_options",
			Message: "Unrecognized request argument supplied: stream_options"})
	}
	if status, ok := s.overLimit(w, &req); !ok {
		return status
	}
	rep, err := s.handler(req)
	if !wait(r.Context(), s.delay+rep.Delay) {
		return 499
	}
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: 500, Type: "server_error", Message: err.Error()}
		}
		return writeError(w, e)
	}
	if rep.Model == "" {
		rep.Model = req.Model
	}
	if rep.FinishReason == "" {
		rep.FinishReason = "stop"
	}
	if rep.PromptTokens == 0 {
		rep.PromptTokens = promptWords(req)
	}
	if rep.CompletionTokens == 0 {
		rep.CompletionTokens = len(strings.Fields(rep.Text + " " + rep.Refusal))
	}
	if req.Stream {
		return s.stream(w, r, req, rep)
	}
	msg := map[string]any{"role": "assistant", "content": rep.Text}
	if rep.Reasoning != "" {
		msg["reasoning_content"], msg["reasoning"] = rep.Reasoning, rep.Reasoning
	}
	if rep.Refusal != "" {
		msg["content"] = nil
		msg["refusal"] = rep.Refusal
	}
	out := map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "created": time.Now().Unix(), "model": rep.Model,
		"choices": []any{map[string]any{"index": 0, "message": msg, "logprobs": nil, "finish_reason": rep.FinishReason}},
	}
	if !rep.NoUsage {
		out["usage"] = usage(rep)
	}
	writeJSON(w, 200, out)
	return 200
}

func (s *Server) stream(w http.ResponseWriter, r *http.Request, req openai.ChatCompletionRequest, rep Reply) int {
	h := w.Header()
	h.Set("Content-Type", "text/event-stream")
	h.Set("Cache-Control", "no-cache")
	w.WriteHeader(200)
	fl, _ := w.(http.Flusher)
	created := time.Now().Unix()
	send := func(choices []any, u any) {
		chunk := map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": created,
			"model": rep.Model, "choices": choices}
		if req.StreamOptions != nil && req.StreamOptions.IncludeUsage {
			chunk["usage"] = u
		}
		b, _ := json.Marshal(chunk)
		fmt.Fprintf(w, "data: %s\n\n", b)
		if fl != nil {
			fl.Flush()
		}
	}
	delta := func(d map[string]any, finish any) []any {
		return []any{map[string]any{"index": 0, "delta": d, "logprobs": nil, "finish_reason": finish}}
	}
	send(delta(map[string]any{"role": "assistant", "content": ""}, nil), nil)
	for _, piece := range chunks(rep.Reasoning, rep.ChunkRunes) {
		send(delta(map[string]any{"reasoning_content": piece, "reasoning": piece}, nil), nil)
	}
	for rep.Endless {
		for _, piece := range chunks(rep.Text+" ", rep.ChunkRunes) {
			if r.Context().Err() != nil || !wait(r.Context(), rep.ChunkDelay) {
				return 499
			}
			send(delta(map[string]any{"content": piece}, nil), nil)
		}
	}
	key := "content"
	text := rep.Text
	if rep.Refusal != "" {
		key, text = "refusal", rep.Refusal
	}
	for n, piece := range chunks(text, rep.ChunkRunes) {
		if rep.CutAfter > 0 && n == rep.CutAfter {
			hijackClose(w)
			return 200
		}
		if n > 0 && !wait(r.Context(), rep.ChunkDelay) {
			return 499
		}
		send(delta(map[string]any{key: piece}, nil), nil)
	}
	if rep.CutAfter > 0 {
		hijackClose(w)
		return 200
	}
	if rep.NoFinish {
		return 200
	}
	if !rep.DoneNoFinish {
		send(delta(map[string]any{}, rep.FinishReason), nil)
	}
	if req.StreamOptions != nil && req.StreamOptions.IncludeUsage && !rep.NoUsage {
		send([]any{}, usage(rep))
	}
	fmt.Fprint(w, "data: [DONE]\n\n")
	if fl != nil {
		fl.Flush()
	}
	return 200
}

// hijackClose drops the TCP connection without ending the chunked body, the
// way a proxy or a crashed server cuts a stream.
func hijackClose(w http.ResponseWriter) {
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
	hj, ok := w.(http.Hijacker)
	if !ok {
		return
	}
	conn, buf, err := hj.Hijack()
	if err != nil {
		return
	}
	_ = buf.Flush()
	_ = conn.Close()
}

func chunks(text string, n int) []string {
	if n <= 0 {
		n = 4
	}
	r := []rune(text)
	var out []string
	for i := 0; i < len(r); i += n {
		out = append(out, string(r[i:min(i+n, len(r))]))
	}
	return out
}

func (s *Server) serveEmbeddings(w http.ResponseWriter, r *http.Request) {
	body, _ := io.ReadAll(r.Body)
	var req struct {
		Input any    `json:"input"`
		Model string `json:"model"`
	}
	err := json.Unmarshal(body, &req)
	inputs := inputStrings(req.Input)
	i := s.record(r, body, nil, inputs)
	if !s.authorized(w, r) {
		s.setStatus(i, 401)
		return
	}
	if err != nil || inputs == nil {
		s.setStatus(i, writeError(w, &Error{Status: 400, Type: "invalid_request_error", Param: "input",
			Message: "'input' must be a string or an array of strings"}))
		return
	}
	for _, in := range inputs {
		if in == "" {
			s.setStatus(i, writeError(w, &Error{Status: 400, Type: "invalid_request_error", Param: "input",
				Message: "'$.input' is invalid. Please check the API reference: https://platform.openai.com/docs/api-reference."}))
			return
		}
	}
	if !wait(r.Context(), s.delay) {
		s.setStatus(i, 499)
		return
	}
	vecs, err := s.embed(inputs)
	if err != nil {
		var e *Error
		if !errors.As(err, &e) {
			e = &Error{Status: 500, Type: "server_error", Message: err.Error()}
		}
		s.setStatus(i, writeError(w, e))
		return
	}
	data := make([]any, len(vecs))
	words := 0
	for j, v := range vecs {
		data[j] = map[string]any{"object": "embedding", "index": j, "embedding": v}
		if j < len(inputs) {
			words += len(strings.Fields(inputs[j]))
		}
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data, "model": req.Model,
		"usage": map[string]any{"prompt_tokens": words, "total_tokens": words}})
	s.setStatus(i, 200)
}

func inputStrings(v any) []string {
	switch x := v.(type) {
	case string:
		return []string{x}
	case []any:
		out := make([]string, 0, len(x))
		for _, e := range x {
			s, ok := e.(string)
			if !ok {
				return nil
			}
			out = append(out, s)
		}
		return out
	}
	return nil
}

func (s *Server) serveModels(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil, nil, nil)
	data := make([]any, len(s.models))
	for i, m := range s.models {
		d := map[string]any{"id": m, "object": "model", "created": 1700000000, "owned_by": "library"}
		if s.ctxStyle == LimitVLLM {
			d["max_model_len"] = s.ctxLimit
		}
		data[i] = d
	}
	writeJSON(w, 200, map[string]any{"object": "list", "data": data})
}

func (s *Server) serveTags(w http.ResponseWriter, r *http.Request) {
	s.record(r, nil, nil, nil)
	models := make([]any, len(s.models))
	for i, m := range s.models {
		models[i] = map[string]any{"name": m, "model": m, "modified_at": "2024-05-01T10:00:00Z", "size": 4661224676,
			"digest": fmt.Sprintf("%x", fnv.New64a().Sum([]byte(m))), "details": map[string]any{"format": "gguf"}}
	}
	writeJSON(w, 200, map[string]any{"models": models})
}

// serveProps is llama.cpp's GET /props, served in the llama.cpp styles.
func (s *Server) serveProps(w http.ResponseWriter, r *http.Request) {
	if s.ctxStyle != LimitLlamaCpp && s.ctxStyle != LimitLlamaCppOld {
		http.NotFound(w, r)
		return
	}
	s.record(r, nil, nil, nil)
	writeJSON(w, 200, map[string]any{"default_generation_settings": map[string]any{"n_ctx": s.ctxLimit}, "total_slots": 1})
}

// serveShow is Ollama's POST /api/show, served in the Ollama style.
func (s *Server) serveShow(w http.ResponseWriter, r *http.Request) {
	if s.ctxStyle != LimitOllama {
		http.NotFound(w, r)
		return
	}
	s.record(r, nil, nil, nil)
	writeJSON(w, 200, map[string]any{"parameters": fmt.Sprintf("stop \"<|eot_id|>\"\nnum_ctx %d", s.ctxLimit),
		"model_info": map[string]any{"general.architecture": "llama", "llama.context_length": 131072}})
}

func writeError(w http.ResponseWriter, e *Error) int {
	status := e.Status
	if status == 0 {
		status = 500
	}
	typ := e.Type
	if typ == "" {
		switch {
		case status >= 500:
			typ = "server_error"
		default:
			typ = "invalid_request_error"
		}
	}
	var code, param any
	if e.Code != "" {
		code = e.Code
	}
	if e.Param != "" {
		param = e.Param
	}
	if e.RetryAfter != "" {
		w.Header().Set("Retry-After", e.RetryAfter)
	}
	if e.RetryAfterMs != "" {
		w.Header().Set("Retry-After-Ms", e.RetryAfterMs)
	}
	writeJSON(w, status, map[string]any{"error": map[string]any{"message": e.Message, "type": typ, "param": param, "code": code}})
	return status
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	var buf bytes.Buffer
	_ = json.NewEncoder(&buf).Encode(v)
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

func usage(rep Reply) map[string]any {
	u := map[string]any{"prompt_tokens": rep.PromptTokens, "completion_tokens": rep.CompletionTokens,
		"total_tokens": rep.PromptTokens + rep.CompletionTokens}
	if rep.CachedPromptTokens > 0 {
		u["prompt_tokens_details"] = map[string]any{"cached_tokens": rep.CachedPromptTokens, "audio_tokens": 0}
		u["completion_tokens_details"] = map[string]any{"reasoning_tokens": 0, "audio_tokens": 0,
			"accepted_prediction_tokens": 0, "rejected_prediction_tokens": 0}
	}
	return u
}

func wait(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return true
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

func promptWords(req openai.ChatCompletionRequest) int {
	n := 0
	for _, m := range req.Messages {
		n += len(strings.Fields(MessageText(m)))
	}
	return n
}

// MessageText is the text of a message, its text parts joined for
// multi-part (vision) messages.
func MessageText(m openai.ChatCompletionMessage) string {
	if m.MultiContent == nil {
		return m.Content
	}
	var parts []string
	for _, p := range m.MultiContent {
		if p.Type == openai.ChatMessagePartTypeText {
			parts = append(parts, p.Text)
		}
	}
	return strings.Join(parts, "\n")
}

// LastUser is the text of the request's last user message.
func LastUser(req openai.ChatCompletionRequest) string {
	for i := len(req.Messages) - 1; i >= 0; i-- {
		if req.Messages[i].Role == openai.ChatMessageRoleUser {
			return MessageText(req.Messages[i])
		}
	}
	return ""
}

// AllText is the text of every message of the request, joined.
func AllText(req openai.ChatCompletionRequest) string {
	parts := make([]string, len(req.Messages))
	for i, m := range req.Messages {
		parts[i] = MessageText(m)
	}
	return strings.Join(parts, "\n")
}

// SchemaName is the response_format json_schema name of the request ("" for
// plain requests): the task, with prompts' schemas ("queries", "evidence",
// "image_description").
func SchemaName(req openai.ChatCompletionRequest) string {
	if req.ResponseFormat == nil || req.ResponseFormat.JSONSchema == nil {
		return ""
	}
	return req.ResponseFormat.JSONSchema.Name
}

// Images are the image URLs (data: or http) in the request's messages.
func Images(req openai.ChatCompletionRequest) []string {
	var out []string
	for _, m := range req.Messages {
		for _, p := range m.MultiContent {
			if p.Type == openai.ChatMessagePartTypeImageURL && p.ImageURL != nil {
				out = append(out, p.ImageURL.URL)
			}
		}
	}
	return out
}

// HashEmbed is a deterministic bag-of-words embedding (feature hashing of
// lower-cased words into dims buckets, L2-normalised): texts sharing words
// get a high dot product, unrelated texts a low one, which is what relevance
// filtering needs from a test embedder.
func HashEmbed(text string, dims int) []float32 {
	if dims <= 0 {
		dims = 256
	}
	v := make([]float32, dims)
	words := strings.FieldsFunc(strings.ToLower(text), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	for _, w := range words {
		h := fnv.New32a()
		_, _ = h.Write([]byte(w))
		sum := h.Sum32()
		sign := float32(1)
		if sum&(1<<31) != 0 {
			sign = -1
		}
		v[int(sum%uint32(dims))] += sign
	}
	var norm float64
	for _, x := range v {
		norm += float64(x) * float64(x)
	}
	if norm == 0 {
		v[0] = 1
		return v
	}
	n := float32(math.Sqrt(norm))
	for i := range v {
		v[i] /= n
	}
	return v
}

func hashEmbedAll(texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		out[i] = HashEmbed(t, 256)
	}
	return out, nil
}
