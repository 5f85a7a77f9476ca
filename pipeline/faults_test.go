package pipeline

import (
	"bytes"
	"compress/gzip"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline/llm/llmtest"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
)

// The fault matrix: a whole check (NewFromConfig + Run, what `muse check`
// does) against the loopback world of e2e_test.go with one fault injected
// per row. Each row states what the user sees; every row also checks that
// nothing was fabricated (faultInvariants). docs/faults.md publishes the
// same matrix.

// faultEnv is the e2e world plus fault pages served through the proxy,
// extra search results pointing at them, and a fault front for the model.
type faultEnv struct {
	*e2eEnv
	hosts     map[string]http.Handler // extra page hosts and what they serve
	extraURLs []string                // added to every SearXNG answer
	llmFault  func(kind string, n int, w http.ResponseWriter, r *http.Request) bool
	llmCalls  atomic.Int32
}

func newFaultEnv(t *testing.T) *faultEnv {
	t.Helper()
	fe := &faultEnv{e2eEnv: newE2E(t, nil), hosts: map[string]http.Handler{}}
	// The address guard stays on: pages go through the user's own proxy,
	// and targets that are, or resolve to, private addresses are refused.
	fe.cfg.AllowPrivateAddresses = false
	pages := fe.pages
	fe.proxy = fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		host := strings.ToLower(r.Host)
		if h, ok := fe.hosts[host]; ok {
			h.ServeHTTP(w, r)
			return
		}
		p, ok := pages[host]
		if !ok || r.URL.Path != p.path || p.status != 0 {
			http.NotFound(w, r)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, articleHTML(p))
	}))
	urlsFor := func(hosts ...string) []string {
		var out []string
		for _, h := range hosts {
			out = append(out, pageURL(h, pages[h]))
		}
		return out
	}
	sx := searxngServer(t, func(q string) []string {
		var base []string
		switch {
		case strings.Contains(q, "fact check"):
			base = urlsFor("www.reuters.com", "apnews.com", "www.bbc.co.uk", "www.rumours.example")
		case strings.Contains(q, "mayor"):
			base = urlsFor("www.npr.org", "www.latenews.example", "www.undated.example", "www.shortnews.example")
		default:
			base = urlsFor("www.cityherald.example", "www.weather.example", "www.gone.example", "www.unratedblog.example")
		}
		return append(slices.Clone(fe.extraURLs), base...)
	})
	fe.cfg.SearXNGURL = sx.URL
	// The model is reached through a front that can break any call.
	target, _ := url.Parse(fe.llm.URL)
	rp := httputil.NewSingleHostReverseProxy(target)
	front := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		var req openai.ChatCompletionRequest
		if strings.HasSuffix(r.URL.Path, "/chat/completions") && json.Unmarshal(body, &req) == nil && fe.llmFault != nil {
			if fe.llmFault(callKind(req), int(fe.llmCalls.Add(1)), w, r) {
				return
			}
		}
		rp.ServeHTTP(w, r)
	}))
	t.Cleanup(front.Close)
	fe.cfg.OpenAIBaseURL = front.URL + "/v1"
	return fe
}

// callKind names a chat call: the schema of a JSON call, "correction" for
// the streamed one.
func callKind(req openai.ChatCompletionRequest) string {
	if s := llmtest.SchemaName(req); s != "" {
		return s
	}
	return "correction"
}

func (fe *faultEnv) run(t *testing.T, o Options, post string) (*Check, error) {
	t.Helper()
	e, closeFn, err := NewFromConfig(context.Background(), fe.cfg, o)
	if err != nil {
		return nil, err
	}
	defer closeFn()
	c := e.NewCheck(Post{Text: post, Author: "City Rumours", Handle: "@cityrumours", PostedAt: e2eCutoff}, e2eCutoff)
	return c, e.Run(context.Background(), c, StageImages, nil)
}

func (fe *faultEnv) opts() Options {
	o := fe.e2eEnv.opts()
	o.PageProxy = fe.proxy
	o.LLMTimeout = 2 * time.Second
	return o
}

