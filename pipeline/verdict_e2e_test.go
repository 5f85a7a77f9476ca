package pipeline_test

import (
	"context"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
)

// TestVerdictWorlds checks posts that are true, false, half true, false
// twice over, disputed and unverifiable, each against the rated pages a
// search finds for it, with a model that follows muse's prompts and
// decides from the page text: each reaches its verdict, per claim and for
// the post, and a correction that says so.
func TestVerdictWorlds(t *testing.T) {
	worlds := testworld.VerdictWorlds()
	for _, tc := range []struct {
		world  string
		post   pipeline.Verdict
		claims []pipeline.Verdict
		opens  string // the correction's opening
		cites  bool
	}{
		{"true", pipeline.VerdictSupported, []pipeline.Verdict{pipeline.VerdictSupported}, "This post is accurate:", true},
		{"false", pipeline.VerdictRefuted, []pipeline.Verdict{pipeline.VerdictRefuted}, "This post is false:", true},
		{"mixed", pipeline.VerdictMisleading, []pipeline.Verdict{pipeline.VerdictSupported, pipeline.VerdictRefuted}, "This post is misleading:", true},
		{"two-false", pipeline.VerdictRefuted, []pipeline.Verdict{pipeline.VerdictRefuted, pipeline.VerdictRefuted}, "This post is false:", true},
		{"disputed", pipeline.VerdictConflicting, []pipeline.Verdict{pipeline.VerdictConflicting}, "This post is disputed:", true},
		{"unverifiable", pipeline.VerdictNotEnough, []pipeline.Verdict{pipeline.VerdictNotEnough}, pipeline.NoSourceText, false},
	} {
		t.Run(tc.world, func(t *testing.T) {
			w := worlds[tc.world]
			env, _ := testworld.NewVerdictWorld(t, w)
			c, err := env.CheckVerdictPost(t, w.Post)
			if err != nil {
				t.Fatal(err)
			}
			v := c.Verdicts()
			if v.Post != tc.post || len(v.Claims) != len(tc.claims) {
				t.Fatalf("verdict %s (by %s) with %d claims, want %s with %d; evidence %+v", v.Post, v.By, len(v.Claims), tc.post, len(tc.claims), c.Evidence)
			}
			for i, cv := range v.Claims {
				if cv.Verdict != tc.claims[i] {
					t.Errorf("claim %d %q: %s, want %s", i+1, cv.Text, cv.Verdict, tc.claims[i])
				}
				if tc.cites && len(cv.Quotes) == 0 {
					t.Errorf("claim %d has no quotes", i+1)
				}
			}
			t.Logf("%s: %s by %s; %q", tc.world, v.Post, v.By, c.Correction.Text)
			text := c.Correction.Text
			if !strings.HasPrefix(text, tc.opens) {
				t.Errorf("correction %q, want it to open %q", text, tc.opens)
			}
			if tc.cites != (len(c.Correction.URLs) > 0) {
				t.Errorf("correction cites %v", c.Correction.URLs)
			}
			if tc.cites && (strings.Contains(text, "No credible source") || c.Correction.Unsourced()) {
				t.Errorf("pages bear on the post, yet the correction is %q", text)
			}
			if a := c.Account(); tc.post == pipeline.VerdictSupported && (!strings.Contains(a.Summary, "confirm the post") || a.Conclusion != pipeline.ConclusionEvidence) {
				t.Errorf("the accounting of a confirmed post: %s (%s)", a.Summary, a.Conclusion)
			}
		})
	}
}

// TestVerdictKeptAndDerived: a verdict the checker set survives a rerun
// of the evidence and correction; one derived from the evidence follows
// the evidence as it is now.
func TestVerdictKeptAndDerived(t *testing.T) {
	e, c, _ := checkVerdictWorld(t, "true", nil)
	if v := c.Verdicts(); v.Post != pipeline.VerdictSupported {
		t.Fatalf("verdict %s", v.Post)
	}
	// The person unticks every confirming quote: nothing is left to
	// confirm the post, and the verdict says so at once.
	for i := range c.Evidence {
		c.Evidence[i].Included = false
	}
	if v := c.Verdicts(); v.Post != pipeline.VerdictNotEnough || v.By != pipeline.VerdictByEvidence {
		t.Fatalf("with every quote unticked: %s by %s", v.Post, v.By)
	}
	for i := range c.Evidence {
		c.Evidence[i].Included = true
	}
	c.CheckerVerdict = pipeline.VerdictMisleading
	if err := e.Run(context.Background(), c, pipeline.StageEvidence, nil); err != nil {
		t.Fatal(err)
	}
	if v := c.Verdicts(); v.Post != pipeline.VerdictMisleading || v.By != pipeline.VerdictByChecker || c.CheckerVerdict != pipeline.VerdictMisleading {
		t.Fatalf("after a rerun: %s by %s, checker's %q", v.Post, v.By, c.CheckerVerdict)
	}
	out := c.ForOutput()
	if out.Verdict == nil || out.Verdict.Post != pipeline.VerdictMisleading || len(out.Verdict.Claims) != 1 || len(out.Verdict.Claims[0].Quotes) == 0 {
		t.Fatalf("output verdict %+v", out.Verdict)
	}
	if c.Verdict != nil {
		t.Error("the engine's Check carries a stored verdict")
	}
}

// TestStopRuleByVerdict: reading one page at a time, evidence stops once
// two independent pages agree on the claim, and keeps reading while they
// disagree.
func TestStopRuleByVerdict(t *testing.T) {
	for _, tc := range []struct {
		world string
		read  int // pages sent to the model
	}{
		{"true", 2},     // three confirm; the third is not needed
		{"disputed", 2}, // one confirms, one refutes: both are read, and nothing stops early
	} {
		t.Run(tc.world, func(t *testing.T) {
			_, c, w := checkVerdictWorld(t, tc.world, func(o *pipeline.Options) { o.EvidenceParallel, o.EvidenceBatch = 1, 1 })
			read, notNeeded := 0, 0
			for _, s := range c.Sources {
				switch {
				case s.Status == pipeline.StatusUsed:
					read++
				case strings.Contains(s.Reason, "enough pages had already agreed"):
					notNeeded++
				}
			}
			if read != tc.read || notNeeded != len(w.Pages)-tc.read {
				t.Errorf("%d pages used, %d not needed; want %d and %d: %+v", read, notNeeded, tc.read, len(w.Pages)-tc.read, c.Sources)
			}
		})
	}
}

// checkVerdictWorld checks the post of the named verdict world with an
// engine of its own (options changed by opt, when given), which stays
// open for reruns until the test ends.
func checkVerdictWorld(t *testing.T, name string, opt func(*pipeline.Options)) (*pipeline.Engine, *pipeline.Check, testworld.VerdictWorld) {
	t.Helper()
	w := testworld.VerdictWorlds()[name]
	env, _ := testworld.NewVerdictWorld(t, w)
	opts := env.Options()
	if opt != nil {
		opt(&opts)
	}
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = closeFn() })
	c := e.NewCheck(pipeline.Post{Text: w.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
	if err := e.Run(context.Background(), c, pipeline.StageImages, nil); err != nil {
		t.Fatal(err)
	}
	return e, c, w
}
