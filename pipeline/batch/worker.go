package batch

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/jobs"
)

// Kept is the RunFunc that keeps each check it runs as a case through o
// (cases.Keep, with the pages e read): a check whose case could not be
// kept fails, saying so. With no o.Store the checks run unkept. The
// support map's judgement is asked as soon as the run ends, beside the
// run's last writes. A check whose every stage is done (from "": its
// worker died during that judgement) is only judged.
func Kept(e *pipeline.Engine, o cases.RecordOptions) RunFunc {
	o.Pages, o.Headers = e.RawPage, e.PageHeader
	return func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error {
		judged := false
		if from == "" {
			judged = judgeSupport(ctx, e, c)
		} else {
			ko := o
			ko.Then = func(ctx context.Context, c *pipeline.Check) { judged = judgeSupport(ctx, e, c) }
			if err := cases.Keep(ctx, e, c, from, ko); err != nil {
				return err
			}
		}
		if judged && o.Store != nil {
			// The case keeps the judgements, as muse check's does.
			if err := o.Store.Save(context.WithoutCancel(ctx), c); err != nil {
				return fmt.Errorf("keep the support map's judgements: %w", err)
			}
		}
		return nil
	}
}

// WorkerEngines are a worker's engines over the configuration cfg, its
// checks kept as cases through the options keep returns (none for a job
// queued with --no-save, nor with noSave). keep is called when a job
// first asks for an engine, not before: the case store may still be
// opening while the engines are built.
//
// The engine for jobs queued without options is built at once, so that a
// worker configured wrongly says so before it takes a job. A configuration
// with no model still makes a worker: its default engine is built
// extractive, noModel says why, and only the jobs queued with --no-llm are
// for it (WorkOptions.NoModel); any other job asking it for an engine
// fails with noModel. Each other set of options gets an engine of its own,
// built when a job first asks for it and kept for the jobs that follow.
// closeAll closes them all.
func WorkerEngines(ctx context.Context, cfg *setup.Config, keep func() cases.RecordOptions, noSave bool) (engines Engines, noModel error, closeAll func() error, err error) {
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
	engines, closeEngines := EnginesFor(func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, func() error, error) {
		if noModel != nil && !co.NoLLM {
			return nil, nil, nil, noModel
		}
		o := keep()
		if noSave {
			o.Store = nil
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

// RecheckCases is the scheduled recheck of saved cases (see
// cases.Store.Recheck): every every, the pages all the cases of st cite
// are read again with fetcher (the archive as its store, for conditional
// requests), and the cases whose evidence changed are marked, each with a
// revision draft. Each recheck's output is its counts.
func RecheckCases(st *cases.Store, fetcher func(ctx context.Context) (*fetch.Fetcher, func() error), every time.Duration) jobs.Scheduled {
	return jobs.Scheduled{Name: "muse_recheck_cases", Every: every, Run: func(ctx context.Context) (json.RawMessage, error) {
		ids, err := st.RecheckIDs(ctx)
		if err != nil {
			return nil, err
		}
		f, closeF := fetcher(ctx)
		defer closeF()
		_, stats, err := st.Recheck(ctx, ids, cases.RecheckOptions{Fetcher: f})
		out, merr := json.Marshal(map[string]int{"cases": stats.Cases, "pages": stats.Pages, "not_modified": stats.NotModified,
			"failed": stats.Failed, "changed": stats.Changed})
		return out, errors.Join(err, merr)
	}}
}