// warnings is every warning and failure the check logged, one per line:
// what the user reads on stderr and in the TUI.
func warnings(c *Check) string {
	var b strings.Builder
	for _, ev := range c.Events {
		if ev.Kind == EventWarning || ev.Kind == EventStageFailed {
			b.WriteString(ev.Message + "\n")
		}
	}
	for _, w := range c.Correction.Warnings {
		b.WriteString(w + "\n")
	}
	return b.String()
}

// faultInvariants holds whatever went wrong: every included quote is on
// its page, and the correction cites, in its URLs and in its text, only
// pages whose quotes it rests on.
func faultInvariants(t *testing.T, c *Check) {
	t.Helper()
	if c == nil {
		return
	}
	allowed := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Included {
			continue
		}
		s := c.SourceByURL(e.SourceURL)
		if s == nil || !e.Verified || !VerifyQuote(e.Quote, strings.Join(s.Paragraphs, "\n")) {
			t.Errorf("included quote not on its page %s: %q", e.SourceURL, e.Quote)
			continue
		}
		allowed[canonicalKey(s.URL)] = true
		if s.FinalURL != "" {
			allowed[canonicalKey(s.FinalURL)] = true
		}
	}
	for _, u := range c.Correction.URLs {
		if !allowed[canonicalKey(u)] {
			t.Errorf("correction cites %s, not an evidence page", u)
		}
	}
	for _, m := range urlPattern.FindAllString(c.Correction.Text, -1) {
		if u := trimURL(m); !allowed[canonicalKey(u)] && !c.NoLLM {
			t.Errorf("correction text carries %s, not an evidence page", u)
		}
	}
}

func wantUsed(t *testing.T, c *Check, hosts ...string) {
	t.Helper()
	for _, h := range hosts {
		found := false
		for _, s := range c.Sources {
			if strings.Contains(s.URL, "://"+h+"/") && s.Status == StatusUsed {
				found = true
			}
		}
		if !found {
			t.Errorf("%s not used; the rest of the check did not go on", h)
		}
	}
}

func sourceFor(c *Check, host string) *Source {
	for i := range c.Sources {
		if strings.Contains(c.Sources[i].URL, "://"+host+"/") {
			return &c.Sources[i]
		}
	}
	return nil
}

func wantContains(t *testing.T, what, got string, subs ...string) {
	t.Helper()
	for _, s := range subs {
		if !strings.Contains(strings.ToLower(got), strings.ToLower(s)) {
			t.Errorf("%s does not say %q:\n%s", what, s, got)
		}
	}
}

func fixedPage(contentType string, body []byte, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", contentType)
		w.Write(body)
	}
}

func gzipOf(b []byte) []byte {
	var buf bytes.Buffer
	zw, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	zw.Write(b)
	zw.Close()
	return buf.Bytes()
}

