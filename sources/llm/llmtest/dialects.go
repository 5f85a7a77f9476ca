package llmtest

import (
	"cmp"
	"encoding/json"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"time"

	openai "github.com/sashabaranov/go-openai"
)

// Hosted servers that speak OpenAI's protocol in their own dialect when a
// call goes wrong. Each handler below answers one chat request the way that
// server documents it, status code and body, so a test can put it behind a
// fault hook or an httptest server:
//
//	srv := httptest.NewServer(llmtest.AzurePromptFilter("hate", "medium"))

// azureMessage is what Azure OpenAI says when its content filter blocks a
// prompt.
const azureMessage = "The response was filtered due to the prompt triggering Azure OpenAI's content management policy. " +
	"Please modify your prompt and retry. To learn more about our content filtering policies please read our documentation: " +
	"https://go.microsoft.com/fwlink/?linkid=2198766"

// azureResults is the content filter's result for each category, category
// flagged at severity and every other one safe.
func azureResults(category, severity string) map[string]any {
	out := map[string]any{"jailbreak": map[string]any{"filtered": false, "detected": false}}
	for _, c := range []string{"hate", "self_harm", "sexual", "violence"} {
		out[c] = map[string]any{"filtered": false, "severity": "safe"}
	}
	out[category] = map[string]any{"filtered": true, "severity": severity}
	if category == "jailbreak" {
		out[category] = map[string]any{"filtered": true, "detected": true}
	}
	return out
}

// AzurePromptFilter answers as Azure OpenAI does when its content filter
// blocks the prompt: HTTP 400 with code "content_filter", a null type, and
// innererror ResponsibleAIPolicyViolation with the filter's result for each
// category (category flagged at severity: "hate", "medium").
func AzurePromptFilter(category, severity string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": azureMessage, "type": nil, "param": "prompt", "code": "content_filter", "status": 400,
			"innererror": map[string]any{"code": "ResponsibleAIPolicyViolation",
				"content_filter_result": azureResults(category, severity)},
		}})
	}
}

// AzureFilteredAnswer answers as Azure OpenAI does when its content filter
// withholds the completion: HTTP 200, the choice's finish_reason
// "content_filter", its content null, and its content_filter_results.
func AzureFilteredAnswer(category, severity string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-azure", "object": "chat.completion", "created": time.Now().Unix(), "model": "gpt-4o-2024-08-06",
			"prompt_filter_results": []any{map[string]any{"prompt_index": 0, "content_filter_results": azureResults("hate", "safe")}},
			"choices": []any{map[string]any{"index": 0, "finish_reason": "content_filter",
				"message":                map[string]any{"role": "assistant", "content": nil},
				"content_filter_results": azureResults(category, severity)}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": 0, "total_tokens": 900},
		})
	}
}

// OpenRouterError answers as OpenRouter does when the upstream provider
// fails after the request was accepted: HTTP 200 with an error object
// ({"code", "message", "metadata": {"provider_name", "raw"}}) and no
// choices.
func OpenRouterError(code int, message, provider, raw string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{"error": map[string]any{"code": code, "message": message,
			"metadata": map[string]any{"provider_name": provider, "raw": raw}}, "user_id": "user_2test"})
	}
}

// OpenRouterModeration answers as OpenRouter does when a model that
// requires moderation gets flagged input: HTTP 403 with the reasons in
// error.metadata.
func OpenRouterModeration(reasons ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusForbidden, map[string]any{"error": map[string]any{"code": 403,
			"message": fmt.Sprintf("openai/gpt-4o requires moderation on OpenRouter. Your input was flagged for %q. No credits were charged.", strings.Join(reasons, ", ")),
			"metadata": map[string]any{"reasons": reasons, "flagged_input": "Springfield city council banned all bicycles…",
				"provider_name": "OpenAI", "model_slug": "openai/gpt-4o"}}})
	}
}

// OpenRouterStreamError streams text as OpenRouter does, then the error it
// sends mid-stream when the upstream provider breaks off: an event with
// the error object beside a choice whose finish_reason is "error".
func OpenRouterStreamError(text, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		streamEvents(w, []any{
			chunkEvent(map[string]any{"role": "assistant", "content": text}, nil),
			map[string]any{"id": "gen-test", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "openai/gpt-4o",
				"provider": "OpenAI", "error": map[string]any{"code": "server_error", "message": message},
				"choices": []any{map[string]any{"index": 0, "delta": map[string]any{"content": ""}, "finish_reason": "error"}}},
		})
	}
}

