package batch

import (
	"context"
	"encoding/json"
	"fmt"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/jobs"
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
	enq, err := Enqueue(ctx, open(), strings.NewReader(in.String()), "model=test-model")
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
			if err := Work(wctx, q, e, 2, 5*time.Second, nil); err != nil {
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
