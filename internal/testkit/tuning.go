package testkit

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// TuningEnv turns on the tests that tune: those that choose thresholds,
// weights or rules over folds or a split of the real data and check that
// muse's defaults are what the choice makes. They take minutes, so plain
// go test leaves them out; .ci/run runs them after it, with TuningEnv=1.
const TuningEnv = "MUSE_TUNING"

// Tuning skips the test unless $MUSE_TUNING is 1, saying how to run it.
// A test that tunes calls it first.
func Tuning(tb testing.TB) {
	tb.Helper()
	if os.Getenv(TuningEnv) == "1" {
		return
	}
	tb.Skip("tunes on the real data, which takes long; run it with " + TuningCommand(tb))
}

// TuningCommand is the command that runs tb's top-level test with the
// tuning tests on, from the repository root.
func TuningCommand(tb testing.TB) string {
	name, _, _ := strings.Cut(tb.Name(), "/")
	return fmt.Sprintf("%s=1 go test %s -run '^%s$'", TuningEnv, packageDir(), name)
}

// packageDir is the directory go test runs the test in (the package's),
// relative to the module root, as go test takes it: "./sources/archive".
func packageDir() string {
	wd, err := os.Getwd()
	if err != nil {
		return "."
	}
	for dir := wd; ; dir = filepath.Dir(dir) {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			rel, err := filepath.Rel(dir, wd)
			if err != nil || rel == "." {
				return "."
			}
			return "./" + filepath.ToSlash(rel)
		}
		if filepath.Dir(dir) == dir {
			return "."
		}
	}
}
