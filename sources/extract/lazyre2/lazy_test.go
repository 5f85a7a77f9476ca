package re2

import (
	"reflect"
	"regexp"
	"slices"
	"sync"
	"testing"
)

func TestMustCompileWaitsForFirstUse(t *testing.T) {
	made, before := Counts()
	re := MustCompile(`(\d+)-(\d+)`)
	if m, got := Counts(); got != before || m != made+1 {
		t.Fatalf("MustCompile: %d made, %d compiled; want %d, %d", m, got, made+1, before)
	}
	if re.String() != `(\d+)-(\d+)` {
		t.Fatalf("String() = %q", re.String())
	}
	if !re.MatchString("12-34") {
		t.Fatal("no match")
	}
	if _, got := Counts(); got != before+1 {
		t.Fatalf("after first use %d patterns, want %d", got, before+1)
	}
	re.MatchString("5-6")
	if _, got := Counts(); got != before+1 {
		t.Fatalf("second use compiled again: %d", got)
	}
}

func TestBadPatternPanicsOnUse(t *testing.T) {
	re := MustCompile(`(unclosed`)
	defer func() {
		if recover() == nil {
			t.Fatal("a bad pattern did not panic on use")
		}
	}()
	re.MatchString("x")
}

func TestCompileReportsBadPattern(t *testing.T) {
	if _, err := Compile(`(unclosed`); err == nil {
		t.Fatal("Compile accepted a bad pattern")
	}
	re, err := Compile(`a+`)
	if err != nil || re.FindString("baaab") != "aaa" {
		t.Fatalf("Compile(a+) = %v, %v", re, err)
	}
}

func TestLongestBeforeAndAfterCompile(t *testing.T) {
	before := MustCompile(`a|ab`)
	before.Longest()
	if got := before.FindString("ab"); got != "ab" {
		t.Fatalf("Longest before first use: %q, want ab", got)
	}
	after := MustCompile(`a|ab`)
	if got := after.FindString("ab"); got != "a" {
		t.Fatalf("leftmost-first: %q, want a", got)
	}
	after.Longest()
	if got := after.FindString("ab"); got != "ab" {
		t.Fatalf("Longest after first use: %q, want ab", got)
	}
}

// TestSameAnswersAsRegexp runs every method on patterns of the kind
// go-dateparser's locale data holds against the standard library's.
func TestSameAnswersAsRegexp(t *testing.T) {
	patterns := []string{
		`(?i)(\A|[^\pL\pM\d_])(\d+)\s+(days?|weeks?)\s+ago(\z|[^\pL\pM\d_])`,
		`(?P<day>\d{1,2})\.(?P<month>\d{1,2})\.(?P<year>\d{4})`,
		`(?i)^(?:hace|il y a)\s+`,
		`\s+`,
	}
	inputs := []string{"3 days ago", "il y a 2 semaines", "02.12.2026 and 1.1.1999", "  a  b ", ""}
	for _, p := range patterns {
		lazy, std := MustCompile(p), regexp.MustCompile(p)
		if lazy.NumSubexp() != std.NumSubexp() || !slices.Equal(lazy.SubexpNames(), std.SubexpNames()) ||
			lazy.SubexpIndex("day") != std.SubexpIndex("day") {
			t.Fatalf("%s: groups differ", p)
		}
		for _, in := range inputs {
			b := []byte(in)
			same := func(name string, a, b any) {
				t.Helper()
				if !reflect.DeepEqual(a, b) {
					t.Errorf("%s on %q, %q: %v, regexp %v", name, p, in, a, b)
				}
			}
			same("Match", lazy.Match(b), std.Match(b))
			same("MatchString", lazy.MatchString(in), std.MatchString(in))
			same("Find", lazy.Find(b), std.Find(b))
			same("FindIndex", lazy.FindIndex(b), std.FindIndex(b))
			same("FindString", lazy.FindString(in), std.FindString(in))
			same("FindStringIndex", lazy.FindStringIndex(in), std.FindStringIndex(in))
			same("FindSubmatch", lazy.FindSubmatch(b), std.FindSubmatch(b))
			same("FindSubmatchIndex", lazy.FindSubmatchIndex(b), std.FindSubmatchIndex(b))
			same("FindStringSubmatch", lazy.FindStringSubmatch(in), std.FindStringSubmatch(in))
			same("FindStringSubmatchIndex", lazy.FindStringSubmatchIndex(in), std.FindStringSubmatchIndex(in))
			same("FindAll", lazy.FindAll(b, -1), std.FindAll(b, -1))
			same("FindAllIndex", lazy.FindAllIndex(b, -1), std.FindAllIndex(b, -1))
			same("FindAllString", lazy.FindAllString(in, 2), std.FindAllString(in, 2))
			same("FindAllStringIndex", lazy.FindAllStringIndex(in, -1), std.FindAllStringIndex(in, -1))
			same("FindAllSubmatch", lazy.FindAllSubmatch(b, -1), std.FindAllSubmatch(b, -1))
			same("FindAllSubmatchIndex", lazy.FindAllSubmatchIndex(b, -1), std.FindAllSubmatchIndex(b, -1))
			same("FindAllStringSubmatch", lazy.FindAllStringSubmatch(in, -1), std.FindAllStringSubmatch(in, -1))
			same("FindAllStringSubmatchIndex", lazy.FindAllStringSubmatchIndex(in, -1),
				std.FindAllStringSubmatchIndex(in, -1))
			same("ReplaceAll", lazy.ReplaceAll(b, []byte("<$1>")), std.ReplaceAll(b, []byte("<$1>")))
			same("ReplaceAllLiteral", lazy.ReplaceAllLiteral(b, []byte("$1")), std.ReplaceAllLiteral(b, []byte("$1")))
			same("ReplaceAllString", lazy.ReplaceAllString(in, "<$1>"), std.ReplaceAllString(in, "<$1>"))
			same("ReplaceAllLiteralString", lazy.ReplaceAllLiteralString(in, "$1"), std.ReplaceAllLiteralString(in, "$1"))
			same("Split", lazy.Split(in, -1), std.Split(in, -1))
			if m := std.FindStringSubmatchIndex(in); m != nil {
				same("Expand", lazy.Expand(nil, []byte("[$1]"), b, m), std.Expand(nil, []byte("[$1]"), b, m))
				same("ExpandString", lazy.ExpandString(nil, "[$1]", in, m), std.ExpandString(nil, "[$1]", in, m))
			}
		}
	}
	if QuoteMeta("1.5+x") != regexp.QuoteMeta("1.5+x") {
		t.Error("QuoteMeta differs")
	}
}

// TestFirstUseFromManyGoroutines compiles once when many goroutines meet a
// pattern at the same time (run with -race).
func TestFirstUseFromManyGoroutines(t *testing.T) {
	_, before := Counts()
	re := MustCompile(`\bdate\b`)
	var wg sync.WaitGroup
	for range 16 {
		wg.Go(func() {
			if !re.MatchString("a date") {
				t.Error("no match")
			}
		})
	}
	wg.Wait()
	if _, got := Counts(); got-before != 1 {
		t.Fatalf("compiled %d times, want once", got-before)
	}
}
