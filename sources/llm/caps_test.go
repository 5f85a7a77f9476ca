package llm

import (
	"context"
	"net/http/httptest"
	"testing"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestCapabilitiesLearned: a model whose name hides what it takes (a
// reasoning model behind an alias, an older vLLM) rejects a parameter with
// the server's own 400; the client sends again once without it (or with
// its replacement), and remembers it for the model: the next call goes
// right the first time. OpenAI's and Azure's body, LiteLLM's and vLLM's.
func TestCapabilitiesLearned(t *testing.T) {
	rows := []struct {
		name    string
		picky   *llmtest.Picky
		schema  bool
		want    Capabilities
		first   int // requests of the first call
		absent  []string
		present []string
	}{
		{name: "OpenAI: temperature", picky: &llmtest.Picky{NoTemperature: true}, want: Capabilities{NoTemperature: true},
			first: 2, absent: []string{"temperature"}},
		{name: "OpenAI: max_tokens", picky: &llmtest.Picky{NoMaxTokens: true}, want: Capabilities{MaxCompletionTokens: true},
			first: 2, absent: []string{"max_tokens"}, present: []string{"max_completion_tokens"}},
		{name: "OpenAI: both, one at a time", picky: &llmtest.Picky{NoTemperature: true, NoMaxTokens: true},
			want: Capabilities{NoTemperature: true, MaxCompletionTokens: true}, first: 3, absent: []string{"temperature", "max_tokens"}},
		{name: "LiteLLM: temperature", picky: &llmtest.Picky{Dialect: llmtest.PickyLiteLLM, NoTemperature: true},
			want: Capabilities{NoTemperature: true}, first: 2, absent: []string{"temperature"}},
		{name: "vLLM: json_schema, json_object taken", picky: &llmtest.Picky{Dialect: llmtest.PickyVLLM, NoJSONSchema: true}, schema: true,
			want: Capabilities{Format: FormatJSONObject}, first: 2, present: []string{"response_format"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			row.picky.Text = `{"queries":["a"]}`
			srv := httptest.NewServer(row.picky)
			defer srv.Close()
			c, _ := newClient(t, srv.URL+"/v1", func(cfg *Config) { cfg.Model = "house-reasoner"; cfg.MaxRetries = -1 })
			req := Request{Messages: userMsg("hi"), MaxTokens: 300}
			if row.schema {
				req.Schema = testSchema
			}
			for i := range 2 {
				resp, err := c.Complete(context.Background(), req)
				if err != nil || resp.Text != `{"queries":["a"]}` {
					t.Fatalf("call %d: %v %+v", i, err, resp)
				}
			}
			bodies := row.picky.Bodies()
			if len(bodies) != row.first+1 {
				t.Fatalf("%d requests, want %d for the first call and 1 for the second", len(bodies), row.first)
			}
			last := bodies[len(bodies)-1]
			for _, k := range row.absent {
				if _, ok := last[k]; ok {
					t.Errorf("%s still sent: %v", k, last)
				}
			}
			for _, k := range row.present {
				if _, ok := last[k]; !ok {
					t.Errorf("%s not sent: %v", k, last)
				}
			}
			if row.schema {
				if rf, _ := last["response_format"].(map[string]any); rf["type"] != "json_object" {
					t.Errorf("response_format %v, want json_object", last["response_format"])
				}
			}
			if got := c.Capabilities("house-reasoner"); got != row.want {
				t.Errorf("capabilities %+v, want %+v", got, row.want)
			}
		})
	}
}

// TestCapabilitiesConfigured: capabilities set for a model are used from
// its first call; other models keep muse's defaults.
func TestCapabilitiesConfigured(t *testing.T) {
	picky := &llmtest.Picky{NoTemperature: true, NoMaxTokens: true, Text: "ok"}
	srv := httptest.NewServer(picky)
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/v1", func(cfg *Config) {
		cfg.Model = "house-reasoner"
		cfg.Capabilities = map[string]Capabilities{"house-reasoner": {NoTemperature: true, MaxCompletionTokens: true}}
	})
	if _, err := c.Complete(context.Background(), Request{Messages: userMsg("hi"), MaxTokens: 300}); err != nil {
		t.Fatal(err)
	}
	if n := len(picky.Bodies()); n != 1 {
		t.Errorf("%d requests, want 1", n)
	}
	if got := c.Capabilities("another"); got != (Capabilities{}) {
		t.Errorf("another model: %+v", got)
	}
}

// TestCapabilitiesNotLearnedFromOtherErrors: a 400 that names no
// parameter (or one muse does not send) is not retried.
func TestCapabilitiesNotLearnedFromOtherErrors(t *testing.T) {
	for _, e := range []*APIError{
		{Kind: ErrBadRequest, Status: 400, Message: "Invalid 'messages[1].content': string too long."},
		{Kind: ErrBadRequest, Status: 400, Param: "logprobs", Code: "unsupported_parameter", Message: "Unsupported parameter: 'logprobs' is not supported with this model."},
		{Kind: ErrRateLimited, Status: 429, Message: "temperature is not supported"},
	} {
		if p := unsupportedParam(e); p != "" {
			t.Errorf("%q read as unsupported %q", e.Message, p)
		}
	}
}
