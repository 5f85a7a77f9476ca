package export

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// TestExportsSayWhatHappened: for each way a check ends without evidence,
// the report's correction and its sources' line, the note's refusal, the
// ClaimReview and the JSON say what the accounting says happened — never
// "No credible source was found" unless every page was judged.
func TestExportsSayWhatHappened(t *testing.T) {
	page := func(u string, st pipeline.Status, reason string) pipeline.Source {
		return pipeline.Source{URL: u, Domain: strings.TrimPrefix(u, "https://"), Status: st, Reason: reason, Tier: pipeline.TierHigh}
	}
	judgedNothing := "read: the model quoted no paragraph of it as confirming, refuting or explaining the post"
	rows := []struct {
		name     string
		searches []pipeline.SearchRecord
		sources  []pipeline.Source
		want     string
		checked  bool
	}{
		{"every search provider failed", []pipeline.SearchRecord{
			{Pass: 1, Query: "a", Provider: "searxng", Error: "HTTP 429 Too Many Requests (gave up after 4 attempts)"},
			{Pass: 1, Query: "b", Provider: "searxng", Error: "HTTP 429 Too Many Requests (gave up after 4 attempts)"}}, nil,
			"Search failed (searxng failed 2 queries: rate limit (HTTP 429)); nothing was checked", false},
		{"every page failed to be fetched", nil, []pipeline.Source{
			page("https://a.example", pipeline.StatusFetchFailed, "HTTP 403 Forbidden"),
			page("https://b.example", pipeline.StatusFetchFailed, "HTTP 403 Forbidden")},
			"2 pages could not be fetched (HTTP 403 Forbidden)", false},
		{"pages too short", nil, []pipeline.Source{
			page("https://a.example", pipeline.StatusTooShort, "40 words of main text; at least 100 needed")},
			"1 page was too short to read", false},
		{"after the cutoff", nil, []pipeline.Source{
			page("https://a.example", pipeline.StatusExcludedCutoff, "published 2024-03-05, after the cutoff 2024-03-01"),
			page("https://b.example", pipeline.StatusExcludedCutoff, "published 2024-03-06, after the cutoff 2024-03-01"),
			page("https://c.example", pipeline.StatusExcludedCutoff, "published 2024-03-07, after the cutoff 2024-03-01")},
			"3 pages published after the post were left out by the cutoff you set", true},
		{"excluded by rating", nil, []pipeline.Source{
			page("https://a.example", pipeline.StatusExcludedRating, "publisher rated factuality low: not a credible reference")},
			"1 page was left out because its publisher is not rated a credible reference", true},
		{"read, with paywalls and short pages", nil, []pipeline.Source{
			page("https://a.example", pipeline.StatusNotNeeded, judgedNothing),
			page("https://b.example", pipeline.StatusNotNeeded, judgedNothing),
			page("https://c.example", pipeline.StatusFetchFailed, "HTTP 402 Payment Required"),
			page("https://d.example", pipeline.StatusTooShort, "12 words of main text; at least 100 needed")},
			"2 pages were read and none addresses the post; 1 more could not be fetched (HTTP 402 Payment Required); 1 more was too short to read", true},
		{"every page judged", []pipeline.SearchRecord{{Pass: 1, Query: "q", Provider: "searxng", Hits: 2}}, []pipeline.Source{
			page("https://a.example", pipeline.StatusNotNeeded, judgedNothing),
			page("https://b.example", pipeline.StatusIrrelevant, "shares 0% of the key words of the post")},
			"1 page was read and it does not address the post; 1 more shared too few of the post's words to be judged", true},
	}
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			c := sample()
			c.Cutoff = c.Post.PostedAt
			c.Evidence, c.Searches, c.Sources = nil, r.searches, r.sources
			c.Correction = pipeline.Correction{Text: pipeline.NoEvidenceText(c)}
			a := c.Account()
			if a.Summary != r.want || a.Checked() != r.checked {
				t.Errorf("accounting %q (checked %v), want %q (%v)", a.Summary, a.Checked(), r.want, r.checked)
			}
			genuine := r.name == "every page judged"
			if (c.Correction.Text == pipeline.NoSourceText) != genuine || !c.Correction.Unsourced() ||
				!genuine && !strings.HasPrefix(c.Correction.Text, r.want+", so muse cannot write a sourced correction.") {
				t.Errorf("correction %q", c.Correction.Text)
			}
			md := Report(c)
			if lines := strings.SplitN(md, "\n", 4); lines[2] != c.Correction.Text {
				t.Errorf("the report does not open with the correction:\n%s", md)
			}
			if len(c.Sources) > 0 && !strings.Contains(md, "## Sources\n\n_"+r.want+"._\n") {
				t.Errorf("the report's sources do not say %q:\n%s", r.want, md)
			}
			if _, err := Note(c); !errors.Is(err, ErrNoCorrection) || !strings.Contains(err.Error(), r.want) {
				t.Errorf("Note: %v, want ErrNoCorrection saying %q", err, r.want)
			}
			b, err := ClaimReview(c, Reviewer{Name: "Desk", URL: "https://desk.example"}, Rating{AlternateName: "Unproven"})
			var doc map[string]any
			if err != nil || json.Unmarshal(b, &doc) != nil || doc["reviewBody"] != nil {
				t.Errorf("ClaimReview carries the text: %s %v", b, err)
			}
			j, err := JSON(c)
			var out struct {
				Accounting pipeline.Accounting `json:"accounting"`
			}
			if err != nil || json.Unmarshal(j, &out) != nil || out.Accounting.Summary != r.want || out.Accounting.Conclusion != a.Conclusion {
				t.Errorf("JSON accounting %+v, want %q: %v", out.Accounting, r.want, err)
			}
		})
	}
}