// StreamErrorEvent streams text, then an event that is only an error
// object, {"error":{"message","type"}}, as OpenAI and vLLM do when they fail
// mid-stream.
func StreamErrorEvent(text, message string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		streamEvents(w, []any{
			chunkEvent(map[string]any{"role": "assistant", "content": text}, nil),
			map[string]any{"error": map[string]any{"message": message, "type": "server_error", "param": nil, "code": nil}},
		})
	}
}

// OpenAIRefusal answers as OpenAI does when the model declines a request
// with a structured-output schema: HTTP 200, message.content null and
// message.refusal set.
func OpenAIRefusal(refusal string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-refusal", "object": "chat.completion", "created": time.Now().Unix(), "model": "gpt-4o-2024-08-06",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop", "logprobs": nil,
				"message": map[string]any{"role": "assistant", "content": nil, "refusal": refusal}}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": 12, "total_tokens": 912},
		})
	}
}

// Answer answers HTTP 200 with text as the whole content: what a model
// that ignores the schema writes (prose, a Markdown table).
func Answer(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-text", "object": "chat.completion", "created": time.Now().Unix(), "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
				"message": map[string]any{"role": "assistant", "content": text}}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": 40, "total_tokens": 940},
		})
	}
}

// CutAnswer answers HTTP 200 with text cut at the request's limit, as
// every server does when the answer reaches max_tokens (or
// max_completion_tokens): finish_reason "length", the whole limit spent.
func CutAnswer(text string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		var req openai.ChatCompletionRequest
		_ = json.NewDecoder(r.Body).Decode(&req)
		limit := cmp.Or(req.MaxCompletionTokens, req.MaxTokens, 4096)
		writeJSON(w, http.StatusOK, map[string]any{
			"id": "chatcmpl-cut", "object": "chat.completion", "created": time.Now().Unix(), "model": "test-model",
			"choices": []any{map[string]any{"index": 0, "finish_reason": "length",
				"message": map[string]any{"role": "assistant", "content": text}}},
			"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": limit, "total_tokens": 900 + limit},
		})
	}
}

func chunkEvent(delta map[string]any, finish any) map[string]any {
	return map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": time.Now().Unix(), "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "delta": delta, "finish_reason": finish}}}
}

// streamEvents writes each event as an SSE data line; the stream then
// ends without [DONE], as these servers end a stream they broke off.
func streamEvents(w http.ResponseWriter, events []any) {
	w.Header().Set("Content-Type", "text/event-stream")
	w.WriteHeader(http.StatusOK)
	for _, ev := range events {
		b, _ := json.Marshal(ev)
		fmt.Fprintf(w, "data: %s\n\n", b)
	}
	if fl, ok := w.(http.Flusher); ok {
		fl.Flush()
	}
}

// Azure OpenAI's answers to a request it cannot take, as it sends them.
const (
	// AzureDeniedMessage: the key is missing, wrong, or sent as a bearer
	// token (HTTP 401, code "401").
	AzureDeniedMessage = "Access denied due to invalid subscription key or wrong API endpoint. " +
		"Make sure to provide a valid key for an active subscription and use a correct regional API endpoint for your resource."
	// AzureDeploymentMissing: no deployment of that name (HTTP 404,
	// code "DeploymentNotFound").
	AzureDeploymentMissing = "The API deployment for this resource does not exist. " +
		"If you created the deployment within the last 5 minutes, please wait a moment and try again."
)

// AzureRequest is one chat request an Azure server took: the deployment
// ("" on the v1 API), the api-version query and the answer's status.
type AzureRequest struct {
	Path, Deployment, APIVersion string
	Status                       int
}

// Azure is a loopback Azure OpenAI resource. It checks requests the way
// Azure does, in Azure's order: the key must come in the api-key header
// (a bearer token alone gets 401 with Azure's "Access denied" body); a
// deployment request must be POST /openai/deployments/DEP/chat/completions
// with an api-version Azure knows (else 404 "Resource not found") and DEP
// one of Deployments (else 404 DeploymentNotFound); the v1 API is
// POST /openai/v1/chat/completions, model in the body. Anything else is 404
// "Resource not found". An accepted request gets Answer(Text), or goes on
// to Next as POST /v1/chat/completions (the model in its body) when Next
// is set: an OpenAI-compatible fake then answers it.
type Azure struct {
	Key         string
	Deployments []string
	// Versions are the api-versions accepted; empty: 2024-10-21 and
	// 2024-06-01.
	Versions []string
	Text     string
	Next     http.Handler

	mu   sync.Mutex
	seen []AzureRequest
}

