// Command muse helps journalists correct misleading social-media posts, the
// way the Muse system does (Zhou, Sharma, Zhang, Althoff, arXiv 2403.11169):
// it searches credible publishers, reads their pages, quotes the evidence and
// writes a short correction, with a person in the loop at every stage.
//
// `muse` opens the terminal app; the subcommands run the same engine headless.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/tui"
)

// version is set at build time with -ldflags "-X main.version=…".
var version = "dev"

// App is what every subcommand shares: the configuration (after flags) and
// where output goes.
type App struct {
	Cfg    *setup.Config
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader

	configFile string
	ratings    string
	allowPriv  bool
	noCache    bool
}

// exitError carries a process exit code with its one-line reason.
type exitError struct {
	code int
	err  error
}

func (e *exitError) Error() string { return e.err.Error() }
func (e *exitError) Unwrap() error { return e.err }

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	app := &App{Stdout: os.Stdout, Stderr: os.Stderr, Stdin: os.Stdin}
	err := newRoot(app).ExecuteContext(ctx)
	stop()
	if err != nil {
		fmt.Fprintln(os.Stderr, "muse:", err)
		var ee *exitError
		if errors.As(err, &ee) {
			os.Exit(ee.code)
		}
		os.Exit(1)
	}
}

func newRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "muse [TEXT|URL]",
		Short: "Correct misleading social-media posts with sourced, checkable notes",
		Long: "muse finds what credible publishers said about a post, quotes the evidence and drafts a\n" +
			"correction you can edit before you publish it. Without a subcommand it opens the terminal app.",
		Version:       version,
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return app.loadConfig(cmd)
		},
	}
	pf := root.PersistentFlags()
	pf.StringVar(&app.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/muse/config.toml)")
	pf.StringVar(&app.ratings, "ratings", "", "publisher ratings file: MBFC combined.json or CSV domain,factuality,bias (env MUSE_RATINGS)")
	pf.BoolVar(&app.allowPriv, "allow-private-addresses", false, "allow fetching loopback and private addresses (env MUSE_ALLOW_PRIVATE_ADDRESSES)")
	pf.BoolVar(&app.noCache, "no-cache", false, "send every search and model request again instead of answering from the cache (env MUSE_NO_CACHE)")
	root.SetOut(app.Stdout)
	root.SetErr(app.Stderr)
	root.SetIn(app.Stdin)
	addTUI(root, app)

	root.AddCommand(
		// subcommands
		sourcesCmd(app),
		searchCmd(app),
		extractCmd(app),
		checkCmd(app),
		batchCmd(app),
		doctorCmd(app),
		casesCmd(app),
		cacheCmd(app),
		archiveCmd(app),
	)
	return root
}

// archiveCmd is `muse archive add|search`.
func archiveCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "archive", Short: "Add to and search the local archive of pages and fact-checks"}
	cmd.AddCommand(archiveAddCmd(app), archiveSearchCmd(app))
	return cmd
}

// archiveAddCmd is `muse archive add PATH|URL...`.
func archiveAddCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "add PATH|URL...",
		Short: "Archive URLs, HTML files, folders of them, or JSONL records {url,title,text,published,publisher}",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := archive.Open(cmd.Context(), app.Cfg.ArchivePath())
			if err != nil {
				return &exitError{2, err}
			}
			defer store.Close()
			fo := setup.FetchOptions(app.Cfg)
			fo.Store = store
			f := fetch.New(fo)
			defer f.CloseIdleConnections()
			res := store.Import(cmd.Context(), args, archive.ImportOptions{Fetcher: f, Errors: app.Stderr})
			fmt.Fprintf(app.Stderr, "muse: archive: %d added, %d failed\n", res.Added, res.Failed)
			if res.Failed > 0 {
				return &exitError{1, fmt.Errorf("%d of %d items could not be archived", res.Failed, res.Added+res.Failed)}
			}
			return nil
		},
	}
}

