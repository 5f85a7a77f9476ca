package batch

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// A queued batch is finished by two workers, each post checked once, and
// its results read back in line order.
func TestQueuedBatchCheckedOnce(t *testing.T) {
	ctx := context.Background()
	env := testworld.New(t, nil)
	path := filepath.Join(t.TempDir(), "queue.db")
	open := func() *jobs.Queue {
		q, err := jobs.Open(ctx, jobs.Options{Path: path})
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(q.Close)
		return q
	}
	var in strings.Builder
	for i, suffix := range []string{"", " Share this!", " Wake up people.", ""} { // the last repeats the first
		p := Post{Text: testworld.Post + suffix, Author: "City Rumours", PostedAt: testworld.Cutoff}
		b, _ := json.Marshal(p)
		fmt.Fprintf(&in, "%s\n", b)
		if i == 1 {
			in.WriteString("{not json\n")
		}
	}
	enq, err := Enqueue(ctx, open(), strings.NewReader(in.String()), "test-model", CheckOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if enq.Posts != 4 || enq.Duplicates != 1 || len(enq.Bad) != 1 || !strings.Contains(enq.Bad[0], "line 3: not a JSON post") {
		t.Fatalf("enqueued %+v", enq)
	}

	wctx, stop := context.WithCancel(ctx)
	var wg sync.WaitGroup
	for range 2 {
		e, closeFn, err := setup.NewFromConfig(ctx, env.Cfg, env.Options())
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { closeFn() })
		q := open()
		wg.Go(func() {
			same := func(context.Context, CheckOptions) (*pipeline.Engine, RunFunc, error) { return e, nil, nil }
			if err := Work(wctx, q, same, WorkOptions{Parallel: 2, Grace: 5 * time.Second}); err != nil {
				t.Error(err)
			}
		})
	}
	watch := open()
	deadline := time.Now().Add(60 * time.Second)
	var st jobs.Status
	for {
		if st, err = watch.BatchStatus(ctx, enq.BatchID); err != nil {
			t.Fatal(err)
		}
		if st.Queued+st.Running == 0 || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	stop()
	wg.Wait()
	if st.Done != 4 {
		t.Fatalf("status %+v, want 4 done", st)
	}
	queries := 0
	for _, c := range env.LLM.ChatCalls() {
		if llmtest.SchemaName(*c.Chat) == "queries" {
			queries++
		}
	}
	if queries != 3 {
		t.Errorf("%d query calls for 3 distinct posts: a post was checked more than once or not at all", queries)
	}
	rs, err := watch.Results(ctx, enq.BatchID)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range rs {
		var res Result
		if err := json.Unmarshal(r.Output, &res); err != nil || res.Status != "done" || res.Check == nil ||
			!strings.HasPrefix(res.Check.Correction.Text, "This post is") {
			t.Errorf("line %d: %s (%v)", r.Line, r.Output, err)
		}
	}
}

// queueWorld is a loopback world whose model answers through hook first
// (nil: as the world's faithful model does), with a queue file and a case
// store for the workers.
type queueWorld struct {
	env   *testworld.Env
	llm   *llmtest.Server
	path  string
	store *cases.Store
	// kept runs the checks as muse worker does (Kept: the support map
	// judged too) rather than with cases.Record alone.
	kept bool
}

func newQueueWorld(t *testing.T, hook func(req openai.ChatCompletionRequest) (*llmtest.Reply, error)) *queueWorld {
	t.Helper()
	env := testworld.New(t, nil)
	srv := llmtest.NewReplyServer(t, func(req openai.ChatCompletionRequest) (llmtest.Reply, error) {
		if rep, err := hook(req); rep != nil || err != nil {
			if rep == nil {
				return llmtest.Reply{}, err
			}
			return *rep, err
		}
		return env.Model.Handle(req)
	})
	env.Cfg.OpenAIBaseURL = srv.BaseURL
	env.Cfg.NoCache = true // a model call made again must reach the model, to be counted
	dir := t.TempDir()
	st, err := cases.Open(context.Background(), filepath.Join(dir, "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { st.Close() })
	return &queueWorld{env: env, llm: srv, path: filepath.Join(dir, "queue.db"), store: st}
}

func (w *queueWorld) open(t *testing.T) *jobs.Queue {
	t.Helper()
	q, err := jobs.Open(context.Background(), jobs.Options{Path: w.path})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return q
}

// enqueue queues one post per suffix of the world's post.
func (w *queueWorld) enqueue(t *testing.T, suffixes ...string) string {
	return w.enqueueWith(t, CheckOptions{}, suffixes...)
}

// enqueueWith queues one post per suffix, to be checked with co.
func (w *queueWorld) enqueueWith(t *testing.T, co CheckOptions, suffixes ...string) string {
	t.Helper()
	var in strings.Builder
	for _, s := range suffixes {
		b, _ := json.Marshal(Post{Text: testworld.Post + s, PostedAt: testworld.Cutoff})
		fmt.Fprintf(&in, "%s\n", b)
	}
	enq, err := Enqueue(context.Background(), w.open(t), strings.NewReader(in.String()), "test-model", co)
	if err != nil {
		t.Fatal(err)
	}
	return enq.BatchID
}

// work runs one worker keeping every check as a case, as `muse worker`
// does, until the batch has nothing queued or running.
func (w *queueWorld) work(t *testing.T, batchID string, opts pipeline.Options) []jobs.Result {
	t.Helper()
	return w.workAs(t, batchID, opts, WorkOptions{Parallel: 2, Grace: 5 * time.Second, Cases: w.store})
}

// workAs is work by a worker with the options wo.
func (w *queueWorld) workAs(t *testing.T, batchID string, opts pipeline.Options, wo WorkOptions) []jobs.Result {
	t.Helper()
	ctx, stop := context.WithCancel(context.Background())
	engines, closeAll := EnginesFor(func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, func() error, error) {
		o := w.env.Options()
		o.Snapshots = true
		o.LLMTimeout = opts.LLMTimeout
		e, closeFn, err := setup.NewFromConfig(ctx, w.env.Cfg, co.Apply(o))
		if err != nil {
			return nil, nil, nil, err
		}
		run := func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error {
			return cases.Record(ctx, e, c, from, cases.RecordOptions{Store: w.store})
		}
		if w.kept {
			run = Kept(e, cases.RecordOptions{Store: w.store})
		}
		return e, run, closeFn, nil
	})
	defer closeAll()
	done := make(chan error, 1)
	go func() {
		done <- Work(ctx, w.open(t), engines, wo)
	}()
	defer func() {
		stop()
		if err := <-done; err != nil {
			t.Error(err)
		}
	}()
	watch := w.open(t)
	for deadline := time.Now().Add(90 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		st, err := watch.BatchStatus(context.Background(), batchID)
		if err != nil {
			t.Fatal(err)
		}
		if st.Queued+st.Running == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch not finished in time: %+v", st)
		}
	}
	rs, err := watch.Results(context.Background(), batchID)
	if err != nil {
		t.Fatal(err)
	}
	return rs
}

// callsFor counts the model's chat requests per task for the posts whose
// text holds tag ("": every post).
func (w *queueWorld) callsFor(tag string) map[string]int {
	n := map[string]int{}
	for _, c := range w.llm.ChatCalls() {
		if strings.Contains(llmtest.AllText(*c.Chat), tag) {
			n[task(*c.Chat)]++
		}
	}
	return n
}

// task names a chat request's task by its schema; the correction has none.
func task(req openai.ChatCompletionRequest) string {
	return cmp.Or(llmtest.SchemaName(req), "correction")
}

// A job whose check fails on a model that keeps answering 503 is retried
// by the queue, and the retry resumes the saved case from the stage that
// failed: the queries and evidence calls already answered are not made
// again.
func TestRetriedJobResumesItsCase(t *testing.T) {
	var mu sync.Mutex
	failures, atFailure := 0, map[string]int{}
	var w *queueWorld
	w = newQueueWorld(t, func(req openai.ChatCompletionRequest) (*llmtest.Reply, error) {
		if task(req) != "correction" {
			return nil, nil
		}
		mu.Lock()
		defer mu.Unlock()
		if failures++; failures <= 1+llm.DefaultMaxRetries { // every try of the first attempt's call
			if failures == 1 {
				atFailure = w.callsFor("")
			}
			return nil, &llmtest.Error{Status: 503, Type: "server_error", Message: "The server is overloaded, please try again later."}
		}
		return nil, nil
	})
	id := w.enqueue(t, "")
	rs := w.work(t, id, pipeline.Options{})
	if len(rs) != 1 || rs[0].State != jobs.Done || rs[0].Tries != 2 {
		t.Fatalf("%d results (the first %s after %d tries, %q), want done on the second attempt", len(rs), rs[0].State, rs[0].Tries, rs[0].Error)
	}
	got := w.callsFor("")
	if got["queries"] != 1 || got["evidence"] != atFailure["evidence"] || got["evidence"] == 0 {
		t.Errorf("model calls %v (before the failure %v): the retry did not resume the saved case", got, atFailure)
	}
	if want := 1 + llm.DefaultMaxRetries + 1; got["correction"] != want {
		t.Errorf("%d correction calls, want %d (the failed attempt's tries and one more)", got["correction"], want)
	}
	var res Result
	if err := json.Unmarshal(rs[0].Output, &res); err != nil || res.Check == nil {
		t.Fatalf("output %s (%v)", rs[0].Output, err)
	}
	saved, err := w.store.Get(context.Background(), res.Check.ID)
	if err != nil {
		t.Fatalf("the check is not kept under its case ID: %v", err)
	}
	if !strings.HasPrefix(saved.Correction.Text, "This post is") || saved.Usage.LLMCalls < 3 {
		t.Errorf("the kept case: correction %q, %d model calls", saved.Correction.Text, saved.Usage.LLMCalls)
	}
}

// Through the queue, a model that is rate limited or too slow makes the
// job retry (after sources/llm's own retries) and finish; a request the
// model refuses for good fails the job at once, with the model's reason.
func TestTransientAndPermanentFailuresThroughTheQueue(t *testing.T) {
	var mu sync.Mutex
	seen := map[string]int{}
	w := newQueueWorld(t, func(req openai.ChatCompletionRequest) (*llmtest.Reply, error) {
		if task(req) != "queries" {
			return nil, nil
		}
		text := llmtest.AllText(req)
		mu.Lock()
		defer mu.Unlock()
		for _, tag := range []string{"#limited", "#slow", "#refused"} {
			if !strings.Contains(text, tag) {
				continue
			}
			seen[tag]++
			switch {
			case tag == "#refused":
				return nil, &llmtest.Error{Status: 400, Type: "invalid_request_error", Code: "content_policy_violation",
					Message: "Your request was rejected as a result of our safety system."}
			case seen[tag] > 1+llm.DefaultMaxRetries: // the job's second attempt
				return nil, nil
			case tag == "#limited":
				return nil, llmtest.ErrRateLimit
			default:
				return &llmtest.Reply{Delay: 5 * time.Second}, nil
			}
		}
		return nil, nil
	})
	id := w.enqueue(t, " #limited", " #slow", " #refused")
	rs := w.work(t, id, pipeline.Options{LLMTimeout: 1500 * time.Millisecond})
	if len(rs) != 3 {
		t.Fatalf("%d results", len(rs))
	}
	for i, tag := range []string{"limited", "slow"} {
		if r := rs[i]; r.State != jobs.Done || r.Tries != 2 {
			t.Errorf("#%s: %s after %d attempts (%s), want done on the second", tag, r.State, r.Tries, r.Error)
		}
	}
	if r := rs[2]; r.State != jobs.Failed || r.Tries != 1 || !strings.Contains(r.Error, "safety system") {
		t.Errorf("#refused: %s after %d attempts, error %q; want failed at once with the model's reason", r.State, r.Tries, r.Error)
	}
	if seen["#refused"] != 1 {
		t.Errorf("the refused request was sent %d times", seen["#refused"])
	}
}

// A worker stopped while the support map's judgement is in flight (its
// grace spent) releases the job; the worker that takes it next finds every
// stage done in the case and asks for the judgement alone: one support
// call, no other, and the result and the case hold the judgement.
func TestJobStoppedInTheSupportJudgementIsJudgedOnRetry(t *testing.T) {
	inSupport, release := make(chan struct{}), make(chan struct{})
	var once sync.Once
	var mu sync.Mutex
	blocked := true
	w := newQueueWorld(t, func(req openai.ChatCompletionRequest) (*llmtest.Reply, error) {
		if task(req) != "support" {
			return nil, nil
		}
		mu.Lock()
		block := blocked
		mu.Unlock()
		if block {
			once.Do(func() { close(inSupport) })
			<-release
			return nil, &llmtest.Error{Status: 503, Type: "server_error", Message: "gone"}
		}
		ns := regexp.MustCompile(`<<<BEGIN SENTENCE (\d+)>>>`).FindAllStringSubmatch(llmtest.LastUser(req), -1)
		if len(ns) == 0 {
			return &llmtest.Reply{Text: "{}"}, nil
		}
		return &llmtest.Reply{Text: fmt.Sprintf(`{"sentences": [{"n": %s, "status": "supported", "reason": "The quote says so."}]}`, ns[0][1])}, nil
	})
	t.Cleanup(func() { close(release) })
	w.kept = true
	id := w.enqueue(t, "")
	wo := WorkOptions{Parallel: 1, Grace: 100 * time.Millisecond, Cases: w.store}
	ctx, stop := context.WithCancel(context.Background())
	engines, closeAll := EnginesFor(func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, func() error, error) {
		o := w.env.Options()
		o.Snapshots = true
		e, closeFn, err := setup.NewFromConfig(ctx, w.env.Cfg, co.Apply(o))
		if err != nil {
			return nil, nil, nil, err
		}
		return e, Kept(e, cases.RecordOptions{Store: w.store}), closeFn, nil
	})
	done := make(chan error, 1)
	go func() { done <- Work(ctx, w.open(t), engines, wo) }()
	select {
	case <-inSupport:
	case <-time.After(60 * time.Second):
		t.Fatal("the support map's judgement was never asked")
	}
	atStop := w.callsFor("")
	stop() // the grace is spent while the judgement is in flight
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	closeAll()
	mu.Lock()
	blocked = false
	mu.Unlock()
	rs := w.work(t, id, pipeline.Options{})
	if len(rs) != 1 || rs[0].State != jobs.Done {
		t.Fatalf("%d results (the first %s, %q), want the job done", len(rs), rs[0].State, rs[0].Error)
	}
	got := w.callsFor("")
	for _, k := range []string{"queries", "evidence", "correction"} {
		if got[k] != atStop[k] {
			t.Errorf("%s calls: %d at the stop, %d after; want none again", k, atStop[k], got[k])
		}
	}
	if got["support"] != atStop["support"]+1 {
		t.Errorf("support calls: %d at the stop, %d after; want one more", atStop["support"], got["support"])
	}
	var res Result
	if err := json.Unmarshal(rs[0].Output, &res); err != nil || res.Check == nil {
		t.Fatalf("output %s (%v)", rs[0].Output, err)
	}
	saved, err := w.store.Get(context.Background(), res.Check.ID)
	if err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*pipeline.Check{"the result": res.Check, "the case": saved} {
		n := 0
		for _, s := range c.SupportMap() {
			if s.Status == pipeline.SupportSupported {
				n++
			}
		}
		if n == 0 {
			t.Errorf("%s: no sentence judged supported (%d judgements)", name, len(c.SupportJudgements))
		}
	}
}