// TestFaultPages: one hostile or broken page among the search results. The
// page is kept out with the reason on its source; the check goes on and
// Reuters and AP still refute the post.
func TestFaultPages(t *testing.T) {
	manyParas := background("Long Read", 10000)
	rows := []struct {
		name   string
		host   string
		h      http.Handler
		status string   // the fault page's source status
		reason []string // words its reason must carry
	}{
		{"huge page", "www.huge.example", fixedPage("text/html", append([]byte("<html><body><p>"), bytes.Repeat([]byte("a "), 5<<20)...)),
			StatusFetchFailed, []string{"too large"}},
		{"redirect loop", "www.loop.example", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Redirect(w, r, "/other", http.StatusFound)
		}), StatusFetchFailed, []string{"redirect"}},
		{"redirect to a private address", "www.sneaky.example", http.RedirectHandler("http://192.168.1.1/admin", http.StatusFound),
			StatusFetchFailed, []string{"192.168.1.1", "private"}},
		{"redirect to loopback", "www.sneaky2.example", http.RedirectHandler("http://127.0.0.1:6379/", http.StatusFound),
			StatusFetchFailed, []string{"127.0.0.1", "loopback"}},
		{"link to localhost", "localhost", fixedPage("text/html", []byte("<p>internal</p>")), StatusFetchFailed, []string{"localhost"}},
		{"binary", "www.binary.example", fixedPage("text/html", append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), make([]byte, 4096)...)),
			StatusFetchFailed, []string{"not an html page", "image/png"}},
		{"gzip bomb", "www.bomb.example", fixedPage("text/html", gzipOf(make([]byte, 64<<20)), "Content-Encoding", "gzip"),
			StatusFetchFailed, []string{"compression bomb"}},
		{"mostly invalid UTF-8", "www.garbled.example", fixedPage("text/html; charset=utf-8",
			[]byte("<html><body><p>"+strings.Repeat("\xff\xfe\xc3\x28 ", 2000)+"</p></body></html>")),
			StatusFetchFailed, []string{"utf-8"}},
		{"PDF", "www.pdf.example", fixedPage("application/pdf", []byte("%PDF-1.7\n")), StatusFetchFailed, []string{"pdf"}},
		{"server error", "www.down.example", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			http.Error(w, "boom", http.StatusBadGateway)
		}), StatusFetchFailed, []string{"502"}},
		{"10,000 paragraphs", "www.longread.example", fixedPage("text/html; charset=utf-8", []byte(articleHTML(page{
			title: "Springfield bicycles: the long read", site: "Long Read", date: "2024-01-05", paras: manyParas}))),
			"", nil},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			fe.hosts[row.host] = row.h
			u := "http://" + row.host + "/springfield-bicycles"
			fe.extraURLs = []string{u}
			start := time.Now()
			c, err := fe.run(t, fe.opts(), e2ePost)
			if err != nil {
				t.Fatalf("the check stopped: %v", err)
			}
			faultInvariants(t, c)
			wantUsed(t, c, "www.reuters.com", "apnews.com")
			s := c.SourceByURL(u)
			if s == nil {
				t.Fatalf("no source for %s", u)
			}
			if row.status != "" {
				if s.Status != row.status {
					t.Errorf("status %s (%s), want %s", s.Status, s.Reason, row.status)
				}
				wantContains(t, "reason", s.Reason, row.reason...)
			}
			t.Logf("%s → %s: %s (%.1fs)", row.name, s.Status, s.Reason, time.Since(start).Seconds())
			if row.host == "www.longread.example" {
				if s.Words < 100000 || s.SentChars > 4*(Options{}).withDefaults().EvidenceTokens+400 {
					t.Errorf("long read: %d words kept, %d chars sent to the model", s.Words, s.SentChars)
				}
			}
		})
	}
}

