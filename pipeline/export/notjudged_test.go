package export

import (
	"encoding/json"
	"errors"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// notJudged is sample() with a page the model did not judge: Azure's
// content filter refused it.
func notJudged() *pipeline.Check {
	c := sample()
	c.Sources = append(c.Sources, pipeline.Source{URL: "https://apnews.com/b", Publisher: "AP", Domain: "apnews.com",
		Tier: pipeline.TierHigh, Status: pipeline.StatusNotJudged,
		Reason: "the model server's content filter refused it (Azure: hate, medium)"})
	return c
}

// A page the model did not judge is said in the report's first lines,
// above the correction that rests on the others, and its status and
// reason are in the sources; when no correction could be written, the
// fixed text that says so is neither a note nor a ClaimReview's body.
func TestReportSaysPagesNotJudged(t *testing.T) {
	c := notJudged()
	md := Report(c)
	lines := strings.SplitN(md, "\n", 4)
	want := "> **Not judged:** 1 of 2 pages was not judged: the model server's content filter refused it."
	if len(lines) < 3 || lines[2] != want {
		t.Errorf("the report's first lines do not say the page was not judged:\n%s", md)
	}
	if !strings.Contains(md, "not judged: the model server's content filter refused it (Azure: hate, medium)") {
		t.Errorf("the sources do not say why:\n%s", md)
	}
	if _, err := Note(c); err != nil {
		t.Errorf("a correction resting on the pages judged is a note: %v", err)
	}

	c.Evidence, c.Sources[1].Status, c.Sources[1].Reason = nil, pipeline.StatusNotNeeded, "read: the model quoted no paragraph of it as confirming, refuting or explaining the post"
	c.Correction = pipeline.Correction{Text: pipeline.NotJudgedText(c), Warnings: []string{c.NotJudgedNote()}}
	if !strings.HasPrefix(c.Correction.Text, "No source could be checked for 1 of 2 pages: the model server's content filter refused it; the 1 page judged does not address the post.") {
		t.Fatalf("text %q", c.Correction.Text)
	}
	md = Report(c)
	if lines := strings.SplitN(md, "\n", 4); lines[2] != c.Correction.Text || strings.Contains(md, pipeline.NoSourceText) {
		t.Errorf("the report does not open with the text that says the page was not judged:\n%s", md)
	}
	if _, err := Note(c); !errors.Is(err, ErrNoCorrection) {
		t.Errorf("Note of the fixed text: %v, want ErrNoCorrection", err)
	}
	b, err := ClaimReview(c, Reviewer{Name: "Desk", URL: "https://desk.example"}, Rating{AlternateName: "Unproven"})
	if err != nil {
		t.Fatal(err)
	}
	var doc map[string]any
	if json.Unmarshal(b, &doc) != nil || doc["reviewBody"] != nil {
		t.Errorf("ClaimReview carries the fixed text: %s", b)
	}
	j, _ := JSON(c)
	if !strings.Contains(string(j), `"status": "not_judged"`) {
		t.Errorf("JSON lacks the status:\n%s", j)
	}
}
