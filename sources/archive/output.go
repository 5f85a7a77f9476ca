package archive

import (
	"cmp"
	"encoding/json"
	"fmt"
	"io"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/sanitize"
)

// WriteJSON writes hits as a JSON array (never null), best first.
func WriteJSON(w io.Writer, hits []Hit) error {
	if hits == nil {
		hits = []Hit{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	if err := enc.Encode(hits); err != nil {
		return fmt.Errorf("write search hits: %w", err)
	}
	return nil
}

// WriteText writes hits for people: rank, title, URL, date, snippet, with
// no control character or escape sequence from the pages.
func WriteText(w io.Writer, hits []Hit) error {
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
