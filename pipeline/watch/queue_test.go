package watch

import (
	"context"
	"path/filepath"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/sources/jobs"
)

func TestQueuedPostsBecomeJobs(t *testing.T) {
	ctx := context.Background()
	q, err := jobs.Open(ctx, jobs.Options{Path: filepath.Join(t.TempDir(), "jobs.db")})
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	st := openStore(t, filepath.Join(t.TempDir(), "watch.db"))
	tr, err := New(ctx, Options{Store: st, Scorer: &lengthScorer{}, BatchWait: time.Hour, Rule: Rule{Threshold: DefaultThreshold},
		Enqueue: QueueTo(q, "gpt-4o", batch.CheckOptions{})})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{"Inflation hit 9.1% in June, the highest in 40 years", "A lovely sunset over the bay tonight",
		"The bill cuts 40,000 jobs in the NHS says the union"}
	if err := tr.Watch(ctx, &listFeed{name: "l", texts: texts}); err != nil {
		t.Fatal(err)
	}
	cs, _ := st.Ranked(ctx, 0)
	var id string
	queued := 0
	for _, c := range cs {
		if c.State == StateQueued {
			queued++
			id = c.BatchID
		}
	}
	if queued != 2 || !batch.IsBatchID(id) {
		t.Fatalf("%d clusters queued in batch %q, want the 2 with a figure", queued, id)
	}
	stat, err := q.BatchStatus(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if stat.Total != 2 || stat.Queued != 2 {
		t.Errorf("the queue holds %+v, want 2 jobs queued", stat)
	}
}
