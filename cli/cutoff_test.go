package cli

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/testworld"
)

// cutoffJSON is what the cutoff tests read of a Check's JSON.
type cutoffJSON struct {
	Cutoff  time.Time `json:"cutoff"`
	Sources []struct {
		URL            string `json:"url"`
		Status         string `json:"status"`
		RelativeToPost *struct {
			Relation string `json:"relation"`
			Text     string `json:"text"`
			Stale    bool   `json:"stale"`
		} `json:"relative_to_post"`
	} `json:"sources"`
	Evidence []struct {
		URL  string `json:"url"`
		Kind string `json:"kind"`
	} `json:"evidence"`
}

// claimEnv is the environment that points the muse binary at the
// new-claim world.
func claimEnv(w *testworld.ClaimEnv) []string {
	return []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_NO_CACHE=1"}
}

func (c cutoffJSON) refutedBy() []string {
	var out []string
	for _, e := range c.Evidence {
		if e.Kind == "refutes" {
			out = append(out, e.URL)
		}
	}
	return out
}

// muse check reads and cites the pages after the post by default, says how
// long after the post each was published, and leaves them out with
// --as-of-post (the paper's protocol); --as-of-post needs the post's time.
func TestCheckCutoffDefaultAndAsOfPost(t *testing.T) {
	isolate(t)
	w := testworld.NewClaim(t)
	env := claimEnv(w)
	posted := testworld.NewClaimPostedAt.Format(time.RFC3339)
	check := func(args ...string) cutoffJSON {
		t.Helper()
		args = append(append([]string{"check", "--json", "--no-save", "--posted-at", posted}, args...), testworld.NewClaimPost)
		out, errOut, code := muse(t, "", env, args...)
		var c cutoffJSON
		if code != 0 || json.Unmarshal([]byte(out), &c) != nil {
			t.Fatalf("muse %s: exit %d\n%s", strings.Join(args, " "), code, errOut)
		}
		return c
	}
	after := map[string]bool{}
	for _, u := range testworld.NewClaimURLs[2:] {
		after[u] = true
	}

	c := check()
	if !c.Cutoff.IsZero() {
		t.Errorf("cutoff %v by default", c.Cutoff)
	}
	if len(c.refutedBy()) == 0 {
		t.Error("no page refutes the post by default, though pages after it do")
	}
	for _, u := range c.refutedBy() {
		if !after[u] {
			t.Errorf("refuted by %s, a page before the post", u)
		}
	}
	for _, s := range c.Sources {
		r := s.RelativeToPost
		switch {
		case s.Status == "excluded_cutoff":
			t.Errorf("%s kept out by default", s.URL)
		case r == nil:
			t.Errorf("%s: no relative_to_post", s.URL)
		case after[s.URL] != (r.Relation == "after") || !strings.HasSuffix(r.Text, "the post"):
			t.Errorf("%s: relative_to_post %+v", s.URL, *r)
		case s.URL == testworld.NewClaimURLs[0] && (!r.Stale || r.Text != "2 years before the post"):
			t.Errorf("%s two years before the post: %+v", s.URL, *r)
		}
	}

	c = check("--as-of-post")
	if !c.Cutoff.Equal(testworld.NewClaimPostedAt) {
		t.Errorf("--as-of-post: cutoff %v, want the post's time %v", c.Cutoff, testworld.NewClaimPostedAt)
	}
	for _, s := range c.Sources {
		if after[s.URL] != (s.Status == "excluded_cutoff") {
			t.Errorf("--as-of-post: %s is %s", s.URL, s.Status)
		}
	}
	if r := c.refutedBy(); len(r) > 0 {
		t.Errorf("--as-of-post: refuted by pages after the post: %q", r)
	}

	_, errOut, code := muse(t, "", env, "check", "--no-save", "--as-of-post", testworld.NewClaimPost)
	if code != 2 || !strings.Contains(errOut, "--as-of-post: the post's time is not known") {
		t.Errorf("--as-of-post without the post's time: exit %d\n%s", code, errOut)
	}
	_, errOut, code = muse(t, "", env, "check", "--no-save", "--as-of-post", "--before", "2024-03-01", "--posted-at", posted, testworld.NewClaimPost)
	if code != 2 || !strings.Contains(errOut, "as-of-post") {
		t.Errorf("--as-of-post with --before: exit %d\n%s", code, errOut)
	}
}

// muse batch --as-of-post puts each post's cutoff at its time, and fails a
// post whose time is not known, saying so.
func TestBatchAsOfPost(t *testing.T) {
	isolate(t)
	w := testworld.NewClaim(t)
	env := claimEnv(w)
	timed, _ := json.Marshal(map[string]string{"text": testworld.NewClaimPost, "url": testworld.NewClaimPostURL,
		"posted_at": testworld.NewClaimPostedAt.Format(time.RFC3339)})
	untimed, _ := json.Marshal(map[string]string{"text": testworld.NewClaimPost + " (again)"})
	out, errOut, code := muse(t, string(timed)+"\n"+string(untimed)+"\n", env, "batch", "-", "--no-save", "-j", "1", "--as-of-post")
	if code != 1 {
		t.Errorf("exit %d, want 1 (one post failed)\n%s", code, errOut)
	}
	var results []struct {
		Line   int        `json:"line"`
		Status string     `json:"status"`
		Error  string     `json:"error"`
		Check  cutoffJSON `json:"check"`
	}
	for line := range strings.Lines(out) {
		var one struct {
			Line   int        `json:"line"`
			Status string     `json:"status"`
			Error  string     `json:"error"`
			Check  cutoffJSON `json:"check"`
		}
		if err := json.Unmarshal([]byte(line), &one); err != nil {
			t.Fatalf("%v: %q", err, line)
		}
		results = append(results, one)
	}
	if len(results) != 2 {
		t.Fatalf("%d results:\n%s\n%s", len(results), out, errOut)
	}
	for _, r := range results {
		switch r.Line {
		case 1:
			if r.Status != "done" || !r.Check.Cutoff.Equal(testworld.NewClaimPostedAt) {
				t.Errorf("line 1: %s, cutoff %v: want done at the post's time", r.Status, r.Check.Cutoff)
			}
		case 2:
			if r.Status != "failed" || !strings.Contains(r.Error, "the post's time is not known") {
				t.Errorf("line 2: %s %q: want failed, the post's time not known", r.Status, r.Error)
			}
		}
	}
}
