package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/sanitize"
)

// casesRecheckCmd is `muse cases recheck [--all|ID...] [--json]` and
// `muse cases recheck --accept ID`.
func casesRecheckCmd(app *App) *cobra.Command {
	var all, asJSON bool
	var accept string
	var parallel int
	cmd := &cobra.Command{
		Use:               "recheck [--all|ID...] [--json] | --accept ID",
		ValidArgsFunction: app.completeCaseIDs,
		Short:             "Read the pages saved cases cite again: mark cases whose evidence changed, with a revision draft",
		Long: "Each page a case cites (its correction's links and the pages of the evidence used) is read again through\n" +
			"the fetcher, asked for with the ETag and Last-Modified the archive kept (an unchanged page costs a 304),\n" +
			"and compared with the snapshot the case kept: gone (404, 410), leading elsewhere, a quoted passage no\n" +
			"longer on the page (up to quotes, dashes, spaces and case), a correction or update notice added, the\n" +
			"title or date changed. Such cases are listed first by `muse cases` (EVIDENCE: CHANGED n), and a revision\n" +
			"draft saying which citation broke is kept among the case's drafts; `--accept ID` makes it the case's\n" +
			"correction. A page that cannot be read (a timeout, a server error) is said, not counted as a change.",
		RunE: func(cmd *cobra.Command, args []string) error {
			ctx := cmd.Context()
			switch {
			case accept != "" && (all || len(args) > 0):
				return usagef("--accept ID takes no other case")
			case accept == "" && all == (len(args) > 0):
				return usagef("name the cases to recheck, or --all")
			}
			st, err := openCases(ctx, app)
			if err != nil {
				return err
			}
			defer st.Close()
			if accept != "" {
				id, err := st.Resolve(ctx, accept)
				if err != nil {
					return err
				}
				if err := st.AcceptRevision(ctx, id, ""); err != nil {
					return err
				}
				fmt.Fprintf(app.Stderr, "muse: case %s: the revision draft is its correction now\n", id)
				return nil
			}
			ids := args
			if all {
				if ids, err = st.RecheckIDs(ctx); err != nil {
					return err
				}
			} else {
				for i, a := range ids {
					if ids[i], err = st.Resolve(ctx, a); err != nil {
						return err
					}
				}
			}
			f, closeF, warn := setup.RecheckFetcher(ctx, app.Cfg)
			defer closeF()
			if warn != nil {
				fmt.Fprintf(app.Stderr, "muse: warning: %v; pages are read whole\n", warn)
			}
			o := cases.RecheckOptions{Fetcher: f, Parallel: parallel}
			if app.StderrTTY {
				o.Progress = func(done int) { fmt.Fprintf(app.progress(), "\rmuse: recheck: %d pages read\x1b[K", done) }
			}
			res, stats, err := st.Recheck(ctx, ids, o)
			if app.StderrTTY {
				fmt.Fprintln(app.progress())
			}
			if err != nil {
				return err
			}
			if asJSON {
				return writeJSON(app.Stdout, res)
			}
			for _, r := range res {
				writeRecheck(app, r)
			}
			fmt.Fprintf(app.Stderr, "muse: rechecked %d cases, %d pages (%d answered 304 Not Modified, %d could not be read); %d with changed evidence\n",
				stats.Cases, stats.Pages, stats.NotModified, stats.Failed, stats.Changed)
			return nil
		},
	}
	cmd.Flags().BoolVar(&all, "all", false, "recheck every saved case")
	cmd.Flags().BoolVar(&asJSON, "json", false, "print what was found as a JSON array")
	cmd.Flags().StringVar(&accept, "accept", "", "make case ID's revision draft its correction, and unmark it")
	cmd.Flags().IntVarP(&parallel, "jobs", "j", 64, "pages read at once (at most 2 a host)")
	return cmd
}

// writeRecheck prints one case's recheck: a line for the case, one for
// each page that changed or could not be read.
func writeRecheck(app *App, r cases.CaseRecheck) {
	state := "ok"
	switch {
	case r.Changed():
		state = "CHANGED"
	case r.UnreadPages() > 0:
		state = fmt.Sprintf("unread %d", r.UnreadPages()) // not "ok": what those pages say now is not known
	}
	fmt.Fprintf(app.Stdout, "%s  %s  %d cited pages\n", r.ID, state, len(r.Pages))
	for _, p := range r.Pages {
		switch {
		case len(p.Reasons) > 0:
			fmt.Fprintf(app.Stdout, "  %s: %s\n", sanitize.String(p.URL), sanitize.String(strings.Join(p.Reasons, "; ")))
		case p.Error != "":
			fmt.Fprintf(app.Stdout, "  %s: not read now (%s)\n", sanitize.String(p.URL), sanitize.String(p.Error))
		}
	}
	switch {
	case r.Draft:
		fmt.Fprintf(app.Stdout, "  a revision draft is kept: muse cases open %s, or muse cases recheck --accept %s\n", r.ID, r.ID)
	case r.DraftError != "":
		fmt.Fprintf(app.Stdout, "  no revision draft kept: %s\n", r.DraftError)
	}
}
