package pipeline

import (
	"fmt"
	"testing"
)

// foldText remembers its answers: asked again it gives what folding the
// text afresh gives, and it keeps at most foldedMax of them.
func TestFoldTextRemembered(t *testing.T) {
	texts := []string{
		"Unemployment fell to 3,9 per cent in March, see https://stats.example/march-2024 for the 1.2 million figure.",
		"The council spent £4\u202f500 on the bridge – not 45,000 as claimed.",
		"٣ million people",
	}
	for _, text := range texts {
		want := foldTextOnce(text)
		for range 2 {
			if got := foldText(text); got != want {
				t.Errorf("foldText(%q) = %q; want %q", text, got, want)
			}
		}
	}
	for i := range foldedMax + 10 {
		foldText(fmt.Sprintf("figure %d of many", i))
	}
	foldedTexts.Lock()
	n := len(foldedTexts.m)
	foldedTexts.Unlock()
	if n > foldedMax {
		t.Errorf("%d answers kept; want at most %d", n, foldedMax)
	}
	if got, want := foldText(texts[0]), foldTextOnce(texts[0]); got != want {
		t.Errorf("after the memory started again: %q; want %q", got, want)
	}
}
