package tui

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/teatest"

	"github.com/musecheck/muse/pipeline"
)

// TestNothingBeforeTheCutoff: every page the search finds was published
// after the post (and one is by a publisher not rated credible). The app says so where the journalist looks — the status
// line, the sources pane's summary line and "why this source" — in the
// accounting's words, and never that no credible source was found.
func TestNothingBeforeTheCutoff(t *testing.T) {
	w := englishWorld
	w.pages = slices.Clone(w.pages)
	for i := range w.pages {
		w.pages[i].Published = day(2024, 3, 6)                                 // the post is of March 5
		w.pages[i].URL = strings.Replace(w.pages[i].URL, "-2024-03-02", "", 1) // a date in the address counts too
	}
	r := newRunner(t, w)
	opts := testOptions(r)
	opts.Start = true
	opts.AsOfPost = true // the paper's protocol (--as-of-post): the cutoff at the post's time
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(160, 40))
	const said = "published after the post were left out by the cutoff you set"
	waitFor(t, tm, "check finished")
	tm.Type("4") // sources
	waitFor(t, tm, said)
	tm.Send(keyMsg(tea.KeyEnter)) // why this source
	waitFor(t, tm, "excluded cutoff")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm.FinalModel(t).(*Model)
	a := m.check.Account()
	if a.Conclusion != pipeline.ConclusionNothingFound || a.Counts[pipeline.FateExcludedCutoff] != len(w.pages)-1 || a.Counts[pipeline.FateExcludedRating] != 1 ||
		!strings.Contains(a.Summary, said) {
		t.Errorf("accounting %s %v %q", a.Conclusion, a.Counts, a.Summary)
	}
	if txt := m.check.Correction.Text; txt == pipeline.NoSourceText || !strings.HasPrefix(txt, a.Summary+", so muse cannot write") {
		t.Errorf("correction %q", txt)
	}
}

// TestAnswersLostInTheApp: the model refuses every evidence call. The app
// says no page was judged and why — in the status line, the sources pane's
// summary line and "why this source" — never that no credible source was
// found, and the check could not check (its accounting's conclusion).
func TestAnswersLostInTheApp(t *testing.T) {
	w := englishWorld
	w.refuseEvidence = true
	r := newRunner(t, w)
	opts := testOptions(r)
	opts.Start = true
	tm := teatest.NewTestModel(t, New(context.Background(), opts), teatest.WithInitialTermSize(160, 40))
	const said = "not judged: the model's answers about them were lost"
	waitFor(t, tm, "no sourced correction")
	tm.Type("4") // sources
	waitFor(t, tm, said)
	tm.Send(keyMsg(tea.KeyEnter)) // why this source
	waitFor(t, tm, "the model refused")
	if err := tm.Quit(); err != nil {
		t.Fatal(err)
	}
	tm.WaitFinished(t, teatest.WithFinalTimeout(5*time.Second))
	m := tm.FinalModel(t).(*Model)
	a := m.check.Account()
	if a.Conclusion != pipeline.ConclusionNotChecked || a.Counts[pipeline.FateNotJudged] == 0 || !strings.Contains(a.Summary, said) {
		t.Errorf("accounting %s %v %q", a.Conclusion, a.Counts, a.Summary)
	}
	if txt := m.check.Correction.Text; strings.Contains(txt, pipeline.NoSourceText) || !strings.HasPrefix(txt, pipeline.NotJudgedLead) {
		t.Errorf("correction %q", txt)
	}
}
