package llm

import (
	"context"
	"errors"
	"math"
	"net"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/llm/llmtest"
	openai "github.com/sashabaranov/go-openai"
)

// newClient builds a client against srv whose retry waits are recorded
// instead of slept.
func newClient(t *testing.T, baseURL string, mod func(*Config)) (*Client, *[]time.Duration) {
	t.Helper()
	cfg := Config{BaseURL: baseURL, APIKey: "sk-test", Model: "gpt-4o-mini", Timeout: 5 * time.Second}
	if mod != nil {
		mod(&cfg)
	}
	c, err := New(cfg)
	if err != nil {
		t.Fatal(err)
	}
	var mu sync.Mutex
	waits := &[]time.Duration{}
	c.sleep = func(ctx context.Context, d time.Duration) error {
		mu.Lock()
		*waits = append(*waits, d)
		mu.Unlock()
		return ctx.Err()
	}
	return c, waits
}

func userMsg(s string) []Message {
	return []Message{{Role: openai.ChatMessageRoleSystem, Content: "You are a fact-checker."}, {Role: openai.ChatMessageRoleUser, Content: s}}
}

var testSchema = &Schema{
	Name:     "queries",
	JSON:     []byte(`{"type":"object","properties":{"queries":{"type":"array","items":{"type":"string"}}},"required":["queries"],"additionalProperties":false}`),
	Fallback: "Answer as a numbered list:\n1. QUERY_1",
}

func TestTemperatureIsZeroOnTheWire(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "ok", nil })
	c, _ := newClient(t, srv.BaseURL, nil)
	if _, err := c.Complete(context.Background(), Request{Task: TaskQueries, Messages: userMsg("hi"), MaxTokens: 50}); err != nil {
		t.Fatal(err)
	}
	call := srv.ChatCalls()[0]
	if !strings.Contains(string(call.Body), `"temperature":0.000001`) {
		t.Fatalf("temperature not sent as effectively zero: %s", call.Body)
	}
	w := call.Wire()
	temp, ok := w["temperature"].(float64)
	if !ok || temp <= 0 || temp > 1e-5 {
		t.Fatalf("temperature on wire = %v (present %v), want a tiny positive number", w["temperature"], ok)
	}
	if w["max_tokens"] != float64(50) {
		t.Errorf("max_tokens = %v, want 50", w["max_tokens"])
	}
	if got := call.Header.Get("Authorization"); got != "Bearer sk-test" {
		t.Errorf("Authorization = %q", got)
	}
}

func TestReasoningModelOmitsTemperature(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "ok", nil })
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Models = map[string]string{TaskCorrection: "o3-mini"} })
	if _, err := c.Complete(context.Background(), Request{Task: TaskCorrection, Messages: userMsg("hi"), MaxTokens: 300}); err != nil {
		t.Fatal(err)
	}
	w := srv.ChatCalls()[0].Wire()
	if _, ok := w["temperature"]; ok {
		t.Errorf("reasoning model got a temperature: %v", w["temperature"])
	}
	if w["model"] != "o3-mini" || w["max_completion_tokens"] != float64(300) {
		t.Errorf("model %v max_completion_tokens %v", w["model"], w["max_completion_tokens"])
	}
}

func TestSchemaOnTheWire(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return `{"queries":["a"]}`, nil })
	c, _ := newClient(t, srv.BaseURL, nil)
	resp, err := c.Complete(context.Background(), Request{Task: TaskQueries, Messages: userMsg("post"), Schema: testSchema})
	if err != nil {
		t.Fatal(err)
	}
	if !resp.Structured || resp.Text != `{"queries":["a"]}` {
		t.Fatalf("resp = %+v", resp)
	}
	rf, _ := srv.ChatCalls()[0].Wire()["response_format"].(map[string]any)
	js, _ := rf["json_schema"].(map[string]any)
	if rf["type"] != "json_schema" || js["name"] != "queries" || js["strict"] != true {
		t.Fatalf("response_format on wire = %v", rf)
	}
	if sch, _ := js["schema"].(map[string]any); sch["type"] != "object" {
		t.Fatalf("schema on wire = %v", js["schema"])
	}
	if strings.Contains(srv.ChatCalls()[0].Chat.Messages[1].Content, "numbered list") {
		t.Error("fallback instructions sent although the schema was used")
	}
}

