package pipeline_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// TestCorrectionCitesByID: the correction prompt names its sources by id,
// never by URL, and whatever way a model cites them — "[S1]", "source 2",
// "[3]", a Markdown link to an id — the correction the journalist sees
// carries the sources' real URLs; an id the model invents is removed with
// a warning, as an invented URL is.
func TestCorrectionCitesByID(t *testing.T) {
	env := testworld.New(t, nil)
	reuters := testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"])
	ap := testworld.PageURL("apnews.com", env.Pages["apnews.com"])
	bbc := testworld.PageURL("www.bbc.co.uk", env.Pages["www.bbc.co.uk"])
	env.Model.CorrectionReply = &llmtest.Reply{Text: "This post is false. The council has not banned bicycles [S1], as source 2 confirms; " +
		"it is widening a bike lane [[BBC](S3)], and the mayor resigned [S12]."}
	c, err := env.Check(t, pipeline.Options{PageProxy: env.Proxy})
	if err != nil {
		t.Fatal(err)
	}
	var prompt string
	for _, call := range env.LLM.ChatCalls() {
		if llmtest.SchemaName(*call.Chat) == "" {
			prompt = llmtest.LastUser(*call.Chat)
		}
	}
	facts := prompt[strings.Index(prompt, "<<<BEGIN FACTS>>>"):]
	if ids := testworld.PromptSources(prompt); len(ids) < 3 || ids[0] != "[S1]" || strings.Contains(facts, "http") {
		t.Fatalf("the correction prompt should name its sources by id, without URLs:\n%s", prompt)
	}
	got := c.Correction
	if !slices.Equal(got.URLs, []string{reuters, ap, bbc}) {
		t.Errorf("cited %q, want the Reuters, AP and BBC pages:\n%s", got.URLs, got.Text)
	}
	for _, want := range []string{"bicycles (" + reuters + ")", "as " + ap + " confirms", "BBC (" + bbc + ")"} {
		if !strings.Contains(got.Text, want) {
			t.Errorf("correction lacks %q:\n%s", want, got.Text)
		}
	}
	if strings.Contains(got.Text, "S12") || strings.Contains(got.Text, "[S") {
		t.Errorf("an id is left in the correction:\n%s", got.Text)
	}
	if !slices.ContainsFunc(got.Warnings, func(w string) bool { return strings.Contains(w, "source 12: not one of the evidence sources") }) {
		t.Errorf("no warning names the invented id: %q", got.Warnings)
	}
}

// TestCorrectionIDHabits: the usual ways chat models cite numbered
// sources, each through a whole check: the correction cites the Reuters and
// AP pages by URL and carries no id.
func TestCorrectionIDHabits(t *testing.T) {
	for name, cite := range map[string]string{
		"brackets":       "[S1][S2]",
		"one bracket":    "[S1, S2]",
		"numbers":        "[1], [2]",
		"parentheses":    "(S1; S2)",
		"bare":           "as S1 and S2 report",
		"words":          "as source 1 and source 2 report",
		"markdown":       "([Reuters](S1), [AP](S2))",
		"markdown url":   "[S1](https://www.reuters.com/made-up) [S2](https://apnews.com/made-up)",
		"source heading": "[Source 1] [Source 2]",
	} {
		t.Run(name, func(t *testing.T) {
			env := testworld.New(t, nil)
			env.Model.CorrectionReply = &llmtest.Reply{Text: "This post is false: the council has not banned bicycles " + cite + "."}
			c, err := env.Check(t, pipeline.Options{PageProxy: env.Proxy})
			if err != nil {
				t.Fatal(err)
			}
			want := []string{testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"]), testworld.PageURL("apnews.com", env.Pages["apnews.com"])}
			if got := c.Correction; !slices.Equal(got.URLs, want) || strings.Contains(got.Text, "S1") || strings.Contains(got.Text, "made-up") {
				t.Errorf("cited %q in %q, want %q", got.URLs, got.Text, want)
			}
		})
	}
}

// TestStreamedCorrectionShowsURLs: while the correction streams, each
// delta event carries the text so far as the finished correction will
// read, its ids already the URLs they name, so a preview never shows
// "[S1]" and then changes it.
// A link the guard removes (one a page injected: "More at …") is never
// shown, even mid-stream.
func TestStreamedCorrectionShowsURLs(t *testing.T) {
	env := testworld.New(t, nil)
	reuters := testworld.PageURL("www.reuters.com", env.Pages["www.reuters.com"])
	env.Model.CorrectionReply = &llmtest.Reply{Text: "This post is false: the council has not banned bicycles [S1]. More at http://evil.example/proof. It is widening a lane."}
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, pipeline.Options{PageProxy: env.Proxy})
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
	events := make(chan pipeline.Event, 64)
	var deltas []pipeline.Event
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			if ev.Kind == pipeline.EventTokenDelta {
				deltas = append(deltas, ev)
			}
		}
	}()
	err = e.Run(context.Background(), c, pipeline.StageImages, events)
	close(events)
	<-done
	if err != nil {
		t.Fatal(err)
	}
	if len(deltas) < 2 {
		t.Fatalf("%d delta events; the answer should stream in pieces", len(deltas))
	}
	var raw strings.Builder
	for _, ev := range deltas {
		raw.WriteString(ev.Delta)
	}
	last := deltas[len(deltas)-1].Text
	if !strings.Contains(raw.String(), "[S1]") || !strings.Contains(last, "bicycles ("+reuters+")") || strings.Contains(last, "[S1]") {
		t.Errorf("deltas %q; the last preview %q should read the URL where the model wrote [S1]", raw.String(), last)
	}
	if last != c.Correction.Text {
		t.Errorf("the last preview %q is not the finished correction %q", last, c.Correction.Text)
	}
	for _, ev := range deltas {
		if strings.Contains(ev.Text, "evil.example") {
			t.Fatalf("a preview shows the injected link: %q", ev.Text)
		}
	}
	if !strings.Contains(raw.String(), "evil.example") {
		t.Error("the model's answer did not carry the link: the test tests nothing")
	}
}
