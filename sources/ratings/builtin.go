package ratings

import (
	_ "embed"
	"fmt"
	"strings"
)

// builtinTSV is the muse team's own table of widely cited publishers (see
// the header of builtin.tsv for its origin and editorial notes).
//
//go:embed builtin.tsv
var builtinTSV string

// parseBuiltin reads the built-in table: tab-separated rows of domain,
// factuality, bias, publisher; '#' comments, of which "# date: …" dates the
// table for the origin string.
func parseBuiltin(src string) (*table, error) {
	t := newTable("")
	date := ""
	for i, line := range strings.Split(src, "\n") {
		line = strings.TrimRight(line, "\r")
		if strings.HasPrefix(line, "#") {
			if d, ok := strings.CutPrefix(line, "# date:"); ok {
				date = strings.TrimSpace(d)
			}
			continue
		}
		if strings.TrimSpace(line) == "" {
			continue
		}
		f := strings.Split(line, "\t")
		if len(f) != 4 {
			return nil, fmt.Errorf("built-in table line %d: want 4 tab-separated fields, got %d", i+1, len(f))
		}
		fact, err := NormalizeFactuality(f[1])
		if err != nil {
			return nil, fmt.Errorf("built-in table line %d: %w", i+1, err)
		}
		bias, err := NormalizeBias(f[2])
		if err != nil {
			return nil, fmt.Errorf("built-in table line %d: %w", i+1, err)
		}
		if err := t.add(f[0], entry{publisher: f[3], factuality: fact, bias: bias, tier: TierFor(fact, bias)}); err != nil {
			return nil, fmt.Errorf("built-in table line %d: %w", i+1, err)
		}
	}
	t.origin = strings.TrimSpace("muse built-in table " + date)
	return t, nil
}
