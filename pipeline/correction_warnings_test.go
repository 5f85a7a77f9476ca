package pipeline_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
)

// TestCorrectionWarningsFollowTheText: what the correction cites is said
// of its text as it is now, in the app's pane, the Markdown and the JSON:
// the journalist adds the Reuters link by hand and "cites none of the
// evidence pages" goes; a link that is not an evidence page, or a page
// whose quote was unticked, is named; a link the guard removed from the
// model's draft is no longer reported once the text is the journalist's.
func TestCorrectionWarningsFollowTheText(t *testing.T) {
	const reuters = "https://www.reuters.com/fact-check/springfield-bicycles"
	c := &pipeline.Check{
		Post:    pipeline.Post{Text: "Springfield banned bicycles from Main Street."},
		Sources: []pipeline.Source{{URL: reuters, Domain: "reuters.com", Status: pipeline.StatusUsed, Paragraphs: []string{"The council has not banned bicycles."}}},
		Evidence: []pipeline.Evidence{{SourceURL: reuters, Quote: "The council has not banned bicycles.", Kind: pipeline.KindRefutes,
			Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "This post is false: the council has not banned bicycles.",
			// As a run (or an older muse) kept them beside the text.
			Warnings: []string{"removed https://evil.example/x: not one of the evidence pages", "the correction cites none of the evidence pages"}},
	}
	c.Stages = []pipeline.StageInfo{{Stage: pipeline.StageCorrection, State: pipeline.StateDone}}
	says := func(when string, want []string) {
		t.Helper()
		if got := c.CorrectionWarnings(); !slices.Equal(got, want) {
			t.Errorf("%s: warnings %q, want %q", when, got, want)
		}
		md := export.Report(c)
		for _, w := range want {
			// The words before its first link (the Markdown writes links
			// in warnings defanged).
			words, _, _ := strings.Cut(w, "http")
			if strings.Count(md, "> **Warning:** ") != len(want) || !strings.Contains(md, "> **Warning:** "+words) {
				t.Errorf("%s: the Markdown does not say %q:\n%s", when, w, md)
			}
		}
		if len(want) == 0 && strings.Contains(md, "**Warning:**") {
			t.Errorf("%s: the Markdown warns:\n%s", when, md)
		}
		b, err := json.Marshal(c)
		if err != nil {
			t.Fatal(err)
		}
		var out struct {
			Correction struct {
				Warnings []string `json:"warnings"`
			} `json:"correction"`
		}
		if err := json.Unmarshal(b, &out); err != nil || !slices.Equal(out.Correction.Warnings, want) && len(want)+len(out.Correction.Warnings) > 0 {
			t.Errorf("%s: JSON warnings %q, want %q (%v)", when, out.Correction.Warnings, want, err)
		}
	}
	says("the model's draft", []string{"removed https://evil.example/x: not one of the evidence pages", "the correction cites none of the evidence pages"})

	c.Post.URL = "https://x.com/cityrumours/status/1"
	c.SetCorrection(c.Correction.Text+" Source: "+reuters+" (about "+c.Post.URL+")", true)
	says("the Reuters link added by hand, and the post's", nil)
	if n := c.CitedPages(); n != 1 {
		t.Errorf("cited pages %d, want 1", n)
	}

	c.SetCorrection(c.Correction.Text+" See also https://blog.example/post.", true)
	says("a link that is not an evidence page", []string{"the correction cites https://blog.example/post, which holds none of the quotes it rests on"})

	c.SetCorrection(strings.TrimSuffix(c.Correction.Text, " See also https://blog.example/post."), true)
	if strings.Contains(c.Correction.Text, "blog.example") {
		t.Fatalf("the test's text still has the blog: %q", c.Correction.Text)
	}
	if err := c.IncludeQuote(0, false); err != nil {
		t.Fatal(err)
	}
	// Reuters holds its quote still: the warning says it is left out, not
	// that the page holds none.
	says("Reuters' quote unticked", []string{"no quote is ticked, so the correction rests on no quoted evidence",
		"the correction cites " + reuters + ", whose quotes are all left out"})
	if n := c.CitedPages(); n != 0 {
		t.Errorf("cited pages %d after the quote was unticked, want 0", n)
	}
}
