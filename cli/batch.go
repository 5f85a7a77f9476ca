package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/llm"
)

// batchCmd is `muse batch FILE.jsonl [-j N] [-o OUT.jsonl]`, with status.
func batchCmd(app *App) *cobra.Command {
	var parallel int
	var outPath string
	var noSave, queue bool
	ef := &postFlags{}
	cmd := &cobra.Command{
		Use:   "batch FILE.jsonl|- [-j N] [-o OUT.jsonl] [--queue]",
		Short: "Check many posts, N at a time: one JSON result per line (JSON Lines); a rerun skips finished posts",
		Long: "Reads posts as JSON lines {text, author, handle, posted_at, url, images} (- for standard input)\n" +
			"and writes one result per line, {line, key, status, error, check}, as each post finishes: a\n" +
			"stream, so JSON Lines rather than an array. With -o, results are appended to OUT.jsonl and a\n" +
			"rerun skips the posts already done there (failed ones are tried again). Progress goes to\n" +
			"stderr: on a terminal one line updated in place, otherwise a line per post.\n\n" +
			"With --queue the posts go into the job queue instead (the newsroom's database with\n" +
			"MUSE_DATABASE_URL, else queue.db in the data directory) for `muse worker` processes to check,\n" +
			"each post once; the batch's ID is printed alone on the last line of stdout, for\n" +
			"`muse batch status ID` and `muse batch results ID`.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := app.Stdin
			if args[0] != "-" {
				file, err := os.Open(args[0])
				if err != nil {
					return usagef("open posts: %w", err)
				}
				defer file.Close()
				in = file
			}
			if queue {
				return enqueueBatch(cmd, app, in, ef, noSave)
			}
			out, done := app.Stdout, map[string]bool{}
			if outPath != "" {
				var err error
				if done, err = batch.FinishedKeys(outPath); err != nil {
					return usage(err)
				}
				file, err := appendOutput(outPath)
				if err != nil {
					return usagef("open results: %w", err)
				}
				defer file.Close()
				out = app.redact.Writer(file)
			}
			eo, err := ef.engineOptions(cmd)
			if err != nil {
				return err
			}
			if err := setup.CheckSearchable(cmd.Context(), app.Cfg); err != nil {
				return err
			}
			eo.Snapshots = !noSave
			eng, closeEngine, err := setup.NewFromConfig(cmd.Context(), app.Cfg, eo)
			if err != nil {
				return usage(err)
			}
			defer closeEngine()
			ro, closeCases, storeErr := recordOptions(cmd.Context(), app, noSave)
			defer closeCases()
			run := batch.Kept(eng, ro)
			st, err := batch.Run(cmd.Context(), eng, in, out,
				batch.Options{Parallel: parallel, Done: done, Progress: app.progress(), TTY: app.StderrTTY, Run: run, AsOfPost: ef.asOfPost})
			fmt.Fprintf(app.Stderr, "muse: %d posts: %s, %d skipped (already done); %d model calls (%d from the cache), %s\n",
				st.Total, st.Counts(), st.Skipped, st.LLMCalls, st.CachedCalls, st.Usage().CostText())
			if ro.Store != nil && st.Done+st.Failed > 0 {
				fmt.Fprintln(app.Stderr, "muse: every check is kept as a case: muse cases")
			}
			if err != nil {
				return err
			}
			if st.Failed > 0 {
				return fmt.Errorf("%d of %d posts failed; their result lines say why, and a rerun tries them again", st.Failed, st.Total)
			}
			if storeErr != nil {
				return fmt.Errorf("the results are written but the checks could not be kept as cases (%w); --no-save checks without keeping them", storeErr)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 4, "posts checked at once")
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "append results to this file and skip the posts it already has")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the checks as cases (see muse cases)")
	cmd.Flags().BoolVar(&queue, "queue", false, "put the posts in the job queue for muse worker instead of checking them here")
	ef.registerEngine(cmd.Flags())
	cmd.AddCommand(batchStatusCmd(app), batchResultsCmd(app))
	return cmd
}

// batchStatusCmd is `muse batch status OUT.jsonl`: what a results file holds.
func batchStatusCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "status [--json] OUT.jsonl|BATCH_ID",
		Short: "Say how far a batch got: posts done and failed in a results file, or queued, running, done and failed in a queued batch",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			if batch.IsBatchID(args[0]) {
				return queuedStatus(cmd, app, args[0], asJSON)
			}
			rs, err := batch.ReadResults(args[0])
			if err != nil {
				return usage(err)
			}
			if asJSON {
				return writeJSON(app.Stdout, rs)
			}
			return batch.WriteStatus(app.Stdout, rs)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: for a results file a JSON array, one object per post (line, key, status, error, correction, cost_usd, conclusion); for a queued batch one JSON object (batch_id, total, queued, running, done, failed, nothing_found, could_not_check)")
	return cmd
}