// archiveSearchCmd is `muse archive search [--json] QUERY`.
func archiveSearchCmd(app *App) *cobra.Command {
	var asJSON bool
	var limit int
	cmd := &cobra.Command{
		Use:   "search [--json] QUERY",
		Short: "Search the local archive, best first",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			store, err := archive.Open(cmd.Context(), app.Cfg.ArchivePath())
			if err != nil {
				return &exitError{2, err}
			}
			defer store.Close()
			hits, err := store.Search(cmd.Context(), strings.Join(args, " "), archive.SearchOptions{Limit: limit})
			if err != nil {
				return &exitError{2, err}
			}
			if asJSON {
				return archive.WriteJSON(app.Stdout, hits)
			}
			return archive.WriteText(app.Stdout, hits)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of hits (url, title, publisher, snippet, published, score)")
	cmd.Flags().IntVar(&limit, "limit", 10, "how many hits to show")
	return cmd
}

// loadConfig reads the config file and environment, then applies the flags
// the user set (flags > environment > file > defaults).
func (app *App) loadConfig(cmd *cobra.Command) error {
	cfg, err := setup.Load(app.configFile, os.Getenv)
	if err != nil {
		return &exitError{2, err}
	}
	if cmd.Flags().Changed("ratings") {
		cfg.RatingsFile = app.ratings
	}
	if cmd.Flags().Changed("allow-private-addresses") {
		cfg.AllowPrivateAddresses = app.allowPriv
	}
	if cmd.Flags().Changed("no-cache") {
		cfg.NoCache = app.noCache
	}
	app.Cfg = cfg
	return nil
}

// sourcesCmd groups the publisher-rating commands.
func sourcesCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "sources", Short: "Rate publishers and keep their ratings up to date"}
	cmd.AddCommand(sourcesRateCmd(app), sourcesUpdateCmd(app))
	return cmd
}

// sourcesRateCmd is `muse sources rate [--json] URL|DOMAIN...`.
func sourcesRateCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "rate [--json] URL|DOMAIN...",
		Short: "Show each publisher's factuality, bias, tier and where the rating came from",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			r, err := ratings.Load(setup.RatingsOptions(app.Cfg))
			if err != nil {
				return &exitError{2, err}
			}
			if asJSON {
				return ratings.WriteJSON(app.Stdout, r.RateAll(args))
			}
			return ratings.WriteTable(app.Stdout, r.RateAll(args))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object per argument, one per line, in order")
	return cmd
}

// sourcesUpdateCmd is `muse sources update [--url URL]`.
func sourcesUpdateCmd(app *App) *cobra.Command {
	var url string
	cmd := &cobra.Command{
		Use:   "update [--url URL]",
		Short: "Download the MBFC browser extension's publisher ratings and install them",
		Long: "Downloads the Media Bias/Fact Check extension's combined.json, checks it and installs it under\n" +
			"the data folder; a bad download keeps the previous file. The ratings are MBFC's editorial work:\n" +
			"they are fetched at your request, as the extension does, and never shipped with muse.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			u := app.Cfg.RatingsURL
			if cmd.Flags().Changed("url") {
				u = url
			}
			res, err := ratings.Update(cmd.Context(), ratings.UpdateOptions{URL: u, DataDir: app.Cfg.DataDir})
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "installed %d publisher ratings dated %s in %s\n", res.Count, res.Date, res.Path)
			return nil
		},
	}
	cmd.Flags().StringVar(&url, "url", "", "where to download combined.json (env MUSE_RATINGS_URL; default "+ratings.DefaultUpdateURL+")")
	return cmd
}

