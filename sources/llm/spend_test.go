package llm

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// A repeated call answered by the response cache counts its tokens, costs
// nothing and is marked cached; the server sees it once. Both the plain
// and the streamed call.
func TestCachedCallsAreFree(t *testing.T) {
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		return "The post is false: the bridge is open.", nil
	})
	cache, err := httpcache.Open(context.Background(), httpcache.Options{Path: filepath.Join(t.TempDir(), "cache.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer cache.Close()
	c, err := New(Config{BaseURL: srv.BaseURL, Model: "gpt-4o", APIKey: "sk-test", HTTPClient: cache.Client(nil)})
	if err != nil {
		t.Fatal(err)
	}
	req := Request{Task: TaskCorrection, Messages: []Message{{Role: "user", Content: "Is the bridge closed?"}}}
	for _, stream := range []bool{false, true} {
		call := func() *Response {
			var resp *Response
			var err error
			if stream {
				var got strings.Builder
				resp, err = c.Stream(context.Background(), req, func(s string) { got.WriteString(s) })
				if err == nil && got.String() != resp.Text {
					t.Errorf("stream deltas %q, text %q", got.String(), resp.Text)
				}
			} else {
				resp, err = c.Complete(context.Background(), req)
			}
			if err != nil {
				t.Fatalf("stream=%v: %v", stream, err)
			}
			return resp
		}
		before := srv.Count("/v1/chat/completions")
		first, second := call(), call()
		if n := srv.Count("/v1/chat/completions") - before; n != 1 {
			t.Errorf("stream=%v: the server saw %d calls, want 1", stream, n)
		}
		if first.Usage.CachedCalls != 0 || first.Usage.CostUSD <= 0 {
			t.Errorf("stream=%v: first call usage %+v, want paid", stream, first.Usage)
		}
		if second.Usage.CachedCalls != 1 || second.Usage.CostUSD != 0 || second.Usage.PromptTokens != first.Usage.PromptTokens ||
			second.Text != first.Text {
			t.Errorf("stream=%v: replayed usage %+v text %q, want cached, free, same tokens and text", stream, second.Usage, second.Text)
		}
	}
}

// A guard that refuses stops the call before anything is sent, with an
// error that says which cap; settle gets what the call really cost.
func TestSpendGuard(t *testing.T) {
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) { return "fine", nil })
	var mu sync.Mutex
	var settled []float64
	var estimates []float64
	capUSD := 1.0
	guard := func(_ context.Context, call Call) (func(float64), error) {
		mu.Lock()
		defer mu.Unlock()
		estimates = append(estimates, call.EstUSD)
		if call.EstUSD > capUSD {
			return nil, &SpendCapError{Scope: "check", CapUSD: capUSD, EstUSD: call.EstUSD, Task: call.Task, Setting: "spend_cap_check_usd"}
		}
		return func(usd float64) { mu.Lock(); settled = append(settled, usd); mu.Unlock() }, nil
	}
	c, err := New(Config{BaseURL: srv.BaseURL, Model: "gpt-4o", APIKey: "sk-test"})
	if err != nil {
		t.Fatal(err)
	}
	ctx := WithSpendGuard(context.Background(), guard)
	small := Request{Task: TaskQueries, Messages: []Message{{Role: "user", Content: "short"}}, MaxTokens: 100}
	resp, err := c.Complete(ctx, small)
	if err != nil {
		t.Fatal(err)
	}
	if len(settled) != 1 || settled[0] != resp.Usage.CostUSD || resp.Usage.CostUSD <= 0 {
		t.Errorf("settled %v, want the call's cost %v", settled, resp.Usage.CostUSD)
	}
	if est := estimates[0]; est < resp.Usage.CostUSD {
		t.Errorf("estimate %v is below the real cost %v", est, resp.Usage.CostUSD)
	}
	// 4.4M characters ≈ 1.1M tokens at $2.50/M: well over $1.
	big := Request{Task: TaskEvidence, Messages: []Message{{Role: "user", Content: strings.Repeat("word ", 880_000)}}, MaxTokens: 100}
	before := srv.Count("/v1/chat/completions")
	_, err = c.Complete(ctx, big)
	if !errors.Is(err, ErrSpendCap) || !strings.Contains(err.Error(), "spend cap of $1.00 per check reached") ||
		!strings.Contains(err.Error(), "spend_cap_check_usd") {
		t.Fatalf("err = %v, want the spend cap named", err)
	}
	if srv.Count("/v1/chat/completions") != before {
		t.Error("the refused call reached the server")
	}
	// The plain client (no context guard) is not affected.
	if _, err := c.Complete(context.Background(), small); err != nil {
		t.Error(err)
	}
}

func TestEstimateLocalModelIsFree(t *testing.T) {
	c, err := New(Config{BaseURL: "http://localhost:11434/v1", Model: "llama3.1"})
	if err != nil {
		t.Fatal(err)
	}
	if est := c.Estimate(Request{Messages: []Message{{Role: "user", Content: strings.Repeat("x", 10000)}}}); est != 0 {
		t.Errorf("a model without a price is estimated at %v", est)
	}
}