// openQueue opens the job queue the configuration names.
func openQueue(ctx context.Context, app *App) (*jobs.Queue, error) {
	q, err := jobs.Open(ctx, app.Cfg.QueueOptions())
	if err != nil {
		return nil, fmt.Errorf("%w (set MUSE_DATABASE_URL for a newsroom's PostgreSQL)", err)
	}
	return q, nil
}

// enqueueBatch is `muse batch FILE --queue`: the batch's ID alone on the
// last line of stdout.
func enqueueBatch(cmd *cobra.Command, app *App, in io.Reader, ef *postFlags, noSave bool) error {
	eo, err := ef.engineOptions(cmd)
	if err != nil {
		return err
	}
	q, err := openQueue(cmd.Context(), app)
	if err != nil {
		return err
	}
	defer q.Close()
	co := batch.OptionsOf(eo, noSave)
	co.AsOfPost = ef.asOfPost
	enq, err := batch.Enqueue(cmd.Context(), q, in, app.Cfg.Model, co)
	for _, b := range enq.Bad {
		fmt.Fprintln(app.Stderr, "muse: skipped", b)
	}
	if err != nil {
		return usage(err)
	}
	fmt.Fprintf(app.Stderr, "muse: %d posts queued (%d already queued or done); run muse worker to check them\n", enq.Posts, enq.Duplicates)
	fmt.Fprintln(app.Stdout, enq.BatchID)
	return nil
}

// queuedStatus is `muse batch status BATCH_ID`.
func queuedStatus(cmd *cobra.Command, app *App, id string, asJSON bool) error {
	q, err := openQueue(cmd.Context(), app)
	if err != nil {
		return err
	}
	defer q.Close()
	st, err := q.BatchStatus(cmd.Context(), id)
	if errors.Is(err, jobs.ErrUnknownBatch) {
		return usage(err)
	}
	if err != nil {
		return err
	}
	// The checks without evidence, apart: found nothing, or could not check.
	rs, err := q.Results(cmd.Context(), id)
	if err != nil {
		return err
	}
	counts := batch.Stats{Done: st.Done, Failed: st.Failed}
	for _, r := range rs {
		var res batch.Result
		if len(r.Output) > 0 && json.Unmarshal(r.Output, &res) == nil && res.Check != nil {
			counts.CountCheck(res.Check)
		}
	}
	if asJSON {
		return writeJSON(app.Stdout, struct {
			jobs.Status
			NothingFound int                      `json:"nothing_found"`
			NotChecked   int                      `json:"could_not_check"`
			Verdicts     map[pipeline.Verdict]int `json:"verdicts,omitempty"`
		}{st, counts.NothingFound, counts.NotChecked, counts.Verdicts})
	}
	fmt.Fprintf(app.Stdout, "batch %s: %d posts, %d queued, %d running, %s\n",
		st.BatchID, st.Total, st.Queued, st.Running, counts.Counts())
	return nil
}

// batchResultsCmd is `muse batch results BATCH_ID`: a stream of results.
func batchResultsCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "results BATCH_ID",
		Short: "Print one JSON line per finished post of a queued batch (JSON Lines): line, key, status, error, check",
		Args:  cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q, err := openQueue(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer q.Close()
			rs, err := q.Results(cmd.Context(), args[0])
			if errors.Is(err, jobs.ErrUnknownBatch) {
				return usage(err)
			}
			if err != nil {
				return err
			}
			enc := json.NewEncoder(app.Stdout)
			for _, r := range rs {
				if len(r.Output) == 0 || (r.State != jobs.Done && r.State != jobs.Failed) {
					continue // queued or running: not finished
				}
				var res batch.Result
				if err := json.Unmarshal(r.Output, &res); err != nil {
					return fmt.Errorf("batch %s line %d: %w", args[0], r.Line, err)
				}
				res.Line = r.Line
				if err := enc.Encode(res); err != nil {
					return err
				}
			}
			return nil
		},
	}
}