// searchCmd is `muse search [--json] [--before TIME] QUERY`.
func searchCmd(app *App) *cobra.Command {
	var asJSON bool
	var before string
	cmd := &cobra.Command{
		Use:   "search [--json] [--before TIME] QUERY",
		Short: "Search every configured provider at once and show the merged, de-duplicated hits",
		Long: "Sends QUERY to each configured search provider (SEARXNG_URL, BRAVE_API_KEY, GOOGLE_CSE_KEY +\n" +
			"GOOGLE_CSE_CX, SERPAPI_API_KEY, GOOGLE_FACTCHECK_API_KEY) and to the local archive, and prints\n" +
			"the hits merged by page. A provider that fails is reported on stderr and the others go on.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			q := search.Query{Text: strings.Join(args, " ")}
			if before != "" {
				t, err := timeFlag("before", before)
				if err != nil {
					return err
				}
				q.Before = t
			}
			searchers, closeSearch, err := setup.Searchers(cmd.Context(), app.Cfg, func(w string) {
				fmt.Fprintln(app.Stderr, "muse: search:", w)
			})
			if err != nil {
				return &exitError{2, err}
			}
			defer closeSearch()
			hits, failures := search.Run(cmd.Context(), searchers, []search.Query{q})
			for _, f := range failures {
				fmt.Fprintln(app.Stderr, "muse: search:", f)
			}
			if len(failures) == len(searchers) {
				return fmt.Errorf("every search provider failed")
			}
			if asJSON {
				return search.WriteJSON(app.Stdout, hits)
			}
			return search.WriteText(app.Stdout, hits)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hits as a JSON array")
	cmd.Flags().StringVar(&before, "before", "", "only pages published before TIME (RFC 3339 or YYYY-MM-DD), where the engine can filter by date")
	return cmd
}

// extractCmd is `muse extract [--json] [--url ORIGINAL_URL] FILE|URL|-`.
func extractCmd(app *App) *cobra.Command {
	var asJSON bool
	var origURL string
	cmd := &cobra.Command{
		Use:   "extract [--json] [--url ORIGINAL_URL] FILE|URL|-",
		Short: "Show a page's main text, title, publisher, author, dates, language and fact-checks",
		Long: "Reads a saved HTML page (any charset; - for standard input) or fetches an http(s) URL, and\n" +
			"prints what muse reads from it: title, publisher and site, author, original publication and\n" +
			"modification dates, language, lead image, canonical URL, any ClaimReview fact-checks and the\n" +
			"main text. --url says where a saved page came from (it helps find the date and resolve links).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := extractArticle(cmd.Context(), app, args[0], origURL)
			if err != nil {
				return err
			}
			if asJSON {
				return extract.WriteJSON(app.Stdout, a)
			}
			return extract.WriteText(app.Stdout, a)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (snake_case keys)")
	cmd.Flags().StringVar(&origURL, "url", "", "the page's original URL, for a saved file")
	return cmd
}

// extractArticle reads arg as a file, or fetches it when it is an http(s) URL.
func extractArticle(ctx context.Context, app *App, arg, origURL string) (*extract.Article, error) {
	lower := strings.ToLower(arg)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return extract.Options{}.ExtractFile(arg, origURL)
	}
	f := fetch.New(setup.FetchOptions(app.Cfg))
	defer f.CloseIdleConnections()
	page, err := f.Fetch(ctx, arg)
	if err != nil {
		return nil, err
	}
	pageURL := page.FinalURL
	if origURL != "" {
		pageURL = origURL
	}
	return extract.Extract(page.Body, pageURL)
}

// tuiFlags are the bare command's own flags: `muse [flags] [TEXT|URL]`,
// named as in `muse check`.
type tuiFlags struct {
	before, author, handle string
	images                 []string
	noLLM, mouse           bool
}

// addTUI makes the bare `muse` command open the terminal app, prefilled and
// started at once when a post is given.
func addTUI(root *cobra.Command, app *App) {
	f := &tuiFlags{}
	fl := root.Flags()
	fl.StringVar(&f.before, "before", "", "cutoff: only pages published before TIME count (RFC 3339 or YYYY-MM-DD; default the post's time)")
	fl.StringArrayVar(&f.images, "image", nil, "an image of the post, path or URL (repeatable)")
	fl.StringVar(&f.author, "author", "", "the post's author")
	fl.StringVar(&f.handle, "handle", "", "the post author's handle (@name)")
	fl.BoolVar(&f.noLLM, "no-llm", false, "extractive mode: sources and quotes without a model, and no verdict")
	fl.BoolVar(&f.mouse, "mouse", false, "wheel scrolling and clicks (turns off the terminal's own text selection)")
	root.Args = cobra.MaximumNArgs(1)
	root.RunE = func(cmd *cobra.Command, args []string) error { return runTUI(cmd.Context(), app, f, args) }
}

func runTUI(ctx context.Context, app *App, f *tuiFlags, args []string) error {
	opts := tui.Options{Post: pipeline.Post{Author: f.author, Handle: f.handle, Images: f.images}}
	if f.before != "" {
		t, err := search.ParseCutoff(f.before)
		if err != nil {
			return &exitError{2, fmt.Errorf("--before: %w", err)}
		}
		opts.Cutoff = t
	}
	if len(args) == 1 {
		p := tui.PostFromArg(args[0])
		opts.Post.Text, opts.Post.URL, opts.Start = p.Text, p.URL, true
	}
	return startTUI(ctx, app, f.noLLM, f.mouse, opts)
}

// startTUI opens the app with the engine and the case store. A reopened
// case (opts.Case) needs neither: when the engine cannot start it is
// shown read-only, since reading a case is offline.
func startTUI(ctx context.Context, app *App, noLLM, mouse bool, opts tui.Options) error {
	opts.DraftDir = filepath.Join(app.Cfg.DataDir, "drafts")
	opts.Mouse = mouse
	opts.Remember = func(domain string, boost bool) error {
		return ratings.SetOverride(app.Cfg.OverridesFile, domain, ratings.Override{Boost: boost, Drop: !boost})
	}
	st, err := openCases(ctx, app)
	if err != nil {
		if opts.Case != nil {
			return err
		}
		fmt.Fprintln(app.Stderr, "muse: checks will not be kept as cases:", err)
	} else {
		defer st.Close()
		opts.Cases = st
	}
	opts.Model = app.Cfg.Model
	if noLLM {
		opts.Model = "no model (--no-llm)"
	}
	eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, pipeline.Options{NoLLM: noLLM, Snapshots: true}) // the app shows the engine's snapshots
	switch {
	case err != nil && opts.Case == nil:
		return &exitError{2, fmt.Errorf("start the engine: %w", err)}
	case err != nil:
		opts.Notice = "reading only: the engine cannot start (" + err.Error() + ")"
	default:
		defer closeEngine()
		opts.Runner, opts.NewCheck, opts.FetchPost = eng, eng.NewCheck, eng.PostFromURL
		opts.Pages = eng.RawPage // snapshots of evidence pages keep the HTML as served
	}
	return tui.Run(ctx, opts)
}

