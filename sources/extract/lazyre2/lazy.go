// Package re2 stands in for github.com/wasilibs/go-re2 in muse's build (see
// the replace directive in muse's go.mod). It is not RE2: it is Go's own
// regexp package, which go-dateparser uses anyway in a default build, with
// one difference: a pattern given to MustCompile is compiled on its first
// use, not when MustCompile is called.
//
// go-dateparser makes about 5,400 patterns for ~200 locales in the init
// functions of its generated locale data, so every program linking it spent
// a quarter of a second starting up, also for commands that never parse a
// date. go-dateparser routes every pattern through its internal regexp
// package, which calls this package when built with the re2_cgo tag; muse
// builds with that tag, and only the patterns of the locales a page needs are
// ever compiled.
package re2

import (
	"regexp"
	"sync"
	"sync/atomic"
)

// made counts the patterns given to MustCompile and Compile so far;
// compiled, those compiled (by Compile, or on first use).
var made, compiled atomic.Int64

// Counts reports how many patterns have been made so far and how many of
// them compiled. It is not part of go-re2's API: muse's tests use it to
// check that start-up compiles next to none of go-dateparser's patterns.
func Counts() (patterns, compiledSoFar int64) { return made.Load(), compiled.Load() }

// Regexp is a regular expression compiled on its first use.
type Regexp struct {
	expr    string
	once    sync.Once
	longest bool
	rx      *regexp.Regexp
}

// MustCompile returns a Regexp for expr without compiling it. A pattern that
// does not compile panics on its first use, as regexp.MustCompile would at
// the call; go-dateparser's patterns are fixed strings that its own tests
// compile.
func MustCompile(expr string) *Regexp {
	made.Add(1)
	return &Regexp{expr: expr}
}

// Compile compiles expr at once and reports an error for a bad pattern, as
// regexp.Compile does: its patterns may come from input.
func Compile(expr string) (*Regexp, error) {
	rx, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	made.Add(1)
	compiled.Add(1)
	re := &Regexp{expr: expr, rx: rx}
	re.once.Do(func() {})
	return re, nil
}

// QuoteMeta is regexp.QuoteMeta.
func QuoteMeta(s string) string { return regexp.QuoteMeta(s) }

func (re *Regexp) get() *regexp.Regexp {
	re.once.Do(func() {
		re.rx = regexp.MustCompile(re.expr)
		compiled.Add(1)
		if re.longest {
			re.rx.Longest()
		}
	})
	return re.rx
}

// Longest makes future searches leftmost-longest, as regexp's Longest does.
// It must not be called while the Regexp is in use, the same rule as
// regexp's.
func (re *Regexp) Longest() {
	re.longest = true
	if re.rx != nil {
		re.rx.Longest()
	}
}

func (re *Regexp) String() string { return re.expr }

func (re *Regexp) NumSubexp() int { return re.get().NumSubexp() }

func (re *Regexp) SubexpNames() []string { return re.get().SubexpNames() }

func (re *Regexp) SubexpIndex(name string) int { return re.get().SubexpIndex(name) }

func (re *Regexp) Match(b []byte) bool { return re.get().Match(b) }

func (re *Regexp) MatchString(s string) bool { return re.get().MatchString(s) }

func (re *Regexp) Find(b []byte) []byte { return re.get().Find(b) }

func (re *Regexp) FindIndex(b []byte) []int { return re.get().FindIndex(b) }

func (re *Regexp) FindString(s string) string { return re.get().FindString(s) }

func (re *Regexp) FindStringIndex(s string) []int { return re.get().FindStringIndex(s) }

func (re *Regexp) FindSubmatch(b []byte) [][]byte { return re.get().FindSubmatch(b) }

func (re *Regexp) FindSubmatchIndex(b []byte) []int { return re.get().FindSubmatchIndex(b) }

func (re *Regexp) FindStringSubmatch(s string) []string { return re.get().FindStringSubmatch(s) }

func (re *Regexp) FindStringSubmatchIndex(s string) []int {
	return re.get().FindStringSubmatchIndex(s)
}

func (re *Regexp) FindAll(b []byte, n int) [][]byte { return re.get().FindAll(b, n) }

func (re *Regexp) FindAllIndex(b []byte, n int) [][]int { return re.get().FindAllIndex(b, n) }

func (re *Regexp) FindAllString(s string, n int) []string { return re.get().FindAllString(s, n) }

func (re *Regexp) FindAllStringIndex(s string, n int) [][]int {
	return re.get().FindAllStringIndex(s, n)
}

func (re *Regexp) FindAllSubmatch(b []byte, n int) [][][]byte {
	return re.get().FindAllSubmatch(b, n)
}

func (re *Regexp) FindAllSubmatchIndex(b []byte, n int) [][]int {
	return re.get().FindAllSubmatchIndex(b, n)
}

func (re *Regexp) FindAllStringSubmatch(s string, n int) [][]string {
	return re.get().FindAllStringSubmatch(s, n)
}

func (re *Regexp) FindAllStringSubmatchIndex(s string, n int) [][]int {
	return re.get().FindAllStringSubmatchIndex(s, n)
}

func (re *Regexp) Expand(dst, template, src []byte, match []int) []byte {
	return re.get().Expand(dst, template, src, match)
}

func (re *Regexp) ExpandString(dst []byte, template, src string, match []int) []byte {
	return re.get().ExpandString(dst, template, src, match)
}

func (re *Regexp) ReplaceAll(src, repl []byte) []byte { return re.get().ReplaceAll(src, repl) }

func (re *Regexp) ReplaceAllLiteral(src, repl []byte) []byte {
	return re.get().ReplaceAllLiteral(src, repl)
}

func (re *Regexp) ReplaceAllString(src, repl string) string {
	return re.get().ReplaceAllString(src, repl)
}

func (re *Regexp) ReplaceAllLiteralString(src, repl string) string {
	return re.get().ReplaceAllLiteralString(src, repl)
}

func (re *Regexp) Split(s string, n int) []string { return re.get().Split(s, n) }
