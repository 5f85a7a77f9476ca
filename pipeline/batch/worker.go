package batch

import (
	"context"
	"errors"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
)

// Kept is the RunFunc that keeps each check it runs as a case through o
// (cases.Keep, with the pages e read): a check whose case could not be
// kept fails, saying so. With no o.Store the checks run unkept.
func Kept(e *pipeline.Engine, o cases.RecordOptions) RunFunc {
	o.Pages, o.Headers = e.RawPage, e.PageHeader
	return func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error {
		return cases.Keep(ctx, e, c, from, o)
	}
}

// WorkerEngines are a worker's engines over the configuration cfg, its
// checks kept as cases through o (none for a job queued with --no-save, nor
// with noSave).
//
// The engine for jobs queued without options is built at once, so that a
// worker configured wrongly says so before it takes a job. A configuration
// with no model still makes a worker: its default engine is built
// extractive, noModel says why, and only the jobs queued with --no-llm are
// for it (WorkOptions.NoModel); any other job asking it for an engine
// fails with noModel. Each other set of options gets an engine of its own,
// built when a job first asks for it and kept for the jobs that follow.
// closeAll closes them all.
func WorkerEngines(ctx context.Context, cfg *setup.Config, o cases.RecordOptions, noSave bool) (engines Engines, noModel error, closeAll func() error, err error) {
	base := pipeline.Options{Snapshots: !noSave}
	defaults := CheckOptions{}
	eng, closeDefault, err := setup.NewFromConfig(ctx, cfg, base)
	if errors.Is(err, pipeline.ErrNoModel) {
		noModel, defaults.NoLLM = err, true
		eng, closeDefault, err = setup.NewFromConfig(ctx, cfg, defaults.Apply(base))
	}
	if err != nil {
		return nil, nil, nil, err
	}
	if noSave {
		o.Store = nil
	}
	engines, closeEngines := EnginesFor(func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, func() error, error) {
		if noModel != nil && !co.NoLLM {
			return nil, nil, nil, noModel
		}
		if co == defaults {
			return eng, Kept(eng, o), nil, nil
		}
		e, closeE, err := setup.NewFromConfig(ctx, cfg, co.Apply(base))
		if err != nil {
			return nil, nil, nil, err
		}
		jo := o
		if co.NoSave {
			jo.Store = nil // queued with --no-save: no case kept
		}
		return e, Kept(e, jo), closeE, nil
	})
	return engines, noModel, func() error { return errors.Join(closeEngines(), closeDefault()) }, nil
}
