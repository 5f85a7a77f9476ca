package tui

import (
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// A matched fact-check stands at the top of the sources pane.
func TestSourcesPaneShowsFactCheck(t *testing.T) {
	m, _ := finished(t, 80, 24)
	m.check.FactChecks = []pipeline.FactCheck{{Claim: "Vaccines hold microchips", Rating: "False", Reviewer: "PolitiFact",
		URL: "https://www.politifact.com/x", ReviewDate: time.Date(2020, 5, 1, 0, 0, 0, 0, time.UTC), ReviewerVerified: true}}
	m.sel = stageIndex(pipeline.StageSources)
	v := m.View()
	want := "Already checked by PolitiFact, rated False, 2020-05-01"
	i := strings.Index(v, want)
	if i < 0 {
		t.Fatalf("sources pane lacks %q:\n%s", want, v)
	}
	if j := strings.Index(v, "publisher"); j < 0 || j < i {
		t.Errorf("the fact-check is shown below the sources table:\n%s", v)
	}
}
