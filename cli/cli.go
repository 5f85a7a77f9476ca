package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"os/signal"
	"slices"
	"strings"
	"syscall"
	"time"

	"github.com/spf13/cobra"
	"golang.org/x/term"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/sanitize"
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
	// Terminal is true when standard input and output are a terminal, as
	// the app needs: without one, the commands that open it (muse [TEXT],
	// muse cases open) are usage errors saying what to run instead.
	Terminal bool
	// Progress is where muse draws its own progress lines (figures only,
	// never outside text): the terminal itself, since Stderr's sanitiser
	// would turn the carriage return that redraws a line into a newline.
	// Nil: Stderr.
	Progress io.Writer

	// A seam for tests, as gh's runF: runApp opens the terminal app
	// (tui.Run).
	runApp func(ctx context.Context, opts tui.Options) error

	redact     *sources.Redactor
	configFile string
	ratings    string
	dbURL      string
	allowPriv  bool
	noCache    bool
}

// Main runs muse as a process: the command line, the standard streams,
// interrupts (SIGINT and SIGTERM cancel the command's context). It returns
// the exit code.
func Main() int {
	return mainWith(&App{})
}

// mainWith is Main with app's seams (tests set runApp).
func mainWith(app *App) int {
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
	app.Terminal = term.IsTerminal(int(os.Stdin.Fd())) && term.IsTerminal(int(os.Stdout.Fd()))
	return app.execute(ctx, os.Args[1:])
}

// execute runs the command line args and returns the exit code, having
// said why on stderr when it is not 0.
func (app *App) execute(ctx context.Context, args []string) int {
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
		notesCmd(app),
		watchCmd(app),
		batchCmd(app),
		evalCmd(app),
		workerCmd(app),
		doctorCmd(app),
		casesCmd(app),
		newsroomCmd(app),
		cacheCmd(app),
		archiveCmd(app),
		configCmd(app),
		versionCmd(app),
	)
	finishTree(root)
	return root
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

// timeFlag reads the value of a time flag (--before, --posted-at) as
// pipeline.ParseTime does; a bad value is a usage error (exit 2) naming the
// flag.
func timeFlag(name, value string) (time.Time, error) {
	t, err := pipeline.ParseTime(value)
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

// list is s as a JSON array: an empty list prints [], never null.
func list[T any](s []T) []T {
	if s == nil {
		return []T{}
	}
	return s
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
	exitNoEvidence = 3 // could not check (pipeline.Accounting): every provider failed, no page could be read, or the model's answers were lost
)

// exitTable is the table in words, in code order.
var exitTable = []struct {
	Code    int
	Meaning string
}{
	{exitOK, "done (a check that looked and found nothing is done too: accounting conclusion nothing_found)"},
	{exitFailed, "failed; the last line on stderr says why"},
	{exitUsage, "usage or configuration: unknown command or flag, bad argument, nothing to check, no model or search configured"},
	{exitNoEvidence, "could not check, no evidence could be obtained (accounting conclusion could_not_check): every web search provider failed, no page could be read and none was judged, or the model's answers were lost (filtered, refused, unreadable) so pages were not judged"},
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

// progress is where muse's own progress lines go (see App.Progress).
func (app *App) progress() io.Writer {
	if app.Progress != nil {
		return app.Progress
	}
	return app.Stderr
}
