package cli

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"slices"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/tsa"
	"github.com/musecheck/muse/tui"
)

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
	return cases.OpenOptions(ctx, cases.Options{Path: app.Cfg.CasesPath(), User: app.Cfg.User, UserGiven: !app.Cfg.UserFromOS, Secrets: app.Cfg.Secrets()})
}

// readCases opens the case store for reading: as usual, or, when that
// fails (a read-only data directory), read-only, saying so.
func readCases(ctx context.Context, app *App) (*cases.Store, error) {
	st, err := openCases(ctx, app)
	if err == nil {
		return st, nil
	}
	ro, rerr := openCasesReadOnly(ctx, app)
	if rerr != nil {
		return nil, err
	}
	fmt.Fprintln(app.Stderr, "muse: the case store is read-only here: cases can be read, not changed")
	return ro, nil
}

// openCasesReadOnly opens a SQLite case store for reading only.
func openCasesReadOnly(ctx context.Context, app *App) (*cases.Store, error) {
	if pgdb.IsURL(app.Cfg.CasesPath()) {
		return nil, errors.New("read-only is for SQLite case stores")
	}
	return cases.OpenOptions(ctx, cases.Options{Path: app.Cfg.CasesPath(), User: app.Cfg.User, UserGiven: !app.Cfg.UserFromOS, Secrets: app.Cfg.Secrets(), ReadOnly: true})
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
	cmd.AddCommand(casesExportCmd(app), casesRmCmd(app), casesOpenCmd(app), casesLogCmd(app), casesRecheckCmd(app))
	return cmd
}

