package llm

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestProviderDialects: each hosted server's way of saying that an answer
// was filtered, refused or replaced by an error, as it documents it, reads
// as a typed error that keeps the server's own words: Azure's content
// filter (a 400 for the prompt, a 200 with finish_reason content_filter for
// the answer), OpenRouter's moderation (403) and its error objects sent
// with status 200 (in the body, and mid-stream beside the choices), the
// error event OpenAI and vLLM send mid-stream, and OpenAI's refusal field.
// None of them is retried unchanged, and a stream keeps its text.
func TestProviderDialects(t *testing.T) {
	rows := []struct {
		name     string
		h        http.HandlerFunc
		stream   bool
		kind     error
		status   int
		provider string
		filtered []string
		msg      []string // words the message keeps
		text     string   // text a stream keeps
	}{
		{name: "Azure prompt filter", h: llmtest.AzurePromptFilter("hate", "medium"), kind: ErrContentFilter, status: 400,
			provider: "Azure", filtered: []string{"hate, medium"}, msg: []string{"content management policy"}},
		{name: "Azure filtered answer", h: llmtest.AzureFilteredAnswer("violence", "high"), kind: ErrContentFilter, status: 200,
			provider: "Azure", filtered: []string{"violence, high"}, msg: []string{"content filter"}},
		{name: "Azure jailbreak filter", h: llmtest.AzurePromptFilter("jailbreak", ""), kind: ErrContentFilter, status: 400,
			provider: "Azure", filtered: []string{"jailbreak"}},
		{name: "OpenRouter moderation", h: llmtest.OpenRouterModeration("violence/graphic"), kind: ErrContentFilter, status: 403,
			provider: "OpenRouter", filtered: []string{"violence/graphic"}, msg: []string{"requires moderation"}},
		{name: "OpenRouter 200 with an error", h: llmtest.OpenRouterError(502, "Provider returned error", "Fireworks", "upstream connect error"),
			kind: ErrInBand, status: 200, provider: "OpenRouter", msg: []string{"Provider returned error", "upstream connect error", "Fireworks"}},
		{name: "OpenRouter error mid-stream", h: llmtest.OpenRouterStreamError("This post is", "Provider disconnected unexpectedly"), stream: true,
			kind: ErrInBand, status: 200, msg: []string{"Provider disconnected unexpectedly"}, text: "This post is"},
		{name: "error event mid-stream", h: llmtest.StreamErrorEvent("This post", "The server had an error while processing your request."), stream: true,
			kind: ErrInBand, status: 200, msg: []string{"The server had an error"}, text: "This post"},
		{name: "OpenAI refusal", h: llmtest.OpenAIRefusal("I'm sorry, but I can't help with that request."), kind: ErrRefusal, status: 200,
			msg: []string{"I'm sorry, but I can't help"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			var calls atomic.Int32
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				if !strings.HasSuffix(r.URL.Path, "/chat/completions") {
					http.NotFound(w, r) // the context window is not announced
					return
				}
				calls.Add(1)
				row.h(w, r)
			}))
			defer srv.Close()
			c, _ := newClient(t, srv.URL+"/v1", nil)
			var (
				resp *Response
				err  error
			)
			if row.stream {
				resp, err = c.Stream(context.Background(), Request{Messages: userMsg("hi")}, nil)
			} else {
				resp, err = c.Complete(context.Background(), Request{Messages: userMsg("hi"), Schema: testSchema})
			}
			var ae *APIError
			if !errors.As(err, &ae) || !errors.Is(err, row.kind) {
				t.Fatalf("err %v, want an *APIError of kind %v", err, row.kind)
			}
			if row.kind == ErrContentFilter && !errors.Is(err, ErrRefusal) {
				t.Error("a content filter's block is not a refusal")
			}
			if ae.Status != row.status || ae.Provider != row.provider || !slices.Equal(ae.Filtered, row.filtered) {
				t.Errorf("status %d provider %q filtered %q, want %d %q %q", ae.Status, ae.Provider, ae.Filtered, row.status, row.provider, row.filtered)
			}
			for _, m := range row.msg {
				if !strings.Contains(ae.Message, m) {
					t.Errorf("message %q lost %q", ae.Message, m)
				}
			}
			if row.stream && (resp == nil || resp.Text != row.text) {
				t.Errorf("the text received is not kept: %+v", resp)
			}
			if n := calls.Load(); n != 1 {
				t.Errorf("%d requests: an answer the server refused or replaced is not retried unchanged", n)
			}
			t.Logf("→ %v", err)
		})
	}
}

// TestProviderDialectFromTheHost: a server known by its host is named even
// when its error body says nothing of itself.
func TestProviderDialectFromTheHost(t *testing.T) {
	for base, want := range map[string]string{"https://newsroom.openai.azure.com/openai/v1": "Azure",
		"https://openrouter.ai/api/v1": "OpenRouter", "http://localhost:11434/v1": ""} {
		if got := providerOf(base); got != want {
			t.Errorf("providerOf(%s) = %q, want %q", base, got, want)
		}
	}
}
