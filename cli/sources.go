package cli

import (
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/sanitize"
)

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
				return writeJSON(app.Stdout, list(r.RateAll(args)))
			}
			return writeRatings(app.Stdout, r.RateAll(args))
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

// writeRatings prints ratings as an aligned table for people, in order,
// sanitised (the input and names cannot send the terminal controls).
func writeRatings(w io.Writer, rs []ratings.Rating) error {
	sw := sanitize.NewWriter(w)
	tw := tabwriter.NewWriter(sw, 0, 4, 2, ' ', 0)
	fmt.Fprintln(tw, "INPUT\tDOMAIN\tTIER\tFACTUALITY\tBIAS\tPUBLISHER\tORIGIN")
	for _, r := range rs {
		tier := string(r.Tier)
		switch {
		case r.UserContent:
			tier += " (user content)"
		case r.Boost:
			tier += " (boosted)"
		case r.Drop:
			tier += " (dropped)"
		}
		fmt.Fprintf(tw, "%s\t%s\t%s\t%s\t%s\t%s\t%s\n", r.Input, dash(r.Domain), tier, dash(r.Factuality), dash(r.Bias), dash(r.Publisher), r.Origin)
	}
	if err := tw.Flush(); err != nil {
		return fmt.Errorf("write ratings: %w", err)
	}
	if err := sw.Flush(); err != nil {
		return fmt.Errorf("write ratings: %w", err)
	}
	return nil
}

func dash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