// casesExportCmd is `muse cases export ID --format md|json|note|claimreview|pack [-o FILE]`.
func casesExportCmd(app *App) *cobra.Command {
	var format, out, rating, tsaURL string
	var version int64
	var force, live bool
	var rev export.Reviewer
	cmd := &cobra.Command{
		Use:               "export ID --format md|json|note|note-json|claimreview|pack [--live] [-o FILE [--force]] [--version N]",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Export a saved check for editors (md), scripts (json), Community Notes (note) or ClaimReview JSON-LD",
		Long: "ID may be any unique prefix of a case ID (see `muse cases`). A note is at most 280 characters with\n" +
			"each link counted as 1 and cites at least one source; when the correction cannot fit, the export\n" +
			"fails and says why; its classification, misleading tags and pre-flight against X's rules go to stderr,\n" +
			"and note-json gives them with the text as X's API takes them ({text, classification, misleading_tags,\n" +
			"tag_reasons, preflight}); --live fetches every token X reads as a link, which must answer 200.\n" +
			"claimreview needs --reviewer and --reviewer-url (or --review-url); --rating defaults to the note's\n" +
			"classification and tags you chose (T in the app), else the check's verdict.\n" +
			"--version N exports a version kept when two checkers saved the case at once (see `muse cases log`).\n" +
			"pack writes a zip (-o FILE) with the report, the Check's JSON and each page the check rests on as muse\n" +
			"read it, every file's SHA-256 in manifest.json; --tsa URL (or tsa_url) has the manifest time-stamped.",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			o := export.Options{Format: format, Reviewer: rev}
			isNote := strings.EqualFold(format, "note") || strings.EqualFold(format, "note-json")
			if live && !isNote {
				return usagef("--live checks a note's links: use it with --format note or note-json")
			}
			var links *http.Client
			if live {
				links = fetch.New(setup.FetchOptions(app.Cfg)).Client()
				o.LinkClient = links
			}
			if strings.EqualFold(format, "claimreview") && cmd.Flags().Changed("rating") {
				// Without --rating, the checker's note choice or the verdict.
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
			isPack := strings.EqualFold(format, "pack")
			if isPack && (out == "" || out == "-") {
				return usagef("--format pack writes a zip: name the file with -o FILE")
			}
			if isPack {
				// Refused before the authority is asked to stamp anything.
				if st, err := os.Lstat(out); err == nil && (!force || st.Mode()&fs.ModeSymlink != 0) {
					return fmt.Errorf("write export: %w", outputError(out, fs.ErrExist, force))
				}
			}
			if (strings.EqualFold(format, "json") || isPack) && version == 0 {
				// The correction's versions go with the case's JSON.
				ds, err := st.Drafts(cmd.Context(), id)
				if err != nil {
					return fmt.Errorf("case %s: %w", id, err)
				}
				o.Versions = cases.Versions(ds)
			}
			var b []byte
			if isPack {
				b, err = casePack(cmd.Context(), app, st, c, o, cmp.Or(tsaURL, app.Cfg.TSAURL))
			} else {
				b, err = export.Render(c, o)
			}
			if err != nil {
				return fmt.Errorf("case %s: %w", id, err)
			}
			if strings.EqualFold(format, "note") {
				notePreflight(cmd.Context(), app, c, links)
			}
			if isNote || strings.EqualFold(format, "claimreview") {
				// These formats hold no warnings: what the cited quotes do
				// not say is said beside them.
				for _, w := range c.SupportWarnings() {
					fmt.Fprintln(app.Stderr, "muse: warning:", w)
				}
			}
			// The file is refused (it exists, it is a link) before the
			// export is recorded.
			var file *os.File
			if out != "" && out != "-" {
				if file, err = createOutput(out, force); err != nil {
					return fmt.Errorf("write export: %w", err)
				}
				defer file.Close()
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
			if !isPack { // the pack's members are redacted, its bytes compressed
				b = app.redact.Bytes(b)
			}
			if _, err := file.Write(b); err != nil {
				file.Close()
				return fmt.Errorf("write export: %w", err)
			}
			if err := file.Close(); err != nil {
				return fmt.Errorf("write export: %w", err)
			}
			fmt.Fprintf(app.Stderr, "muse: wrote case %s as %s to %s\n", id, format, out)
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&format, "format", "md", "md, json, note, note-json, claimreview or pack")
	f.BoolVar(&live, "live", false, "note, note-json: fetch every token X reads as a link; each must answer 200")
	cmd.RegisterFlagCompletionFunc("format", cobra.FixedCompletions(append(slices.Clone(export.Formats), "pack"), cobra.ShellCompDirectiveNoFileComp))
	f.StringVar(&tsaURL, "tsa", "", "pack: have the manifest time-stamped by the RFC 3161 authority at URL (default tsa_url)")
	f.StringVarP(&out, "output", "o", "", "write to FILE instead of stdout (a new file; never through a symbolic link)")
	f.BoolVar(&force, "force", false, "overwrite FILE if it exists")
	f.Int64Var(&version, "version", 0, "export kept version N instead of the case as it is")
	f.StringVar(&rev.Name, "reviewer", "", "claimreview: the fact-checking organisation's name")
	f.StringVar(&rev.URL, "reviewer-url", "", "claimreview: the organisation's home page")
	f.StringVar(&rev.ReviewURL, "review-url", "", "claimreview: the page where the fact-check is published (default --reviewer-url)")
	f.StringVar(&rev.Claim, "claim", "", "claimreview: the claim reviewed, in a sentence (default the post's text)")
	f.StringVar(&rating, "rating", "", "claimreview: the verdict, e.g. false, misleading, mostly false, missing context (default: from the note's classification and tags you chose, else the check's verdict)")
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
			if !app.Terminal {
				return usagef("muse cases open shows the case in the terminal app, which needs a terminal (standard input and output are not one);\nfrom a script: muse cases export %s (--format md or json)", args[0])
			}
			st, err := readCases(cmd.Context(), app)
			if err != nil {
				return err
			}
			id, err := st.Resolve(cmd.Context(), args[0])
			if err == nil {
				var c *pipeline.Check
				if c, err = st.Get(cmd.Context(), id); err == nil {
					// Reads are in the trail too; a read-only store cannot add one.
					if err := st.Audit(cmd.Context(), id, cases.ActionOpened, ""); err != nil {
						fmt.Fprintln(app.Stderr, "muse: note: the opening is not in the case's trail:", err)
					}
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

// casePack is the case's evidence pack: the check with the page snapshots
// the case keeps, time-stamped by the authority at tsaURL when one is named.
func casePack(ctx context.Context, app *App, st *cases.Store, c *pipeline.Check, o export.Options, tsaURL string) ([]byte, error) {
	snaps, err := st.Snapshots(ctx, c.ID)
	if err != nil {
		return nil, err
	}
	po := export.PackOptions{Options: o, TSA: tsaURL, Pages: cases.PackPages(snaps)}
	po.Secrets = append(po.Secrets, app.Cfg.Secrets()...)
	if tsaURL != "" {
		po.Stamp = func(ctx context.Context, digest []byte) ([]byte, error) {
			resp, _, err := tsa.Stamp(ctx, nil, tsaURL, digest)
			return resp, err
		}
	}
	var buf bytes.Buffer
	m, err := export.Pack(ctx, &buf, c, po)
	if err != nil {
		return nil, err
	}
	if len(m.Missing) > 0 {
		fmt.Fprintf(app.Stderr, "muse: warning: the case kept no snapshot of %d page(s) the check rests on: %s\n", len(m.Missing), strings.Join(m.Missing, ", "))
	}
	return buf.Bytes(), nil
}

// notePreflight says on stderr the note's classification and tags and what
// X's admission would refuse, each problem with its fix.
func notePreflight(ctx context.Context, app *App, c *pipeline.Check, links *http.Client) {
	d := export.NoteFor(ctx, c, links)
	f := c.NoteFields()
	if s := f.Short(); s != "" {
		fmt.Fprintf(app.Stderr, "muse: note: %s\n", s)
	}
	for _, t := range f.Tags {
		fmt.Fprintf(app.Stderr, "muse: note: %s: %s\n", t.Tag, t.Reason)
	}
	for _, l := range d.Preflight.Live {
		fmt.Fprintf(app.Stderr, "muse: pre-flight: %s answers %d\n", l.Token, l.Status)
	}
	for _, p := range d.Preflight.Problems {
		fmt.Fprintf(app.Stderr, "muse: pre-flight: %s — %s\n", p.What, p.Fix)
	}
	if d.Preflight.OK() {
		fmt.Fprintln(app.Stderr, "muse: pre-flight: passed")
	}
}