func TestSchemaFallbackIsRemembered(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "1. first query", nil }, llmtest.WithoutSchemaSupport())
	c, _ := newClient(t, srv.BaseURL, nil)
	for i := 0; i < 2; i++ {
		resp, err := c.Complete(context.Background(), Request{Task: TaskQueries, Messages: userMsg("post"), Schema: testSchema})
		if err != nil {
			t.Fatalf("call %d: %v", i, err)
		}
		if resp.Structured || resp.Text != "1. first query" {
			t.Fatalf("call %d: resp = %+v", i, resp)
		}
	}
	calls := srv.ChatCalls()
	if len(calls) != 3 {
		t.Fatalf("got %d requests, want 3 (rejected, plain, plain)", len(calls))
	}
	if calls[0].Status != 400 || calls[1].Chat.ResponseFormat != nil || calls[2].Chat.ResponseFormat != nil {
		t.Fatalf("statuses/formats wrong: %d %v %v", calls[0].Status, calls[1].Chat.ResponseFormat, calls[2].Chat.ResponseFormat)
	}
	msgs := calls[1].Chat.Messages
	if len(msgs) != 2 || !strings.HasSuffix(msgs[1].Content, testSchema.Fallback) || !strings.HasPrefix(msgs[1].Content, "post") {
		t.Fatalf("fallback instructions not appended to the user message: %+v", msgs)
	}
	if c.SchemaSupported() {
		t.Error("client still believes the server supports schemas")
	}
}

func TestRetryHonoursRetryAfter(t *testing.T) {
	for _, tc := range []struct {
		name string
		err  *llmtest.Error
		want time.Duration
	}{
		{"seconds", &llmtest.Error{Status: 429, Code: "rate_limit_exceeded", Message: "slow down", RetryAfter: "2"}, 2 * time.Second},
		{"milliseconds", &llmtest.Error{Status: 429, Code: "rate_limit_exceeded", Message: "slow down", RetryAfterMs: "20", RetryAfter: "1"}, 20 * time.Millisecond},
	} {
		t.Run(tc.name, func(t *testing.T) {
			var n atomic.Int32
			srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) {
				if n.Add(1) == 1 {
					return "", tc.err
				}
				return "fine", nil
			})
			c, waits := newClient(t, srv.BaseURL, nil)
			resp, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
			if err != nil || resp.Text != "fine" {
				t.Fatalf("resp %+v err %v", resp, err)
			}
			if len(*waits) != 1 || (*waits)[0] != tc.want {
				t.Fatalf("waits = %v, want [%v]", *waits, tc.want)
			}
		})
	}
}

func TestRetryOnServerErrorsThenGiveUp(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "", llmtest.ErrServer })
	c, waits := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.MaxRetries = 2; cfg.RetryBaseDelay = 10 * time.Millisecond })
	_, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
	if !errors.Is(err, ErrServer) {
		t.Fatalf("err = %v, want ErrServer", err)
	}
	if got := srv.Count("/v1/chat/completions"); got != 3 {
		t.Fatalf("%d attempts, want 3", got)
	}
	if len(*waits) != 2 || (*waits)[0] <= 0 {
		t.Fatalf("waits = %v", *waits)
	}
	var ae *APIError
	if !errors.As(err, &ae) || ae.Status != 500 || !strings.Contains(ae.Error(), "HTTP 500") {
		t.Fatalf("APIError = %+v", ae)
	}
}

func TestNoRetryOnClientErrors(t *testing.T) {
	for _, tc := range []struct {
		name   string
		err    *llmtest.Error
		kind   error
		advice string
	}{
		{"bad key", llmtest.ErrBadKey, ErrAuth, "OPENAI_API_KEY"},
		{"unknown model", llmtest.ModelNotFound("gpt-9"), ErrModelNotFound, "MUSE_MODEL"},
		{"bad request", &llmtest.Error{Status: 400, Message: "Invalid value for 'messages'"}, ErrBadRequest, ""},
		{"quota", &llmtest.Error{Status: 429, Code: "insufficient_quota", Message: "You exceeded your current quota"}, ErrQuota, "billing"},
		{"context length", llmtest.ErrContextLength, ErrContextLength, "shorten"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "", tc.err })
			c, _ := newClient(t, srv.BaseURL, nil)
			_, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
			if !errors.Is(err, tc.kind) {
				t.Fatalf("err = %v, want kind %v", err, tc.kind)
			}
			if n := srv.Count("/v1/chat/completions"); n != 1 {
				t.Fatalf("%d attempts, want 1", n)
			}
			var ae *APIError
			if !errors.As(err, &ae) || !strings.Contains(ae.Advice, tc.advice) {
				t.Fatalf("advice %q does not mention %q", ae.Advice, tc.advice)
			}
			if ae.Message == "" || ae.Status != tc.err.Status {
				t.Fatalf("APIError = %+v", ae)
			}
		})
	}
}

