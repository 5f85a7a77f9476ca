package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/lang"
)

// postFlags are the flags that describe the post and how to check it, the
// same for `muse [TEXT|URL]` and `muse check`.
type postFlags struct {
	before, author, handle, postedAt, language string
	images, videos                             []string
	correctionLanguage                         string
	noLLM                                      bool
	hits                                       int
	pageTokens                                 string
	// asOfPost sets the cutoff at the post's time (the paper's protocol).
	asOfPost bool
}

// register adds the post flags to fl.
func (f *postFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.before, "before", "", "cutoff: only pages published before TIME count (YYYY-MM-DD, YYYY-MM-DD HH:MM UTC, or RFC 3339; default none: every page up to now, each shown before or after the post)")
	fl.StringArrayVar(&f.images, "image", nil, "an image of the post, path or URL (repeatable)")
	fl.StringArrayVar(&f.videos, "video", nil, "a video of the post, path or URL: its keyframes and sound are read (needs ffmpeg)")
	fl.StringVar(&f.author, "author", "", "the post's author")
	fl.StringVar(&f.handle, "handle", "", "the post author's handle (@name)")
	fl.StringVar(&f.postedAt, "posted-at", "", "when the post was published (YYYY-MM-DD, YYYY-MM-DD HH:MM UTC, or RFC 3339)")
	fl.StringVar(&f.language, "language", "", "the post's language (es, de, pt-BR, Spanish…); default: detected from its text")
	f.registerEngine(fl)
}

// registerEngine adds the flags that set how posts are checked (also
// `muse batch`'s).
func (f *postFlags) registerEngine(fl *pflag.FlagSet) {
	fl.BoolVar(&f.noLLM, "no-llm", false, "extractive mode: sources and quotes without a model, and no verdict")
	fl.IntVar(&f.hits, "hits", 0, "hits per query from each search provider in the first search (config hits_per_query; default 5)")
	fl.StringVar(&f.pageTokens, "page-tokens", "", "the most tokens of each page the model reads for evidence: a number, or thrifty (config evidence.page_tokens; default 5000, the paper's 20,000 characters)")
	fl.StringVar(&f.correctionLanguage, "correction-language", "", "write the correction in this language (es, de, English…); default: the post's")
	fl.BoolVar(&f.asOfPost, "as-of-post", false, "the paper's protocol: cutoff at the post's own time, so only pages published before the post count (needs the post's time)")
}

// engineOptions are the engine options the flags set.
func (f *postFlags) engineOptions(cmd *cobra.Command) (pipeline.Options, error) {
	if cmd.Flags().Changed("hits") && f.hits <= 0 {
		return pipeline.Options{}, usagef("--hits %d: want a number of hits of 1 or more", f.hits)
	}
	var cl string
	if f.correctionLanguage != "" {
		if cl = lang.Normalise(f.correctionLanguage); cl == "" {
			return pipeline.Options{}, usagef("--correction-language %q: not a language (try a code such as es, de or en)", f.correctionLanguage)
		}
	}
	var pt pipeline.PageTokens
	if cmd.Flags().Changed("page-tokens") {
		var err error
		if pt, err = pipeline.ParsePageTokens(f.pageTokens); err != nil {
			return pipeline.Options{}, usagef("--page-tokens %q: %v", f.pageTokens, err)
		}
	}
	return pipeline.Options{NoLLM: f.noLLM, FirstPassHits: f.hits, CorrectionLanguage: cl, EvidenceTokens: int(pt)}, nil
}

