package pipeline_test

import (
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/archive"
)

// importFactChecks imports the fixture feed into the world's archive, as
// `muse archive add --claimreview` does.
func importFactChecks(t *testing.T, w *testworld.Env, path string) {
	t.Helper()
	st, err := archive.Open(context.Background(), w.Cfg.ArchivePath())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if res := st.ImportClaimReviews(context.Background(), []string{path}, archive.ImportOptions{}); res.Failed != 0 || res.Added == 0 {
		t.Fatalf("import %s: %+v", path, res)
	}
}

// A post that repeats an imported fact-check's claim shows the match first:
// in the Check, at the top of the report, as the first hit and source, and
// in the correction's prompt as a source it may cite.
func TestFactCheckMatchEndToEnd(t *testing.T) {
	w := testworld.New(t, nil)
	importFactChecks(t, w, "testdata/springfield_factchecks.json")
	c, err := w.Check(t, w.Options())
	if err != nil {
		t.Fatal(err)
	}
	reuters := testworld.PageURL("www.reuters.com", w.Pages["www.reuters.com"])
	if len(c.FactChecks) != 1 {
		t.Fatalf("FactChecks = %+v; want the Springfield fact-check alone (not the 5G one)", c.FactChecks)
	}
	f := c.FactChecks[0]
	if f.Reviewer != "Reuters" || f.Rating != "False" || f.URL != reuters || f.ReviewDate.Format("2006-01-02") != "2024-01-20" {
		t.Errorf("FactChecks[0] = %+v", f)
	}
	if len(c.Hits) == 0 || c.Hits[0].URL != reuters || c.Hits[0].ClaimReview == nil || c.Hits[0].ClaimReview.Rating != "False" {
		t.Errorf("first hit = %+v; want the fact-check's page with its ClaimReview", c.Hits[:min(len(c.Hits), 1)])
	}
	if s := c.SourceByURL(reuters); s == nil || s.Status != pipeline.StatusUsed {
		t.Errorf("the fact-check's page as a source: %+v", s)
	}
	want := "Already checked by Reuters, rated False, 2024-01-20 (<" + reuters + ">)" // the page linked, as an autolink
	if r := export.Report(c); !strings.HasPrefix(r, want+"\n") {
		t.Errorf("report starts %q; want %q", r[:min(len(r), 200)], want)
	}
	var prompt string
	for _, call := range w.LLM.ChatCalls() {
		if call.Chat != nil && strings.Contains(string(call.Body), "This post is") {
			prompt = string(call.Body)
		}
	}
	if !strings.Contains(prompt, `Reuters checked the claim \"Springfield city council banned bicycles from Main Street\"`) ||
		!strings.Contains(prompt, "rated it False") {
		t.Errorf("the correction prompt does not give the fact-check's verdict as a source:\n%s", prompt)
	}
	if !strings.Contains(c.Correction.Text, reuters) {
		t.Errorf("correction %q does not cite the fact-check", c.Correction.Text)
	}
	js, err := export.JSON(c)
	var back struct {
		FactChecks []struct{ Claim, Rating, Reviewer, URL, ReviewDate string } `json:"fact_checks"`
	}
	if err == nil {
		err = json.Unmarshal(js, &back)
	}
	if err != nil || len(back.FactChecks) != 1 || back.FactChecks[0].Rating != "False" || back.FactChecks[0].URL != reuters {
		t.Errorf("JSON fact_checks = %+v (%v)", back.FactChecks, err)
	}
}

// A post no imported claim matches shows none, and the check runs as
// without fact-checks.
func TestFactCheckNoMatch(t *testing.T) {
	w := testworld.New(t, nil)
	importFactChecks(t, w, "testdata/springfield_factchecks.json")
	st, err := archive.Open(context.Background(), w.Cfg.ArchivePath())
	if err != nil {
		t.Fatal(err)
	}
	ms, err := st.MatchingFactChecks(context.Background(), "The farmers' market on Elm Street moves indoors for the winter, starting Saturday.", "en", 3, time.Time{})
	st.Close()
	if err != nil || len(ms) != 0 {
		t.Fatalf("an unrelated post matched %+v (%v)", ms, err)
	}
	e, closeFn, err := setup.NewFromConfig(context.Background(), w.Cfg, w.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: "The farmers' market on Elm Street moves indoors for the winter, starting Saturday."}, testworld.Cutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if len(c.FactChecks) != 0 || strings.HasPrefix(export.Report(c), "Already checked") {
		t.Errorf("unrelated post: FactChecks = %+v", c.FactChecks)
	}
	for _, h := range c.Hits {
		if h.Provider == pipeline.ProviderClaimReview {
			t.Errorf("unrelated post got a claim-match hit %+v", h)
		}
	}
}

// An imported ClaimReview whose reviewer is not its page's domain (here
// "PolitiFact" on a rumour site) is shown as a claim, never cited: it is
// not put first among the hits, the correction prompt does not get its
// verdict, the report does not open "Already checked by PolitiFact" and
// does not link its page.
func TestFactCheckImpostorReviewer(t *testing.T) {
	w := testworld.New(t, nil)
	importFactChecks(t, w, "testdata/impostor_factchecks.json")
	c, err := w.Check(t, w.Options())
	if err != nil {
		t.Fatal(err)
	}
	if len(c.FactChecks) != 1 || c.FactChecks[0].ReviewerVerified {
		t.Fatalf("FactChecks = %+v; want the impostor, unverified", c.FactChecks)
	}
	for _, h := range c.Hits {
		if h.Provider == pipeline.ProviderClaimReview || h.ClaimReview != nil {
			t.Errorf("the impostor's page became a claim-match hit: %+v", h)
		}
	}
	for _, call := range w.LLM.ChatCalls() {
		if strings.Contains(string(call.Body), "PolitiFact checked the claim") {
			t.Error("the impostor's verdict was given to the model as a source")
		}
	}
	r := export.Report(c)
	if strings.Contains(r, "Already checked by PolitiFact") ||
		!strings.HasPrefix(r, "A fact-check that claims to be by PolitiFact (not verified: its page is on springfield-truth.example)") ||
		strings.Contains(r, "https://www.springfield-truth.example/politifact-check") {
		t.Errorf("report starts %q", r[:min(len(r), 300)])
	}
	if strings.Contains(c.Correction.Text, "springfield-truth") || c.Account().FactChecks != 0 {
		t.Errorf("the impostor is cited or counted: %q, %+v", c.Correction.Text, c.Account())
	}
}
