package ratings

import (
	"encoding/json"
	"fmt"
	"io"
	"text/tabwriter"

	"github.com/musecheck/muse/sources/sanitize"
)

// RateAll rates each input, in order.
func (r *Rater) RateAll(inputs []string) []Rating {
	out := make([]Rating, len(inputs))
	for i, in := range inputs {
		out[i] = r.Rate(in)
	}
	return out
}

// WriteJSON prints the ratings as one JSON array, in input order (the
// `muse sources rate --json` format: a finite answer is an array).
func WriteJSON(w io.Writer, rs []Rating) error {
	if rs == nil {
		rs = []Rating{}
	}
	enc := json.NewEncoder(w)
	enc.SetEscapeHTML(false)
	enc.SetIndent("", "  ")
	if err := enc.Encode(rs); err != nil {
		return fmt.Errorf("write ratings: %w", err)
	}
	return nil
}

// WriteTable prints ratings as an aligned table for people, in order,
// sanitised (the input and names cannot send the terminal controls).
func WriteTable(w io.Writer, rs []Rating) error {
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
