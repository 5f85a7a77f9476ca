package ratings

import (
	"strings"
	"testing"
)

// TestWriteTableSanitises: what was typed or stored cannot send the
// terminal escape sequences (issue 12).
func TestWriteTableSanitises(t *testing.T) {
	var b strings.Builder
	if err := WriteTable(&b, []Rating{{Input: "evil\x1b]0;pwned\x07.example", Publisher: "Pub\x1b[2J", Origin: "none"}}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, "evil.example") || !strings.Contains(out, "Pub") {
		t.Errorf("WriteTable = %q", out)
	}
}
