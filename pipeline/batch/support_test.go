package batch

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// A batch judges each finished correction's support map in one call, as
// muse check does: the result line's check carries the model's
// judgement; a post whose judgement fails is still done, its sentences
// not judged.
func TestBatchJudgesSupport(t *testing.T) {
	env := testworld.New(t, nil)
	var calls atomic.Int32
	var fail atomic.Bool
	env.Model.Hook = func(req openai.ChatCompletionRequest) (llmtest.Reply, bool) {
		if llmtest.SchemaName(req) != "support" {
			return llmtest.Reply{}, false
		}
		calls.Add(1)
		if fail.Load() {
			return llmtest.Reply{Text: "I cannot help with that."}, true
		}
		ns := regexp.MustCompile(`<<<BEGIN SENTENCE (\d+)>>>`).FindAllStringSubmatch(llmtest.LastUser(req), -1)
		if len(ns) == 0 {
			return llmtest.Reply{Text: "{}"}, true
		}
		return llmtest.Reply{Text: fmt.Sprintf("```json\n{\"sentences\": [{\"n\": %s, \"status\": \"supported\", \"reason\": \"The quote says so.\"}]}\n```", ns[0][1])}, true
	}
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	line := fmt.Sprintf(`{"text": %q}`, testworld.Post)
	statuses := func(line string) map[string]int {
		var out bytes.Buffer
		if _, err := Run(context.Background(), e, strings.NewReader(line), &out, Options{Parallel: 1}); err != nil {
			t.Fatal(err)
		}
		var r struct {
			Status string `json:"status"`
			Check  struct {
				Support []pipeline.SentenceSupport `json:"support"`
			} `json:"check"`
		}
		if err := json.Unmarshal(out.Bytes(), &r); err != nil {
			t.Fatalf("%v: %s", err, out.String())
		}
		if r.Status != "done" {
			t.Fatalf("status %s", r.Status)
		}
		n := map[string]int{}
		for _, s := range r.Check.Support {
			n[s.Status]++
		}
		return n
	}
	if n := statuses(line); calls.Load() != 1 || n[pipeline.SupportSupported] != 1 {
		t.Errorf("%d support calls, statuses %v; want one call and one sentence supported", calls.Load(), n)
	}
	fail.Store(true) // another post: the response cache does not answer
	if n := statuses(`{"text":"Springfield mayor signed an order banning bicycles on Main Street","posted_at":"2024-02-01"}`); calls.Load() != 2 || n[pipeline.SupportSupported] != 0 || n[pipeline.SupportNotJudged] == 0 {
		t.Errorf("an unreadable judgement: %d calls, statuses %v; want sentences not judged", calls.Load(), n)
	}
}

// Kept (muse batch with cases, muse worker) keeps the judgements in the
// case, as muse check does.
func TestKeptCaseHoldsSupport(t *testing.T) {
	env := testworld.New(t, nil)
	env.Model.Hook = func(req openai.ChatCompletionRequest) (llmtest.Reply, bool) {
		if llmtest.SchemaName(req) != "support" {
			return llmtest.Reply{}, false
		}
		ns := regexp.MustCompile(`<<<BEGIN SENTENCE (\d+)>>>`).FindAllStringSubmatch(llmtest.LastUser(req), -1)
		if len(ns) == 0 {
			return llmtest.Reply{Text: "{}"}, true
		}
		return llmtest.Reply{Text: fmt.Sprintf(`{"sentences": [{"n": %s, "status": "partly", "reason": "Only half of it is quoted."}]}`, ns[0][1])}, true
	}
	e, st := engineAndCases(t, env, env.Options())
	c := e.NewCheck(pipeline.Post{Text: testworld.Post}, time.Time{})
	if err := Kept(e, cases.RecordOptions{Store: st})(context.Background(), c, pipeline.StageImages); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(context.Background(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, s := range got.SupportMap() {
		if s.Status == pipeline.SupportPartly {
			n++
		}
	}
	if len(got.SupportJudgements) == 0 || n != 1 {
		t.Errorf("the kept case's support map: %d judgements, %d sentences partly supported", len(got.SupportJudgements), n)
	}
}

// doneSaveWaits is a case store whose save of a finished run (its done
// event logged) waits until asked stops blocking, so a test can see what
// runs beside that save.
type doneSaveWaits struct {
	*cases.Store
	asked chan struct{} // closed when the support map's judgement is asked
	late  atomic.Bool   // a finished run's save waited 10 s in vain
}

func (s *doneSaveWaits) Save(ctx context.Context, c *pipeline.Check) error {
	if slices.ContainsFunc(c.Events, func(ev pipeline.Event) bool { return ev.Kind == pipeline.EventDone }) {
		select {
		case <-s.asked:
		case <-time.After(10 * time.Second):
			s.late.Store(true)
		}
	}
	return s.Store.Save(ctx, c)
}

// Kept asks the support map's judgement as soon as the run ends, beside
// the case's last writes rather than after them: the save of the finished
// run waits for the judgement to be asked, and does not wait in vain.
func TestKeptJudgesSupportBesideTheLastSaves(t *testing.T) {
	env := testworld.New(t, nil)
	asked := make(chan struct{})
	var once sync.Once
	env.Model.Hook = func(req openai.ChatCompletionRequest) (llmtest.Reply, bool) {
		if llmtest.SchemaName(req) != "support" {
			return llmtest.Reply{}, false
		}
		once.Do(func() { close(asked) })
		return llmtest.Reply{Text: "{}"}, true
	}
	o := env.Options()
	o.Snapshots = true
	e, st := engineAndCases(t, env, o)
	store := &doneSaveWaits{Store: st, asked: asked}
	c := e.NewCheck(pipeline.Post{Text: testworld.Post}, time.Time{})
	if err := Kept(e, cases.RecordOptions{Store: store})(context.Background(), c, pipeline.StageImages); err != nil {
		t.Fatal(err)
	}
	select {
	case <-asked:
	default:
		t.Fatal("the support map's judgement was never asked")
	}
	if store.late.Load() {
		t.Error("the finished run's save waited for a judgement asked only after it")
	}
}

// engineAndCases is the world's engine with the options o and a case
// store in a temporary directory, both closed at the test's end.
func engineAndCases(t *testing.T, env *testworld.Env, o pipeline.Options) (*pipeline.Engine, *cases.Store) {
	t.Helper()
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { closeFn() })
	st, err := cases.Open(context.Background(), filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return e, st
}