// openAIError writes an error the way api.openai.com does.
func openAIError(w http.ResponseWriter, status int, typ, msg string, headers ...string) {
	for i := 0; i+1 < len(headers); i += 2 {
		w.Header().Set(headers[i], headers[i+1])
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	fmt.Fprintf(w, `{"error":{"message":%q,"type":%q,"param":null,"code":null}}`, msg, typ)
}

// signIn is what a login wall or captive portal in front of the model
// server answers.
func signIn(w http.ResponseWriter, _ *http.Request) {
	w.Header().Set("Content-Type", "text/html")
	io.WriteString(w, "<html><head><title>Sign in</title></head><body>Please sign in to continue</body></html>")
}

// chatAnswer writes a non-streamed chat completion with the given content.
func chatAnswer(w http.ResponseWriter, content string) {
	w.Header().Set("Content-Type", "application/json")
	b, _ := json.Marshal(map[string]any{"id": "chatcmpl-x", "object": "chat.completion", "created": 1, "model": "test-model",
		"choices": []any{map[string]any{"index": 0, "message": map[string]any{"role": "assistant", "content": content}, "finish_reason": "stop"}},
		"usage":   map[string]int{"prompt_tokens": 10, "completion_tokens": 1, "total_tokens": 11}})
	w.Write(b)
}

// TestFaultModel: the model's server fails in each way it does in the
// wild. A fault the client can wait out (a 429, one 5xx) costs time only;
// one it cannot ends the check with a message saying which call failed
// and why, and what was found until then is kept.
func TestFaultModel(t *testing.T) {
	type fault = func(kind string, n int, w http.ResponseWriter, r *http.Request) bool
	on := func(kind string, f func(w http.ResponseWriter, r *http.Request)) fault {
		return func(k string, _ int, w http.ResponseWriter, r *http.Request) bool {
			if k != kind {
				return false
			}
			f(w, r)
			return true
		}
	}
	var once atomic.Bool
	rows := []struct {
		name    string
		fault   fault
		timeout time.Duration
		wantErr []string // words the returned error must carry; nil: the check finishes
		check   func(t *testing.T, c *Check)
	}{
		{name: "429 with Retry-After, once", fault: func(k string, _ int, w http.ResponseWriter, r *http.Request) bool {
			if k != "queries" || once.Swap(true) {
				return false
			}
			openAIError(w, 429, "requests", "Rate limit reached for requests", "Retry-After", "1")
			return true
		}, check: func(t *testing.T, c *Check) {
			if c.Usage.Seconds < 1 || len(c.Correction.URLs) == 0 {
				t.Errorf("Retry-After not waited for, or no correction: %.2fs %+v", c.Usage.Seconds, c.Correction)
			}
		}},
		{name: "429 on every call", fault: func(k string, _ int, w http.ResponseWriter, r *http.Request) bool {
			openAIError(w, 429, "requests", "Rate limit reached for requests", "Retry-After", "0")
			return true
		}, wantErr: []string{"write search queries", "rate limit"}},
		{name: "500 on every evidence call", fault: on("evidence", func(w http.ResponseWriter, r *http.Request) {
			openAIError(w, 500, "server_error", "The server had an error while processing your request.")
		}), wantErr: []string{"evidence", "every model call failed", "500"}, check: func(t *testing.T, c *Check) {
			if len(c.Sources) == 0 || len(c.Evidence) != 0 || c.Correction.Text != "" {
				t.Errorf("sources should be kept, nothing quoted, nothing written: %d %d %q", len(c.Sources), len(c.Evidence), c.Correction.Text)
			}
		}},
		{name: "timeout on the correction", timeout: 300 * time.Millisecond, fault: on("correction", func(w http.ResponseWriter, r *http.Request) {
			<-r.Context().Done()
		}), wantErr: []string{"write correction", "timed out"}, check: func(t *testing.T, c *Check) {
			if len(c.IncludedEvidence()) == 0 {
				t.Error("the evidence was lost")
			}
		}},
		{name: "evidence answer not JSON", fault: on("evidence", func(w http.ResponseWriter, r *http.Request) {
			chatAnswer(w, "Sure! Here are the paragraphs you asked for: the first one and the second one.")
		}), check: func(t *testing.T, c *Check) {
			if c.Correction.Text != NoSourceText {
				t.Errorf("correction without usable evidence: %q", c.Correction.Text)
			}
			wantContains(t, "warnings", warnings(c), "evidence from", "unusable model answer")
		}},
		{name: "cut JSON body", fault: on("queries", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "application/json")
			io.WriteString(w, `{"id":"chatcmpl-x","object":"chat.completion","choices":[{"index":0,"message":{"role":"assi`)
		}), wantErr: []string{"queries"}},
		{name: "HTML instead of JSON for the queries", fault: on("queries", signIn), check: func(t *testing.T, c *Check) {
			if len(c.Queries) != 1 || c.Queries[0].Origin != OriginFallback {
				t.Errorf("queries %+v", c.Queries)
			}
			wantContains(t, "warnings", warnings(c), "queries could not be used", "malformed")
		}},
		{name: "HTML instead of JSON on every call", fault: func(_ string, _ int, w http.ResponseWriter, r *http.Request) bool {
			signIn(w, r)
			return true
		}, check: func(t *testing.T, c *Check) {
			// A sign-in page on every call is the endpoint, not the model:
			// today it reads as unusable answers and ends in "no credible
			// source", with the cause in the warnings.
			if c.Correction.Text != NoSourceText || len(c.Evidence) != 0 {
				t.Errorf("correction %q, %d quotes", c.Correction.Text, len(c.Evidence))
			}
			wantContains(t, "warnings", warnings(c), "malformed")
		}},
		{name: "empty correction", fault: on("correction", func(w http.ResponseWriter, r *http.Request) {
			w.Header().Set("Content-Type", "text/event-stream")
			io.WriteString(w, "data: {\"id\":\"x\",\"object\":\"chat.completion.chunk\",\"created\":1,\"model\":\"test-model\",\"choices\":[{\"index\":0,\"delta\":{\"role\":\"assistant\",\"content\":\"\"},\"finish_reason\":\"stop\"}]}\n\ndata: [DONE]\n\n")
		}), wantErr: []string{"write correction", "empty"}, check: func(t *testing.T, c *Check) {
			if len(c.IncludedEvidence()) == 0 {
				t.Error("the evidence was lost")
			}
		}},
		{name: "stream cut mid-answer", wantErr: []string{"write correction"}, check: func(t *testing.T, c *Check) {
			wantContains(t, "warnings", strings.Join(c.Correction.Warnings, "\n"), "stopped before it was complete")
			if len(c.IncludedEvidence()) == 0 {
				t.Error("the evidence was lost")
			}
		}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			fe.llmFault = row.fault
			if row.name == "stream cut mid-answer" {
				fe.model.correctionReply = &llmtest.Reply{CutAfter: 3}
			}
			o := fe.opts()
			if row.timeout > 0 {
				o.LLMTimeout = row.timeout
			}
			c, err := fe.run(t, o, e2ePost)
			faultInvariants(t, c)
			if row.wantErr == nil && err != nil {
				t.Fatalf("the check stopped: %v", err)
			}
			if row.wantErr != nil {
				if err == nil {
					t.Fatalf("no error; correction %+v", c.Correction)
				}
				wantContains(t, "error", err.Error(), row.wantErr...)
			}
			if row.check != nil {
				row.check(t, c)
			}
			t.Logf("%s → err: %v; warnings: %s", row.name, err, strings.ReplaceAll(warnings(c), "\n", " | "))
		})
	}
}

