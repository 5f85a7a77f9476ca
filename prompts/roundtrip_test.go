package prompts

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

// The prompts, the schemas and the parsers must work together through the
// real client, both with a server that enforces the schema and with one that
// has no schema support and answers in the paper's plain formats.
func TestRoundTripThroughClient(t *testing.T) {
	for _, schema := range []bool{true, false} {
		name := "schema"
		if !schema {
			name = "plain"
		}
		t.Run(name, func(t *testing.T) {
			var opts []llmtest.Option
			if !schema {
				opts = append(opts, llmtest.WithoutSchemaSupport())
			}
			srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
				return fakeModel(req, schema)
			}, opts...)
			c, err := llm.New(llm.Config{BaseURL: srv.BaseURL, Model: "test-model", Timeout: 5 * time.Second})
			if err != nil {
				t.Fatal(err)
			}
			ctx := context.Background()

			msgs, err := Queries(samplePost, 0)
			if err != nil {
				t.Fatal(err)
			}
			resp, err := c.Complete(ctx, llm.Request{Task: llm.TaskQueries, Messages: msgs, Schema: QueriesSchema(samplePost, 0)})
			if err != nil {
				t.Fatal(err)
			}
			qs, informative, err := ParseQueries(resp.Text)
			if err != nil || !informative || len(qs) != 3 || resp.Structured != schema {
				t.Fatalf("queries %q informative %v err %v structured %v", qs, informative, err, resp.Structured)
			}

			msgs, _ = Evidence(samplePost, samplePage)
			resp, err = c.Complete(ctx, llm.Request{Task: llm.TaskEvidence, Messages: msgs, Schema: EvidenceSchema()})
			if err != nil {
				t.Fatal(err)
			}
			refutes, contextQs, err := ParseEvidence(resp.Text)
			if err != nil || len(refutes) != 1 || refutes[0] != samplePage.Paragraphs[1] || len(contextQs) != 1 {
				t.Fatalf("evidence %q %q err %v from %q", refutes, contextQs, err, resp.Text)
			}

			ev := []EvidenceItem{{URL: samplePage.URL, Publisher: "Reuters", Tier: "high", Kind: KindRefutes, Quotes: refutes}}
			msgs, _ = Correction(samplePost, ev, "")
			var streamed strings.Builder
			resp, err = c.Stream(ctx, llm.Request{Task: llm.TaskCorrection, Messages: msgs}, func(s string) { streamed.WriteString(s) })
			if err != nil {
				t.Fatal(err)
			}
			var urls []string
			for _, l := range links.Find(resp.Text) {
				urls = append(urls, l.URL)
			}
			if !strings.HasPrefix(resp.Text, CorrectionStart) || !slices.Equal(urls, []string{samplePage.URL}) || streamed.String() != resp.Text {
				t.Fatalf("correction %q cites %q", resp.Text, urls)
			}
		})
	}
}

// fakeModel answers like a model would, reading the prompt it was given.
func fakeModel(req openai.ChatCompletionRequest, schema bool) (string, error) {
	prompt := llmtest.LastUser(req)
	switch {
	case strings.Contains(prompt, "different web search queries"):
		if schema {
			return `{"queries":["WHO 5G coronavirus claim","5G towers spread virus","5G COVID-19 April 2020"]}`, nil
		}
		if !strings.Contains(prompt, "1. QUERY_1") {
			return "", errors.New("plain request without the format instructions")
		}
		return "1. WHO 5G coronavirus claim\n2. 5G towers spread virus\n3. 5G COVID-19 April 2020", nil
	case strings.Contains(prompt, "<<<BEGIN ARTICLE>>>"):
		para := samplePage.Paragraphs[1]
		if schema {
			return `{"refutes":["` + para + `"],"context":["` + samplePage.Paragraphs[2] + `"]}`, nil
		}
		return "1. Explicit refutation:\n- " + para + "\n- NONE\n\n2. Implicit refutation:\n- \"" + samplePage.Paragraphs[2] + "\"", nil
	case strings.Contains(prompt, "<<<BEGIN FACTS>>>"):
		return "This post is false: the WHO says viruses cannot travel on mobile networks. " + samplePage.URL, nil
	}
	return "", errors.New("unexpected prompt")
}
