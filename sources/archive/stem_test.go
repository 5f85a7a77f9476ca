package archive

import (
	"slices"
	"strings"
	"testing"
)

// The second stage reads token streams in place: it must see the stems
// FTS5's ascii tokenizer (and strings.Fields) sees, at the same indexes.
func TestEachStemCutsAsFields(t *testing.T) {
	for _, s := range []string{"", "one", "measl vaccin autism", " lead", "trail ", "double  space", "  ", "éclair café naïv"} {
		var got []string
		n := eachStem(s, func(i int, st string) {
			if i != len(got) {
				t.Errorf("%q: stem %q at index %d; want %d", s, st, i, len(got))
			}
			got = append(got, st)
		})
		want := strings.Fields(s)
		if !slices.Equal(got, want) || n != len(want) || stemCount(s) != len(want) {
			t.Errorf("eachStem(%q) = %q (%d), stemCount %d; want %q", s, got, n, stemCount(s), want)
		}
	}
}

// The filter in front of the term map never turns a term away.
func TestTermIndexFindsEveryTerm(t *testing.T) {
	ts := []string{"vaccin", "autism", "measl", "2019", "x", "vaccin", "über"}
	ti := newTermIndex(ts)
	for _, term := range ts {
		if k, ok := ti.lookup(term); !ok || ts[k] != term {
			t.Errorf("lookup(%q) = %d, %v", term, k, ok)
		}
	}
	for _, other := range []string{"vaccine", "autumn", "measles", "y", "2020x"} {
		if _, ok := ti.lookup(other); ok {
			t.Errorf("lookup(%q) found a term the list does not hold", other)
		}
	}
}