func TestContextLengthShortensOnce(t *testing.T) {
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		if len(llmtest.AllText(req)) > 100 {
			return "", llmtest.ErrContextLength
		}
		return "short enough", nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	long := strings.Repeat("article text ", 50)
	shortens := 0
	req := Request{Task: TaskEvidence, Messages: userMsg(long), Shorten: func() []Message {
		shortens++
		return userMsg(long[:40])
	}}
	resp, err := c.Complete(context.Background(), req)
	if err != nil || resp.Text != "short enough" || !resp.Shortened || shortens != 1 {
		t.Fatalf("resp %+v err %v shortens %d", resp, err, shortens)
	}
	// Shortening that does not help gives up after one retry.
	req.Shorten = func() []Message { shortens++; return userMsg(long + "!") }
	_, err = c.Complete(context.Background(), req)
	if !errors.Is(err, ErrContextLength) || shortens != 2 {
		t.Fatalf("err %v shortens %d", err, shortens)
	}
	if n := srv.Count("/v1/chat/completions"); n != 4 {
		t.Fatalf("%d requests, want 4", n)
	}
}

func TestStreamDeltasAndUsage(t *testing.T) {
	const answer = "This post is misleading: the study found no such link. https://example.org/a"
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: answer, PromptTokens: 1200, CompletionTokens: 30}, nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	var got strings.Builder
	deltas := 0
	resp, err := c.Stream(context.Background(), Request{Task: TaskCorrection, Messages: userMsg("x")}, func(s string) {
		deltas++
		got.WriteString(s)
	})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != answer || got.String() != answer || deltas < 5 {
		t.Fatalf("text %q deltas %q (%d)", resp.Text, got.String(), deltas)
	}
	if resp.Usage.PromptTokens != 1200 || resp.Usage.CompletionTokens != 30 || resp.Usage.LLMCalls != 1 || resp.FinishReason != "stop" {
		t.Fatalf("usage %+v finish %q", resp.Usage, resp.FinishReason)
	}
	w := srv.ChatCalls()[0].Wire()
	so, _ := w["stream_options"].(map[string]any)
	if w["stream"] != true || so["include_usage"] != true {
		t.Fatalf("stream flags on wire: stream=%v stream_options=%v", w["stream"], w["stream_options"])
	}
}

func TestStreamWithoutStreamOptionsSupport(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "This post is fine.", nil }, llmtest.WithoutStreamOptions())
	c, _ := newClient(t, srv.BaseURL, nil)
	for i := 0; i < 2; i++ {
		resp, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, nil)
		if err != nil || resp.Text != "This post is fine." {
			t.Fatalf("resp %+v err %v", resp, err)
		}
	}
	if n := srv.Count("/v1/chat/completions"); n != 3 {
		t.Fatalf("%d requests, want 3 (rejected, plain, plain)", n)
	}
}

func TestStreamCut(t *testing.T) {
	const answer = "This post is false according to the agency's own report."
	for _, tc := range []struct {
		name  string
		reply llmtest.Reply
	}{
		{"connection dropped", llmtest.Reply{Text: answer, CutAfter: 3}},
		{"ended without finish", llmtest.Reply{Text: answer, NoFinish: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) { return tc.reply, nil })
			c, _ := newClient(t, srv.BaseURL, nil)
			var seen strings.Builder
			resp, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, func(s string) { seen.WriteString(s) })
			if !errors.Is(err, ErrStreamCut) {
				t.Fatalf("err = %v, want ErrStreamCut", err)
			}
			if resp == nil || resp.Text == "" || !strings.HasPrefix(answer, resp.Text) || resp.Text != seen.String() {
				t.Fatalf("partial text not kept: %+v", resp)
			}
			if tc.reply.CutAfter > 0 && resp.Text == answer {
				t.Fatal("cut stream returned the whole answer")
			}
			if n := srv.Count("/v1/chat/completions"); n != 1 {
				t.Fatalf("%d requests: a stream that already delivered text must not be retried", n)
			}
		})
	}
}

func TestStreamCutBeforeTextIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		if n.Add(1) == 1 {
			return llmtest.Reply{Text: "", CutAfter: 1}, nil
		}
		return llmtest.Reply{Text: "This post is accurate."}, nil
	})
	c, waits := newClient(t, srv.BaseURL, nil)
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, nil)
	if err != nil || resp.Text != "This post is accurate." || len(*waits) != 1 {
		t.Fatalf("resp %+v err %v waits %v", resp, err, *waits)
	}
}

func TestUsageAndCost(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "ok", PromptTokens: 1000, CompletionTokens: 500}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) {
		cfg.Models = map[string]string{TaskCorrection: "house-model"}
		cfg.Prices = map[string]Price{"house-model": {PromptPerMTok: 1, CompletionPerMTok: 2}}
	})
	var total Usage
	for _, task := range []string{TaskQueries, TaskQueries, TaskCorrection} {
		resp, err := c.Complete(context.Background(), Request{Task: task, Messages: userMsg("x")})
		if err != nil {
			t.Fatal(err)
		}
		total.Add(resp.Usage)
	}
	mini := (1000*0.15 + 500*0.60) / 1e6
	house := (1000*1.0 + 500*2.0) / 1e6
	if total.LLMCalls != 3 || total.PromptTokens != 3000 || total.CompletionTokens != 1500 || math.Abs(total.CostUSD-(2*mini+house)) > 1e-12 {
		t.Fatalf("total = %+v, want cost %g", total, 2*mini+house)
	}
	byTask := c.Totals()
	if byTask[TaskQueries].LLMCalls != 2 || math.Abs(byTask[TaskQueries].CostUSD-2*mini) > 1e-12 || byTask[TaskCorrection].LLMCalls != 1 {
		t.Fatalf("per task = %+v", byTask)
	}
	if p, ok := c.PriceFor("gpt-4o-2024-08-06"); !ok || p.PromptPerMTok != 2.50 {
		t.Errorf("dated snapshot price = %+v %v", p, ok)
	}
	if _, ok := c.PriceFor("llama3.1:8b"); ok {
		t.Error("local model should have no price")
	}
}

func TestRefusalAndEmptyAnswers(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		switch llmtest.LastUser(req) {
		case "refuse":
			return llmtest.Reply{Refusal: "I'm sorry, I can't help with that."}, nil
		case "filter":
			return llmtest.Reply{Text: "", FinishReason: "content_filter"}, nil
		}
		return llmtest.Reply{Text: "  \n", CompletionTokens: 1}, nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	for _, tc := range []struct {
		in     string
		kind   error
		stream bool
	}{{"refuse", ErrRefusal, false}, {"refuse", ErrRefusal, true}, {"filter", ErrRefusal, false}, {"empty", ErrEmpty, false}, {"empty", ErrEmpty, true}} {
		var resp *Response
		var err error
		if tc.stream {
			resp, err = c.Stream(context.Background(), Request{Messages: userMsg(tc.in)}, nil)
		} else {
			resp, err = c.Complete(context.Background(), Request{Messages: userMsg(tc.in)})
		}
		if !errors.Is(err, tc.kind) {
			t.Fatalf("%s stream=%v: err = %v, want %v", tc.in, tc.stream, err, tc.kind)
		}
		if resp == nil || resp.Usage.LLMCalls != 1 {
			t.Fatalf("%s: usage of a failed answer lost: %+v", tc.in, resp)
		}
	}
	if n := srv.Count("/v1/chat/completions"); n != 5 {
		t.Fatalf("%d requests, refusals and empty answers must not be retried", n)
	}
}

func TestMalformedBody(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html")
		_, _ = w.Write([]byte("<html>captive portal</html>"))
	}))
	defer srv.Close()
	c, _ := newClient(t, srv.URL+"/v1", nil)
	_, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
	if !errors.Is(err, ErrMalformed) {
		t.Fatalf("err = %v, want ErrMalformed", err)
	}
}

func TestTimeoutIsRetried(t *testing.T) {
	var n atomic.Int32
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		if n.Add(1) == 1 {
			return llmtest.Reply{Text: "late", Delay: 2 * time.Second}, nil
		}
		return llmtest.Reply{Text: "on time"}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond })
	resp, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
	if err != nil || resp.Text != "on time" {
		t.Fatalf("resp %+v err %v", resp, err)
	}

	c2, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond; cfg.MaxRetries = -1 })
	n.Store(0)
	_, err = c2.Complete(context.Background(), Request{Messages: userMsg("x")})
	if !errors.Is(err, ErrTimeout) {
		t.Fatalf("err = %v, want ErrTimeout", err)
	}
}