// Requests are the chat requests received so far.
func (a *Azure) Requests() []AzureRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]AzureRequest(nil), a.seen...)
}

func (a *Azure) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	rec := AzureRequest{Path: r.URL.Path, APIVersion: r.URL.Query().Get("api-version")}
	status := a.serve(w, r, &rec)
	rec.Status = status
	if strings.HasSuffix(r.URL.Path, "/chat/completions") {
		a.mu.Lock()
		a.seen = append(a.seen, rec)
		a.mu.Unlock()
	}
}

func (a *Azure) serve(w http.ResponseWriter, r *http.Request, rec *AzureRequest) int {
	azureError := func(status int, code, msg string) int {
		writeJSON(w, status, map[string]any{"error": map[string]any{"code": code, "message": msg}})
		return status
	}
	if r.Header.Get("api-key") != a.Key {
		return azureError(http.StatusUnauthorized, "401", AzureDeniedMessage)
	}
	if r.Method != http.MethodPost {
		return azureError(http.StatusNotFound, "404", "Resource not found")
	}
	if r.URL.Path == "/openai/v1/chat/completions" {
		a.answer(w, r)
		return http.StatusOK
	}
	rest, ok := strings.CutPrefix(r.URL.Path, "/openai/deployments/")
	dep, tail, _ := strings.Cut(rest, "/")
	versions := a.Versions
	if len(versions) == 0 {
		versions = []string{"2024-10-21", "2024-06-01"}
	}
	if !ok || tail != "chat/completions" || !slices.Contains(versions, rec.APIVersion) {
		return azureError(http.StatusNotFound, "404", "Resource not found")
	}
	rec.Deployment = dep
	if !slices.Contains(a.Deployments, dep) {
		return azureError(http.StatusNotFound, "DeploymentNotFound", AzureDeploymentMissing)
	}
	a.answer(w, r)
	return http.StatusOK
}

func (a *Azure) answer(w http.ResponseWriter, r *http.Request) {
	if a.Next == nil {
		Answer(a.Text)(w, r)
		return
	}
	r2 := r.Clone(r.Context())
	r2.URL.Path, r2.URL.RawQuery, r2.RequestURI = "/v1/chat/completions", "", ""
	r2.Header.Del("api-key")
	a.Next.ServeHTTP(w, r2)
}

// Dialects of Picky's rejections.
const (
	PickyOpenAI  = "openai"  // OpenAI's body; Azure sends the same
	PickyLiteLLM = "litellm" // LiteLLM proxy's UnsupportedParamsError
	PickyVLLM    = "vllm"    // vLLM's request validation error
)

// Picky is a chat server whose model does not take some of the
// parameters an OpenAI client sends, and says so as the servers do (HTTP
// 400): a reasoning model behind an alias that takes only its default
// temperature and max_completion_tokens, or an older vLLM that knows
// response_format json_object but not json_schema. Requests it accepts get
// Answer(Text); every request's JSON body is kept.
type Picky struct {
	Dialect string
	// NoTemperature rejects a temperature other than 1; NoMaxTokens
	// rejects max_tokens; NoJSONSchema rejects response_format json_schema.
	NoTemperature, NoMaxTokens, NoJSONSchema bool
	Text                                     string

	mu     sync.Mutex
	bodies []map[string]any
}

// Bodies are the JSON bodies of the chat requests received.
func (p *Picky) Bodies() []map[string]any {
	p.mu.Lock()
	defer p.mu.Unlock()
	return append([]map[string]any(nil), p.bodies...)
}

func (p *Picky) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
		http.NotFound(w, r)
		return
	}
	var body map[string]any
	if err := json.NewDecoder(r.Body).Decode(&body); err != nil {
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": err.Error()}})
		return
	}
	p.mu.Lock()
	p.bodies = append(p.bodies, body)
	p.mu.Unlock()
	temp, hasTemp := body["temperature"].(float64)
	rf, _ := body["response_format"].(map[string]any)
	switch {
	case p.NoTemperature && hasTemp && temp != 1:
		p.reject(w, "temperature", "unsupported_value", fmt.Sprintf("Unsupported value: 'temperature' does not support %v with this model. Only the default (1) value is supported.", temp))
	case p.NoMaxTokens && body["max_tokens"] != nil:
		p.reject(w, "max_tokens", "unsupported_parameter", "Unsupported parameter: 'max_tokens' is not supported with this model. Use 'max_completion_tokens' instead.")
	case p.NoJSONSchema && rf["type"] == "json_schema":
		p.reject(w, "response_format", "", "1 validation error for ChatCompletionRequest\nresponse_format.type\n  Input should be 'text' or 'json_object' [type=literal_error, input_value='json_schema', input_type=str]")
	default:
		Answer(p.Text)(w, r)
	}
}