// checkFlags are `muse check`'s flags.
type checkFlags struct {
	before, author, handle, postedAt string
	images                           []string
	noLLM, asJSON, noSave            bool
}

// checkCmd is `muse check [flags] [TEXT|URL|-]`.
func checkCmd(app *App) *cobra.Command {
	f := &checkFlags{}
	cmd := &cobra.Command{
		Use:   "check [flags] [TEXT|URL|-]",
		Short: "Check one post headless: Markdown (or --json) on stdout, progress on stderr",
		Long: "Runs the whole Muse pipeline on one post: queries, search, reading and rating pages, quoting\n" +
			"evidence and writing a correction that cites only the quoted pages. The post is TEXT, the page\n" +
			"at URL, or standard input (- or no argument). Exit 0 on a finished check; otherwise a one-line\n" +
			"reason on stderr (2: nothing to check or no model configured). --no-llm lists the sources that\n" +
			"address the post and their most related paragraphs, without a model and without a verdict.",
		RunE: func(cmd *cobra.Command, args []string) error { return runCheck(cmd.Context(), app, f, args) },
	}
	fl := cmd.Flags()
	fl.StringVar(&f.before, "before", "", "cutoff: only pages published before TIME count (RFC 3339 or YYYY-MM-DD; default the post's time)")
	fl.StringArrayVar(&f.images, "image", nil, "an image of the post, path or URL (repeatable)")
	fl.StringVar(&f.author, "author", "", "the post's author")
	fl.StringVar(&f.handle, "handle", "", "the post author's handle (@name)")
	fl.StringVar(&f.postedAt, "posted-at", "", "when the post was published (RFC 3339 or YYYY-MM-DD)")
	fl.BoolVar(&f.noLLM, "no-llm", false, "extractive mode: sources and quotes without a model, and no verdict")
	fl.BoolVar(&f.asJSON, "json", false, "print the check as JSON (DESIGN.md keys) instead of Markdown")
	fl.BoolVar(&f.noSave, "no-save", false, "do not keep this check as a case (see muse cases)")
	return cmd
}