func TestCancelStopsWithoutRetry(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "slow", Delay: 2 * time.Second}, nil
	})
	c, waits := newClient(t, srv.BaseURL, nil)
	ctx, cancel := context.WithTimeout(context.Background(), 50*time.Millisecond)
	defer cancel()
	_, err := c.Complete(ctx, Request{Messages: userMsg("x")})
	if !errors.Is(err, context.DeadlineExceeded) || len(*waits) != 0 {
		t.Fatalf("err %v waits %v", err, *waits)
	}
	var ae *APIError
	if errors.As(err, &ae) {
		t.Fatalf("user cancellation reported as API error: %v", ae)
	}
}

func TestConnectionRefused(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := l.Addr().String()
	l.Close()
	c, waits := newClient(t, "http://"+addr+"/v1", nil)
	_, err = c.Complete(context.Background(), Request{Messages: userMsg("x")})
	if !errors.Is(err, ErrUnavailable) || len(*waits) != 0 {
		t.Fatalf("err %v waits %v", err, *waits)
	}
}

func TestEmbed(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "", nil })
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.EmbeddingModel = "test-embed" })
	texts := make([]string, 130)
	for i := range texts {
		texts[i] = strings.Repeat("word ", i%7+1)
	}
	texts[5] = ""
	vecs, u, err := c.Embed(context.Background(), texts)
	if err != nil {
		t.Fatal(err)
	}
	if len(vecs) != len(texts) || u.LLMCalls != 2 || u.PromptTokens == 0 {
		t.Fatalf("%d vectors, usage %+v", len(vecs), u)
	}
	want := llmtest.HashEmbed(texts[3], 256)
	for i := range want {
		if vecs[3][i] != want[i] {
			t.Fatal("vectors out of order")
		}
	}
	calls := srv.Calls()
	if calls[0].Path != "/v1/embeddings" || len(calls[0].Embeddings) != 128 || len(calls[1].Embeddings) != 2 {
		t.Fatalf("batches: %d %d", len(calls[0].Embeddings), len(calls[1].Embeddings))
	}
	if m := calls[0].Wire()["model"]; m != "test-embed" {
		t.Errorf("model = %v", m)
	}
	if c.Totals()[TaskEmbeddings].LLMCalls != 2 {
		t.Errorf("totals = %+v", c.Totals())
	}
}

func TestEmbedMismatchedAnswer(t *testing.T) {
	srv := llmtest.NewServer(t, nil, llmtest.WithEmbedder(func(texts []string) ([][]float32, error) {
		return [][]float32{{1, 0}}, nil // one vector whatever was asked
	}))
	c, _ := newClient(t, srv.BaseURL, nil)
	_, _, err := c.Embed(context.Background(), []string{"a", "b"})
	if !errors.Is(err, ErrMalformed) || !strings.Contains(err.Error(), "embed texts 1-2 of 2") {
		t.Fatalf("err = %v", err)
	}
}

func TestVisionMessageOnTheWire(t *testing.T) {
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		return "A photo of " + llmtest.Images(req)[0][:22], nil
	})
	c, _ := newClient(t, srv.BaseURL, nil)
	png := []byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
	msg := Message{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{
		TextPart("Describe the image."), ImagePart(ImageDataURL("", png), "low"),
	}}
	resp, err := c.Complete(context.Background(), Request{Task: TaskVision, Messages: []Message{msg}, Schema: testSchema})
	if err != nil {
		t.Fatal(err)
	}
	if resp.Text != "A photo of data:image/png;base64," {
		t.Fatalf("text = %q", resp.Text)
	}
	content, _ := srv.ChatCalls()[0].Wire()["messages"].([]any)[0].(map[string]any)["content"].([]any)
	if len(content) != 2 || content[1].(map[string]any)["type"] != "image_url" {
		t.Fatalf("content on wire = %v", content)
	}
}