func (p *Picky) reject(w http.ResponseWriter, param, code, openaiMessage string) {
	switch p.Dialect {
	case PickyLiteLLM:
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{
			"message": fmt.Sprintf("litellm.UnsupportedParamsError: openai does not support parameters: ['%s'], for model=o3-mini. "+
				"To drop these, set `litellm.drop_params=True` or for proxy:\n\n`litellm_settings:\n drop_params: true`\n", param),
			"type": "None", "param": "None", "code": "400"}})
	case PickyVLLM:
		writeJSON(w, http.StatusBadRequest, map[string]any{"object": "error", "message": openaiMessage,
			"type": "BadRequestError", "param": nil, "code": 400})
	default:
		var c any = code
		if code == "" {
			c = nil
		}
		writeJSON(w, http.StatusBadRequest, map[string]any{"error": map[string]any{"message": openaiMessage,
			"type": "invalid_request_error", "param": param, "code": c}})
	}
}

// Gemini quotas, as quotaId names them in a QuotaFailure.
const (
	GeminiPerMinute = "GenerateRequestsPerMinutePerProjectPerModel-FreeTier"
	GeminiPerDay    = "GenerateRequestsPerDayPerProjectPerModel-FreeTier"
)

// GeminiRateLimit answers as Gemini's OpenAI-compatible endpoint does when
// a quota runs out: HTTP 429 with Google's error object, status
// RESOURCE_EXHAUSTED, a QuotaFailure naming the quota (quotaId, limit),
// a Help link and, for a quota that resets soon, a RetryInfo with
// retryDelay. asList sends it wrapped in a JSON list, as the endpoint does;
// false sends the plain object Google's other APIs send.
func GeminiRateLimit(quotaID, limit, retryDelay string, asList bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		details := []any{
			map[string]any{"@type": "type.googleapis.com/google.rpc.QuotaFailure", "violations": []any{map[string]any{
				"quotaMetric": "generativelanguage.googleapis.com/generate_content_free_tier_requests", "quotaId": quotaID,
				"quotaDimensions": map[string]any{"location": "global", "model": "gemini-2.0-flash"}, "quotaValue": limit}}},
			map[string]any{"@type": "type.googleapis.com/google.rpc.Help", "links": []any{map[string]any{
				"description": "Learn more about Gemini API quotas", "url": "https://ai.google.dev/gemini-api/docs/rate-limits"}}},
		}
		if retryDelay != "" {
			details = append(details, map[string]any{"@type": "type.googleapis.com/google.rpc.RetryInfo", "retryDelay": retryDelay})
		}
		body := map[string]any{"error": map[string]any{"code": 429, "status": "RESOURCE_EXHAUSTED", "details": details,
			"message": "You exceeded your current quota, please check your plan and billing details. " +
				"For more information on this error, head to: https://ai.google.dev/gemini-api/docs/rate-limits."}}
		if asList {
			writeJSON(w, http.StatusTooManyRequests, []any{body})
			return
		}
		writeJSON(w, http.StatusTooManyRequests, body)
	}
}

// StreamAnswer streams text as a model does: a chunk with the role and the
// text, one with finish_reason "stop", then (unless noUsage) a usage chunk,
// and "data: [DONE]".
func StreamAnswer(text string, noUsage bool) http.HandlerFunc {
	return streamAnswer(text, "stop", noUsage)
}

// StreamCutAnswer streams text as a server does when the answer reaches
// its own token limit (Ollama's num_predict, a vLLM or llama.cpp default):
// the text, then finish_reason "length".
func StreamCutAnswer(text string) http.HandlerFunc {
	return streamAnswer(text, "length", false)
}

func streamAnswer(text, finish string, noUsage bool) http.HandlerFunc {
	return func(w http.ResponseWriter, _ *http.Request) {
		events := []any{chunkEvent(map[string]any{"role": "assistant", "content": text}, nil), chunkEvent(map[string]any{}, finish)}
		if !noUsage {
			events = append(events, map[string]any{"id": "chatcmpl-test", "object": "chat.completion.chunk", "created": time.Now().Unix(),
				"model": "test-model", "choices": []any{},
				"usage": map[string]any{"prompt_tokens": 900, "completion_tokens": len(strings.Fields(text)), "total_tokens": 900 + len(strings.Fields(text))}})
		}
		streamEvents(w, events)
		fmt.Fprint(w, "data: [DONE]\n\n")
	}
}
