package pipeline

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline/llm/llmtest"
	"github.com/musecheck/muse/prompts"
)

// BenchmarkCheck runs one text post end to end against a loopback model
// that answers every call after one second, with a dozen candidate pages
// across tiers (two high, two medium, one low, one unrated, and six that
// are kept out: excluded publisher, after the cutoff, undated, too short,
// irrelevant, missing). Reported per post:
//
//	wall_s               wall-clock seconds
//	model_calls          chat calls made
//	critical_path_calls  model latencies on the critical path: call start
//	                     times grouped in waves (a call starting ≥ 0.5 s after
//	                     the current wave began opens a new one)
//	prompt_tokens        prompt tokens as the server counted them
//	paper_prompt_tokens  the same calls, had each evidence prompt carried the
//	                     page's first 20,000 characters (the paper's method)
//	prompt_ratio         prompt_tokens / paper_prompt_tokens
//	evidence_ratio       the same ratio for the evidence calls alone
//	page_text_ratio      page characters sent / the paper's first 20,000
//	                     characters of the same pages
func BenchmarkCheck(b *testing.B) {
	const latency = time.Second
	env := newE2E(b, nil, llmtest.WithDelay(latency))
	var mu sync.Mutex
	var starts []time.Time
	inner := env.model.handle
	// Rewrap the server's handler to log when each call arrives.
	env.llm = llmtest.NewReplyServer(b, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		mu.Lock()
		starts = append(starts, time.Now())
		mu.Unlock()
		return inner(req)
	}, llmtest.WithDelay(latency))
	env.cfg.OpenAIBaseURL = env.llm.BaseURL

	var wall, calls, waves, tokens, paper, evTokens, evPaper, sentChars, paperChars float64
	b.ResetTimer()
	for range b.N {
		mu.Lock()
		starts = nil
		mu.Unlock()
		before := len(env.llm.ChatCalls())
		e, closeFn, err := NewFromConfig(context.Background(), env.cfg, env.opts())
		if err != nil {
			b.Fatal(err)
		}
		c := e.NewCheck(Post{Text: e2ePost, Author: "City Rumours", Handle: "@cityrumours", PostedAt: e2eCutoff}, e2eCutoff)
		t0 := time.Now()
		if err := e.Run(context.Background(), c, StageImages, nil); err != nil {
			b.Fatal(err)
		}
		wall += time.Since(t0).Seconds()
		closeFn()

		chat := env.llm.ChatCalls()[before:]
		calls += float64(len(chat))
		mu.Lock()
		waves += float64(countWaves(starts, latency/2))
		mu.Unlock()
		tokens += float64(c.Usage.PromptTokens)
		ev := c.Usage.ByStage[string(StageEvidence)].PromptTokens
		evTokens += float64(ev)
		paperEv := paperEvidenceTokens(b, c, env)
		evPaper += float64(paperEv)
		paper += float64(c.Usage.PromptTokens - ev + paperEv)
		for _, s := range c.Sources {
			if s.SentChars > 0 {
				sentChars += float64(s.SentChars)
				paperChars += float64(min(20000, len(strings.Join(s.Paragraphs, "\n\n"))))
			}
		}
		if len(c.Correction.URLs) == 0 {
			b.Fatalf("no sourced correction: %+v", c.Correction)
		}
	}
	n := float64(b.N)
	b.ReportMetric(wall/n, "wall_s")
	b.ReportMetric(calls/n, "model_calls")
	b.ReportMetric(waves/n, "critical_path_calls")
	b.ReportMetric(tokens/n, "prompt_tokens")
	b.ReportMetric(paper/n, "paper_prompt_tokens")
	b.ReportMetric(tokens/paper, "prompt_ratio")
	b.ReportMetric(evTokens/evPaper, "evidence_ratio")
	b.ReportMetric(sentChars/paperChars, "page_text_ratio")
}

// countWaves groups call start times into rounds of concurrent calls.
func countWaves(starts []time.Time, gap time.Duration) int {
	s := slices.Clone(starts)
	slices.SortFunc(s, func(a, b time.Time) int { return a.Compare(b) })
	waves := 0
	var begin time.Time
	for _, t := range s {
		if waves == 0 || t.Sub(begin) >= gap {
			waves++
			begin = t
		}
	}
	return waves
}

// paperEvidenceTokens is what the evidence calls of c would have cost had
// each page been sent as the paper does, its first 20,000 characters,
// counted the way the loopback server counts (words of every message).
func paperEvidenceTokens(tb testing.TB, c *Check, env *e2eEnv) int {
	total := 0
	post := promptPost(c.Post, c.Images)
	for _, s := range c.Sources {
		if s.SentChars == 0 {
			continue // not sent for evidence
		}
		msgs, err := prompts.Evidence(post, prompts.Page{URL: s.URL, Title: s.Title, Publisher: s.Publisher,
			Published: s.Published, Paragraphs: s.Paragraphs})
		if err != nil {
			tb.Fatal(err)
		}
		for _, m := range msgs {
			total += len(strings.Fields(m.Content))
		}
	}
	return total
}