func TestVisionFallbackKeepsImage(t *testing.T) {
	msgs := []Message{{Role: openai.ChatMessageRoleUser, MultiContent: []openai.ChatMessagePart{TextPart("Describe."), ImagePart("data:image/png;base64,AA==", "")}}}
	out := withFormatNote(msgs, "Answer in JSON.")
	if len(out) != 1 || len(out[0].MultiContent) != 3 || out[0].MultiContent[2].Text != "Answer in JSON." || len(msgs[0].MultiContent) != 2 {
		t.Fatalf("format note: %+v (original %+v)", out, msgs)
	}
}

func TestDetectOllama(t *testing.T) {
	srv := llmtest.NewServer(t, nil, llmtest.WithModels("llama3.1:8b", "nomic-embed-text:latest"))
	models, ok := DetectOllama(context.Background(), nil, srv.URL)
	if !ok || len(models) != 2 || models[0] != "llama3.1:8b" {
		t.Fatalf("models %v ok %v", models, ok)
	}
	chat, embed := SplitEmbeddingModels(models)
	if len(chat) != 1 || len(embed) != 1 || embed[0] != "nomic-embed-text:latest" {
		t.Fatalf("chat %v embed %v", chat, embed)
	}
	if OllamaBaseURL(srv.URL+"/") != srv.URL+"/v1" {
		t.Error("OllamaBaseURL")
	}

	// A server with only the OpenAI listing (llama.cpp, vLLM).
	only := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/models" {
			http.NotFound(w, r)
			return
		}
		_, _ = w.Write([]byte(`{"object":"list","data":[{"id":"qwen2.5-7b-instruct","object":"model"}]}`))
	}))
	defer only.Close()
	models, ok = DetectOllama(context.Background(), nil, only.URL)
	if !ok || len(models) != 1 || models[0] != "qwen2.5-7b-instruct" {
		t.Fatalf("models %v ok %v", models, ok)
	}

	// Nothing there.
	l, _ := net.Listen("tcp", "127.0.0.1:0")
	addr := l.Addr().String()
	l.Close()
	if models, ok := DetectOllama(context.Background(), nil, "http://"+addr); ok || models != nil {
		t.Fatalf("detected a server that is not there: %v", models)
	}
}

func TestNewValidatesConfig(t *testing.T) {
	if _, err := New(Config{}); err == nil || !strings.Contains(err.Error(), "OPENAI_API_KEY") {
		t.Errorf("no key: %v", err)
	}
	if _, err := New(Config{BaseURL: "http://localhost:11434/v1"}); err == nil || !strings.Contains(err.Error(), "MUSE_MODEL") {
		t.Errorf("no model: %v", err)
	}
	if _, err := New(Config{BaseURL: "localhost:11434", Model: "m"}); err == nil {
		t.Error("accepted a base URL without scheme")
	}
	c, err := New(Config{APIKey: "k", Models: map[string]string{TaskVision: "gpt-4o"}})
	if err != nil {
		t.Fatal(err)
	}
	if c.ModelFor(TaskQueries) != DefaultModel || c.ModelFor(TaskVision) != "gpt-4o" || c.ModelFor(TaskEmbeddings) != DefaultEmbeddingModel {
		t.Errorf("models: %s %s %s", c.ModelFor(TaskQueries), c.ModelFor(TaskVision), c.ModelFor(TaskEmbeddings))
	}
}

func TestErrorsWrapAndMatch(t *testing.T) {
	srv := llmtest.NewServer(t, func(openai.ChatCompletionRequest) (string, error) { return "", llmtest.ErrBadKey })
	c, _ := newClient(t, srv.BaseURL, nil)
	_, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
	wrapped := errors.Join(errors.New("stage queries"), err)
	if !errors.Is(wrapped, ErrAuth) || errors.Is(wrapped, ErrModelNotFound) {
		t.Fatal("kind does not survive wrapping")
	}
	var oe *openai.APIError
	if !errors.As(err, &oe) || oe.Code != "invalid_api_key" {
		t.Fatalf("underlying go-openai error lost: %v", err)
	}
	if !strings.Contains(err.Error(), "authentication failed (HTTP 401)") {
		t.Errorf("message: %v", err)
	}
}

func TestStreamStallKeepsPartialText(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "This post is wrong.", ChunkRunes: 5, ChunkDelay: 2 * time.Second}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Timeout = 150 * time.Millisecond })
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, nil)
	if !errors.Is(err, ErrStreamCut) || !strings.Contains(err.Error(), "no data for") {
		t.Fatalf("err = %v", err)
	}
	if resp == nil || resp.Text != "This " {
		t.Fatalf("partial = %+v", resp)
	}
}

