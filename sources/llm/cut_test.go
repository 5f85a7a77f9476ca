package llm

import (
	"context"
	"errors"
	"sync"
	"sync/atomic"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestCutAnswerAskedAgain: an answer cut at the call's token limit
// (finish_reason "length"; a reasoning model may have spent the limit
// before any text, and sent none) is asked for once more with twice the
// limit, no more than the context window leaves; both calls are counted.
// Cut again, the answer comes back with FinishReason "length".
func TestCutAnswerAskedAgain(t *testing.T) {
	for _, row := range []struct {
		name      string
		firstText string
		window    int
		wantLimit int
		cutTwice  bool
	}{
		{name: "cut text", firstText: `{"queries":["a`, wantLimit: 600},
		{name: "no text, the limit spent reasoning", firstText: "", wantLimit: 600},
		{name: "the window leaves less than twice", firstText: "", window: 500},
		{name: "cut twice", firstText: `{"queries":["a`, wantLimit: 600, cutTwice: true},
	} {
		t.Run(row.name, func(t *testing.T) {
			var calls atomic.Int32
			var mu sync.Mutex
			var limits []int
			srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
				mu.Lock()
				limits = append(limits, req.MaxTokens)
				mu.Unlock()
				if calls.Add(1) == 1 || row.cutTwice {
					return llmtest.Reply{Text: row.firstText, FinishReason: "length", PromptTokens: 400, CompletionTokens: req.MaxTokens}, nil
				}
				return llmtest.Reply{Text: `{"queries":["a","b"]}`, PromptTokens: 400, CompletionTokens: 20}, nil
			})
			c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.ContextWindow = row.window })
			resp, err := c.Complete(context.Background(), Request{Messages: userMsg("hi"), Schema: testSchema, MaxTokens: 300})
			mu.Lock()
			defer mu.Unlock()
			switch {
			case row.window > 0:
				// 500 tokens leave less than 600 beside the prompt: the
				// largest limit that fits is asked for.
				if len(limits) != 2 || limits[1] <= 300 || limits[1] >= 600 {
					t.Fatalf("limits %v, want a second call with what the window leaves", limits)
				}
				return
			case row.cutTwice:
				if len(limits) != 2 || resp == nil || resp.FinishReason != "length" || !resp.Enlarged {
					t.Fatalf("limits %v, resp %+v, err %v", limits, resp, err)
				}
				return
			}
			if err != nil || resp.Text != `{"queries":["a","b"]}` || !resp.Enlarged {
				t.Fatalf("%v %+v", err, resp)
			}
			if len(limits) != 2 || limits[0] != 300 || limits[1] != row.wantLimit {
				t.Errorf("limits %v, want 300 then %d", limits, row.wantLimit)
			}
			if resp.Usage.LLMCalls != 2 || resp.Usage.CompletionTokens != 320 {
				t.Errorf("usage %+v, want both calls", resp.Usage)
			}
		})
	}
	// An answer that was not cut is not asked again.
	if n := (&Client{}).largerLimit(context.Background(), Request{MaxTokens: 300}, nil, &Response{FinishReason: "stop"}, nil); n != 0 {
		t.Errorf("largerLimit of a whole answer = %d", n)
	}
	if n := (&Client{}).largerLimit(context.Background(), Request{MaxTokens: 300}, nil, &Response{FinishReason: "length"}, errors.New("x")); n != 0 {
		t.Errorf("largerLimit after another error = %d", n)
	}
}
