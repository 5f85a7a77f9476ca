// Command muse helps journalists correct misleading social-media posts, the
// way the Muse system does (Zhou, Sharma, Zhang, Althoff, arXiv 2403.11169):
// it searches credible publishers, reads their pages, quotes the evidence and
// writes a short correction, with a person in the loop at every stage.
//
// `muse` opens the terminal app; the subcommands run the same engine headless.
package main

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"runtime/debug"
	"slices"
	"strings"
	"syscall"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"golang.org/x/term"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/batch"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/httpcache"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/sanitize"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/tui"
)

// App is what every subcommand shares: the configuration (after flags) and
// where output goes. Stdout and Stderr redact every secret of the
// configuration once it is loaded: they are the one way out of muse.
type App struct {
	Cfg    *setup.Config
	Stdout io.Writer
	Stderr io.Writer
	Stdin  io.Reader
	// StderrTTY is true when standard error is a terminal: batch progress
	// then updates one line in place.
	StderrTTY bool
	// Progress is where muse draws its own progress lines (figures only,
	// never outside text): the terminal itself, since Stderr's sanitiser
	// would turn the carriage return that redraws a line into a newline.
	// Nil: Stderr.
	Progress io.Writer

	// Seams for tests, as gh's runF: record runs one check (cases.Record),
	// runApp opens the terminal app (tui.Run).
	record func(ctx context.Context, e *pipeline.Engine, c *pipeline.Check, from pipeline.Stage, o cases.RecordOptions) error
	runApp func(ctx context.Context, opts tui.Options) error

	redact     *sources.Redactor
	configFile string
	ratings    string
	dbURL      string
	allowPriv  bool
	noCache    bool
}

func main() {
	os.Exit(mainApp(&App{}))
}

// mainApp runs muse as a process with app's seams: the command line, the
// standard streams, interrupts.
func mainApp(app *App) int {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// Nothing muse prints can drive the terminal: page and model text
	// lose their control characters and escape sequences on the way out
	// (JSON is escaped already and passes unchanged).
	out, errOut := sanitize.NewWriter(os.Stdout), sanitize.NewWriter(os.Stderr)
	defer out.Flush()
	defer errOut.Flush()
	app.Stdout, app.Stderr, app.Stdin = out, errOut, os.Stdin
	app.Progress = os.Stderr
	app.StderrTTY = term.IsTerminal(int(os.Stderr.Fd()))
	return app.execute(ctx, os.Args[1:])
}

// execute runs the command line args and returns the exit code, having
// said why on stderr when it is not 0.
func (app *App) execute(ctx context.Context, args []string) int {
	if app.record == nil {
		app.record = cases.Record
	}
	if app.runApp == nil {
		app.runApp = tui.Run
	}
	root := newRoot(app)
	root.SetArgs(args)
	err := root.ExecuteContext(ctx)
	if err != nil {
		fmt.Fprintln(app.Stderr, "muse:", err)
	}
	return exitCode(err)
}

func newRoot(app *App) *cobra.Command {
	root := &cobra.Command{
		Use:   "muse [flags] [TEXT|URL]",
		Short: "Correct misleading social-media posts with sourced, checkable notes",
		Long: "muse finds what credible publishers said about a post, quotes the evidence and drafts a\n" +
			"correction you can edit before you publish it. Without a subcommand it opens the terminal app\n" +
			"(on a setup screen when no model, or nothing to search, is configured).\n\n" +
			"Exit codes: 0 done, 1 failed, 2 usage or configuration, 3 no evidence could be obtained.\n" +
			"--json prints a JSON array for a list, one object for a single record, JSON Lines for a stream (batch).",
		Version:       versionString(),
		SilenceUsage:  true,
		SilenceErrors: true,
		PersistentPreRunE: func(cmd *cobra.Command, args []string) error {
			return app.loadConfig(cmd)
		},
	}
	root.SetVersionTemplate("muse {{.Version}}\n")
	pf := root.PersistentFlags()
	pf.StringVar(&app.configFile, "config", "", "config file (default $XDG_CONFIG_HOME/muse/config.toml)")
	pf.StringVar(&app.ratings, "ratings", "", "publisher ratings file: MBFC combined.json or CSV domain,factuality,bias (env MUSE_RATINGS)")
	pf.StringVar(&app.dbURL, "database-url", "", "a newsroom's shared PostgreSQL (postgres://…): cases, page archive, job queue, spend ledger and cache (env MUSE_DATABASE_URL)")
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
		workerCmd(app),
		doctorCmd(app),
		casesCmd(app),
		cacheCmd(app),
		archiveCmd(app),
		configCmd(app),
		versionCmd(app),
	)
	finishTree(root)
	return root
}

// archiveCmd is `muse archive add|search`.
func archiveCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "archive", Short: "Add to and search the local archive of pages and fact-checks"}
	cmd.AddCommand(archiveAddCmd(app), archiveSearchCmd(app))
	return cmd
}