func TestStreamHeaderTimeout(t *testing.T) {
	srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) {
		return llmtest.Reply{Text: "late", Delay: 2 * time.Second}, nil
	})
	c, _ := newClient(t, srv.BaseURL, func(cfg *Config) { cfg.Timeout = 100 * time.Millisecond; cfg.MaxRetries = -1 })
	resp, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, nil)
	if !errors.Is(err, ErrTimeout) || resp != nil {
		t.Fatalf("resp %+v err %v, want ErrTimeout", resp, err)
	}
}

// TestCachedPromptTokens: a server that reports part of the prompt as read
// from its prompt cache (usage.prompt_tokens_details.cached_tokens, inside
// prompt_tokens, as OpenAI does) has those tokens kept apart and priced at
// the cached rate, when answering whole or streamed, and the spend guard
// settles that price; a model whose price has no cached rate pays them at
// the prompt rate; a server that omits the details (llama.cpp, Ollama)
// has every prompt token a prompt token.
func TestCachedPromptTokens(t *testing.T) {
	cachedReply := llmtest.Reply{Text: "This post is false.", PromptTokens: 3000, CachedPromptTokens: 2048, CompletionTokens: 100}
	for _, tc := range []struct {
		name            string
		reply           llmtest.Reply
		model           string
		prompt, cached  int
		wantUSD         float64
		withoutCacheUSD float64
	}{
		{"openai", cachedReply, "gpt-4o", 952, 2048, (952*2.50 + 2048*1.25 + 100*10.00) / 1e6, (3000*2.50 + 100*10.00) / 1e6},
		{"no cached rate", cachedReply, "house-model", 952, 2048, (3000*1.0 + 100*2.0) / 1e6, (3000*1.0 + 100*2.0) / 1e6},
		{"llama.cpp", llmtest.Reply{Text: "This post is false.", PromptTokens: 3000, CompletionTokens: 100}, "gpt-4o", 3000, 0,
			(3000*2.50 + 100*10.00) / 1e6, (3000*2.50 + 100*10.00) / 1e6},
	} {
		t.Run(tc.name, func(t *testing.T) {
			srv := llmtest.NewReplyServer(t, func(openai.ChatCompletionRequest) (llmtest.Reply, error) { return tc.reply, nil })
			var settled []float64
			var mu sync.Mutex
			c, _ := newClient(t, srv.BaseURL, func(cfg *Config) {
				cfg.Model = tc.model
				cfg.Prices = map[string]Price{"house-model": {PromptPerMTok: 1, CompletionPerMTok: 2}}
				cfg.SpendGuard = func(context.Context, Call) (func(float64), error) {
					return func(usd float64) { mu.Lock(); settled = append(settled, usd); mu.Unlock() }, nil
				}
			})
			whole, err := c.Complete(context.Background(), Request{Messages: userMsg("x")})
			if err != nil {
				t.Fatal(err)
			}
			streamed, err := c.Stream(context.Background(), Request{Messages: userMsg("x")}, nil)
			if err != nil {
				t.Fatal(err)
			}
			for how, u := range map[string]Usage{"whole": whole.Usage, "streamed": streamed.Usage} {
				if u.PromptTokens != tc.prompt || u.CachedPromptTokens != tc.cached || u.CompletionTokens != 100 || u.Tokens() != 3100 {
					t.Errorf("%s: usage %+v; want %d prompt and %d cached prompt tokens", how, u, tc.prompt, tc.cached)
				}
				if math.Abs(u.CostUSD-tc.wantUSD) > 1e-12 {
					t.Errorf("%s: cost $%.6f, want $%.6f (all at the prompt rate: $%.6f)", how, u.CostUSD, tc.wantUSD, tc.withoutCacheUSD)
				}
			}
			if len(settled) != 2 || math.Abs(settled[0]-tc.wantUSD) > 1e-12 || math.Abs(settled[1]-tc.wantUSD) > 1e-12 {
				t.Errorf("settled %v, want $%.6f twice", settled, tc.wantUSD)
			}
			var total Usage
			total.Add(whole.Usage)
			total.Add(streamed.Usage)
			if total.CachedPromptTokens != 2*tc.cached || total.PromptTokens != 2*tc.prompt {
				t.Errorf("sum %+v", total)
			}
		})
	}
}
