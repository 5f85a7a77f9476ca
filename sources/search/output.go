package search

import (
	"bufio"
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/sanitize"
)

// ParseCutoff reads a --before value: RFC 3339, or YYYY-MM-DD meaning
// midnight UTC at the start of that day (so the day itself is excluded).
func ParseCutoff(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if t, err := time.Parse(time.RFC3339, s); err == nil {
		return t, nil
	}
	if t, err := time.Parse(time.DateOnly, s); err == nil {
		return t, nil
	}
	return time.Time{}, fmt.Errorf("cutoff %q: want RFC 3339 (2020-05-01T12:00:00Z) or YYYY-MM-DD", s)
}

// WriteText prints merged hits for a person: position, title, URL, every
// provider that found the page with its rank there, the date when known,
// and the rating of a fact-check. What the provider sent is sanitised: no
// control character or escape sequence reaches the terminal.
func WriteText(w io.Writer, hits []Hit) error {
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
			fmt.Fprintf(bw, "    fact-check: %s rated %q: %s\n", or(cr.Reviewer, "a reviewer"), cr.Rating, clip(cr.Claim, 160))
		}
	}
	if err := bw.Flush(); err != nil {
		return err
	}
	return sw.Flush()
}

// WriteJSON prints hits as one indented JSON array ([] when there are none).
func WriteJSON(w io.Writer, hits []Hit) error {
	if hits == nil {
		hits = []Hit{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false) // URLs keep their & readable
	return enc.Encode(hits)
}
