package cases_test

import (
	"context"
	"errors"
	"path/filepath"
	"sync/atomic"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
)

// failAfter is a real case store whose saves fail from the n-th on, as a
// disk that fills up during a check.
type failAfter struct {
	*cases.Store
	n, saves atomic.Int32
}

func (f *failAfter) Save(ctx context.Context, c *pipeline.Check) error {
	if f.saves.Add(1) >= f.n.Load() {
		return errors.New("database or disk is full")
	}
	return f.Store.Save(ctx, c)
}

// Keep makes a failed save the check's outcome: the run finishes, the
// error says the case was not kept, and no half-saved case is left.
func TestKeepRemovesTheHalfSavedCase(t *testing.T) {
	ctx := context.Background()
	env := testworld.New(t, nil)
	o := env.Options()
	o.Snapshots = true
	e, closeFn, err := setup.NewFromConfig(ctx, env.Cfg, o)
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	st, err := cases.Open(ctx, filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()

	c := e.NewCheck(pipeline.Post{Text: testworld.Post}, testworld.Cutoff)
	if err := cases.Keep(ctx, e, c, pipeline.StageImages, cases.RecordOptions{Store: st}); err != nil {
		t.Fatalf("a healthy store: %v", err)
	}
	if _, err := st.Get(ctx, c.ID); err != nil {
		t.Fatalf("the kept case: %v", err)
	}

	failing := &failAfter{Store: st}
	failing.n.Store(3)
	var told error
	c = e.NewCheck(pipeline.Post{Text: testworld.Post}, testworld.Cutoff)
	err = cases.Keep(ctx, e, c, pipeline.StageImages, cases.RecordOptions{Store: failing, OnSaveError: func(err error) { told = err }})
	var nk *cases.NotKeptError
	if !errors.As(err, &nk) || nk.ID != c.ID || !nk.Removed || told == nil {
		t.Fatalf("saves failing mid-check: err %v (told %v), want a NotKeptError with the case removed", err, told)
	}
	if c.Correction.Text == "" {
		t.Error("the check did not finish")
	}
	if _, err := st.Get(ctx, c.ID); !errors.Is(err, cases.ErrNotFound) {
		t.Errorf("the half-saved case is still listed: %v", err)
	}
}
