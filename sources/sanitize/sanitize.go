// Package sanitize makes text from outside (web pages, posts, model
// answers) safe to print on a terminal or write as Markdown or plain text:
// no byte of it can move the cursor, clear the screen, set the window
// title, write the clipboard (OSC 52), start a hyperlink or talk to tmux.
//
// What is removed: every C0 control but newline and tab; DEL; every C1
// control, written as ESC plus a letter or as its 8-bit code point
// U+0080–U+009F; and whole escape sequences, parameters and payload
// included: CSI (ESC [ … final, or U+009B …), OSC (ESC ] … BEL or ST),
// DCS, SOS, PM and APC strings (… ST), and two- or three-byte ESC
// sequences. A carriage return becomes a newline (CRLF one newline), so
// text cannot be overwritten by the text after it. Invalid UTF-8 becomes
// U+FFFD, so a terminal that reads 8-bit C1 bytes sees none. A string
// sequence that never ends is cut at the next newline: a page cannot hide
// what is printed after it.
//
// JSON output needs none of this: encoding/json escapes every control.
//
// charmbracelet/x/ansi's Strip was measured against these rules and is not
// enough on its own: it keeps C0 controls (BEL, BS, CR, NUL) and the 8-bit
// C1 forms that arrive as UTF-8 (U+009B "2J" clears the screen on xterm).
package sanitize

import (
	"io"
	"unicode/utf8"
)

// String returns s with every control sequence and control character
// removed, as described in the package comment. Text without any is
// returned as it is, without copying.
func String(s string) string {
	if clean(s) {
		return s
	}
	var m machine
	out := make([]byte, 0, len(s))
	out = m.feed(out, []byte(s), true)
	return string(out)
}

// clean reports whether s has nothing to remove.
func clean(s string) bool {
	for i := 0; i < len(s); {
		c := s[i]
		if c < utf8.RuneSelf {
			if (c < 0x20 && c != '\n' && c != '\t') || c == 0x7f {
				return false
			}
			i++
			continue
		}
		r, n := utf8.DecodeRuneInString(s[i:])
		if r == utf8.RuneError && n == 1 || isC1(r) {
			return false
		}
		i += n
	}
	return true
}

func isC1(r rune) bool { return r >= 0x80 && r <= 0x9f }

// Writer passes everything written to it on to the underlying writer
// sanitised, as String would the concatenation of all writes: a sequence
// or a UTF-8 character split across two writes is recognised. Only an
// incomplete UTF-8 character at the end of a write is held back, until the
// next Write or Flush.
type Writer struct {
	w   io.Writer
	m   machine
	buf []byte
}

// NewWriter returns a Writer that writes to w.
func NewWriter(w io.Writer) *Writer { return &Writer{w: w} }

// Write sanitises p and writes the result. It reports len(p) written when
// the underlying write succeeded, whatever was removed.
func (w *Writer) Write(p []byte) (int, error) {
	w.buf = w.m.feed(w.buf[:0], p, false)
	if len(w.buf) > 0 {
		if _, err := w.w.Write(w.buf); err != nil {
			return 0, err
		}
	}
	return len(p), nil
}

// WriteString is Write for a string.
func (w *Writer) WriteString(s string) (int, error) { return w.Write([]byte(s)) }

// Flush writes out a character left incomplete by the last Write (as
// U+FFFD: it can no longer be completed) and ends any sequence in
// progress. Call it when the text is complete.
func (w *Writer) Flush() error {
	w.buf = w.m.feed(w.buf[:0], nil, true)
	if len(w.buf) == 0 {
		return nil
	}
	_, err := w.w.Write(w.buf)
	return err
}

type state uint8

const (
	ground   state = iota
	esc            // after ESC
	escInter       // after ESC and intermediate bytes, before the final byte
	csi            // in a control sequence, before its final byte
	str            // in an OSC, DCS, SOS, PM or APC string
	strEsc         // after ESC inside a string: ST, or the start of a new sequence
)

// machine is the sanitiser's state between writes.
type machine struct {
	st      state
	afterCR bool   // the last rune was a CR, emitted as "\n": a LF now is its pair
	partial []byte // an incomplete UTF-8 character from the last feed
}

// feed appends to out the sanitised form of in, after any partial
// character kept from the previous feed. With final, an incomplete
// character at the end is emitted as U+FFFD instead of kept, and the
// state is reset.
func (m *machine) feed(out, in []byte, final bool) []byte {
	if len(m.partial) > 0 {
		in = append(m.partial, in...)
		m.partial = nil
	}
	for i := 0; i < len(in); {
		r, n := rune(in[i]), 1
		if r >= utf8.RuneSelf {
			if !final && !utf8.FullRune(in[i:]) {
				m.partial = append([]byte(nil), in[i:]...)
				break
			}
			r, n = utf8.DecodeRune(in[i:])
		}
		out = m.step(out, r)
		i += n
	}
	if final {
		m.st, m.afterCR = ground, false
	}
	return out
}

// step handles one rune (utf8.RuneError for a byte that is not UTF-8).
func (m *machine) step(out []byte, r rune) []byte {
	afterCR := m.afterCR
	m.afterCR = false
	switch m.st {
	case esc:
		switch {
		case r == '[':
			m.st = csi
		case r == ']' || r == 'P' || r == 'X' || r == '^' || r == '_':
			m.st = str
		case r == 0x1b:
			// a new ESC: the first one introduced nothing
		case r >= 0x20 && r <= 0x2f:
			m.st = escInter
		case r >= 0x30 && r <= 0x7e:
			m.st = ground // a two-byte sequence such as ESC c (reset)
		default:
			m.st = ground
			return m.ground(out, r, afterCR)
		}
		return out
	case escInter:
		switch {
		case r >= 0x20 && r <= 0x2f:
		case r >= 0x30 && r <= 0x7e:
			m.st = ground
		default:
			m.st = ground
			return m.ground(out, r, afterCR)
		}
		return out
	case csi:
		switch {
		case r >= 0x20 && r <= 0x3f:
		case r >= 0x40 && r <= 0x7e:
			m.st = ground
		case r == 0x1b:
			m.st = esc
		default:
			m.st = ground
			return m.ground(out, r, afterCR)
		}
		return out
	case str:
		switch r {
		case 0x07, 0x9c:
			m.st = ground
		case 0x1b:
			m.st = strEsc
		case '\n', '\r':
			m.st = ground
			return m.ground(out, r, afterCR)
		}
		return out
	case strEsc:
		if r == '\\' {
			m.st = ground
			return out
		}
		m.st = esc
		return m.step(out, r)
	}
	return m.ground(out, r, afterCR)
}

// ground handles a rune outside any sequence.
func (m *machine) ground(out []byte, r rune, afterCR bool) []byte {
	switch {
	case r == '\n':
		if afterCR {
			return out // the LF of a CRLF already written
		}
		return append(out, '\n')
	case r == '\t':
		return append(out, '\t')
	case r == '\r':
		m.afterCR = true
		return append(out, '\n')
	case r == 0x1b:
		m.st = esc
	case r == 0x9b:
		m.st = csi
	case r == 0x90 || r == 0x98 || r == 0x9d || r == 0x9e || r == 0x9f:
		m.st = str
	case r < 0x20 || r == 0x7f || isC1(r):
		// dropped
	default:
		return utf8.AppendRune(out, r)
	}
	return out
}
