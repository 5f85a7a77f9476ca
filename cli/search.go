package cli

import (
	"bufio"
	"cmp"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/sanitize"
	"github.com/musecheck/muse/sources/search"
)

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
				return writeJSON(app.Stdout, list(hits))
			}
			return writeSearchHits(app.Stdout, hits)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print the hits as a JSON array")
	cmd.Flags().StringVar(&before, "before", "", "only pages published before TIME (YYYY-MM-DD, YYYY-MM-DD HH:MM UTC, or RFC 3339), where the engine can filter by date")
	return cmd
}

// writeSearchHits prints merged hits for a person: position, title, URL, every
// provider that found the page with its rank there, the date when known,
// and the rating of a fact-check. What the provider sent is sanitised: no
// control character or escape sequence reaches the terminal.
func writeSearchHits(w io.Writer, hits []search.Hit) error {
	sw := sanitize.NewWriter(w)
	bw := bufio.NewWriter(sw)
	if len(hits) == 0 {
		fmt.Fprintln(bw, "no hits")
	}
	for i, h := range hits {
		title := h.Title
		if title == "" {
			title = "(untitled)"
		}
		fmt.Fprintf(bw, "%2d. %s\n    %s\n    ", i+1, title, h.URL)
		for j, o := range h.Origins() {
			if j > 0 {
				bw.WriteString(", ")
			}
			fmt.Fprintf(bw, "%s #%d", o.Provider, o.Rank)
		}
		if !h.Published.IsZero() {
			fmt.Fprintf(bw, " · %s", h.Published.Format(time.DateOnly))
		}
		bw.WriteString("\n")
		if cr := h.ClaimReview; cr != nil {
			fmt.Fprintf(bw, "    fact-check: %s rated %q: %s\n", cmp.Or(cr.Reviewer, "a reviewer"), cr.Rating, export.Clip(cr.Claim, 160))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return sw.Flush()
}
