package testkit

import (
	_ "embed"
	"strings"
)

//go:embed testdata/samenews.tsv
var sameNewsTSV string

// SameNews is one news paragraph written in eight scripts (English,
// Chinese, Japanese, Thai, Hindi, Arabic, Korean, Greek), by ISO 639-1
// code, written for the tests that compare lengths and token counts
// across scripts.
func SameNews() map[string]string {
	out := map[string]string{}
	for _, l := range strings.Split(sameNewsTSV, "\n") {
		if code, text, ok := strings.Cut(l, "\t"); ok && !strings.HasPrefix(l, "#") {
			out[code] = text
		}
	}
	return out
}
