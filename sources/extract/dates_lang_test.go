package extract

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// TestDatesInThePagesLanguage reads pages whose only date is in their
// visible text, written as people write dates in Spanish, German,
// Portuguese, Hindi and Arabic (month names, and for Hindi and Arabic also
// in Devanagari and Arabic-Indic digits), with the language declared and
// without.
func TestDatesInThePagesLanguage(t *testing.T) {
	files, err := filepath.Glob(filepath.Join("testdata", "dates", "*.html"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no date fixtures: %v", err)
	}
	undeclare := regexp.MustCompile(`<html lang="[^"]*"`)
	byline := regexp.MustCompile(`<p class="byline">[^<]*</p>`)
	// nativeZero is the zero of the digits each language also writes.
	nativeZero := map[string]rune{"ar.html": '٠', "hi.html": '०'}
	// go-htmldate with its own go-dateparser settings, for comparison.
	library := chosenRules
	library.dateLanguage, library.dateSurrounding = false, false
	var right, libRight, total int
	defer func() {
		t.Logf("dates in the page's language: muse %d of %d pages, go-htmldate's own settings %d", right, total, libRight)
	}()
	for _, f := range files {
		page, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		type variant struct {
			name string
			page []byte
		}
		variants := []variant{{"declared", page}, {"undeclared", undeclare.ReplaceAll(page, []byte("<html"))}}
		if zero, ok := nativeZero[filepath.Base(f)]; ok {
			native := byline.ReplaceAllFunc(page, func(b []byte) []byte {
				return []byte(strings.Map(func(r rune) rune {
					if r >= '0' && r <= '9' {
						return zero + r - '0'
					}
					return r
				}, string(b)))
			})
			if string(native) == string(page) {
				t.Fatalf("%s: no date in a byline to write in native digits", f)
			}
			variants = append(variants, variant{"native digits", native},
				variant{"native digits undeclared", undeclare.ReplaceAll(native, []byte("<html"))})
		}
		for _, v := range variants {
			t.Run(filepath.Base(f)+"/"+v.name, func(t *testing.T) {
				total++
				if (Options{Now: testNow, ruleSet: &library}).dateOnly(v.page, "") == "2023-02-14" {
					libRight++
				}
				a, err := Options{Now: testNow}.Extract(v.page, "")
				if err != nil {
					t.Fatal(err)
				}
				if got := day(a.Published); got != "2023-02-14" {
					t.Errorf("published = %q, want 2023-02-14", got)
				} else {
					right++
				}
			})
		}
	}
}
