package pipeline

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// Helpers that the engine's internal tests and its external (pipeline_test)
// end-to-end tests share.

// Warnings is every warning and failure the check logged, one per line:
// what the user reads on stderr and in the TUI.
func Warnings(c *Check) string {
	var b strings.Builder
	for _, ev := range c.Events {
		if ev.Kind == EventWarning || ev.Kind == EventStageFailed {
			b.WriteString(ev.Message + "\n")
		}
	}
	for _, w := range c.Correction.Warnings {
		b.WriteString(w + "\n")
	}
	return b.String()
}

// DefaultOptions are the options an engine runs with when none are set.
func DefaultOptions() Options { return Options{}.withDefaults() }

func WriteFile(t testing.TB, dir, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(dir, name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

const OrderDescription = "A screenshot of a document titled \"Springfield City Council Order 2024-7\" that claims to ban bicycles on Main Street."

// HasEvent reports whether the check logged an event of kind whose message
// holds substr.
func HasEvent(c *Check, kind, substr string) bool {
	for _, ev := range c.Events {
		if ev.Kind == kind && strings.Contains(ev.Message, substr) {
			return true
		}
	}
	return false
}