func runCheck(ctx context.Context, app *App, f *checkFlags, args []string) error {
	var post pipeline.Post
	var cutoff time.Time
	var err error
	if f.before != "" {
		if cutoff, err = search.ParseCutoff(f.before); err != nil {
			return &exitError{2, fmt.Errorf("--before: %w", err)}
		}
	}
	if f.postedAt != "" {
		if post.PostedAt, err = search.ParseCutoff(f.postedAt); err != nil {
			return &exitError{2, fmt.Errorf("--posted-at: %w", err)}
		}
	}
	arg := strings.TrimSpace(strings.Join(args, " "))
	if arg == "" || arg == "-" {
		b, err := io.ReadAll(io.LimitReader(app.Stdin, 1<<20))
		if err != nil {
			return &exitError{2, fmt.Errorf("read the post from standard input: %w", err)}
		}
		arg = string(b)
	}
	eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, pipeline.Options{NoLLM: f.noLLM, Snapshots: !f.noSave})
	if err != nil {
		return &exitError{2, err}
	}
	defer closeEngine()
	if lower := strings.ToLower(arg); !strings.ContainsAny(arg, " \n") &&
		(strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")) {
		fromURL, err := eng.PostFromURL(ctx, arg)
		if err != nil {
			return &exitError{2, err}
		}
		if !post.PostedAt.IsZero() { // --posted-at wins over the platform's time
			fromURL.PostedAt = post.PostedAt
		}
		post = fromURL // text, author, handle, time, images and their alt text
	} else {
		post.Text = arg
	}
	if f.author != "" {
		post.Author = f.author
	}
	if f.handle != "" {
		post.Handle = f.handle
	}
	post.Images = append(post.Images, f.images...)
	c := eng.NewCheck(post, cutoff)
	ro, closeCases := recordOptions(ctx, app, eng, f.noSave)
	defer closeCases()
	ro.OnEvent = func(ev pipeline.Event) {
		if line := export.ProgressLine(ev); line != "" {
			fmt.Fprintln(app.Stderr, "muse:", line)
		}
	}
	c.ID = cases.NewID()
	runErr := cases.Record(ctx, eng, c, pipeline.StageImages, ro)
	fmt.Fprintln(app.Stderr, "muse:", export.UsageLine(c.Usage))
	if ro.Store != nil {
		fmt.Fprintf(app.Stderr, "muse: kept as case %s (muse cases open %s)\n", c.ID, c.ID)
	}
	if errors.Is(runErr, pipeline.ErrEmptyPost) {
		return &exitError{2, runErr}
	}
	if f.asJSON {
		enc := json.NewEncoder(app.Stdout)
		enc.SetIndent("", "  ")
		err = enc.Encode(c.ForOutput())
	} else {
		_, err = io.WriteString(app.Stdout, export.Report(c))
	}
	if runErr != nil {
		return fmt.Errorf("check not finished: %w", runErr)
	}
	return err
}

