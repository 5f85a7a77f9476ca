package llmtest

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
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
