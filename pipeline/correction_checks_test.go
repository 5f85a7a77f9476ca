package pipeline_test

import (
	"net/http"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// frenchCorrection is a correction written in French when English was asked.
const frenchCorrection = "Ce message est faux. Le conseil municipal de Springfield n'a jamais interdit les vélos : " +
	"selon Reuters, qui a vérifié la décision et parlé avec les élus de la ville cette semaine, la règle ne concerne que les trottoirs."

// TestCorrectionChecks: the correction stage checks what the model wrote,
// through the engine against the loopback world: a refusal streamed as the
// answer ("I'm sorry, but I can't help with that.") is not kept as the
// correction and the stage fails saying so; a correction in another
// language than asked is asked for once more, and when it stays so the
// correction says which language it is in.
func TestCorrectionChecks(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name     string
		answer   func(n int) http.HandlerFunc // the n-th correction call's answer; nil: the world's model
		calls    int32
		fails    bool
		text     []string // words the correction keeps
		warnings []string
	}{
		{name: "refusal", answer: func(int) http.HandlerFunc {
			return llmtest.StreamAnswer("I'm sorry, but I can't help with that.", false)
		},
			calls: 1, fails: true, warnings: []string{"declined", "no correction is kept"}},
		{name: "French once, then English", answer: func(n int) http.HandlerFunc {
			if n == 1 {
				return llmtest.StreamAnswer(frenchCorrection, false)
			}
			return nil
		}, calls: 2, text: []string{"This post is false"}},
		{name: "French twice", answer: func(int) http.HandlerFunc { return llmtest.StreamAnswer(frenchCorrection, false) },
			calls: 2, text: []string{"Ce message est faux"}, warnings: []string{"written in French, not English as asked"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			var calls atomic.Int32
			fe.llmFault = func(kind string, _ int, w http.ResponseWriter, r *http.Request) bool {
				if kind != "correction" {
					return false
				}
				if h := row.answer(int(calls.Add(1))); h != nil {
					h(w, r)
					return true
				}
				return false
			}
			o := fe.opts()
			o.CorrectionLanguage = "en"
			c, err := fe.run(t, o, testworld.Post)
			if (err != nil) != row.fails {
				t.Fatalf("run error %v, want failure %v", err, row.fails)
			}
			if n := calls.Load(); n != row.calls {
				t.Errorf("%d correction calls, want %d", n, row.calls)
			}
			if row.fails && (c.Correction.Text != "" || c.Stage(pipeline.StageCorrection).State != pipeline.StateFailed) {
				t.Errorf("correction %q, stage %+v: a refusal kept as the correction", c.Correction.Text, c.Stage(pipeline.StageCorrection))
			}
			wantContains(t, "correction", c.Correction.Text, row.text...)
			wantContains(t, "warnings", strings.Join(c.Correction.Warnings, "\n"), row.warnings...)
			if !row.fails && len(row.warnings) == 0 && strings.Contains(strings.Join(c.Correction.Warnings, "\n"), "written in") {
				t.Errorf("a language warning although the second answer was English: %q", c.Correction.Warnings)
			}
		})
	}
}