// archiveAddCmd is `muse archive add PATH|URL...` and `muse archive add
// --claimreview FILE|URL...`.
func archiveAddCmd(app *App) *cobra.Command {
	var claimReview bool
	cmd := &cobra.Command{
		Use:   "add PATH|URL...|-",
		Short: "Archive URLs, HTML files, folders of them, or JSONL records {url,title,text,published,publisher}",
		Long: "Each argument is an http(s) URL (fetched and read), an .html file (.htm, .html.gz), a folder of them, or a\n" +
			".jsonl file of records {url,title,text,published,publisher}. - reads more arguments from\n" +
			"standard input, one a line.\n\n" +
			"With --claimreview each argument is a file or URL of fact-checks as they are published: a page\n" +
			"with ClaimReview markup (JSON-LD or microdata), ClaimReview JSON-LD or a DataFeed of it (the\n" +
			"Data Commons fact-check feed), or a saved Google Fact Check Tools answer. A post that repeats\n" +
			"an imported claim is shown as already checked.",
		Args: cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := argsWithStdin(args, app.Stdin)
			if err != nil {
				return err
			}
			store, err := archive.Open(cmd.Context(), app.Cfg.ArchivePath())
			if err != nil {
				return err
			}
			defer store.Close()
			fo := setup.FetchOptions(app.Cfg)
			fo.Store = store
			f := fetch.New(fo)
			defer f.CloseIdleConnections()
			// Progress on one line rewritten in place on a terminal, a line
			// a batch of records (and of merged words) otherwise.
			status := func(line string) {
				if app.StderrTTY {
					fmt.Fprintf(app.progress(), "\r%s\x1b[K", line)
				} else {
					fmt.Fprintln(app.Stderr, line)
				}
			}
			start := time.Now()
			progress := func(done int) {
				status(fmt.Sprintf("muse: archive add: %d done, %.0f a second", done, float64(done)/max(time.Since(start).Seconds(), 1e-3)))
			}
			merging := func(done, of int) {
				status(fmt.Sprintf("muse: archive: merging postings rows, %d of %d words", done, of))
			}
			opts := archive.ImportOptions{Fetcher: f, Errors: app.Stderr, Progress: progress, Merging: merging}
			var res archive.ImportResult
			if claimReview {
				res = store.ImportClaimReviews(cmd.Context(), args, opts)
			} else {
				res = store.Import(cmd.Context(), args, opts)
			}
			if app.StderrTTY {
				fmt.Fprintln(app.progress())
			}
			if claimReview {
				fmt.Fprintf(app.Stderr, "muse: archive: %d fact-checks added, %d files or URLs failed\n", res.Added, res.Failed)
				if res.Failed > 0 {
					return fmt.Errorf("%d of %d files or URLs held no fact-check that could be read", res.Failed, len(args))
				}
				return nil
			}
			fmt.Fprintf(app.Stderr, "muse: archive: %d added, %d failed\n", res.Added, res.Failed)
			if m := res.Merged; m.Terms > 0 {
				fmt.Fprintf(app.Stderr, "muse: archive: postings of %d words merged, %d rows into %d\n", m.Terms, m.Before, m.After)
			}
			if res.MergeErr != nil {
				// The archive is complete; its searches are only slower.
				fmt.Fprintf(app.Stderr, "muse: archive: %v (the pages are stored; a later import merges again)\n", res.MergeErr)
			}
			if res.Skipped > 0 {
				fmt.Fprintf(app.Stderr, "muse: archive: %d files skipped in the folders: not .html, .htm, .html.gz, .jsonl or .ndjson\n", res.Skipped)
			}
			if res.Added+res.Failed == 0 && res.Skipped > 0 {
				return errors.New("nothing to archive: no page or JSONL file among the files given")
			}
			if res.Failed > 0 {
				return fmt.Errorf("%d of %d items could not be archived", res.Failed, res.Added+res.Failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&claimReview, "claimreview", false, "import fact-checks (ClaimReview pages, JSON-LD, DataFeed, Fact Check Tools answers)")
	return cmd
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
				return err
			}
			defer store.Close()
			hits, err := store.Search(cmd.Context(), strings.Join(args, " "), archive.SearchOptions{Limit: limit})
			if err != nil {
				return err
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
// the user set (flags > environment > file > defaults). From then on
// stdout and stderr redact the configuration's secrets. Problems in the
// config file are warned of on stderr; a value of the wrong type stops
// every command but those that show the configuration (doctor, config).
func (app *App) loadConfig(cmd *cobra.Command) error {
	cfg, err := setup.Load(app.configFile, os.Getenv)
	if cfg == nil {
		return usage(err)
	}
	for k, f := range map[string]struct {
		flag string
		set  func()
	}{
		"ratings":                 {"ratings", func() { cfg.RatingsFile = app.ratings }},
		"allow_private_addresses": {"allow-private-addresses", func() { cfg.AllowPrivateAddresses = app.allowPriv }},
		"no_cache":                {"no-cache", func() { cfg.NoCache = app.noCache }},
		"database_url":            {"database-url", func() { cfg.DatabaseURL = app.dbURL }},
	} {
		if cmd.Flags().Changed(f.flag) {
			f.set()
			cfg.SetFlag(k)
		}
	}
	app.Cfg = cfg
	app.redact = sources.NewRedactor(cfg.Secrets()...)
	app.Stdout, app.Stderr = app.redact.Writer(app.Stdout), app.redact.Writer(app.Stderr)
	if err != nil && !showsConfig(cmd) {
		return usage(err)
	}
	for _, p := range cfg.Problems {
		fmt.Fprintln(app.Stderr, "muse: warning:", p)
	}
	return nil
}

// showsConfig: the commands that run on a broken configuration, to show it.
func showsConfig(cmd *cobra.Command) bool {
	for c := cmd; c != nil; c = c.Parent() {
		if n := c.Name(); n == "doctor" || n == "config" || n == "version" {
			return true
		}
	}
	return false
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
		Use:   "rate [--json] URL|DOMAIN...|-",
		Short: "Show each publisher's factuality, bias, tier and where the rating came from",
		Long:  "Rates each URL or domain; - reads more of them from standard input, one a line.",
		Args:  cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := argsWithStdin(args, app.Stdin)
			if err != nil {
				return err
			}
			r, err := ratings.Load(setup.RatingsOptions(app.Cfg))
			if err != nil {
				return usage(err)
			}
			if asJSON {
				return ratings.WriteJSON(app.Stdout, r.RateAll(args))
			}
			return ratings.WriteTable(app.Stdout, r.RateAll(args))
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array, one object per argument in order (input, domain, publisher, factuality, bias, tier, origin, user_content)")
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
		Long: "Sends QUERY to each configured search provider (SEARXNG_URL, BRAVE_API_KEY, SERPER_API_KEY,\n" +
			"TAVILY_API_KEY, EXA_API_KEY, SERPAPI_API_KEY, GOOGLE_CSE_KEY + GOOGLE_CSE_CX — which ends on\n" +
			"2027-01-01 —, GOOGLE_FACTCHECK_API_KEY) and to the local archive, and prints the hits merged by\n" +
			"page. A provider that fails is reported on stderr and the others go on.",
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
				return usage(err)
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

// postFlags are the flags that describe the post and how to check it, the
// same for `muse [TEXT|URL]` and `muse check`.
type postFlags struct {
	before, author, handle, postedAt, language string
	images                                     []string
	correctionLanguage                         string
	noLLM                                      bool
	hits                                       int
}

// register adds the post flags to fl.
func (f *postFlags) register(fl *pflag.FlagSet) {
	fl.StringVar(&f.before, "before", "", "cutoff: only pages published before TIME count (RFC 3339 or YYYY-MM-DD; default the post's time)")
	fl.StringArrayVar(&f.images, "image", nil, "an image of the post, path or URL (repeatable)")
	fl.StringVar(&f.author, "author", "", "the post's author")
	fl.StringVar(&f.handle, "handle", "", "the post author's handle (@name)")
	fl.StringVar(&f.postedAt, "posted-at", "", "when the post was published (RFC 3339 or YYYY-MM-DD)")
	fl.StringVar(&f.language, "language", "", "the post's language (es, de, pt-BR, Spanish…); default: detected from its text")
	f.registerEngine(fl)
}

// registerEngine adds the flags that set how posts are checked (also
// `muse batch`'s).
func (f *postFlags) registerEngine(fl *pflag.FlagSet) {
	fl.BoolVar(&f.noLLM, "no-llm", false, "extractive mode: sources and quotes without a model, and no verdict")
	fl.IntVar(&f.hits, "hits", 0, "hits per query from each search provider in the first search (config hits_per_query; default 5)")
	fl.StringVar(&f.correctionLanguage, "correction-language", "", "write the correction in this language (es, de, English…); default: the post's")
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
	return pipeline.Options{NoLLM: f.noLLM, FirstPassHits: f.hits, CorrectionLanguage: cl}, nil
}

// parse reads the post flags: the post's metadata, the cutoff and the
// engine options they set. A bad value is a usage error naming the flag.
func (f *postFlags) parse(cmd *cobra.Command) (post pipeline.Post, cutoff time.Time, opts pipeline.Options, err error) {
	post = pipeline.Post{Author: f.author, Handle: f.handle, Images: f.images}
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

// addTUI makes the bare `muse` command open the terminal app, prefilled and
// started at once when a post is given. A single bare word close to a
// subcommand's name is a usage error with "did you mean".
func addTUI(root *cobra.Command, app *App) {
	f := &postFlags{}
	var mouse bool
	f.register(root.Flags())
	root.Flags().BoolVar(&mouse, "mouse", false, "wheel scrolling and clicks (turns off the terminal's own text selection)")
	root.Args = func(cmd *cobra.Command, args []string) error {
		if len(args) != 1 || strings.ContainsAny(args[0], " \t\n") {
			return nil
		}
		if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
			return usagef("unknown command %q for \"muse\"; did you mean %s?\n(to check the word as a post: muse check %s)",
				args[0], strings.Join(s, " or "), args[0])
		}
		return nil
	}
	root.ValidArgsFunction = cobra.NoFileCompletions
	root.RunE = func(cmd *cobra.Command, args []string) error {
		post, cutoff, eo, err := f.parse(cmd)
		if err != nil {
			return err
		}
		opts := tui.Options{Post: post, Cutoff: cutoff}
		if arg := strings.TrimSpace(strings.Join(args, " ")); arg != "" {
			p := tui.PostFromArg(arg)
			opts.Post.Text, opts.Post.URL, opts.Start = p.Text, p.URL, true
		}
		if !eo.NoLLM {
			if d := setup.Detect(cmd.Context(), app.Cfg); d.Model == "" || !d.Search {
				// First run: the setup screen says what was looked for;
				// enter goes on in the extractive mode, which needs nothing
				// and pays for nothing while there is nothing to search.
				opts.Setup, eo.NoLLM = &d, true
			}
		}
		return startTUI(cmd.Context(), app, eo, mouse, opts)
	}
}

// startTUI opens the app with the engine and the case store. A reopened
// case (opts.Case) needs neither: when the engine cannot start it is
// shown read-only, since reading a case is offline.
func startTUI(ctx context.Context, app *App, eo pipeline.Options, mouse bool, opts tui.Options) error {
	opts.DraftDir = filepath.Join(app.Cfg.DataDir, "drafts")
	opts.Mouse = mouse
	opts.Secrets = app.Cfg.Secrets()
	opts.Remember = func(domain string, boost bool) error {
		return ratings.SetOverride(app.Cfg.OverridesFile, domain, ratings.Override{Boost: boost, Drop: !boost})
	}
	st, err := openCases(ctx, app)
	if err != nil {
		if opts.Case != nil {
			opts.Notice = "read-only: changes to this case are not kept (" + err.Error() + ")"
		}
		fmt.Fprintln(app.Stderr, "muse: checks will not be kept as cases:", err)
	} else {
		defer st.Close()
		opts.Cases = st
		if opts.Case != nil {
			// Read through the app's store, so that its saves are based on
			// the version opened and a colleague's save meanwhile is told.
			if c, err := st.Get(ctx, opts.Case.ID); err == nil {
				opts.Case = c
			}
		}
	}
	opts.Model = app.Cfg.Model
	if eo.NoLLM {
		opts.Model = "no model (--no-llm)"
	}
	eo.Snapshots = true // the app shows the engine's snapshots
	eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, eo)
	switch {
	case err != nil && opts.Case == nil:
		return fmt.Errorf("start the engine: %w", err)
	case err != nil:
		opts.Notice = "reading only: the engine cannot start (" + err.Error() + ")"
	default:
		defer closeEngine()
		opts.Runner, opts.NewCheck, opts.FetchPost = eng, eng.NewCheck, eng.PostFromURL
		opts.Pages = eng.RawPage // snapshots of evidence pages keep the HTML as served
	}
	return app.runApp(ctx, opts)
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
	ctx := cmd.Context()
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
	if err := setup.CheckSearchable(ctx, app.Cfg); err != nil {
		return err
	}
	eo.Snapshots = !noSave
	eng, closeEngine, err := setup.NewFromConfig(ctx, app.Cfg, eo)
	if err != nil {
		return usage(err)
	}
	defer closeEngine()
	if lower := strings.ToLower(arg); !strings.ContainsAny(arg, " \n") &&
		(strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")) {
		fromURL, err := eng.PostFromURL(ctx, arg)
		if err != nil {
			return usage(err)
		}
		if !post.PostedAt.IsZero() { // --posted-at wins over the platform's time
			fromURL.PostedAt = post.PostedAt
		}
		fromURL.Author, fromURL.Handle = cmp.Or(post.Author, fromURL.Author), cmp.Or(post.Handle, fromURL.Handle)
		fromURL.Language = cmp.Or(post.Language, fromURL.Language)
		fromURL.Images = append(fromURL.Images, post.Images...)
		post = fromURL // text, author, handle, time, images and their alt text
	} else {
		post.Text = arg
	}
	c := eng.NewCheck(post, cutoff)
	ro, closeCases, saveErr := recordOptions(ctx, app, eng, noSave)
	defer closeCases()
	ro.OnSaveError = func(err error) {
		saveErr = err
		fmt.Fprintln(app.Stderr, "muse: warning:", err)
	}
	ro.OnEvent = func(ev pipeline.Event) {
		if line := export.ProgressLine(ev); line != "" {
			fmt.Fprintln(app.Stderr, "muse:", line)
		}
	}
	c.ID = cases.NewID()
	runErr := app.record(ctx, eng, c, pipeline.StageImages, ro)
	fmt.Fprintln(app.Stderr, "muse:", export.UsageLine(c.Usage))
	if ro.Store != nil && saveErr == nil {
		fmt.Fprintf(app.Stderr, "muse: kept as case %s (muse cases open %s)\n", c.ID, c.ID)
	}
	if errors.Is(runErr, pipeline.ErrEmptyPost) {
		return usage(runErr)
	}
	if asJSON {
		err = writeJSON(app.Stdout, c.ForOutput())
	} else {
		_, err = io.WriteString(app.Stdout, export.Report(c))
	}
	switch {
	case runErr != nil:
		return fmt.Errorf("check not finished: %w", runErr)
	case saveErr != nil:
		if d, ok := ro.Store.(interface {
			Delete(ctx context.Context, id string) error
		}); ok && d.Delete(context.WithoutCancel(ctx), c.ID) == nil {
			fmt.Fprintf(app.Stderr, "muse: the half-saved case %s is removed\n", c.ID)
		}
		return fmt.Errorf("the check finished but its case could not be kept (%w); the result above is the only copy (--no-save checks without keeping one)", saveErr)
	}
	return err
}

// recordOptions opens the case store for `muse check` and `muse batch`
// (none with --no-save). A store that cannot be opened is said on stderr,
// the checks run unkept, and storeErr says why: the command then exits
// non-zero, since the case it was to keep is not kept.
func recordOptions(ctx context.Context, app *App, eng *pipeline.Engine, noSave bool) (ro cases.RecordOptions, close func(), storeErr error) {
	ro = cases.RecordOptions{Pages: eng.RawPage, OnSaveError: func(err error) { fmt.Fprintln(app.Stderr, "muse: warning:", err) },
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
				file, err := os.OpenFile(outPath, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
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
			ro, closeCases, storeErr := recordOptions(cmd.Context(), app, eng, noSave)
			defer closeCases()
			run := app.keptRun(eng, ro)
			st, err := batch.Run(cmd.Context(), eng, in, out,
				batch.Options{Parallel: parallel, Done: done, Progress: app.progress(), TTY: app.StderrTTY, Run: run})
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
	cmd.Flags().BoolVar(&asJSON, "json", false, "print JSON: for a results file a JSON array, one object per post (line, key, status, error, correction, cost_usd); for a queued batch one JSON object (batch_id, total, queued, running, done, failed)")
	return cmd
}

// doctorCmd is `muse doctor`.
func doctorCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "doctor [--json]",
		Short: "Check the configuration, model, prices, search providers, ratings and archive, and say what to fix",
		Long:  "Exits 1 when anything failed. --json prints a JSON array of {name, status, detail, fix}.",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			items := setup.Doctor(cmd.Context(), app.Cfg)
			failed := 0
			for _, it := range items {
				if it.Status == setup.DoctorFail {
					failed++
				}
			}
			if asJSON {
				if err := writeJSON(app.Stdout, items); err != nil {
					return err
				}
			} else {
				for _, it := range items {
					fmt.Fprintf(app.Stdout, "[%s] %s: %s\n", it.Status, it.Name, it.Detail)
					if it.Fix != "" {
						fmt.Fprintf(app.Stdout, "       fix: %s\n", it.Fix)
					}
				}
			}
			if failed > 0 {
				return fmt.Errorf("%d problem(s) found; see the fixes above", failed)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of findings {name, status, detail, fix}")
	return cmd
}

// configCmd is `muse config init|show`.
func configCmd(app *App) *cobra.Command {
	cmd := &cobra.Command{Use: "config", Short: "Write a commented config file, or show the settings in effect"}
	var force, print bool
	initCmd := &cobra.Command{
		Use:   "init [--force] [--print]",
		Short: "Write a commented config.toml with every key (to --config, or $XDG_CONFIG_HOME/muse/config.toml)",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if print {
				_, err := io.WriteString(app.Stdout, setup.ConfigTemplate)
				return err
			}
			path := cmp.Or(app.configFile, app.Cfg.DefaultFile())
			if err := setup.WriteTemplate(path, force); err != nil {
				return usage(err)
			}
			fmt.Fprintf(app.Stderr, "muse: wrote %s; every key is commented out, `muse config show` shows what is in effect\n", path)
			return nil
		},
	}
	initCmd.Flags().BoolVar(&force, "force", false, "write over an existing file")
	initCmd.Flags().BoolVar(&print, "print", false, "print the file on stdout instead of writing it")
	var asJSON bool
	show := &cobra.Command{
		Use:   "show [--json]",
		Short: "Print every setting in effect and where it came from (flag, env, file, default), secrets masked",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			settings := app.Cfg.Settings()
			if asJSON {
				return writeJSON(app.Stdout, settings)
			}
			fmt.Fprintf(app.Stdout, "# config file: %s\n# data: %s\n# cache: %s\n", cmp.Or(app.Cfg.File, "none"), app.Cfg.DataDir, app.Cfg.CacheDir)
			tw := tabwriter.NewWriter(app.Stdout, 0, 4, 2, ' ', 0)
			fmt.Fprintln(tw, "KEY\tVALUE\tFROM\tENV")
			for _, s := range settings {
				fmt.Fprintf(tw, "%s\t%s\t%s\t%s\n", s.Key, cmp.Or(s.Value, "-"), s.Origin, cmp.Or(s.Env, "-"))
			}
			return tw.Flush()
		},
	}
	show.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of {key, env, value, origin}")
	cmd.AddCommand(initCmd, show)
	return cmd
}

// versionCmd is `muse version [--json]`, the same as `muse --version`.
func versionCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:   "version [--json]",
		Short: "Print muse's version: module version, VCS revision and time, Go version",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if asJSON {
				return writeJSON(app.Stdout, buildInfo())
			}
			_, err := fmt.Fprintln(app.Stdout, "muse", versionString())
			return err
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object {version, revision, time, modified, go}")
	return cmd
}

// build is what the binary says of its build (runtime/debug build info,
// as `go build` records it from the module and the VCS).
type build struct {
	Version  string `json:"version"`
	Revision string `json:"revision"`
	Time     string `json:"time"`
	Modified bool   `json:"modified"`
	Go       string `json:"go"`
}

func buildInfo() build {
	bi, ok := debug.ReadBuildInfo()
	if !ok {
		return build{Version: "(no build information)"}
	}
	b := build{Version: bi.Main.Version, Go: bi.GoVersion}
	for _, s := range bi.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Revision = s.Value
		case "vcs.time":
			b.Time = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// versionString is buildInfo in one line: module version, short VCS
// revision (unless the pseudo-version carries it), "-dirty", commit time,
// Go version.
func versionString() string {
	b := buildInfo()
	v := b.Version
	if short := b.Revision[:min(12, len(b.Revision))]; short != "" {
		if !strings.Contains(v, short) {
			v += " " + short
		}
		if b.Modified {
			v += "-dirty"
		}
	}
	if b.Time != "" {
		v += " " + b.Time
	}
	return strings.TrimSpace(v + " " + b.Go)
}

// completeCaseIDs offers the saved cases' IDs, newest first, each with
// its post as the description (cobra's dynamic completion).
func (app *App) completeCaseIDs(cmd *cobra.Command, args []string, prefix string) ([]cobra.Completion, cobra.ShellCompDirective) {
	if app.Cfg == nil && app.loadConfig(cmd) != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	st, err := readCases(cmd.Context(), app)
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	defer st.Close()
	list, err := st.List(cmd.Context(), cases.ListOptions{Limit: 200})
	if err != nil {
		return nil, cobra.ShellCompDirectiveNoFileComp
	}
	var out []cobra.Completion
	for _, sm := range list {
		if strings.HasPrefix(sm.ID, prefix) && !slices.Contains(args, sm.ID) {
			out = append(out, cobra.CompletionWithDesc(sm.ID, strings.Join(strings.Fields(sm.PostExcerpt), " ")))
		}
	}
	return out, cobra.ShellCompDirectiveNoFileComp
}

// openCases opens the case store: the newsroom's database with
// MUSE_DATABASE_URL, else cases.db in the data directory, recording
// MUSE_USER as the checker.
func openCases(ctx context.Context, app *App) (*cases.Store, error) {
	return cases.OpenOptions(ctx, cases.Options{Path: app.Cfg.CasesPath(), User: app.Cfg.User, Secrets: app.Cfg.Secrets()})
}

// readCases opens the case store for reading: as usual, or, when that
// fails (a read-only data directory), read-only, saying so.
func readCases(ctx context.Context, app *App) (*cases.Store, error) {
	st, err := openCases(ctx, app)
	if err == nil {
		return st, nil
	}
	if pgdb.IsURL(app.Cfg.CasesPath()) {
		return nil, err
	}
	ro, rerr := cases.OpenOptions(ctx, cases.Options{Path: app.Cfg.CasesPath(), User: app.Cfg.User, Secrets: app.Cfg.Secrets(), ReadOnly: true})
	if rerr != nil {
		return nil, err
	}
	fmt.Fprintln(app.Stderr, "muse: the case store is read-only here: cases can be read, not changed")
	return ro, nil
}

// casesCmd is `muse cases [--json] [-n N] [--mine|--by NAME]`, with
// export, open, log and rm.
func casesCmd(app *App) *cobra.Command {
	var asJSON, mine bool
	var limit int
	var contains, by string
	cmd := &cobra.Command{
		Use:   "cases [--json] [-n N] [--grep TEXT] [--mine|--by NAME]",
		Short: "List saved checks: date, who, post, first line of the correction, sources used, cost",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			if mine && by != "" {
				return usagef("--mine and --by NAME cannot be used together")
			}
			if mine {
				if by = app.Cfg.User; by == "" {
					return usagef("--mine: no checker name (set MUSE_USER or user in the config file)")
				}
			}
			st, err := readCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			list, err := st.List(cmd.Context(), cases.ListOptions{Limit: limit, Contains: contains, By: by})
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
	cmd.Flags().BoolVar(&mine, "mine", false, "only cases you (MUSE_USER) made or saved last")
	cmd.Flags().StringVar(&by, "by", "", "only cases checker NAME made or saved last")
	cmd.AddCommand(casesExportCmd(app), casesRmCmd(app), casesOpenCmd(app), casesLogCmd(app))
	return cmd
}

// casesExportCmd is `muse cases export ID --format md|json|note|claimreview [-o FILE]`.
func casesExportCmd(app *App) *cobra.Command {
	var format, out, rating string
	var version int64
	var rev export.Reviewer
	cmd := &cobra.Command{
		Use:               "export ID --format md|json|note|claimreview [-o FILE] [--version N]",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Export a saved check for editors (md), scripts (json), Community Notes (note) or ClaimReview JSON-LD",
		Long: "ID may be any unique prefix of a case ID (see `muse cases`). A note is at most 280 characters with\n" +
			"each link counted as 1 and cites at least one source; when the correction cannot fit, the export\n" +
			"fails and says why. claimreview needs --reviewer, --reviewer-url (or --review-url) and --rating.\n" +
			"--version N exports a version kept when two checkers saved the case at once (see `muse cases log`).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := export.Options{Format: format, Reviewer: rev}
			if strings.EqualFold(format, "claimreview") {
				r, err := export.ParseRating(rating)
				if err != nil {
					return usagef("claimreview needs --rating: %w", err)
				}
				o.Rating = r
			}
			st, err := readCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(cmd.Context(), args[0])
			if err != nil {
				return err
			}
			var c *pipeline.Check
			if version > 0 {
				c, err = st.GetVersion(cmd.Context(), id, version)
			} else {
				c, err = st.Get(cmd.Context(), id)
			}
			if err != nil {
				return err
			}
			b, err := export.Render(c, o)
			if err != nil {
				return fmt.Errorf("case %s: %w", id, err)
			}
			what := format
			if version > 0 {
				what += fmt.Sprintf(", version %d", version)
			}
			if err := st.Audit(cmd.Context(), id, cases.ActionExported, what); err != nil {
				fmt.Fprintln(app.Stderr, "muse: warning: the export is not in the case's trail:", err)
			}
			if out == "" || out == "-" {
				_, err = app.Stdout.Write(b)
				return err
			}
			if err := os.WriteFile(out, app.redact.Bytes(b), 0o644); err != nil {
				return fmt.Errorf("write export: %w", err)
			}
			fmt.Fprintf(app.Stderr, "muse: wrote case %s as %s to %s\n", id, format, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "md", "md, json, note or claimreview")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(export.Formats, cobra.ShellCompDirectiveNoFileComp))
	f.StringVarP(&out, "output", "o", "", "write to FILE instead of stdout")
	f.Int64Var(&version, "version", 0, "export kept version N instead of the case as it is")
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
		Use:               "open ID",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Reopen a saved check in the terminal app where it was left, offline",
		Long: "ID may be any unique prefix of a case ID (see `muse cases`). Nothing runs when the case opens;\n" +
			"rerunning a stage from the app uses the engine as `muse` would (--no-llm when the case was made so).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := readCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			id, err := st.Resolve(cmd.Context(), args[0])
			if err == nil {
				var c *pipeline.Check
				if c, err = st.Get(cmd.Context(), id); err == nil {
					st.Close()
					return startTUI(cmd.Context(), app, pipeline.Options{NoLLM: noLLM || c.NoLLM}, mouse, tui.Options{Case: c})
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

// casesLogCmd is `muse cases log ID [--json]`: the case's audit trail and
// the versions kept by conflicting saves.
func casesLogCmd(app *App) *cobra.Command {
	var asJSON bool
	cmd := &cobra.Command{
		Use:               "log ID [--json]",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Print a case's audit trail: who ran, edited, exported or deleted it, and when",
		Long: "ID may be any unique prefix of a case ID, or the whole ID of a deleted case (its trail outlives it).\n" +
			"Versions kept when two checkers saved the case at once are listed after the trail; export one\n" +
			"with `muse cases export ID --version N`.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			st, err := readCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			defer st.Close()
			id, err := st.Resolve(cmd.Context(), args[0])
			if errors.Is(err, cases.ErrNotFound) {
				id, err = args[0], nil // a deleted case keeps its trail
			}
			if err != nil {
				return err
			}
			trail, err := st.Trail(cmd.Context(), id)
			if err != nil {
				return err
			}
			if len(trail) == 0 {
				return fmt.Errorf("case %s: %w (see `muse cases`)", id, cases.ErrNotFound)
			}
			if asJSON {
				return writeJSON(app.Stdout, trail)
			}
			kept, err := st.Versions(cmd.Context(), id)
			if err != nil {
				return err
			}
			if err := cases.WriteTrail(app.Stdout, trail); err != nil {
				return err
			}
			for _, v := range kept {
				fmt.Fprintf(app.Stdout, "kept: version %d by %s at %s (muse cases export %s --version %d)\n", v.Version,
					cmp.Or(v.UpdatedBy, "someone"), v.UpdatedAt.Local().Format("2006-01-02 15:04:05"), id, v.Version)
			}
			return nil
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the trail as a JSON array")
	return cmd
}

// casesRmCmd is `muse cases rm ID...`.
func casesRmCmd(app *App) *cobra.Command {
	return &cobra.Command{
		Use:               "rm ID...|-",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Delete saved checks with their drafts and page snapshots (- reads IDs from standard input)",
		Args:              cobra.MinimumNArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			args, err := argsWithStdin(args, app.Stdin)
			if err != nil {
				return err
			}
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
	cmd := &cobra.Command{Use: "cache", Short: "Manage the cache of search and model responses ($XDG_CACHE_HOME/muse)"}
	open := func(cmd *cobra.Command) (*httpcache.Cache, error) {
		return httpcache.Open(cmd.Context(), httpcache.Options{Path: app.Cfg.CachePath(), Bypass: true})
	}
	var asJSON bool
	stats := &cobra.Command{
		Use:   "stats [--json]",
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
			if asJSON {
				return writeJSON(app.Stdout, struct {
					Path    string `json:"path"`
					Entries int64  `json:"entries"`
					Bytes   int64  `json:"bytes"`
				}{pgdb.Redact(app.Cfg.CachePath()), s.Entries, s.Bytes})
			}
			fmt.Fprintf(app.Stdout, "%d cached responses, %d bytes, in %s\n", s.Entries, s.Bytes, pgdb.Redact(app.Cfg.CachePath()))
			return nil
		},
	}
	stats.Flags().BoolVar(&asJSON, "json", false, "print one JSON object {path, entries, bytes}")
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
			fmt.Fprintf(app.Stdout, "removed %d cached responses from %s\n", n, pgdb.Redact(app.Cfg.CachePath()))
			return nil
		},
	}, stats)
	return cmd
}

// timeFlag reads the value of a time flag (--before, --posted-at): RFC 3339
// or YYYY-MM-DD; a bad value is a usage error (exit 2) naming the flag.
func timeFlag(name, value string) (time.Time, error) {
	t, err := search.ParseCutoff(value)
	if err != nil {
		return time.Time{}, usagef("--%s: %w", name, err)
	}
	return t, nil
}

// argsWithStdin replaces a "-" among args with the lines of standard input
// (blank lines and surrounding space dropped), where a command takes a list.
func argsWithStdin(args []string, stdin io.Reader) ([]string, error) {
	if !slices.Contains(args, "-") {
		return args, nil
	}
	var out []string
	for _, a := range args {
		if a != "-" {
			out = append(out, a)
			continue
		}
		sc := bufio.NewScanner(stdin)
		sc.Buffer(make([]byte, 64<<10), 1<<20)
		for sc.Scan() {
			if l := strings.TrimSpace(sc.Text()); l != "" {
				out = append(out, l)
			}
		}
		if err := sc.Err(); err != nil {
			return nil, usagef("read standard input: %w", err)
		}
	}
	if len(out) == 0 {
		return nil, usagef("standard input (-) held nothing to read")
	}
	return out, nil
}

// writeJSON prints v as indented JSON, URLs unescaped.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// finishTree applies the command-line rules to every command: a bad flag
// or argument is a usage error (exit 2); a command group given an unknown
// subcommand says so, with suggestions, instead of printing its help.
func finishTree(root *cobra.Command) {
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usage(err) })
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		c.SuggestionsMinimumDistance = 2
		if c.HasSubCommands() && c != root && c.RunE == nil && c.Run == nil {
			c.Args = unknownSubcommand
			c.RunE = func(cmd *cobra.Command, args []string) error { return cmd.Help() }
		}
		if args := c.Args; args != nil {
			c.Args = func(cmd *cobra.Command, a []string) error { return usage(args(cmd, a)) }
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// unknownSubcommand refuses an argument to a command group.
func unknownSubcommand(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	msg := fmt.Sprintf("unknown command %q for %q", args[0], cmd.CommandPath())
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		msg += "; did you mean " + strings.Join(s, " or ") + "?"
	}
	return errors.New(msg + " (see " + cmd.CommandPath() + " --help)")
}

// The exit codes, one table for every command (as gh's internal/ghcmd).
// The README's table is checked against exitTable by TestReadmeTables.
const (
	exitOK         = 0 // done
	exitFailed     = 1 // failed: the reason is on stderr
	exitUsage      = 2 // usage or configuration: a bad flag or argument, nothing to check, nothing set up
	exitNoEvidence = 3 // no evidence could be obtained: every page or provider failed, or the model was unreadable
)

// exitTable is the table in words, in code order.
var exitTable = []struct {
	Code    int
	Meaning string
}{
	{exitOK, "done (a check that found no credible source is done too)"},
	{exitFailed, "failed; the last line on stderr says why"},
	{exitUsage, "usage or configuration: unknown command or flag, bad argument, nothing to check, no model or search configured"},
	{exitNoEvidence, "no evidence could be obtained: every page or search provider failed, or the model's answers could not be read"},
}

// usageError marks an error as the user's to fix in the command line or
// the configuration (exit 2).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// usage marks err as a usage or configuration error; nil stays nil.
func usage(err error) error {
	if err == nil {
		return nil
	}
	return &usageError{err}
}

// usagef is usage(fmt.Errorf(format, a...)).
func usagef(format string, a ...any) error { return usage(fmt.Errorf(format, a...)) }

// exitCode maps what a command returned to the process's exit code.
func exitCode(err error) int {
	var ue *usageError
	switch {
	case err == nil:
		return exitOK
	case errors.As(err, &ue), errors.Is(err, pipeline.ErrEmptyPost), errors.Is(err, pipeline.ErrNoModel),
		errors.Is(err, setup.ErrNothingToSearch), errors.Is(err, setup.ErrConfig):
		return exitUsage
	case errors.Is(err, pipeline.ErrNoEvidence):
		return exitNoEvidence
	default:
		return exitFailed
	}
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
	enq, err := batch.Enqueue(cmd.Context(), q, in, app.Cfg.Model, batch.OptionsOf(eo, noSave))
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
	if asJSON {
		return writeJSON(app.Stdout, st)
	}
	fmt.Fprintf(app.Stdout, "batch %s: %d posts, %d queued, %d running, %d done, %d failed\n",
		st.BatchID, st.Total, st.Queued, st.Running, st.Done, st.Failed)
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
	var grace time.Duration
	var noSave bool
	cmd := &cobra.Command{
		Use:   "worker [-j N]",
		Short: "Check queued posts (muse batch --queue), N at a time, until SIGTERM or Ctrl-C",
		Long: "Takes posts from the job queue (the newsroom's database with MUSE_DATABASE_URL, else queue.db\n" +
			"in the data directory) and checks each, keeping it as a case. Any number of workers may run,\n" +
			"on any machine that reaches the database: each post is checked once, with the options it was\n" +
			"queued with (--hits, --no-llm, --correction-language, --no-save of muse batch). A model server that is\n" +
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
			q, err := openQueue(cmd.Context(), app)
			if err != nil {
				if stopped() {
					return nil
				}
				return err
			}
			defer q.Close()
			// The engine for jobs queued without options, built now so that
			// a worker configured wrongly says so at once. A worker with no
			// model still starts: it takes only the posts queued with
			// --no-llm (checked on this engine, built extractive) and
			// leaves the others queued for a worker with a model.
			defaults := batch.CheckOptions{}
			eng, closeEngine, err := setup.NewFromConfig(cmd.Context(), app.Cfg, pipeline.Options{Snapshots: !noSave})
			var noModel error
			if errors.Is(err, pipeline.ErrNoModel) {
				noModel, defaults.NoLLM = err, true
				eng, closeEngine, err = setup.NewFromConfig(cmd.Context(), app.Cfg, defaults.Apply(pipeline.Options{Snapshots: !noSave}))
			}
			if err != nil {
				if stopped() {
					return nil
				}
				return usage(err)
			}
			defer closeEngine()
			ro, closeCases, _ := recordOptions(cmd.Context(), app, eng, noSave)
			defer closeCases()
			if stopped() {
				return nil
			}
			// Each job is checked with the options it was queued with, on
			// an engine built for them on first use (the one above for
			// the defaults).
			engines, closeEngines := batch.EnginesFor(func(ctx context.Context, co batch.CheckOptions) (*pipeline.Engine, batch.RunFunc, func() error, error) {
				if noModel != nil && !co.NoLLM {
					return nil, nil, nil, noModel
				}
				if co == defaults {
					return eng, app.keptRun(eng, ro), nil, nil
				}
				e, closeE, err := setup.NewFromConfig(ctx, app.Cfg, co.Apply(pipeline.Options{Snapshots: !noSave}))
				if err != nil {
					return nil, nil, nil, err
				}
				o := ro
				o.Pages = e.RawPage
				if co.NoSave {
					o.Store = nil // queued with --no-save: no case kept
				}
				return e, app.keptRun(e, o), closeE, nil
			})
			defer closeEngines()
			wo := batch.WorkOptions{Parallel: parallel, Grace: grace, NoModel: noModel != nil}
			if st, ok := ro.Store.(batch.CaseReader); ok {
				wo.Cases = st // a job tried again resumes its case
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
	return cmd
}

// progress is where muse's own progress lines go (see App.Progress).
func (app *App) progress() io.Writer {
	if app.Progress != nil {
		return app.Progress
	}
	return app.Stderr
}

// keptRun runs one check of a batch (in process or from the queue) from
// the stage from, keeping it as the case c.ID (new, or the saved case of a
// queued job tried again); a check whose case could not be kept fails,
// saying so.
func (app *App) keptRun(eng *pipeline.Engine, ro cases.RecordOptions) batch.RunFunc {
	return func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error {
		o := ro
		var saveErr error
		o.OnSaveError = func(err error) { saveErr = err }
		err := app.record(ctx, eng, c, from, o)
		if err == nil && saveErr != nil {
			err = fmt.Errorf("the check finished but its case could not be kept: %w", saveErr)
		}
		return err
	}
}
