package extract

import (
	"os"
	"path/filepath"
	"testing"

	re2 "github.com/wasilibs/go-re2"
)

// madeAtStart and compiledAtStart are how many regular expressions
// go-dateparser had made and compiled when the program had started (its
// packages' init runs before these variables are set).
var madeAtStart, compiledAtStart = re2.Counts()

// TestDateParserCompilesOnFirstUse checks the build muse ships (the re2_cgo
// tag with go.mod's replacement of github.com/wasilibs/go-re2): starting up
// compiles next to none of go-dateparser's ~5,400 locale patterns, and
// reading a page's date compiles those it needs. Built without the tag,
// go-dateparser compiles every pattern with the standard library at start-up
// and muse takes a quarter of a second longer to start.
func TestDateParserCompilesOnFirstUse(t *testing.T) {
	if madeAtStart == 0 {
		t.Fatal("go-dateparser made no pattern through the lazy regexp package: " +
			"build and test with -tags re2_cgo (and cgo on, the default where a C compiler is installed), as the README says")
	}
	t.Logf("at start-up: %d patterns made, %d compiled", madeAtStart, compiledAtStart)
	if compiledAtStart*100 > madeAtStart {
		t.Fatalf("go-dateparser compiled %d of its %d patterns at start-up, want at most 1%%", compiledAtStart, madeAtStart)
	}
	page, err := os.ReadFile(filepath.Join("testdata", "dates", "es.html"))
	if err != nil {
		t.Fatal(err)
	}
	_, before := re2.Counts()
	got := (Options{Now: testNow}).dateOnly(page, "")
	_, after := re2.Counts()
	t.Logf("date %s; patterns compiled for this page %d, by the process so far %d", got, after-before, after)
	if got != "2023-02-14" {
		t.Errorf("date = %q, want 2023-02-14", got)
	}
}