// TestFaultSearch: the search provider fails. The user is told which
// provider failed and why; the check still finishes, with the honest
// "no credible source" answer when nothing could be searched.
func TestFaultSearch(t *testing.T) {
	closed := httptest.NewServer(http.NotFoundHandler())
	closed.Close()
	rows := []struct {
		name     string
		setup    func(t *testing.T, fe *faultEnv)
		warn     []string
		anything bool // pages were still found
	}{
		{"SearXNG down", func(t *testing.T, fe *faultEnv) { fe.cfg.SearXNGURL = closed.URL },
			[]string{"searxng", "connection refused", "the search found nothing"}, false},
		{"SearXNG answers its HTML front page", func(t *testing.T, fe *faultEnv) {
			srv := httptest.NewServer(fixedPage("text/html", []byte("<html><head><title>SearXNG</title></head><body>search</body></html>")))
			t.Cleanup(srv.Close)
			fe.cfg.SearXNGURL = srv.URL
		}, []string{"searxng", "HTML instead of JSON", `page titled "SearXNG"`}, false},
		{"SearXNG 503 on every request", func(t *testing.T, fe *faultEnv) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "upstream engines down", http.StatusServiceUnavailable)
			}))
			t.Cleanup(srv.Close)
			fe.cfg.SearXNGURL = srv.URL
		}, []string{"searxng", "503", "gave up after"}, false},
		{"SearXNG slow (1.5 s)", func(t *testing.T, fe *faultEnv) {
			inner := fe.cfg.SearXNGURL
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				time.Sleep(1500 * time.Millisecond)
				http.Redirect(w, r, inner+r.URL.RequestURI(), http.StatusTemporaryRedirect)
			}))
			t.Cleanup(srv.Close)
			fe.cfg.SearXNGURL = srv.URL
		}, nil, true},
		{"second provider unreachable", func(t *testing.T, fe *faultEnv) {
			fe.cfg.SerpAPIKey = "serp-test-key" // serpapi.com cannot be reached from here
		}, []string{"serpapi"}, true},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			row.setup(t, fe)
			c, err := fe.run(t, fe.opts(), e2ePost)
			if err != nil {
				t.Fatalf("the check stopped: %v", err)
			}
			faultInvariants(t, c)
			wantContains(t, "warnings", warnings(c), row.warn...)
			if row.anything {
				wantUsed(t, c, "www.reuters.com", "apnews.com")
			} else if c.Correction.Text != NoSourceText || len(c.Sources) != 0 {
				t.Errorf("sources %d, correction %q", len(c.Sources), c.Correction.Text)
			}
			if strings.Contains(warnings(c), "serp-test-key") {
				t.Error("a warning shows the API key")
			}
			t.Logf("%s → %s", row.name, strings.ReplaceAll(warnings(c), "\n", " | "))
		})
	}
}