// recordOptions opens the case store for `muse check` and `muse batch`
// (none with --no-save). A store that cannot be opened is said on stderr and
// the checks run unkept.
func recordOptions(ctx context.Context, app *App, eng *pipeline.Engine, noSave bool) (cases.RecordOptions, func()) {
	ro := cases.RecordOptions{Pages: eng.RawPage, OnSaveError: func(err error) { fmt.Fprintln(app.Stderr, "muse: warning:", err) }}
	if noSave {
		return ro, func() {}
	}
	st, err := openCases(ctx, app)
	if err != nil {
		fmt.Fprintln(app.Stderr, "muse: warning: checks will not be kept as cases:", err)
		return ro, func() {}
	}
	ro.Store = st
	return ro, func() { st.Close() }
}

// batchCmd is `muse batch FILE.jsonl [-j N] [-o OUT.jsonl]`.
func batchCmd(app *App) *cobra.Command {
	var parallel int
	var outPath string
	var noLLM, noSave bool
	cmd := &cobra.Command{
		Use:   "batch FILE.jsonl [-j N] [-o OUT.jsonl]",
		Short: "Check many posts, N at a time: one JSON result per line; a rerun skips finished posts",
		Long: "Reads posts as JSON lines {text, author, handle, posted_at, url, images} (- for standard input)\n" +
			"and writes one result per line, {line, key, status, error, check}, as each post finishes.\n" +
			"With -o, results are appended to OUT.jsonl and a rerun skips the posts already done there\n" +
			"(failed ones are tried again). Progress goes to stderr.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			in := app.Stdin
			if args[0] != "-" {
				file, err := os.Open(args[0])
				if err != nil {
					return &exitError{2, fmt.Errorf("open posts: %w", err)}
				}
				defer file.Close()
				in = file
			}
			out, done := app.Stdout, map[string]bool{}
			if outPath != "" {
				var err error
				if done, err = batch.FinishedKeys(outPath); err != nil {
					return &exitError{2, err}
				}
				file, err := os.OpenFile(outPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
				if err != nil {
					return &exitError{2, fmt.Errorf("open results: %w", err)}
				}
				defer file.Close()
				out = file
			}
			eng, closeEngine, err := setup.NewFromConfig(cmd.Context(), app.Cfg, pipeline.Options{NoLLM: noLLM, Snapshots: !noSave})
			if err != nil {
				return &exitError{2, err}
			}
			defer closeEngine()
			ro, closeCases := recordOptions(cmd.Context(), app, eng, noSave)
			defer closeCases()
			run := func(ctx context.Context, c *pipeline.Check) error {
				c.ID = cases.NewID()
				return cases.Record(ctx, eng, c, pipeline.StageImages, ro)
			}
			st, err := batch.Run(cmd.Context(), eng, in, out,
				batch.Options{Parallel: parallel, Done: done, Progress: app.Stderr, Run: run})
			fmt.Fprintf(app.Stderr, "muse: %d posts: %d done, %d failed, %d skipped (already done); %d model calls (%d from the cache), $%.4f\n",
				st.Total, st.Done, st.Failed, st.Skipped, st.LLMCalls, st.CachedCalls, st.CostUSD)
			if ro.Store != nil && st.Done+st.Failed > 0 {
				fmt.Fprintln(app.Stderr, "muse: every check is kept as a case: muse cases")
			}
			if err != nil {
				return err
			}
			if st.Failed > 0 {
				return fmt.Errorf("%d of %d posts failed; their result lines say why, and a rerun tries them again", st.Failed, st.Total)
			}
			return nil
		},
	}
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 4, "posts checked at once")
	cmd.Flags().StringVarP(&outPath, "output", "o", "", "append results to this file and skip the posts it already has")
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "extractive mode: sources and quotes without a model, and no verdict")
	cmd.Flags().BoolVar(&noSave, "no-save", false, "do not keep the checks as cases (see muse cases)")
	return cmd
}

