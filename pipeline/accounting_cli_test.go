package pipeline_test

import (
	"encoding/json"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
)

// TestNothingFoundCauses: each reason a check ends without evidence, in a
// world where the search answers only the pages that make it so. Through
// the engine and through `muse check --json`, the correction says what
// happened (the accounting's sentence, never "No credible source was
// found" unless every page was judged), the JSON carries the accounting
// behind it, and the exit status tells "checked and found nothing" (0)
// from "could not check" (3).
func TestNothingFoundCauses(t *testing.T) {
	t.Parallel()
	type row struct {
		name  string
		hosts []string // what SearXNG answers to every query
		setup func(t *testing.T, fe *faultEnv)
		text  string   // the correction (a prefix)
		also  []string // and what else it says
		fates map[pipeline.Fate]int
		code  int
		last  string // the last stderr line, for exit 3
	}
	rows := []row{
		{name: "every search provider failed", setup: func(t *testing.T, fe *faultEnv) {
			srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				w.Header().Set("Retry-After", "0")
				http.Error(w, "rate limited", http.StatusTooManyRequests)
			}))
			t.Cleanup(srv.Close)
			fe.Cfg.SearXNGURL = srv.URL
		}, text: "Search failed (searxng failed 3 queries: rate limit (HTTP 429)); nothing was checked, so muse cannot write a sourced correction.",
			code: 3, last: "every web search provider failed (searxng failed 3 queries: rate limit (HTTP 429))"},
		{name: "every page failed to be fetched", hosts: []string{"www.gone.example"},
			text:  "1 page could not be fetched (HTTP 404 Not Found), so muse cannot write a sourced correction.",
			fates: map[pipeline.Fate]int{pipeline.FateFetchFailed: 1}, code: 3, last: "every page failed to be read (1 page)"},
		{name: "the only page too short", hosts: []string{"www.shortnews.example"},
			text:  "1 page was too short to read, so muse cannot write a sourced correction.",
			fates: map[pipeline.Fate]int{pipeline.FateTooShort: 1}, code: 3, last: "no page could be read: 1 page was too short to read"},
		{name: "every page after the cutoff", hosts: []string{"www.latenews.example", "www.undated.example"},
			text: "1 page published after the ", also: []string{"; 1 page had no date to show it predates the cutoff, so muse cannot write"},
			fates: map[pipeline.Fate]int{pipeline.FateExcludedCutoff: 1, pipeline.FateUndated: 1}, code: 0},
		{name: "every page excluded by its rating", hosts: []string{"www.rumours.example"},
			text:  "1 page was left out because its publisher is not rated a credible reference, so muse cannot write a sourced correction.",
			fates: map[pipeline.Fate]int{pipeline.FateExcludedRating: 1}, code: 0},
		{name: "the model's answers lost", hosts: []string{"www.unratedblog.example"}, setup: func(t *testing.T, fe *faultEnv) {
			fe.llmFault = func(kind string, _ int, w http.ResponseWriter, req *http.Request) bool {
				io.Copy(io.Discard, req.Body)
				if kind == "evidence" {
					lostHabits[0].h(w, req)
					return true
				}
				return false
			}
		}, text: pipeline.NotJudgedLead + ": ", fates: map[pipeline.Fate]int{pipeline.FateNotJudged: 1}, code: 3, last: "could not be used for 1 of 1 page"},
		{name: "every page judged, none bears on the post", hosts: []string{"www.unratedblog.example", "www.weather.example"},
			text:  pipeline.NoSourceText,
			fates: map[pipeline.Fate]int{pipeline.FateNothing: 1, pipeline.FateOffTopic: 1}, code: 0},
		{name: "judged, with a page too short", hosts: []string{"www.unratedblog.example", "www.shortnews.example"},
			text:  "1 page was read and it does not address the post; 1 more was too short to read, so muse cannot write a sourced correction.",
			fates: map[pipeline.Fate]int{pipeline.FateNothing: 1, pipeline.FateTooShort: 1}, code: 0},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			if r.hosts != nil {
				sx := testworld.SearXNG(t, func(string) []string {
					var out []string
					for _, h := range r.hosts {
						out = append(out, testworld.PageURL(h, fe.Pages[h]))
					}
					return out
				})
				fe.Cfg.SearXNGURL = sx.URL
			}
			if r.setup != nil {
				r.setup(t, fe)
			}
			wantConclusion := pipeline.ConclusionNothingFound
			if r.code == 3 {
				wantConclusion = pipeline.ConclusionNotChecked
			}
			check := func(how string, c *pipeline.Check, a pipeline.Accounting) {
				t.Helper()
				if !strings.HasPrefix(c.Correction.Text, r.text) || !c.Correction.Unsourced() {
					t.Errorf("%s: correction %q, want it to begin %q", how, c.Correction.Text, r.text)
				}
				wantContains(t, how+": correction", c.Correction.Text, r.also...)
				if r.name == "every page after the cutoff" {
					// The engine's post is dated at the cutoff; the command's is not dated.
					after := map[string]string{"engine": "after the post was left out by the cutoff you set",
						"muse check --json": "after the cutoff you set (2024-02-01) was left out"}[how]
					wantContains(t, how+": correction", c.Correction.Text, after)
				}
				derived := r.text == pipeline.NoSourceText || strings.HasPrefix(r.text, pipeline.NotJudgedLead) ||
					strings.HasPrefix(c.Correction.Text, a.Summary+", so muse cannot write a sourced correction.")
				if a.Conclusion != wantConclusion || !derived {
					t.Errorf("%s: accounting says %s: %q", how, a.Conclusion, a.Summary)
				}
				for f, n := range r.fates {
					if a.Counts[f] != n {
						t.Errorf("%s: %d pages %s, want %d (%+v)", how, a.Counts[f], f, n, a.Pages)
					}
				}
				noSourceOnlyWhenJudged(t, c)
			}
			c, err := fe.run(t, fe.opts(), testworld.Post)
			if (r.code == 3) != (err != nil) {
				t.Fatalf("engine: err %v, want exit %d", err, r.code)
			}
			check("engine", c, c.Account())

			res := fe.museCheck(t, cliRun{}, "--json", testworld.Post)
			if res.code != r.code {
				t.Fatalf("exit %d, want %d\nstderr:\n%s", res.code, r.code, res.stderr)
			}
			if r.last != "" {
				wantContains(t, "last stderr line", res.lastLine(), "no evidence could be obtained", r.last)
			}
			var out struct {
				pipeline.Check
				Accounting pipeline.Accounting `json:"accounting"`
			}
			if err := json.Unmarshal([]byte(res.stdout), &out); err != nil {
				t.Fatalf("stdout is not the Check: %v\n%s", err, res.stdout)
			}
			check("muse check --json", &out.Check, out.Accounting)
			if got := out.Check.Account(); got.Summary != out.Accounting.Summary || got.Conclusion != out.Accounting.Conclusion {
				t.Errorf("the JSON's accounting %q is not the Check's own %q", out.Accounting.Summary, got.Summary)
			}
			// The progress on stderr says it too, in the same words.
			wantContains(t, "stderr", res.stderr, "muse: searched: "+out.Accounting.Summary+"\n")
			t.Logf("exit %d: %s", res.code, out.Correction.Text)
		})
	}
}
