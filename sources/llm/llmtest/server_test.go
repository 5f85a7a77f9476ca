package llmtest

import (
	"bufio"
	"net/http"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"
)

type openaiRequest = openai.ChatCompletionRequest

func dot(a, b []float32) float32 {
	var s float32
	for i := range a {
		s += a[i] * b[i]
	}
	return s
}

func TestHashEmbedSimilarity(t *testing.T) {
	a := HashEmbed("The vaccine does not alter human DNA, scientists say", 256)
	b := HashEmbed("Scientists say the vaccine does not alter DNA", 256)
	c := HashEmbed("Stock markets rallied on Friday after the jobs report", 256)
	if self := dot(a, a); self < 0.999 || self > 1.001 {
		t.Fatalf("not normalised: %v", self)
	}
	if dot(a, b) < 0.7 || dot(a, c) > 0.3 {
		t.Fatalf("similar %v unrelated %v", dot(a, b), dot(a, c))
	}
	if v := HashEmbed("", 8); len(v) != 8 || v[0] != 1 {
		t.Fatalf("empty text: %v", v)
	}
}

// The stream must be valid SSE as OpenAI sends it: data lines, a usage chunk
// with empty choices when asked for, and [DONE].
func TestStreamWireFormat(t *testing.T) {
	srv := NewServer(t, func(req openaiRequest) (string, error) { return "hello world", nil })
	body := `{"model":"m","stream":true,"stream_options":{"include_usage":true},"messages":[{"role":"user","content":"hi there"}]}`
	resp, err := http.Post(srv.BaseURL+"/chat/completions", "application/json", strings.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if ct := resp.Header.Get("Content-Type"); ct != "text/event-stream" {
		t.Fatalf("content type %q", ct)
	}
	var lines []string
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		if l := sc.Text(); l != "" {
			lines = append(lines, l)
		}
	}
	for _, l := range lines {
		if !strings.HasPrefix(l, "data: ") {
			t.Fatalf("not an SSE data line: %q", l)
		}
	}
	n := len(lines)
	if n < 4 || lines[n-1] != "data: [DONE]" || !strings.Contains(lines[n-2], `"choices":[]`) ||
		!strings.Contains(lines[n-2], `"prompt_tokens":2`) || !strings.Contains(lines[n-3], `"finish_reason":"stop"`) {
		t.Fatalf("stream tail wrong:\n%s", strings.Join(lines, "\n"))
	}
	calls := srv.ChatCalls()
	if len(calls) != 1 || calls[0].Chat.Messages[0].Content != "hi there" || calls[0].Status != 200 {
		t.Fatalf("recorded %+v", calls)
	}
}

func TestErrorBodyAndAuth(t *testing.T) {
	srv := NewServer(t, func(openaiRequest) (string, error) { return "x", nil }, WithAPIKey("sk-good"))
	req, _ := http.NewRequest("POST", srv.BaseURL+"/chat/completions", strings.NewReader(`{"model":"m","messages":[]}`))
	req.Header.Set("Authorization", "Bearer sk-bad")
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var b strings.Builder
	sc := bufio.NewScanner(resp.Body)
	for sc.Scan() {
		b.WriteString(sc.Text())
	}
	if resp.StatusCode != 401 || !strings.Contains(b.String(), `"code":"invalid_api_key"`) || !strings.Contains(b.String(), `"type":"invalid_request_error"`) {
		t.Fatalf("%d %s", resp.StatusCode, b.String())
	}
}