// doctorCmd is `muse doctor`.
func doctorCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "doctor",
		Short: "Check the configuration, model, search providers, ratings and archive, and say what to fix",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			failed := 0
			for _, it := range setup.Doctor(cmd.Context(), app.Cfg) {
				fmt.Fprintf(app.Stdout, "[%s] %s: %s\n", it.Status, it.Name, it.Detail)
				if it.Fix != "" {
					fmt.Fprintf(app.Stdout, "       fix: %s\n", it.Fix)
				}
				if it.Status == setup.DoctorFail {
					failed++
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d problem(s) found; see the fixes above", failed)
			}
			return nil
		},
	}
}

func openCases(ctx context.Context, app *App) (*cases.Store, error) {
	return cases.OpenOptions(ctx, cases.Options{Path: cases.DefaultPath(app.Cfg.DataDir), Secrets: app.Cfg.Secrets()})
}

// casesCmd is `muse cases [--json] [-n N]`, with export and rm.
func casesCmd(app *App) *cobra.Command {
	var asJSON bool
	var limit int
	var contains string
	cmd := &cobra.Command{
		Use:   "cases [--json] [-n N] [--grep TEXT]",
		Short: "List saved checks: date, post, first line of the correction, sources used, cost",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.List(cmd.Context(), cases.ListOptions{Limit: limit, Contains: contains})
			if err != nil {
				return err
			}
			if asJSON {
				enc := json.NewEncoder(app.Stdout)
				enc.SetIndent("", "  ")
				return enc.Encode(append([]cases.Summary{}, list...))
			}
			if len(list) == 0 {
				fmt.Fprintln(app.Stderr, "muse: no saved cases in", st.Path())
				return nil
			}
			return cases.WriteTable(app.Stdout, list)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the list as a JSON array")
	cmd.Flags().IntVarP(&limit, "limit", "n", 0, "show only the N newest cases (0: all)")
	cmd.Flags().StringVar(&contains, "grep", "", "only cases whose post or correction contains TEXT")
	cmd.AddCommand(casesExportCmd(app), casesRmCmd(app), casesOpenCmd(app))
	return cmd
}

// casesExportCmd is `muse cases export ID --format md|json|note|claimreview [-o FILE]`.
func casesExportCmd(app *App) *cobra.Command {
	var format, out, rating string
	var rev export.Reviewer
	cmd := &cobra.Command{
		Use:   "export ID --format md|json|note|claimreview [-o FILE]",
		Short: "Export a saved check for editors (md), scripts (json), Community Notes (note) or ClaimReview JSON-LD",
		Long: "ID may be any unique prefix of a case ID (see `muse cases`). A note is at most 280 characters with\n" +
			"each link counted as 1 and cites at least one source; when the correction cannot fit, the export\n" +
			"fails and says why. claimreview needs --reviewer, --reviewer-url (or --review-url) and --rating.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := export.Options{Format: format, Reviewer: rev}
			if strings.EqualFold(format, "claimreview") {
				r, err := export.ParseRating(rating)
				if err != nil {
					return &exitError{2, fmt.Errorf("claimreview needs --rating: %w", err)}
				}
				o.Rating = r
			}
			st, err := openCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			c, err := st.Get(cmd.Context(), id)
			if err != nil {
				return err
			}
			b, err := export.Render(c, o)
			if err != nil {
				return fmt.Errorf("case %s: %w", id, err)
			}
			if out == "" || out == "-" {
				_, err = app.Stdout.Write(b)
				return err
			}
			if err := os.WriteFile(out, b, 0o644); err != nil {
				return fmt.Errorf("write export: %w", err)
			}
			fmt.Fprintf(app.Stderr, "muse: wrote case %s as %s to %s\n", id, format, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "md", "md, json, note or claimreview")
	f.StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	f.StringVar(&rev.Name, "reviewer", "", "claimreview: the fact-checking organisation's name")
	f.StringVar(&rev.URL, "reviewer-url", "", "claimreview: the organisation's home page")
	f.StringVar(&rev.ReviewURL, "review-url", "", "claimreview: the page where the fact-check is published (default --reviewer-url)")
	f.StringVar(&rating, "rating", "", "claimreview: the verdict, e.g. false, misleading, mostly false, missing context")
	return cmd
}

// casesOpenCmd is `muse cases open ID`: the case in the terminal app where
// it was left, read from the store alone (nothing is run or fetched).
func casesOpenCmd(app *App) *cobra.Command {
	var noLLM, mouse bool
	cmd := &cobra.Command{
		Use:   "open ID",
		Short: "Reopen a saved check in the terminal app where it was left, offline",
		Long: "ID may be any unique prefix of a case ID (see `muse cases`). Nothing runs when the case opens;\n" +
			"rerunning a stage from the app uses the engine as `muse` would (--no-llm when the case was made so).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			id, err := st.Resolve(cmd.Context(), args[0])
			if err == nil {
				var c *pipeline.Check
				if c, err = st.Get(cmd.Context(), id); err == nil {
					st.Close()
					return startTUI(cmd.Context(), app, noLLM || c.NoLLM, mouse, tui.Options{Case: c})
				}
			}
			st.Close()
			return err
		},
	}
	cmd.Flags().BoolVar(&noLLM, "no-llm", false, "reruns use the extractive mode, without a model")
	cmd.Flags().BoolVar(&mouse, "mouse", false, "wheel scrolling and clicks (turns off the terminal's own text selection)")
	return cmd
}

// casesRmCmd is `muse cases rm ID...`.
func casesRmCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:   "rm ID...",
		Short: "Delete saved checks with their drafts and page snapshots",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := openCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			var failed error
			for _, a := range args {
				id, err := st.Resolve(cmd.Context(), a)
				if err == nil {
					err = st.Delete(cmd.Context(), id)
				}
				if err != nil {
					fmt.Fprintln(app.Stderr, "muse:", err)
					failed = errors.New("some cases were not removed")
					continue
				}
				fmt.Fprintln(app.Stdout, "removed case", id)
			}
			return failed
		},
	}
}