// parse reads the post flags: the post's metadata, the cutoff and the
// engine options they set. A bad value is a usage error naming the flag.
func (f *postFlags) parse(cmd *cobra.Command) (post pipeline.Post, cutoff time.Time, opts pipeline.Options, err error) {
	post = pipeline.Post{Author: f.author, Handle: f.handle, Images: f.images, Videos: f.videos}
	if f.asOfPost && f.before != "" {
		return post, cutoff, opts, usagef("--as-of-post and --before both set the cutoff: give one")
	}
	if f.before != "" {
		if cutoff, err = timeFlag("before", f.before); err != nil {
			return post, cutoff, opts, err
		}
	}
	if f.postedAt != "" {
		if post.PostedAt, err = timeFlag("posted-at", f.postedAt); err != nil {
			return post, cutoff, opts, err
		}
	}
	if f.language != "" {
		if post.Language = lang.Normalise(f.language); post.Language == "" {
			return post, cutoff, opts, usagef("--language %q: not a language (try a code such as es, de or pt)", f.language)
		}
	}
	opts, err = f.engineOptions(cmd)
	return post, cutoff, opts, err
}

// checkCmd is `muse check [flags] [TEXT|URL|-]`.
func checkCmd(app *App) *cobra.Command {
	f := &postFlags{}
	var asJSON, noSave bool
	cmd := &cobra.Command{
		Use:   "check [flags] [TEXT|URL|-]",
		Short: "Check one post headless: Markdown (or --json) on stdout, progress on stderr",
		Long: "Runs the whole Muse pipeline on one post: queries, search, reading and rating pages, quoting\n" +
			"evidence and writing a correction that cites only the quoted pages. The post is TEXT (all the\n" +
			"arguments), the page at URL, or standard input (- or no argument). --no-llm lists the sources that\n" +
			"address the post and their most related paragraphs, without a model and without a verdict.\n\n" +
			"Exit codes: 0 a finished check (also when no credible source was found); 1 failed, or its case\n" +
			"could not be kept; 2 usage or configuration (nothing to check, no model, nothing to search);\n" +
			"3 no evidence could be obtained (every page or provider failed, or the model was unreadable).",
		ValidArgsFunction: cobra.NoFileCompletions,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runCheck(cmd, app, f, asJSON, noSave, args)
		},
	}
	f.register(cmd.Flags())
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the Check as one JSON object (snake_case keys, see the README) instead of Markdown")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep this check as a case (see muse cases)")
	return cmd
}

func runCheck(cmd *cobra.Command, app *App, f *postFlags, asJSON, noSave bool, args []string) error {
	post, cutoff, eo, err := f.parse(cmd)
	if err != nil {
		return err
	}
	arg := strings.TrimSpace(strings.Join(args, " "))
	if arg == "" || arg == "-" {
		b, err := io.ReadAll(io.LimitReader(app.Stdin, 1<<20))
		if err != nil {
			return usagef("read the post from standard input: %w", err)
		}
		arg = string(b)
	}
	a := pipeline.PostFromArg(arg)
	post.Text, post.URL = a.Text, a.URL
	return runPost(cmd, app, f, asJSON, noSave, post, cutoff, eo, nil)
}