// A job's case ID is the same on every attempt and differs between jobs;
// resume picks up a saved case where it stopped, passes over a finished
// one, and checks afresh when the case holds another post.
func TestResumeFromTheJobsCase(t *testing.T) {
	ctx := context.Background()
	w := newQueueWorld(t, func(openai.ChatCompletionRequest) (*llmtest.Reply, error) { return nil, nil })
	e, closeFn, err := setup.NewFromConfig(ctx, w.env.Cfg, w.env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	queued := time.Date(2026, 12, 1, 9, 0, 0, 0, time.UTC)
	job := func(id int64) jobs.Job {
		return jobs.Job{ID: id, Key: "k", CreatedAt: queued, Attempt: 1}
	}
	j := job(7)
	again := j
	again.Attempt = 3
	if CaseID(j) != CaseID(again) || CaseID(j) == CaseID(job(8)) || !regexp.MustCompile(`^[0-9a-hjkmnp-tv-z]{16}$`).MatchString(CaseID(j)) {
		t.Errorf("case IDs %q (again %q, another job %q)", CaseID(j), CaseID(again), CaseID(job(8)))
	}
	p := Post{Text: testworld.Post}
	c, from, err := resume(ctx, w.store, e, j, p)
	if err != nil || from != pipeline.StageImages || c.ID != CaseID(j) {
		t.Fatalf("nothing saved: from %q, ID %q (%v)", from, c.ID, err)
	}
	c.Queries = []pipeline.Query{{Text: "Springfield bicycle ban", Origin: pipeline.OriginModel, Enabled: true}}
	for _, st := range pipeline.Stages {
		state := pipeline.StateWaiting
		switch st {
		case pipeline.StageImages:
			state = pipeline.StateSkipped
		case pipeline.StageQueries:
			state = pipeline.StateDone
		case pipeline.StageSearch:
			state = pipeline.StateRunning
		}
		c.Stages = append(c.Stages, pipeline.StageInfo{Stage: st, State: state})
	}
	if err := w.store.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	got, from, err := resume(ctx, w.store, e, again, p)
	if err != nil || from != pipeline.StageSearch || len(got.Queries) != 1 {
		t.Fatalf("killed in the search: from %q, queries %v (%v)", from, got.Queries, err)
	}
	for i := range c.Stages {
		c.Stages[i].State = pipeline.StateDone
	}
	w.store.Save(ctx, c)
	if _, from, err := resume(ctx, w.store, e, again, p); err != nil || from != "" {
		t.Errorf("every stage done: from %q (%v), want nothing to run", from, err)
	}
	fresh, from, err := resume(ctx, w.store, e, again, Post{Text: "another post"})
	if err != nil || from != pipeline.StageImages || fresh.ID == CaseID(j) || len(fresh.Queries) != 0 {
		t.Errorf("a case of another post: from %q, ID %q, queries %v (%v)", from, fresh.ID, fresh.Queries, err)
	}
}

// A queued job is checked with the options it was queued with, each set
// of options on an engine of its own: --hits 1 asks one hit per query of
// the search, --correction-language es has the correction written in
// Spanish, --no-llm calls no model; a job queued without options is
// checked with the worker's defaults.
func TestQueuedJobCheckedWithItsOptions(t *testing.T) {
	w := newQueueWorld(t, func(openai.ChatCompletionRequest) (*llmtest.Reply, error) { return nil, nil })
	ids := []string{
		w.enqueueWith(t, CheckOptions{Hits: 1, CorrectionLanguage: "es"}, ""),
		w.enqueueWith(t, CheckOptions{NoLLM: true}, " Share!"),
		w.enqueue(t, " RT"),
	}
	var checks []*pipeline.Check
	for _, id := range ids {
		rs := w.work(t, id, pipeline.Options{})
		var res Result
		if len(rs) != 1 || rs[0].State != jobs.Done || json.Unmarshal(rs[0].Output, &res) != nil || res.Check == nil {
			t.Fatalf("batch %s: %+v", id, rs)
		}
		checks = append(checks, res.Check)
	}
	if n := testworld.MostHitsPerQuery(checks[0]); n != 1 {
		t.Errorf("--hits 1: up to %d hits of one query from one provider", n)
	}
	if n := testworld.MostHitsPerQuery(checks[2]); n < 2 {
		t.Errorf("defaults: up to %d hits of one query from one provider, want the world's 4", n)
	}
	if !checks[1].NoLLM || checks[1].Usage.LLMCalls != 0 || checks[0].NoLLM || checks[2].NoLLM {
		t.Errorf("no_llm %t/%t/%t, model calls of the --no-llm job %d", checks[0].NoLLM, checks[1].NoLLM, checks[2].NoLLM, checks[1].Usage.LLMCalls)
	}
	// The world's model writes English whatever it is asked, so muse asks
	// for the Spanish correction once more (and then warns).
	if spanish, other := testworld.CorrectionsIn(w.llm, "Spanish (es)"); spanish != 2 || other != 1 {
		t.Errorf("correction calls: %d asking for Spanish, %d not; want 2 and 1", spanish, other)
	}
}

// A worker with no model configured checks the posts queued with --no-llm
// in the extractive mode and leaves a post queued to be checked with a
// model where it is, untried, for a worker that has one.
func TestQueuedJobNeedingAModelOnAWorkerWithout(t *testing.T) {
	w := newQueueWorld(t, func(openai.ChatCompletionRequest) (*llmtest.Reply, error) { return nil, nil })
	needs := w.enqueue(t, "")
	extractive := w.enqueueWith(t, CheckOptions{NoLLM: true}, " Share!")
	withModel := *w.env.Cfg
	w.env.Cfg.OpenAIBaseURL, w.env.Cfg.OpenAIAPIKey, w.env.Cfg.Model = "", "", ""
	w.env.Cfg.OllamaURL = "http://127.0.0.1:1" // no Ollama either

	rs := w.workAs(t, extractive, pipeline.Options{}, WorkOptions{Parallel: 2, Grace: 5 * time.Second, Cases: w.store, NoModel: true})
	var res Result
	if len(rs) != 1 || rs[0].State != jobs.Done || json.Unmarshal(rs[0].Output, &res) != nil || res.Check == nil || !res.Check.NoLLM {
		t.Fatalf("the --no-llm job: %+v", rs)
	}
	if n := len(w.llm.ChatCalls()); n != 0 {
		t.Errorf("%d model calls", n)
	}
	rs, err := w.open(t).Results(context.Background(), needs)
	if err != nil {
		t.Fatal(err)
	}
	if len(rs) != 1 || rs[0].State != jobs.Queued || rs[0].Tries != 0 {
		t.Fatalf("the job needing a model, after the model-less worker: %+v; want queued, untried", rs)
	}

	*w.env.Cfg = withModel
	rs = w.work(t, needs, pipeline.Options{})
	res = Result{}
	if len(rs) != 1 || rs[0].State != jobs.Done || json.Unmarshal(rs[0].Output, &res) != nil || res.Check == nil || res.Check.NoLLM {
		t.Fatalf("the job needing a model, on a worker with one: %+v", rs)
	}
	if len(w.llm.ChatCalls()) == 0 {
		t.Error("checked with a model, yet no model call")
	}
}
