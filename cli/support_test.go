package cli

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestCheckSupportMap: `muse check` judges the correction's sentences in
// one call after the check, against a loopback model that answers as
// models do (a preamble, a fenced block): the JSON carries a support
// array per sentence, the first cited sentence unsupported with the page
// the model says does not say it named in the warnings, the cited
// sentences the answer leaves out not judged (never supported), and the
// report lists each sentence with its mark.
func TestCheckSupportMap(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	var mu sync.Mutex
	var asked [][]string
	w.Model.Hook = func(req openai.ChatCompletionRequest) (llmtest.Reply, bool) {
		if llmtest.SchemaName(req) != "support" {
			return llmtest.Reply{}, false
		}
		ns := regexp.MustCompile(`<<<BEGIN SENTENCE (\d+)>>>`).FindAllStringSubmatch(llmtest.LastUser(req), -1)
		var got []string
		for _, n := range ns {
			got = append(got, n[1])
		}
		mu.Lock()
		asked = append(asked, got)
		mu.Unlock()
		if len(ns) == 0 {
			return llmtest.Reply{Text: "{}"}, true
		}
		return llmtest.Reply{Text: fmt.Sprintf("I checked each sentence against its quotes.\n```json\n{\"sentences\": [{\"n\": %s, \"status\": \"unsupported\", \"reason\": \"The quotes do not say this.\", \"pages_not_saying_it\": [1]}]}\n```", ns[0][1])}, true
	}
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1", "MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	out, errOut, code := muse(t, "", env, "check", "--json", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	mu.Lock()
	seen := slices.Clone(asked)
	mu.Unlock()
	if len(seen) != 1 {
		t.Fatalf("support calls %d, want 1: %v", len(seen), seen)
	}
	var got struct {
		Support    []pipeline.SentenceSupport `json:"support"`
		Correction struct {
			Warnings []string `json:"warnings"`
		} `json:"correction"`
	}
	if err := json.Unmarshal([]byte(out), &got); err != nil {
		t.Fatal(err)
	}
	counts := map[string]int{}
	cited := 0
	for _, s := range got.Support {
		counts[s.Status]++
		if len(s.Cites) > 0 {
			cited++
		}
		if s.Text == "" {
			t.Errorf("sentence %d has no text", s.N)
		}
		if s.Status == pipeline.SupportSupported {
			t.Errorf("sentence %d supported, though the model judged none so", s.N)
		}
	}
	if cited == 0 || cited != len(seen[0]) {
		t.Fatalf("%d cited sentences, %d asked about: %+v", cited, len(seen[0]), got.Support)
	}
	if counts[pipeline.SupportUnsupported] != 1 || counts[pipeline.SupportNotJudged] != cited-1 {
		t.Errorf("statuses %v, want 1 unsupported and %d not judged", counts, cited-1)
	}
	first := got.Support[0]
	for _, s := range got.Support {
		if s.Status == pipeline.SupportUnsupported {
			first = s
		}
	}
	if len(first.NotSaying) != 1 || first.Model != "test-model" {
		t.Errorf("unsupported sentence %+v", first)
	}
	warned := strings.Join(got.Correction.Warnings, "\n")
	if want := fmt.Sprintf("sentence %d cites %s, but %s does not say it", first.N, first.NotSaying[0], first.NotSaying[0]); !strings.Contains(warned, want) {
		t.Errorf("warnings lack %q:\n%s", want, warned)
	}
	if !strings.Contains(errOut, "muse: support: ") || !strings.Contains(errOut, "1 unsupported") {
		t.Errorf("stderr lacks the support summary:\n%s", errOut)
	}

	report, _, code := muse(t, "", env, "check", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if code != 0 || !strings.Contains(report, "**Support:**") || !strings.Contains(report, fmt.Sprintf("%d. ✗ ", first.N)) {
		t.Errorf("report lacks the support list (exit %d):\n%s", code, report)
	}
}
