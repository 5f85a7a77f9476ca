package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/watch"
)

// watchCalibrateCmd is `muse watch calibrate FILE`.
func watchCalibrateCmd(app *App) *cobra.Command {
	var asJSON bool
	var batchSize int
	cmd := &cobra.Command{
		Use:   "calibrate POSTS.jsonl [--json] [--batch-size N]",
		Short: "Choose muse watch's --threshold on the newsroom's own labelled posts, with its precision and recall on posts it was not chosen on",
		Long: "POSTS.jsonl holds posts the newsroom has labelled, one JSON object a line: {\"text\": \"…\", \"worthy\": true|false},\n" +
			"at least " + fmt.Sprint(watch.MinPerLabel) + " check-worthy and " + fmt.Sprint(watch.MinPerLabel) + " ordinary. Every post is scored by the configured model as\n" +
			"muse watch scores it. The posts are split in two halves by a hash of their text, each label evenly,\n" +
			"so a rerun splits them the same way. The threshold is chosen on the first half: the score that\n" +
			"gives the highest F1 of \"worthy\" (of equal F1, the highest score), and its precision, recall and F1\n" +
			"are reported on the second half, next to the default " + fmt.Sprint(watch.DefaultThreshold) + "'s; then the halves swap, to show how\n" +
			"much the choice moves. The suggested flag is the one chosen on the first half.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			if batchSize < 1 || batchSize > maxWatchBatch {
				return usagef("--batch-size %d: from 1 to %d posts a call", batchSize, maxWatchBatch)
			}
			f, err := os.Open(args[0])
			if err != nil {
				return usage(err)
			}
			ps, err := watch.ReadLabelled(f)
			f.Close()
			if err != nil {
				return usagef("%s: %w", args[0], err)
			}
			eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, pipeline.Options{})
			if errors.Is(err, pipeline.ErrNoModel) {
				// The setup's hint, without its --no-llm: nothing is scored without a model.
				why := strings.TrimPrefix(err.Error(), pipeline.ErrNoModel.Error()+": ")
				if i := strings.Index(why, "; or run with --no-llm"); i >= 0 {
					why = why[:i]
				}
				return fmt.Errorf("%w, and muse watch calibrate scores every post with it: %s", pipeline.ErrNoModel, why)
			} else if err != nil {
				return fmt.Errorf("start the engine: %w", err)
			}
			defer closeEngine()
			scores, err := watch.ScoreAll(ctx, eng, ps, batchSize)
			if err != nil {
				return err
			}
			c, err := watch.Calibrate(ps, scores)
			if err != nil {
				return err
			}
			if asJSON {
				b, err := json.Marshal(c)
				if err != nil {
					return err
				}
				_, err = app.Stdout.Write(append(b, '\n'))
				return err
			}
			w := app.Stdout
			fmt.Fprintf(w, "%d posts scored by %s: %d check-worthy, %d ordinary; split in two halves by a hash of the text, each label evenly.\n",
				c.Posts, app.Cfg.Model, c.Worthy, c.Ordinary)
			for _, fd := range c.Folds {
				fmt.Fprintf(w, "\nChosen on the %s (%d posts, F1 %.2f there), reported on the %s (%d posts):\n",
					fd.ChosenOn, fd.Tuning.Posts, fd.Tuning.F1, fd.Reported, fd.HeldOut.Posts)
				fmt.Fprintf(w, "  %-28s %s\n", fd.Flag, figuresLine(fd.HeldOut))
				fmt.Fprintf(w, "  %-28s %s\n", watch.ThresholdFlag(watch.DefaultThreshold)+" (default)", figuresLine(fd.Default))
			}
			fmt.Fprintf(w, "\nSuggested: muse watch --enqueue %s\n", c.Suggested)
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the report as one JSON object")
	cmd.Flags().IntVar(&batchSize, "batch-size", 20, "posts scored in one model call")
	return cmd
}

// figuresLine is a threshold's figures on one line.
func figuresLine(f watch.Figures) string {
	return fmt.Sprintf("precision %.2f (%d/%d)  recall %.2f (%d/%d)  F1 %.2f",
		f.Precision, f.TP, f.TP+f.FP, f.Recall, f.TP, f.TP+f.FN, f.F1)
}
