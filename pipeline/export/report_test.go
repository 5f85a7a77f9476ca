package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
)

func TestCheckJSONKeys(t *testing.T) {
	env := testworld.New(t, nil)
	c, err := env.Check(t, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.ForOutput())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	need := map[string][]string{
		"post":       {"text"},
		"correction": {"text", "urls", "warnings"},
		"usage":      {"llm_calls", "prompt_tokens", "cached_prompt_tokens", "completion_tokens", "cost_usd", "seconds"},
	}
	for obj, keys := range need {
		o, _ := m[obj].(map[string]any)
		for _, k := range keys {
			if _, ok := o[k]; !ok {
				t.Errorf("%s.%s missing", obj, k)
			}
		}
	}
	src := m["sources"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "domain", "publisher", "published", "tier", "factuality", "bias", "rating_origin", "relevance", "status", "reason"} {
		if _, ok := src[k]; !ok {
			t.Errorf("sources[].%s missing", k)
		}
	}
	ev := m["evidence"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "quote", "kind", "verified", "included"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("evidence[].%s missing", k)
		}
	}
	if _, ok := m["queries"].([]any)[0].(map[string]any)["text"]; !ok {
		t.Error("queries[].text missing")
	}

	md := Report(c)
	for _, want := range []string{"# Correction", "This post is false", "## Sources", "Reuters; high tier", "excluded cutoff",
		"after the cutoff", "## Evidence", "- **refutes**: “", "— [Reuters](", testworld.QuoteR1} {
		if !strings.Contains(md, want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}