// cacheCmd groups `muse cache clear` and `muse cache stats`.
func cacheCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "cache", Short: "Manage the cache of search and model responses"}
	open := func(cmd *cobra.Command) (*httpcache.Cache, error) {
		return httpcache.Open(cmd.Context(), httpcache.Options{Path: httpcache.DefaultPath(app.Cfg.DataDir), Bypass: true})
	}
	cmd.AddCommand(&cobra.Command{
		Use:   "clear",
		Short: "Forget every cached search and model response",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			n, err := c.Clear(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "removed %d cached responses from %s\n", n, httpcache.DefaultPath(app.Cfg.DataDir))
			return nil
		},
	}, &cobra.Command{
		Use:   "stats",
		Short: "Show how many responses are cached and their size",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			c, err := open(cmd)
			if err != nil {
				return err
			}
			defer c.Close()
			s, err := c.Stats(cmd.Context())
			if err != nil {
				return err
			}
			fmt.Fprintf(app.Stdout, "%d cached responses, %d bytes, in %s\n", s.Entries, s.Bytes, httpcache.DefaultPath(app.Cfg.DataDir))
			return nil
		},
	})
	return cmd
}

// timeFlag reads the value of a time flag (--before, --posted-at): RFC 3339
// or YYYY-MM-DD; a bad value is a usage error (exit 2) naming the flag.
func timeFlag(name, value string) (time.Time, error) {
	t, err := search.ParseCutoff(value)
	if err != nil {
		return time.Time{}, &exitError{2, fmt.Errorf("--%s: %w", name, err)}
	}
	return t, nil
}
