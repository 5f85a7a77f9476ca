package extract

import (
	"os"
	"path/filepath"
	"regexp"
	"testing"
)

// TestDatesInThePagesLanguage reads pages whose only date is in their
// visible text, written as people write dates in Spanish, German,
// Portuguese, Hindi and Arabic (month names, and Devanagari and
// Arabic-Indic digits), with the language declared and without.
func TestDatesInThePagesLanguage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "dates", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no date fixtures: %v", err)
	}
	undeclare := regexp.MustCompile(`<html lang="[^"]*"`)
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, v := range []struct {
			name string
			page []byte
		}{{"declared", page}, {"undeclared", undeclare.ReplaceAll(page, []byte("<html"))}} {
			t.Run(filepath.Base(f)+"/"+v.name, func(t *testing.T) {
				a, err := Options{Now: testNow}.Extract(v.page, "")
				if err != nil {
					t.Fatal(err)
				}
				if got := day(a.Published); got != "2023-02-14" {
					t.Errorf("published = %q, want 2023-02-14", got)
				}
			})
		}
	}
}
