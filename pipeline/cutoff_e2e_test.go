package pipeline_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// correctionPrompt is the last correction prompt the world's model was sent.
func correctionPrompt(t *testing.T, srv *llmtest.Server) string {
	t.Helper()
	prompt := ""
	for _, c := range srv.ChatCalls() {
		if llmtest.SchemaName(*c.Chat) == "" {
			prompt = llmtest.LastUser(*c.Chat)
		}
	}
	if prompt == "" {
		t.Fatal("no correction prompt was sent")
	}
	return prompt
}

// A new claim is refuted only by pages published after the post: with no
// cutoff (the default) they are read and cited, the fact-check of the post
// itself first with its rating, and the correction is told they came after
// the post; with the cutoff at the post (the paper's protocol) they are
// left out, saying so.
func TestNewClaimRefutedAfterThePost(t *testing.T) {
	env := testworld.NewClaim(t)
	c, err := env.Check(t, pipeline.Options{}, time.Time{})
	if err != nil {
		t.Fatal(err)
	}
	if !c.Cutoff.IsZero() {
		t.Fatalf("cutoff %v set by default", c.Cutoff)
	}
	bbc, npr, reuters := testworld.NewClaimURLs[3], testworld.NewClaimURLs[4], testworld.NewClaimURLs[2]
	for _, s := range c.Sources {
		if s.Status == pipeline.StatusExcludedCutoff || s.Status == pipeline.StatusUndated {
			t.Errorf("%s kept out with no cutoff: %s (%s)", s.URL, s.Status, s.Reason)
		}
	}
	// The fact-check whose ClaimReview names the post, then the page that
	// links to it, rank above Reuters, a higher tier.
	var order []string
	for _, s := range c.Sources {
		if s.Eligible() {
			order = append(order, s.URL)
		}
	}
	if len(order) < 3 || order[0] != bbc || order[1] != npr {
		t.Errorf("sources in order %q: want the fact-check of the post (%s) first, then the page linking to it (%s)", order, bbc, npr)
	}
	if s := c.SourceByURL(bbc); s == nil || s.OfPost != pipeline.OfPostClaimReview || s.PostVerdict() != testworld.NewClaimRating {
		t.Errorf("the fact-check of the post: %+v", s)
	} else if line := s.OfPostLine(); !strings.HasPrefix(line, "Fact-check of this post by BBC, rated False, 2024-03-12") {
		t.Errorf("its line: %q", line)
	}
	if s := c.SourceByURL(npr); s == nil || s.OfPost != pipeline.OfPostLinks || s.PostVerdict() != "" {
		t.Errorf("the page linking to the post: %+v", s)
	}
	if s := c.SourceByURL(reuters); s == nil || s.OfPost != "" {
		t.Errorf("Reuters does not name the post: %+v", s)
	}
	// Refuted, and cited, by pages after the post, and the accounting says so.
	a := c.Account()
	if a.Conclusion != pipeline.ConclusionEvidence || len(c.Correction.URLs) == 0 {
		t.Fatalf("conclusion %s, correction %q", a.Conclusion, c.Correction.Text)
	}
	if !strings.HasPrefix(a.Summary, "2 pages refute the post (published after it)") {
		t.Errorf("summary %q does not say the refuting pages came after the post", a.Summary)
	}
	for _, u := range c.Correction.URLs {
		s := c.SourceByURL(u)
		if s == nil || !c.Timing(*s).After() {
			t.Errorf("cited %s, not a page after the post", u)
		}
	}
	if !slices.ContainsFunc(c.Evidence, func(e pipeline.Evidence) bool {
		return e.Kind == pipeline.KindRefutes && e.Verified && e.SourceURL == bbc
	}) {
		t.Errorf("the fact-check's refutation was not quoted: %+v", c.Evidence)
	}
	// The correction prompt marks what came after the post, and has the
	// fact-check's rating.
	prompt := correctionPrompt(t, env.LLM)
	for _, want := range []string{
		"BBC, high priority, 12 Mar 2024 (published 1 day after the post)",
		"Reuters, high priority, 11 Mar 2024 (published 1 day after the post)",
		`says when a fact it uses was published after the post ("Since the post, Reuters reported …")`,
		"BBC fact-checked this post", // the ratings' name, not the one the page gives its reviewer
		"and rated it False.",
	} {
		if !strings.Contains(prompt, want) {
			t.Errorf("correction prompt lacks %q:\n%s", want, prompt)
		}
	}

	// The JSON gives each page's time relative to the post, derived.
	b, err := json.Marshal(c)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Sources []struct {
			URL            string `json:"url"`
			OfPost         string `json:"of_post"`
			RelativeToPost *struct {
				Relation string `json:"relation"`
				Days     int    `json:"days"`
				Text     string `json:"text"`
				Stale    bool   `json:"stale"`
			} `json:"relative_to_post"`
			ClaimReview *struct {
				Rating string `json:"rating"`
			} `json:"claim_review"`
		} `json:"sources"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	want := map[string]string{
		testworld.NewClaimURLs[0]: "2 years before the post",
		testworld.NewClaimURLs[1]: "2 days before the post",
		reuters:                   "1 day after the post", // dated by its day alone
		bbc:                       "1 day after the post",
		npr:                       "2 days after the post",
	}
	for _, s := range out.Sources {
		r := s.RelativeToPost
		if r == nil || r.Text != want[s.URL] {
			t.Errorf("%s: relative_to_post %+v, want %q", s.URL, r, want[s.URL])
			continue
		}
		if stale := s.URL == testworld.NewClaimURLs[0]; r.Stale != stale {
			t.Errorf("%s: stale %t, want %t", s.URL, r.Stale, stale)
		}
		if s.URL == bbc && (s.OfPost != "claim_review" || s.ClaimReview == nil || s.ClaimReview.Rating != "False") {
			t.Errorf("the fact-check's JSON: of_post %q, claim_review %+v", s.OfPost, s.ClaimReview)
		}
	}
	if len(out.Sources) != len(want) {
		t.Errorf("%d sources in the JSON, want %d", len(out.Sources), len(want))
	}
	// Derived, never stored: the Check read back has no such field.
	var back pipeline.Check
	if err := json.Unmarshal(b, &back); err != nil || back.Timing(back.Sources[0]) == nil {
		t.Errorf("read back: %v", err)
	}
}

// The paper's protocol, one switch away: the cutoff at the post's time
// leaves out every page after the post, so nothing refutes the new claim.
func TestNewClaimAsOfPost(t *testing.T) {
	env := testworld.NewClaim(t)
	cutoff, err := pipeline.AsOfPost(env.Post())
	if err != nil {
		t.Fatal(err)
	}
	c, err := env.Check(t, pipeline.Options{}, cutoff)
	if err != nil {
		t.Fatal(err)
	}
	for _, u := range testworld.NewClaimURLs[2:] {
		if s := c.SourceByURL(u); s == nil || s.Status != pipeline.StatusExcludedCutoff {
			t.Errorf("%s after the post: %+v, want excluded_cutoff", u, s)
		}
	}
	if slices.ContainsFunc(c.Evidence, func(e pipeline.Evidence) bool { return e.Kind == pipeline.KindRefutes }) {
		t.Errorf("refuted by pages the cutoff keeps out: %+v", c.Evidence)
	}
	if sum := c.Account().Summary; !strings.Contains(sum, "3 pages published after the post were left out by the cutoff you set") {
		t.Errorf("summary %q does not say the cutoff left out the pages after the post", sum)
	}
	p := correctionPrompt(t, env.LLM)
	if strings.Contains(p, "after the post") || strings.Contains(p, "Since the post") {
		t.Errorf("no fact after the post was given, yet the prompt speaks of one:\n%s", p)
	}
	// The page two years before the post is flagged as possibly stale.
	if !strings.Contains(p, "City Herald, low priority, 5 Jan 2022 (2 years before the post: it may be out of date)") {
		t.Errorf("the stale page is not flagged in the prompt:\n%s", p)
	}
	if _, err := pipeline.AsOfPost(pipeline.Post{Text: "no time"}); err == nil {
		t.Error("a cutoff at the post of a post with no time")
	}
}
