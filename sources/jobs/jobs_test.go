package jobs

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/riverqueue/river"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// engines runs a test on the SQLite queue and, when a test cluster is
// configured, on PostgreSQL.
func engines(t *testing.T, test func(t *testing.T, open func() *Queue)) {
	t.Run("sqlite", func(t *testing.T) {
		path := filepath.Join(t.TempDir(), "queue.db")
		test(t, func() *Queue { return mustOpen(t, Options{Path: path}) })
	})
	t.Run("postgres", func(t *testing.T) {
		url := pgdbtest.Fresh(t)
		test(t, func() *Queue { return mustOpen(t, Options{DatabaseURL: url}) })
	})
}

func mustOpen(t *testing.T, o Options) *Queue {
	t.Helper()
	o.MaxAttempts = 3
	q, err := Open(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(q.Close)
	return q
}

func items(keys ...string) []Item {
	var out []Item
	for i, k := range keys {
		out = append(out, Item{Line: i + 1, Key: k, Payload: json.RawMessage(fmt.Sprintf(`{"post":%q}`, k))})
	}
	return out
}

// workUntil runs workers on their own queue handles (as separate processes
// would) until the batch has nothing queued or running, or the deadline.
func workUntil(t *testing.T, open func() *Queue, batch string, workers int, h Handler) Status {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range workers {
		q := open()
		wg.Go(func() {
			if err := q.Work(ctx, 2, 5*time.Second, nil, h); err != nil {
				t.Error(err)
			}
		})
	}
	defer func() { cancel(); wg.Wait() }()
	watch := open()
	deadline := time.Now().Add(40 * time.Second)
	for {
		st, err := watch.BatchStatus(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		if st.Queued+st.Running == 0 {
			return st
		}
		if time.Now().After(deadline) {
			t.Fatalf("batch not finished in time: %+v", st)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func TestEachItemWorkedOnce(t *testing.T) {
	engines(t, func(t *testing.T, open func() *Queue) {
		q := open()
		batch, dups, err := q.Enqueue(context.Background(), items("a", "b", "c", "a", "d", "b"))
		if err != nil {
			t.Fatal(err)
		}
		if dups != 2 {
			t.Errorf("%d duplicates, want 2", dups)
		}
		var mu sync.Mutex
		calls := map[string]int{}
		st := workUntil(t, open, batch, 2, func(ctx context.Context, j Job) (json.RawMessage, error) {
			mu.Lock()
			calls[j.Key]++
			mu.Unlock()
			time.Sleep(50 * time.Millisecond)
			return json.RawMessage(fmt.Sprintf(`{"checked":%q}`, j.Key)), nil
		})
		if st.Total != 6 || st.Done != 6 {
			t.Errorf("status %+v, want 6 done", st)
		}
		for k, n := range calls {
			if n != 1 {
				t.Errorf("%s worked %d times", k, n)
			}
		}
		if len(calls) != 4 {
			t.Errorf("%d distinct items worked, want 4", len(calls))
		}
		// A second batch with a finished item does not redo it.
		batch2, dups2, err := q.Enqueue(context.Background(), items("a", "e"))
		if err != nil || dups2 != 1 {
			t.Fatalf("second batch: %d duplicates, %v", dups2, err)
		}
		workUntil(t, open, batch2, 1, func(ctx context.Context, j Job) (json.RawMessage, error) {
			mu.Lock()
			calls[j.Key]++
			mu.Unlock()
			return json.RawMessage(`{}`), nil
		})
		if calls["a"] != 1 || calls["e"] != 1 {
			t.Errorf("after the second batch: %v", calls)
		}
		rs, err := q.Results(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		for i, r := range rs {
			if r.Line != i+1 || r.State != Done {
				t.Errorf("result %d: %+v", i, r)
			}
			var out struct{ Checked string }
			if err := json.Unmarshal(r.Output, &out); err != nil || out.Checked == "" {
				t.Errorf("line %d output %s (%v)", r.Line, r.Output, err)
			}
			// When it was queued, worked and by whom: each item slept 50 ms.
			if r.Started == nil || r.Finished == nil || r.Worker == "" || r.Finished.Sub(*r.Started) < 50*time.Millisecond ||
				r.Queued.IsZero() || r.Started.Before(r.Queued) {
				t.Errorf("line %d: queued %v, started %v, finished %v, by %q", r.Line, r.Queued, r.Started, r.Finished, r.Worker)
			}
		}
		if _, err := q.Results(context.Background(), "b-nope"); !errors.Is(err, ErrUnknownBatch) {
			t.Errorf("unknown batch: %v", err)
		}
	})
}

func TestRetriesAndFailures(t *testing.T) {
	engines(t, func(t *testing.T, open func() *Queue) {
		q := open()
		batch, _, err := q.Enqueue(context.Background(), items("flaky", "bad", "ok"))
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		tries := map[string]int{}
		st := workUntil(t, open, batch, 1, func(ctx context.Context, j Job) (json.RawMessage, error) {
			mu.Lock()
			tries[j.Key]++
			mu.Unlock()
			switch j.Key {
			case "flaky":
				if j.Attempt == 1 {
					return json.RawMessage(`{"partial":true}`), errors.New("model answered 503")
				}
			case "bad":
				return nil, Permanent(errors.New("the post has no text and no images"))
			}
			return json.RawMessage(`{"ok":true}`), nil
		})
		if st.Done != 2 || st.Failed != 1 {
			t.Errorf("status %+v, want 2 done and 1 failed", st)
		}
		if tries["flaky"] != 2 || tries["bad"] != 1 {
			t.Errorf("tries %v: a transient failure is retried once, a permanent one never", tries)
		}
		rs, _ := q.Results(context.Background(), batch)
		if rs[1].State != Failed || rs[1].Error == "" {
			t.Errorf("the permanent failure: %+v", rs[1])
		}
	})
}

// A worker stopped mid-job releases it; another worker finishes it.
func TestStoppedWorkerReleasesItsJob(t *testing.T) {
	engines(t, func(t *testing.T, open func() *Queue) {
		q := open()
		batch, _, err := q.Enqueue(context.Background(), items("long"))
		if err != nil {
			t.Fatal(err)
		}
		started := make(chan struct{})
		ctx, stop := context.WithCancel(context.Background())
		done := make(chan error, 1)
		first := open()
		go func() {
			done <- first.Work(ctx, 1, 200*time.Millisecond, nil, func(ctx context.Context, j Job) (json.RawMessage, error) {
				close(started)
				<-ctx.Done() // a check that takes longer than the grace
				return nil, ctx.Err()
			})
		}()
		select {
		case <-started:
		case <-time.After(30 * time.Second):
			t.Fatal("the job was never started")
		}
		stop()
		if err := <-done; err != nil {
			t.Logf("first worker stopped: %v", err)
		}
		st := workUntil(t, open, batch, 1, func(ctx context.Context, j Job) (json.RawMessage, error) {
			return json.RawMessage(fmt.Sprintf(`{"attempt":%d}`, j.Attempt)), nil
		})
		if st.Done != 1 {
			t.Fatalf("status %+v, want the job done by the second worker", st)
		}
	})
}

// A job carries the options it was queued with to its worker; a job
// queued before jobs had options (River args {key, payload}) is still
// worked, with none.
func TestJobCarriesItsOptions(t *testing.T) {
	engines(t, func(t *testing.T, open func() *Queue) {
		q := open()
		its := items("with", "without")
		its[0].Options = json.RawMessage(`{"hits":1,"correction_language":"es"}`)
		batch, _, err := q.Enqueue(context.Background(), its)
		if err != nil {
			t.Fatal(err)
		}
		res, err := q.r.insert(context.Background(), oldArgs{Key: "old", Payload: json.RawMessage(`{"post":"old"}`)},
			&river.InsertOpts{UniqueOpts: river.UniqueOpts{ByArgs: true}})
		if err != nil {
			t.Fatal(err)
		}
		if _, err := q.db.ExecContext(context.Background(), q.sql("INSERT INTO muse_batch_item (batch_id, line, job_id) VALUES (?, ?, ?)"),
			batch, 3, res.Job.ID); err != nil {
			t.Fatal(err)
		}
		if _, err := q.db.ExecContext(context.Background(), q.sql("UPDATE muse_batch SET total = 3 WHERE batch_id = ?"), batch); err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		got := map[string]string{}
		st := workUntil(t, open, batch, 1, func(ctx context.Context, j Job) (json.RawMessage, error) {
			var compact bytes.Buffer // PostgreSQL's jsonb spaces it out
			if len(j.Options) > 0 {
				if err := json.Compact(&compact, j.Options); err != nil {
					return nil, err
				}
			}
			mu.Lock()
			got[j.Key] = compact.String()
			mu.Unlock()
			return json.RawMessage(`{}`), nil
		})
		if st.Done != 3 {
			t.Errorf("status %+v, want 3 done", st)
		}
		want := map[string]string{"with": `{"hits":1,"correction_language":"es"}`, "without": "", "old": ""}
		for k, w := range want {
			if g, ok := got[k]; !ok || g != w {
				t.Errorf("job %s: options %q (worked: %t), want %q", k, g, ok, w)
			}
		}
	})
}

// oldArgs is the River job as muse queued it before jobs had options.
type oldArgs struct {
	Key     string          `json:"key" river:"unique"`
	Payload json.RawMessage `json:"payload"`
}

func (oldArgs) Kind() string { return "muse_check" }

// A worker on the no-model queue takes only its jobs and leaves the
// default queue's where they are; a worker on both queues has at most n
// jobs in hand over the two, and a job it bounces for that is not an
// attempt.
func TestQueuesKeepJobsApart(t *testing.T) {
	engines(t, func(t *testing.T, open func() *Queue) {
		q := open()
		var mixed []Item
		for i, k := range []string{"m1", "x1", "m2", "x2", "m3", "x3"} {
			it := Item{Line: i + 1, Key: k, Payload: json.RawMessage(`{}`)}
			if k[0] == 'x' {
				it.Queue = QueueNoLLM
			}
			mixed = append(mixed, it)
		}
		batch, _, err := q.Enqueue(context.Background(), mixed)
		if err != nil {
			t.Fatal(err)
		}
		var mu sync.Mutex
		var worked []string
		inHand, most := 0, 0
		h := func(ctx context.Context, j Job) (json.RawMessage, error) {
			mu.Lock()
			worked = append(worked, j.Key)
			inHand++
			most = max(most, inHand)
			mu.Unlock()
			time.Sleep(100 * time.Millisecond)
			mu.Lock()
			inHand--
			mu.Unlock()
			return json.RawMessage(`{}`), nil
		}
		ctx, cancel := context.WithCancel(context.Background())
		done := make(chan error, 1)
		go func() { done <- open().Work(ctx, 2, time.Second, []string{QueueNoLLM}, h) }()
		for deadline := time.Now().Add(30 * time.Second); ; time.Sleep(50 * time.Millisecond) {
			st, err := q.BatchStatus(context.Background(), batch)
			if err != nil {
				t.Fatal(err)
			}
			if st.Done == 3 {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the no-model queue's jobs not done in time: %+v", st)
			}
		}
		time.Sleep(500 * time.Millisecond) // time to take a job it should not
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		if got := strings.Join(slices.Sorted(slices.Values(worked)), " "); got != "x1 x2 x3" {
			t.Errorf("the no-model worker took %q, want x1 x2 x3", got)
		}
		worked, most = nil, 0
		mu.Unlock()
		rs, err := q.Results(context.Background(), batch)
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range rs {
			if want := map[bool]string{true: Done, false: Queued}[r.Line%2 == 0]; r.State != want {
				t.Errorf("line %d: %s, want %s", r.Line, r.State, want)
			}
		}

		// Both queues, one job in hand at a time.
		more, _, err := q.Enqueue(context.Background(), []Item{
			{Line: 1, Key: "x4", Payload: json.RawMessage(`{}`), Queue: QueueNoLLM},
			{Line: 2, Key: "x5", Payload: json.RawMessage(`{}`), Queue: QueueNoLLM},
		})
		if err != nil {
			t.Fatal(err)
		}
		ctx, cancel = context.WithCancel(context.Background())
		go func() { done <- open().Work(ctx, 1, time.Second, []string{QueueDefault, QueueNoLLM}, h) }()
		for _, b := range []string{batch, more} {
			for deadline := time.Now().Add(40 * time.Second); ; time.Sleep(50 * time.Millisecond) {
				st, err := q.BatchStatus(context.Background(), b)
				if err != nil {
					t.Fatal(err)
				}
				if st.Queued+st.Running == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("batch %s not done in time: %+v", b, st)
				}
			}
		}
		cancel()
		if err := <-done; err != nil {
			t.Fatal(err)
		}
		mu.Lock()
		defer mu.Unlock()
		if got := strings.Join(slices.Sorted(slices.Values(worked)), " "); got != "m1 m2 m3 x4 x5" || most != 1 {
			t.Errorf("the worker on both queues took %q with up to %d in hand; want m1 m2 m3 x4 x5, one at a time", got, most)
		}
		for _, b := range []string{batch, more} {
			rs, err := q.Results(context.Background(), b)
			if err != nil {
				t.Fatal(err)
			}
			for _, r := range rs {
				if r.State != Done || r.Tries != 1 {
					t.Errorf("batch %s line %d: %s after %d attempts; want done after 1", b, r.Line, r.State, r.Tries)
				}
			}
		}
	})
}

// TestScheduledWorkOnceAcrossWorkers: two workers with the same scheduled
// work do each round once, never two rounds at once, and keep checking
// queued posts meanwhile.
func TestScheduledWorkOnceAcrossWorkers(t *testing.T) { engines(t, testScheduledWork) }

func testScheduledWork(t *testing.T, open func() *Queue) {
	var mu sync.Mutex
	rounds, running, most := 0, 0, 0
	sc := Scheduled{Name: "recheck", Every: 500 * time.Millisecond, Run: func(ctx context.Context) (json.RawMessage, error) {
		mu.Lock()
		rounds++
		running++
		most = max(most, running)
		mu.Unlock()
		time.Sleep(50 * time.Millisecond)
		mu.Lock()
		running--
		mu.Unlock()
		return json.RawMessage(`{"cases":0}`), nil
	}}
	q := open()
	batch, _, err := q.Enqueue(context.Background(), items("a", "b", "c"))
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	var wg sync.WaitGroup
	for range 2 {
		w := open()
		wg.Add(1)
		go func() {
			defer wg.Done()
			err := w.Work(ctx, 2, time.Second, nil, func(context.Context, Job) (json.RawMessage, error) { return json.RawMessage(`{}`), nil }, sc)
			if err != nil {
				t.Error(err)
			}
		}()
	}
	const run = 5 * time.Second // River starts the leader's periodic enqueuer about 1.5 s after it is elected
	time.Sleep(run)
	cancel()
	wg.Wait()
	st, err := q.BatchStatus(context.Background(), batch)
	if err != nil {
		t.Fatal(err)
	}
	mu.Lock()
	defer mu.Unlock()
	// A round when the leader starts, then one every 500 ms: at most
	// run/Every+1 however many workers run; at least two.
	if rounds < 2 || rounds > int(run/sc.Every)+1 || most != 1 {
		t.Errorf("%d rounds in %s every %s (at most %d at once)", rounds, run, sc.Every, most)
	}
	if st.Done != 3 {
		t.Errorf("queued posts meanwhile: %+v", st)
	}
}