// runPost checks post as `muse check` does, prepare (when not nil)
// filling in the new Check before it runs.
func runPost(cmd *cobra.Command, app *App, f *postFlags, asJSON, noSave bool, post pipeline.Post, cutoff time.Time, eo pipeline.Options, prepare func(*pipeline.Check)) error {
	ctx := cmd.Context()
	if err := setup.CheckSearchable(ctx, app.Cfg); err != nil {
		return err
	}
	eo.Snapshots = !noSave
	eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, eo)
	if err != nil {
		return usage(err)
	}
	defer closeEngine()
	// A post given by its URL is read from there, the flags laid over it.
	if post, err = eng.ReadPost(ctx, post); err != nil {
		return usage(err)
	}
	if f.asOfPost {
		if cutoff, err = pipeline.AsOfPost(post); err != nil {
			return usagef("--as-of-post: %w (--posted-at TIME, or --before TIME)", err)
		}
	}
	c := eng.NewCheck(post, cutoff)
	if prepare != nil {
		prepare(c)
	}
	ro, closeCases, storeErr := recordOptions(ctx, app, noSave)
	ro.Pages, ro.Headers = eng.RawPage, eng.PageHeader
	defer closeCases()
	ro.OnEvent = func(ev pipeline.Event) {
		if line := export.ProgressLine(ev); line != "" {
			fmt.Fprintln(app.Stderr, "muse:", line)
		}
	}
	runErr := cases.Keep(ctx, eng, c, pipeline.StageImages, ro)
	var notKept *cases.NotKeptError
	if errors.As(runErr, &notKept) {
		runErr = nil
	}
	if runErr == nil {
		judgeSupport(ctx, app, eng, c, ro.Store, notKept == nil)
	}
	if !errors.Is(runErr, pipeline.ErrEmptyPost) && (len(c.Searches) > 0 || len(c.Sources) > 0) {
		// What became of the search, as the accounting says it: the
		// same words as the report's and the app's.
		fmt.Fprintln(app.Stderr, "muse: searched:", c.Account().Summary)
		if v := c.Verdicts(); v.Post != "" {
			fmt.Fprintln(app.Stderr, "muse: verdict:", export.VerdictLine(v))
		}
	}
	fmt.Fprintln(app.Stderr, "muse:", export.UsageLine(c.Usage))
	if line := c.EvidenceLine(); line != "" {
		fmt.Fprintln(app.Stderr, "muse:", line)
	}
	if ro.Store != nil && runErr == nil && notKept == nil {
		fmt.Fprintf(app.Stderr, "muse: kept as case %s (muse cases open %s)\n", c.ID, c.ID)
	}
	if errors.Is(runErr, pipeline.ErrEmptyPost) {
		return usage(runErr)
	}
	if asJSON {
		var b []byte
		if b, err = export.JSON(c); err == nil {
			_, err = app.Stdout.Write(b)
		}
	} else {
		_, err = io.WriteString(app.Stdout, export.Report(c))
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("check not finished: %w", runErr)
	case notKept != nil:
		return fmt.Errorf("%w; the result above is the only copy (--no-save checks without keeping one)", notKept)
	case storeErr != nil:
		return fmt.Errorf("the check finished but its case could not be kept (%w); the result above is the only copy (--no-save checks without keeping one)", storeErr)
	}
	return err
}

// recordOptions opens the case store for `muse check` and `muse batch`
// (none with --no-save). A store that cannot be opened is said on stderr,
// the checks run unkept, and storeErr says why: the command then exits
// non-zero, since the case it was to keep is not kept.
func recordOptions(ctx context.Context, app *App, noSave bool) (ro cases.RecordOptions, close func(), storeErr error) {
	ro = cases.RecordOptions{OnSaveError: func(err error) { fmt.Fprintln(app.Stderr, "muse: warning:", err) },
		OnConflict: func(c *cases.ConflictError) { fmt.Fprintln(app.Stderr, "muse: note:", c) }}
	if noSave {
		return ro, func() {}, nil
	}
	st, err := openCases(ctx, app)
	if err != nil {
		fmt.Fprintln(app.Stderr, "muse: warning: checks will not be kept as cases:", err)
		return ro, func() {}, err
	}
	ro.Store = st
	return ro, func() { st.Close() }, nil
}

// judgeSupport judges the correction's support map in one model call
// (none without a model) and says on stderr what it found; the case is
// saved again with the judgements when it was kept.
func judgeSupport(ctx context.Context, app *App, eng *pipeline.Engine, c *pipeline.Check, store cases.RecordStore, kept bool) {
	before := len(c.SupportJudgements)
	if err := eng.JudgeSupport(ctx, c); err != nil {
		fmt.Fprintln(app.Stderr, "muse: warning: the support map's sentences were not judged by the model:", err)
	}
	if line := pipeline.SupportSummary(c.SupportMap()); line != "" {
		fmt.Fprintln(app.Stderr, "muse: support:", line)
	}
	if store != nil && kept && len(c.SupportJudgements) != before {
		if err := store.Save(context.WithoutCancel(ctx), c); err != nil {
			fmt.Fprintln(app.Stderr, "muse: warning: the support map's judgements are not in the case:", err)
		}
	}
}
