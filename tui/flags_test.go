package tui

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// A flagged page is marked ⚑ in the sources table, counted above it, and
// "why this source" gives the flag's reason; the quoted pages' origins are
// summed up above the table.
func TestSourcesShowFlags(t *testing.T) {
	m := finishedIn(t, 160, 48, testPost, englishWorld, NewStyles(true, false))
	m.check.Sources[1].Flags = []pipeline.SourceFlag{{Kind: pipeline.FlagCopy, Of: "https://www.reuters.com/x",
		Reason: "its text is largely the same as reuters.com's page, with no news agency credited"}}
	m.sel = stageIndex(pipeline.StageSources)
	v := m.View()
	for _, want := range []string{"⚑ 1 page flagged as possibly poisoned", "⚑ ", "quoted: " + m.check.OriginsSummary()} {
		if !strings.Contains(v, want) {
			t.Errorf("sources pane lacks %q:\n%s", want, v)
		}
	}
	if m.check.OriginsSummary() == "" {
		t.Error("no origins for a finished check with quotes")
	}
	m.setCursor(pipeline.StageSources, 1)
	press(t, m, "enter")
	why := strings.Join(strings.Fields(m.whyPane(100, 80)), " ")
	if !strings.Contains(why, "⚑ flagged its text is largely the same as reuters.com's page, with no news agency credited — its quotes are shown, but it never counts toward the verdict or the stop rule") {
		t.Errorf("why this source lacks the flag:\n%s", why)
	}
	press(t, m, "esc")
	m.setCursor(pipeline.StageSources, 0)
	press(t, m, "enter")
	if why := m.whyPane(100, 80); strings.Contains(why, "flagged") {
		t.Errorf("an unflagged page says flagged:\n%s", why)
	}
}