// workerCmd is `muse worker [-j N]`: checks queued posts until stopped.
func workerCmd(app *App) *cobra.Command {
	var parallel int
	var grace, recheckEvery time.Duration
	var noSave bool
	cmd := &cobra.Command{
		Use:   "worker [-j N]",
		Short: "Check queued posts (muse batch --queue), N at a time, until SIGTERM or Ctrl-C",
		Long: "Takes posts from the job queue (the newsroom's database with MUSE_DATABASE_URL, else queue.db\n" +
			"in the data directory) and checks each, keeping it as a case. Any number of workers may run,\n" +
			"on any machine that reaches the database: each post is checked once, with the options it was\n" +
			"queued with (--hits, --page-tokens, --no-llm, --correction-language, --no-save of muse batch). A model server that is\n" +
			"busy or failing is retried with backoff; a post that cannot be checked fails with the reason.\n" +
			"On SIGTERM or Ctrl-C the worker finishes the checks in hand within --grace, or releases them\n" +
			"to another worker. A worker killed outright leaves its job to another once it has run for\n" +
			"queue_rescue_after (MUSE_QUEUE_RESCUE_AFTER, default 31m). A job tried again resumes its case\n" +
			"from the first stage not finished (not with --no-save, which keeps no case). A worker with no\n" +
			"model configured checks only the posts queued with --no-llm and leaves the others queued for a\n" +
			"worker that has one.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if parallel < 1 {
				return usagef("-j %d: want 1 or more", parallel)
			}
			// A worker stopped while it is still opening its stores has
			// no job in hand: it stops as cleanly as a working one.
			stopped := func() bool {
				if cmd.Context().Err() == nil {
					return false
				}
				fmt.Fprintln(app.Stderr, "muse: worker stopped before it took any job")
				return true
			}
			// The queue, the case store and the engine are opened at once:
			// each mostly waits on its database or files.
			var (
				q                     *jobs.Queue
				ro                    cases.RecordOptions
				closeCases            = func() {}
				engines               batch.Engines
				noModel, qErr, engErr error
				closeEngines          func() error
				opening               sync.WaitGroup
			)
			// The tokenizer's vocabulary, which a check's evidence stage
			// needs, is read meanwhile (tens of milliseconds of CPU), not in
			// the first check.
			go llm.CountTokens("")
			opening.Go(func() { q, qErr = openQueue(cmd.Context(), app) })
			opening.Go(func() { ro, closeCases, _ = recordOptions(cmd.Context(), app, noSave) })
			opening.Go(func() {
				// The case store is open by the time a job asks for an engine.
				engines, noModel, closeEngines, engErr = batch.WorkerEngines(cmd.Context(), app.Cfg,
					func() cases.RecordOptions { return ro }, noSave)
			})
			opening.Wait()
			if q != nil {
				defer q.Close()
			}
			defer closeCases()
			if closeEngines != nil {
				defer closeEngines()
			}
			if qErr != nil {
				if stopped() {
					return nil
				}
				return qErr
			}
			if engErr != nil {
				if stopped() {
					return nil
				}
				return usage(engErr)
			}
			if stopped() {
				return nil
			}
			wo := batch.WorkOptions{Parallel: parallel, Grace: grace, NoModel: noModel != nil}
			if st, ok := ro.Store.(batch.CaseReader); ok {
				wo.Cases = st // a job tried again resumes its case
			}
			if recheckEvery > 0 {
				st, ok := ro.Store.(*cases.Store)
				if !ok {
					return usagef("--recheck-every: no case store to recheck (--no-save, or it could not be opened)")
				}
				wo.Scheduled = append(wo.Scheduled, batch.RecheckCases(st, func(ctx context.Context) (*fetch.Fetcher, func() error) {
					f, closeF, warn := setup.RecheckFetcher(ctx, app.Cfg)
					if warn != nil {
						fmt.Fprintf(app.Stderr, "muse: warning: recheck: %v; pages are read whole\n", warn)
					}
					return f, closeF
				}, recheckEvery))
				fmt.Fprintf(app.Stderr, "muse: the saved cases' cited pages are rechecked every %s (one worker of all runs each recheck)\n", recheckEvery)
			}
			if noModel != nil {
				fmt.Fprintf(app.Stderr, "muse: warning: %v\nmuse: this worker checks only the posts queued with --no-llm; the others stay queued for a worker with a model\n", noModel)
			}
			fmt.Fprintf(app.Stderr, "muse: worker checking queued posts, %d at a time; Ctrl-C or SIGTERM stops it\n", parallel)
			if err := batch.Work(cmd.Context(), q, engines, wo); err != nil {
				return err
			}
			fmt.Fprintln(app.Stderr, "muse: worker stopped")
			return nil
		},
	}
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 2, "posts checked at once")
	cmd.Flags().DurationVar(&grace, "grace", 30*time.Second, "on stop, how long the checks in hand may take to finish before they are released")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the checks as cases (see muse cases)")
	cmd.Flags().DurationVar(&recheckEvery, "recheck-every", 0, "also reread the pages saved cases cite every DURATION (e.g. 24h), as muse cases recheck --all does; 0: never")
	return cmd
}
