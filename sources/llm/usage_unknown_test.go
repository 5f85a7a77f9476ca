package llm

import (
	"context"
	"strings"
	"sync"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestUnreportedUsage: a server that sends no usage (no usage object; a
// stream without stream_options) leaves the call's cost unknown, not
// $0.0000, and a spend cap holds it at muse's own count of its tokens.
func TestUnreportedUsage(t *testing.T) {
	answer := strings.Repeat("The council voted to widen the bicycle lane, not to ban bicycles. ", 20)
	for _, stream := range []bool{false, true} {
		srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
			return llmtest.Reply{Text: answer, NoUsage: true}, nil
		}, llmtest.WithoutStreamOptions())
		var mu sync.Mutex
		var settled []float64
		guard := func(_ context.Context, call Call) (func(float64), error) {
			return func(usd float64) { mu.Lock(); settled = append(settled, usd); mu.Unlock() }, nil
		}
		c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Model = "gpt-4o"; cfg.SpendGuard = guard })
		req := Request{Messages: userMsg(strings.Repeat("Springfield banned bicycles from Main Street. ", 50))}
		var resp *Response
		var err error
		if stream {
			resp, err = c.Stream(context.Background(), req, nil)
		} else {
			resp, err = c.Complete(context.Background(), req)
		}
		if err != nil {
			t.Fatalf("stream=%v: %v", stream, err)
		}
		u := resp.Usage
		if u.UnreportedCalls != 1 || u.CostUSD != 0 || u.Tokens() != 0 {
			t.Errorf("stream=%v: usage %+v, want one call of unreported usage", stream, u)
		}
		if got := u.CostText(); !strings.Contains(got, "unknown") || strings.Contains(got, "$0.0000") {
			t.Errorf("stream=%v: cost shown as %q", stream, got)
		}
		// Prompt ~500 and answer ~260 tokens at gpt-4o's $2.50 and $10 a million.
		if len(settled) != 1 || settled[0] < 0.002 || settled[0] > 0.01 {
			t.Errorf("stream=%v: the spend guard was settled with %v, want muse's count of the tokens", stream, settled)
		}
	}
	var total Usage
	total.Add(Usage{LLMCalls: 1, PromptTokens: 100, CostUSD: 0.01})
	total.Add(Usage{LLMCalls: 1, UnreportedCalls: 1})
	if got := total.CostText(); got != "$0.0100 and 1 call of unknown cost" {
		t.Errorf("mixed: %q", got)
	}
	for _, c := range []struct {
		u    Usage
		want string
	}{
		{Usage{LLMCalls: 2, CostUSD: 0.0123}, "$0.0123"},
		{total, "≥$0.0100"},
		{Usage{LLMCalls: 3, CachedCalls: 1, UnreportedCalls: 2}, "unknown"},
		{Usage{}, "$0.0000"},
	} {
		if got := c.u.CostCell(); got != c.want {
			t.Errorf("CostCell of %+v = %q, want %q", c.u, got, c.want)
		}
	}
	// Tokens spent on a model without a price are not said to be free.
	if got := (Usage{LLMCalls: 3, PromptTokens: 1607, CompletionTokens: 146}).CostText(); got != "$0.0000 (no price, or a price of 0, for the model)" {
		t.Errorf("unpriced: %q", got)
	}
	if got := (Usage{LLMCalls: 2, CachedCalls: 2, PromptTokens: 100}).CostText(); got != "$0.0000" {
		t.Errorf("replayed from the cache: %q", got)
	}
}
