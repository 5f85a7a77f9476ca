package cli

import (
	"context"
	"fmt"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/notes"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/tui"
)

// addTUI makes the bare `muse` command open the terminal app, prefilled and
// started at once when a post is given. A single bare word close to a
// subcommand's name is a usage error with "did you mean".
func addTUI(root *cobra.Command, app *App) {
	f := &postFlags{}
	var mouse bool
	f.register(root.Flags())
	root.Flags().BoolVar(&mouse, "mouse", false, "wheel scrolling and clicks (turns off the terminal's own text selection)")
	root.Args = func(cmd *cobra.Command, args []string) error {
		word := len(args) == 1 && !strings.ContainsAny(args[0], " \t\n")
		if word {
			if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
				return usagef("unknown command %q for \"muse\"; did you mean %s?\n(to check the word as a post: muse check %s)",
					args[0], strings.Join(s, " or "), args[0])
			}
		}
		if app.Terminal {
			return nil
		}
		// A script or a pipe: the app cannot open, and a word is more
		// likely a mistyped command than a post.
		switch {
		case word:
			return usagef("unknown command %q for \"muse\" (see muse --help); muse opens the terminal app only on a terminal,\nso to check the word as a post from a script: muse check %s", args[0], args[0])
		case len(args) > 0:
			return usagef("muse TEXT opens the terminal app, which needs a terminal (standard input and output are not one);\nto check the post from a script: muse check TEXT (or muse check - to read it from standard input)")
		}
		return usagef("muse opens the terminal app, which needs a terminal (standard input and output are not one);\nsee muse --help for the commands, or run muse check TEXT to check a post from a script")
	}
	root.ValidArgsFunction = cobra.NoFileCompletions
	root.RunE = func(cmd *cobra.Command, args []string) error {
		post, cutoff, eo, err := f.parse(cmd)
		if err != nil {
			return err
		}
		opts := tui.Options{Post: post, Cutoff: cutoff, AsOfPost: f.asOfPost}
		if arg := strings.TrimSpace(strings.Join(args, " ")); arg != "" {
			p := pipeline.PostFromArg(arg)
			opts.Post.Text, opts.Post.URL, opts.Start = p.Text, p.URL, true
		}
		if !eo.NoLLM {
			if d := setup.Detect(cmd.Context(), app.Cfg); d.Model == "" || !d.Search {
				// First run: the setup screen says what was looked for;
				// enter goes on in the extractive mode, which needs nothing
				// and pays for nothing while there is nothing to search.
				d.Findings = append(d.Findings, setup.DetectTools()...)
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
	opts.ReviewerFile = filepath.Join(app.Cfg.DataDir, "reviewer.json")
	opts.Mouse = mouse
	opts.Secrets = app.Cfg.Secrets()
	if w, err := notes.New(app.Cfg, nil, nil); err == nil {
		// The app's X key sends the note after a live pre-flight of its links.
		w.Links = fetch.New(setup.FetchOptions(app.Cfg)).Client()
		opts.Notes = w
	}
	opts.Remember = func(domain string, boost bool) error {
		return ratings.SetOverride(app.Cfg.OverridesFile, domain, ratings.Override{Boost: boost, Drop: !boost})
	}
	opts.NewsroomChoice = func(domain string) (string, string) {
		o, ok, err := ratings.OverrideOf(app.Cfg.OverridesFile, domain)
		switch {
		case err != nil || !ok:
			return "", ""
		case o.Drop:
			return "drop", app.Cfg.OverridesFile
		case o.Boost:
			return "boost", app.Cfg.OverridesFile
		}
		return "", ""
	}
	st, err := openCases(ctx, app)
	if err != nil {
		if opts.Case != nil {
			opts.Notice = "read-only: changes to this case are not kept (" + err.Error() + ")"
		}
		fmt.Fprintln(app.Stderr, "muse: checks will not be kept as cases:", err)
		if ro, rerr := openCasesReadOnly(ctx, app); rerr == nil {
			// The case list (ctrl+o) still reads the cases; they open read-only.
			defer ro.Close()
			opts.CaseList = ro
		}
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
		opts.Runner, opts.NewCheck, opts.ReadPost = eng, eng.NewCheck, eng.ReadPost
		opts.Pages, opts.Headers = eng.RawPage, eng.PageHeader // snapshots of evidence pages keep the HTML and headers as served
	}
	return app.runApp(ctx, opts)
}
