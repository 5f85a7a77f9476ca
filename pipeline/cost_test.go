package pipeline_test

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm"
)

// countingCheck runs one check of the e2e post through NewFromConfig,
// collecting its events.
func countingCheck(t *testing.T, env *testworld.Env, o pipeline.Options) (*pipeline.Check, []pipeline.Event, error) {
	t.Helper()
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, Author: "City Rumours", Handle: "@cityrumours", PostedAt: testworld.Cutoff}, testworld.Cutoff)
	events := make(chan pipeline.Event)
	var got []pipeline.Event
	done := make(chan struct{})
	go func() {
		for ev := range events {
			got = append(got, ev)
		}
		close(done)
	}()
	err = e.Run(context.Background(), c, pipeline.StageImages, events)
	close(events)
	<-done
	return c, got, err
}

// An identical rerun of a whole check is served from the response cache:
// no model call reaches the server, and it costs nothing.
func TestCacheRerunIsFree(t *testing.T) {
	env := testworld.New(t, nil)
	env.Cfg.Model = "gpt-4o-mini" // priced, so a paid call would show
	// One evidence call at a time: with several in flight, which pages are
	// asked before two refute depends on timing, and so does the
	// correction's prompt — a different request, rightly not a cache hit.
	o := env.Options()
	o.EvidenceParallel = 1
	o.Snapshots = true
	first, events, err := countingCheck(t, env, o)
	if err != nil {
		t.Fatal(err)
	}
	for _, ev := range events {
		if (ev.Check == nil) != (ev.Kind == pipeline.EventTokenDelta) {
			t.Fatalf("%s event: snapshot %v", ev.Kind, ev.Check != nil)
		}
	}
	if last := events[len(events)-1]; last.Kind != pipeline.EventDone || last.Check.Correction.Text != first.Correction.Text {
		t.Errorf("the last event's snapshot is not the finished check")
	}
	if first.Usage.CostUSD <= 0 || first.Usage.CachedCalls != 0 {
		t.Fatalf("first run usage %+v, want paid calls", first.Usage)
	}
	// Per stage, and live: one usage event per model call, the last one
	// equal to the check's totals.
	for _, st := range []pipeline.Stage{pipeline.StageQueries, pipeline.StageEvidence, pipeline.StageCorrection} {
		if u := first.Usage.ByStage[string(st)]; u.LLMCalls == 0 || u.CostUSD <= 0 || u.PromptTokens == 0 {
			t.Errorf("stage %s usage %+v", st, u)
		}
	}
	var last pipeline.Usage
	n := 0
	for _, ev := range events {
		if ev.Kind == pipeline.EventUsage {
			n++
			last = ev.Item.(pipeline.Usage)
		}
	}
	if n != first.Usage.LLMCalls || last.CostUSD != first.Usage.CostUSD || last.LLMCalls != first.Usage.LLMCalls {
		t.Errorf("%d usage events, last %+v; check usage %+v", n, last, first.Usage)
	}
	for _, ev := range first.Events {
		if ev.Kind == pipeline.EventUsage {
			t.Fatal("usage events are kept in the check's log")
		}
	}

	chats := len(env.LLM.ChatCalls())
	second, _, err := countingCheck(t, env, o)
	if err != nil {
		t.Fatal(err)
	}
	if n := len(env.LLM.ChatCalls()) - chats; n != 0 {
		t.Errorf("the rerun sent %d model calls to the server, want 0", n)
	}
	if second.Usage.CostUSD != 0 || second.Usage.CachedCalls != second.Usage.LLMCalls || second.Usage.LLMCalls == 0 {
		t.Errorf("rerun usage %+v, want every call cached and free", second.Usage)
	}
	if second.Correction.Text != first.Correction.Text {
		t.Errorf("rerun correction %q, first %q", second.Correction.Text, first.Correction.Text)
	}

	// --no-cache goes to the server again.
	env.Cfg.NoCache = true
	third, _, err := countingCheck(t, env, o)
	if err != nil {
		t.Fatal(err)
	}
	if len(env.LLM.ChatCalls()) == chats || third.Usage.CachedCalls != 0 || third.Usage.CostUSD <= 0 {
		t.Errorf("with NoCache: usage %+v", third.Usage)
	}
}

// A spend cap stops the check before the call that would pass it: the
// call never reaches the server, the stage says which cap, and what was
// found before is kept.
func TestSpendCapStopsBeforeTheCall(t *testing.T) {
	for _, scope := range []string{"check", "day"} {
		t.Run(scope, func(t *testing.T) {
			env := testworld.New(t, nil)
			env.Cfg.Model = "gpt-4o" // $2.50 / $10 per million tokens
			env.Cfg.NoCache = true
			// The query call (≤400 completion tokens, ~$0.005) fits; an
			// evidence call (≤1,200 completion tokens, ≥$0.012) does not.
			if scope == "check" {
				env.Cfg.SpendCapCheckUSD = 0.01
			} else {
				env.Cfg.SpendCapDayUSD = 0.01
			}
			c, _, err := countingCheck(t, env, env.Options())
			if !errors.Is(err, llm.ErrSpendCap) {
				t.Fatalf("err = %v, want the spend cap", err)
			}
			if want := "spend cap of $0.01 per " + scope + " reached"; !strings.Contains(err.Error(), want) {
				t.Errorf("err %q does not say %q", err, want)
			}
			for _, call := range env.LLM.ChatCalls() {
				if name := callKind(*call.Chat); name != "queries" {
					t.Errorf("a %s call reached the server past the cap", name)
				}
			}
			if len(c.Queries) == 0 || len(c.Sources) == 0 || c.Usage.CostUSD <= 0 || c.Usage.CostUSD > 0.01 {
				t.Errorf("kept %d queries, %d sources, spent $%v", len(c.Queries), len(c.Sources), c.Usage.CostUSD)
			}
			var failed *pipeline.StageInfo
			for i := range c.Stages {
				if c.Stages[i].State == pipeline.StateFailed {
					failed = &c.Stages[i]
				}
			}
			if failed == nil || !strings.Contains(failed.Error, "spend cap of $0.01 per "+scope) {
				t.Errorf("stages %+v, want one failed on the cap", c.Stages)
			}
		})
	}
}
