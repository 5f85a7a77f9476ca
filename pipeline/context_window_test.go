package pipeline_test

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// On small-context servers every evidence call fits: pages per call and
// max_tokens are sized from the window the server announces, so no call is
// refused (llama.cpp, vLLM) or cut silently (Ollama); a server that does
// not announce it (OpenAI's API) names it in its first refusal, and the
// call is made smaller instead of repeated. The check ends as on a large
// model: both refuting pages quoted, a correction citing them.
func TestEvidenceFitsSmallContextServers(t *testing.T) {
	for _, tc := range []struct {
		style  string
		window int
	}{{llmtest.LimitLlamaCpp, 4096}, {llmtest.LimitVLLM, 4096}, {llmtest.LimitOllama, 4096}, {llmtest.LimitLlamaCppOld, 4096}, {llmtest.LimitOpenAI, 3000}} {
		t.Run(tc.style, func(t *testing.T) {
			env := testworld.New(t, nil, llmtest.WithContextLimit(tc.window, tc.style), llmtest.WithModels("test-model"))
			c, err := env.Check(t, env.Options())
			if err != nil {
				t.Fatalf("check: %v\n%s", err, pipeline.Warnings(c))
			}
			refused := 0
			for _, call := range env.LLM.Calls() {
				// A call muse stopped sending once enough pages had
				// refuted arrives cut, and the server's 400 for its
				// unreadable body is no refusal of its size.
				if call.Status >= 400 && json.Valid(call.Body) {
					refused++
				}
			}
			if announced := tc.style != llmtest.LimitOpenAI; (announced && refused > 0) || refused > 1 {
				t.Errorf("%d calls refused", refused)
			}
			if env.LLM.Truncated() > 0 {
				t.Errorf("%d prompts were cut silently", env.LLM.Truncated())
			}
			if warned := strings.Contains(pipeline.Warnings(c), "Ollama's context (num_ctx 4096)"); warned != (tc.style == llmtest.LimitOllama) {
				t.Errorf("Ollama warning shown: %v, for %s\n%s", warned, tc.style, pipeline.Warnings(c))
			}
			refuting := map[string]bool{}
			for _, e := range c.Evidence {
				if e.Verified && e.Kind == pipeline.KindRefutes {
					refuting[e.SourceURL] = true
				}
			}
			if len(refuting) < 2 || len(c.Correction.URLs) == 0 || !strings.HasPrefix(c.Correction.Text, "This post is") {
				t.Errorf("refuting pages %v, correction %+v", refuting, c.Correction)
			}
		})
	}
}

// A correction stream that never ends (slowly or as fast as it can) ends
// at the call deadline or the answer cap: the check says so, keeps the
// evidence and the text received, and stays bounded in time.
func TestEndlessCorrectionStream(t *testing.T) {
	for name, reply := range map[string]llmtest.Reply{
		"slow": {Text: "This post is false and", Endless: true, ChunkDelay: 10 * time.Millisecond},
		"fast": {Text: strings.Repeat("This post is false. ", 50), Endless: true, ChunkRunes: 256},
	} {
		t.Run(name, func(t *testing.T) {
			env := testworld.New(t, nil)
			env.Model.CorrectionReply = &reply
			o := env.Options()
			o.LLMDeadline, o.LLMMaxAnswerBytes = 1500*time.Millisecond, 16<<10
			start := time.Now()
			c, err := env.Check(t, o)
			if err == nil || !strings.Contains(err.Error(), "write correction") {
				t.Fatalf("err %v, want the correction to fail", err)
			}
			if d := time.Since(start); d > 20*time.Second {
				t.Errorf("the check ran %s", d)
			}
			if len(c.IncludedEvidence()) == 0 || !strings.HasPrefix(c.Correction.Text, "This post is false") || len(c.Correction.Text) > 16<<10 {
				t.Errorf("evidence %d, correction %d bytes %q…", len(c.IncludedEvidence()), len(c.Correction.Text), clipText(c.Correction.Text))
			}
			if w := strings.Join(c.Correction.Warnings, "\n"); !strings.Contains(w, "call deadline") && !strings.Contains(w, "answer too large") {
				t.Errorf("warnings do not say why: %q", w)
			}
		})
	}
}

func clipText(s string) string { return s[:min(len(s), 60)] }
