package cli

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/sanitize"
)

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
				return writeJSON(app.Stdout, list(hits))
			}
			return writeArchiveHits(app.Stdout, hits)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print a JSON array of hits (url, title, publisher, snippet, published, score)")
	cmd.Flags().IntVar(&limit, "limit", 10, "how many hits to show")
	return cmd
}

// writeArchiveHits writes archive hits for people: rank, title, URL, date, snippet, with
// no control character or escape sequence from the pages.
func writeArchiveHits(w io.Writer, hits []archive.Hit) error {
	if len(hits) == 0 {
		_, err := fmt.Fprintln(w, "No archived page matches.")
		return err
	}
	for i, h := range hits {
		date := "undated"
		if !h.Published.IsZero() {
			date = h.Published.Format("2006-01-02")
		}
		// A page archived without a title is named by its publisher, or
		// failing that its host, so the line never stands empty.
		title := cmp.Or(strings.TrimSpace(h.Title), "(untitled) "+cmp.Or(h.Publisher, sources.HostOf(h.URL)))
		if _, err := fmt.Fprintf(w, "%d. %s\n   %s (%s, score %.2f)\n", i+1, sanitize.String(title), sanitize.String(h.URL), date, h.Score); err != nil {
			return err
		}
		if h.Snippet != "" {
			if _, err := fmt.Fprintf(w, "   %s\n", sanitize.String(h.Snippet)); err != nil {
				return err
			}
		}
	}
	return nil
}
