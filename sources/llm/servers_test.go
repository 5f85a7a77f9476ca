package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

// The bad habits of real servers, each on a loopback llmtest server.

func TestStreamDoneWithoutFinishReasonIsComplete(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "This post is false.", DoneNoFinish: true}, nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("hi")}, nil)
	if err != nil || resp.Text != "This post is false." {
		t.Fatalf("a stream ended by [DONE] is complete: %v %+v", err, resp)
	}
}

func TestReasoningNeverInTheAnswer(t *testing.T) {
	answers := map[string]string{
		"inline":         "<think>The user wants {\"refutes\": ... let me think}</think>\n\nThis post is false.",
		"leading":        "Okay, the post claims {x}. I should check.</think>This post is false.",
		"unclosed-after": "This post is false.<think>but maybe I should reconsider {",
		"field":          "This post is false.",
	}
	for name, text := range answers {
		t.Run(name, func(t *testing.T) {
			srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
				return llmtest.Reply{Text: text, Reasoning: "Hidden chain of thought: the post is about {trains}."}, nil
			})
			c, _ := newClient(t, srv.BaseURL, nil)
			resp, err := c.Complete(context.Background(), Request{Messages: userMsg("hi")})
			if err != nil || resp.Text != "This post is false." {
				t.Errorf("complete: %v %q", err, resp.Text)
			}
			var deltas strings.Builder
			resp, err = c.Stream(context.Background(), Request{Messages: userMsg("hi")}, func(d string) { deltas.WriteString(d) })
			if err != nil || resp.Text != "This post is false." {
				t.Errorf("stream: %v %q", err, resp.Text)
			}
			if strings.Contains(deltas.String(), "think") || strings.Contains(deltas.String(), "Hidden") {
				t.Errorf("reasoning streamed to the reader: %q", deltas.String())
			}
		})
	}
}

func TestOnlyReasoningIsAnEmptyAnswer(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "<think>I ran out of tokens while thinking about", FinishReason: "length"}, nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	if _, err := c.Complete(context.Background(), Request{Messages: userMsg("hi")}); !errors.Is(err, ErrEmpty) {
		t.Fatalf("want ErrEmpty, got %v", err)
	}
}

func TestNeverEndingStreamHitsTheDeadline(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "This post is", Endless: true, ChunkDelay: 20 * time.Millisecond}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Deadline = 300 * time.Millisecond })
	start := time.Now()
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("hi")}, nil)
	if !errors.Is(err, ErrTimeout) || !strings.Contains(err.Error(), "call deadline of 300ms") {
		t.Fatalf("want the deadline error, got %v", err)
	}
	if resp == nil || !strings.HasPrefix(resp.Text, "This post is") {
		t.Errorf("the text received is not kept: %+v", resp)
	}
	if d := time.Since(start); d > 3*time.Second {
		t.Errorf("the call ran %s past a 300ms deadline", d)
	}
}

func TestFastEndlessStreamIsCapped(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: strings.Repeat("flood ", 200), Endless: true, ChunkRunes: 512}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.MaxAnswerBytes = 32 << 10 })
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("hi")}, nil)
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
	if resp == nil || len(resp.Text) == 0 || len(resp.Text) > 33<<10 {
		t.Errorf("kept %d bytes, want the text received up to the cap", len(resp.Text))
	}
}

func TestEndlessJSONBodyIsCapped(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: strings.Repeat("x", 600<<10)}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.MaxAnswerBytes = 16 << 10 })
	_, err := c.Complete(context.Background(), Request{Messages: userMsg("hi")})
	if !errors.Is(err, ErrTooLarge) {
		t.Fatalf("want ErrTooLarge, got %v", err)
	}
}

// Each server's context error is recognised and not retried unchanged;
// the window it names is learnt, so the next call fits.
func TestContextErrorsOfEachServer(t *testing.T) {
	for _, style := range []string{llmtest.LimitOpenAI, llmtest.LimitVLLM, llmtest.LimitLlamaCpp, llmtest.LimitLlamaCppOld} {
		t.Run(style, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "ok", nil },
				llmtest.WithContextLimit(300, style))
			c, waits := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.ContextWindow = 100000 }) // wrong on purpose
			_, err := c.Complete(context.Background(), Request{Messages: userMsg(strings.Repeat("word ", 400)), MaxTokens: 50})
			if !errors.Is(err, ErrContextLength) {
				t.Fatalf("want ErrContextLength, got %v", err)
			}
			if len(*waits) != 0 || srv.Count("/v1/chat/completions") != 1 {
				t.Errorf("a context error was retried unchanged: %d calls", srv.Count("/v1/chat/completions"))
			}
		})
	}
}

// With the window known from the server, max_tokens is sized so that the
// prompt and the answer fit: a 4k server is never asked for 5,400 tokens.
func TestMaxTokensFitTheServersWindow(t *testing.T) {
	for _, style := range []string{llmtest.LimitVLLM, llmtest.LimitLlamaCpp, llmtest.LimitOllama} {
		t.Run(style, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "ok", nil },
				llmtest.WithContextLimit(4096, style), llmtest.WithModels("gpt-4o-mini"))
			c, _ := newClient(t, srv.BaseURL, nil)
			if w := c.ContextWindow(context.Background(), TaskEvidence); w.Tokens != 4096 {
				t.Fatalf("window %+v, want 4096 from the server", w)
			}
			_, err := c.Complete(context.Background(), Request{Task: TaskEvidence, Messages: userMsg(strings.Repeat("word ", 1500)), MaxTokens: 5400})
			if err != nil {
				t.Fatal(err)
			}
			call := srv.ChatCalls()[0].Chat
			if got := max(call.MaxTokens, call.MaxCompletionTokens); got <= 0 || got+1500 > 4096 {
				t.Errorf("max_tokens %d does not fit a 4096 window with a 1,500-word prompt", got)
			}
		})
	}
}

// Ollama cuts a prompt longer than num_ctx without a word: the client
// refuses to send it, naming num_ctx, so the caller can send less.
func TestOllamaPromptOverNumCtxIsNotSent(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "ok", nil },
		llmtest.WithContextLimit(2048, llmtest.LimitOllama), llmtest.WithModels("gpt-4o-mini"))
	c, _ := newClient(t, srv.BaseURL, nil)
	_, err := c.Complete(context.Background(), Request{Messages: userMsg(strings.Repeat("word ", 3000))})
	if !errors.Is(err, ErrContextLength) || !strings.Contains(err.Error(), "num_ctx 2048") {
		t.Fatalf("want a context error naming num_ctx, got %v", err)
	}
	if srv.Truncated() != 0 || srv.Count("/v1/chat/completions") != 0 {
		t.Errorf("the prompt was sent and cut silently")
	}
}

// A server that answers any path with a JSON object (a proxy, a gateway
// with a catch-all route) is not taken for Ollama: its window stays
// unknown rather than Ollama's default of 4,096 tokens, which would cut
// every call to it.
func TestAnyJSONIsNotOllama(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json")
		fmt.Fprint(w, `{"status":"ok","path":"`+r.URL.Path+`"}`)
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/v1", nil)
	if w := c.ContextWindow(context.Background(), TaskEvidence); w.Tokens != 0 || w.Ollama {
		t.Errorf("window %+v from a server that answers every path with JSON, want unknown", w)
	}
}
