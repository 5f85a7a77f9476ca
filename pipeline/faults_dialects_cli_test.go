package pipeline_test

import (
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestFaultCLIDialects: muse check against hosted servers' own ways, as a
// user meets them: Azure OpenAI configured by its address and provider
// (the loopback resource checks the path, api-version and api-key header
// as Azure does), Gemini's per-minute 429 (waited out) and its daily
// quota (stopped, naming the quota, no raw JSON), and a correction the
// model refused in plain words (not printed as the correction).
func TestFaultCLIDialects(t *testing.T) {
	t.Parallel()
	azure := func(t *testing.T, fe *faultEnv, deployments ...string) *llmtest.Azure {
		front, _ := url.Parse(fe.Cfg.OpenAIBaseURL)
		front.Path = ""
		az := &llmtest.Azure{Key: "sk-test", Deployments: deployments, Next: httputil.NewSingleHostReverseProxy(front)}
		srv := httptest.NewServer(az)
		t.Cleanup(srv.Close)
		fe.Cfg.OpenAIBaseURL = srv.URL
		return az
	}
	rows := []struct {
		name  string
		setup func(t *testing.T, fe *faultEnv) []string
		code  int
		last  []string
		out   []string
	}{
		{name: "Azure OpenAI, provider azure and the deployment as the model", setup: func(t *testing.T, fe *faultEnv) []string {
			az := azure(t, fe, "test-model")
			t.Cleanup(func() {
				reqs := az.Requests()
				if len(reqs) == 0 {
					t.Error("no request reached the Azure resource")
				}
				for _, r := range reqs {
					if r.Status != http.StatusOK || r.Deployment != "test-model" || r.APIVersion != "2024-10-21" {
						t.Errorf("Azure request %+v", r)
					}
				}
			})
			return []string{"MUSE_PROVIDER=azure"}
		}, code: 0, out: []string{"This post is false", "www.reuters.com"}},
		{name: "Azure OpenAI, a model that is no deployment", setup: func(t *testing.T, fe *faultEnv) []string {
			azure(t, fe, "gpt-4o-prod")
			return []string{"MUSE_PROVIDER=azure"}
		}, code: 1, last: []string{"model not found", "no deployment", "test-model"}, out: []string{testworld.Post[:40]}},
		{name: "Gemini per-minute 429, waited out", setup: func(t *testing.T, fe *faultEnv) []string {
			limit := llmtest.GeminiRateLimit(llmtest.GeminiPerMinute, "15", "1s", true)
			fe.llmFault = func(_ string, n int, w http.ResponseWriter, r *http.Request) bool {
				if n == 1 {
					limit(w, r)
					return true
				}
				return false
			}
			return nil
		}, code: 0, out: []string{"This post is false", "www.reuters.com"}},
		{name: "Gemini daily quota", setup: func(t *testing.T, fe *faultEnv) []string {
			limit := llmtest.GeminiRateLimit(llmtest.GeminiPerDay, "200", "", true)
			fe.llmFault = func(_ string, _ int, w http.ResponseWriter, r *http.Request) bool {
				limit(w, r)
				return true
			}
			return nil
		}, code: 1, last: []string{"quota exhausted", "GenerateRequestsPerDayPerProjectPerModel-FreeTier, limit 200", "daily quota"},
			out: []string{testworld.Post[:40]}},
		{name: "correction refused in plain words", setup: func(t *testing.T, fe *faultEnv) []string {
			fe.llmFault = func(kind string, _ int, w http.ResponseWriter, r *http.Request) bool {
				if kind == "correction" {
					llmtest.StreamAnswer("I'm sorry, but I can't help with that.", false)(w, r)
					return true
				}
				return false
			}
			return nil
		}, code: 1, last: []string{"write correction", "the model declined", "I'm sorry"}, out: []string{"No correction was written", "www.reuters.com"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			env := row.setup(t, fe)
			res := fe.museCheck(t, cliRun{env: env}, testworld.Post)
			if res.code != row.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", res.code, row.code, res.stderr)
			}
			if row.last != nil {
				wantContains(t, "last stderr line", res.lastLine(), row.last...)
			}
			wantContains(t, "stdout", res.stdout, row.out...)
			if strings.Contains(res.stderr, `{"error"`) || strings.Contains(res.stderr, `"details"`) {
				t.Errorf("raw JSON shown to the user:\n%s", res.stderr)
			}
			for _, l := range strings.Split(res.stdout, "\n") {
				if strings.Contains(l, "can't help") && !strings.Contains(l, "declined") {
					t.Errorf("the refusal is shown as the correction: %q", l)
				}
			}
			if strings.Contains(res.stdout+res.stderr, "sk-test") {
				t.Error("output carries the API key")
			}
			t.Logf("%s → exit %d; %s", row.name, res.code, res.lastLine())
		})
	}
}
