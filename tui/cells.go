package tui

import (
	"strings"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/bidi"
)

// Terminal cells. Every width the app computes — wrapping, cutting,
// padding, centring — is counted here, in user-perceived characters
// (grapheme clusters, rivo/uniseg) and the cells each takes: a CJK
// ideograph or an emoji 2, a combining accent or an Arabic diacritic 0 (it
// sits on the letter before), a Devanagari spacing vowel sign 1. uniseg
// was chosen by measuring tmux (3.3a): on CJK, Arabic with harakat,
// Devanagari conjuncts, a ZWJ family emoji, a flag and "e"+U+0301 its
// counts match the cursor tmux reports after printing each, where
// charmbracelet/x/ansi (lipgloss's measure) and go-runewidth count the
// Devanagari vowel signs as 0 and undercount such a line by a third, so it
// would run past the pane. lipgloss still measures its own padding; the
// frame is cut to the terminal's width here last (fitFrame), so a line it
// padded from a short count never wraps on the terminal.

// eachCell calls f with every escape sequence of s (w < 0) and every
// grapheme cluster (w its cells) in order, until f returns false.
func eachCell(s string, f func(seg string, w int) bool) {
	state := -1
	for s != "" {
		if s[0] == '\x1b' {
			n := escapeLen(s)
			if !f(s[:n], -1) {
				return
			}
			s, state = s[n:], -1
			continue
		}
		var c string
		var w int
		c, s, w, state = uniseg.FirstGraphemeClusterInString(s, state)
		if !f(c, w) {
			return
		}
	}
}

// escapeLen is the length of the escape sequence s starts with: CSI
// (ESC [ … final byte), OSC (ESC ] … BEL or ESC \) or ESC and one byte.
// Only the app's own styling reaches a view: text from outside went
// through safe.
func escapeLen(s string) int {
	if len(s) < 2 {
		return len(s)
	}
	switch s[1] {
	case '[':
		for i := 2; i < len(s); i++ {
			if s[i] >= 0x40 && s[i] <= 0x7e {
				return i + 1
			}
		}
	case ']':
		for i := 2; i < len(s); i++ {
			if s[i] == '\a' {
				return i + 1
			}
			if s[i] == '\x1b' && i+1 < len(s) && s[i+1] == '\\' {
				return i + 2
			}
		}
	default:
		return 2
	}
	return len(s)
}

// cells is how many terminal cells s takes (escape sequences take none).
func cells(s string) int {
	n := 0
	eachCell(s, func(_ string, w int) bool {
		n += max(w, 0)
		return true
	})
	return n
}

// truncate cuts s to at most w cells, ending it with tail when it is cut;
// a character is never split, and every escape sequence is kept so the
// styles still close.
func truncate(s string, w int, tail string) string {
	if cells(s) <= w {
		return s
	}
	room := w - cells(tail)
	var b strings.Builder
	used, cut := 0, false
	eachCell(s, func(seg string, cw int) bool {
		switch {
		case cw < 0:
			b.WriteString(seg)
		case cut:
		case used+cw > room:
			cut = true
			b.WriteString(tail)
		default:
			b.WriteString(seg)
			used += cw
		}
		return true
	})
	return b.String()
}

// cut is the part of s from cell left up to cell right: the characters
// that start at or after left and end by right, with every escape
// sequence of s.
func cut(s string, left, right int) string {
	var b strings.Builder
	at := 0
	eachCell(s, func(seg string, cw int) bool {
		if cw < 0 {
			b.WriteString(seg)
			return true
		}
		if at >= left && at+cw <= right {
			b.WriteString(seg)
		}
		at += cw
		return true
	})
	return b.String()
}

// pad fills s with spaces to w cells, or cuts it with … when it is wider.
func pad(s string, w int) string {
	s = truncate(s, w, "…")
	return s + strings.Repeat(" ", max(w-cells(s), 0))
}

// fitFrame makes every line of a view at most w cells wide, so the
// terminal never wraps one: padding lipgloss measured short goes first,
// then what still does not fit is cut. Then each line's right-to-left
// runs are isolated (isolateRTL).
func fitFrame(frame string, w int) string {
	lines := strings.Split(frame, "\n")
	for i, l := range lines {
		if cells(l) > w {
			l = trimPadding(l, w)
			if cells(l) > w {
				l = truncate(l, w, "")
			}
		}
		lines[i] = isolateRTL(l)
	}
	return strings.Join(lines, "\n")
}

// trimPadding removes trailing spaces (keeping escape sequences) while l
// is wider than w.
func trimPadding(l string, w int) string {
	over := cells(l) - w
	for over > 0 {
		i := strings.LastIndexByte(l, ' ')
		if i < 0 || strings.TrimRight(stripEscapes(l[i:]), " ") != "" {
			return l
		}
		l = l[:i] + l[i+1:]
		over--
	}
	return l
}

func stripEscapes(s string) string {
	var b strings.Builder
	eachCell(s, func(seg string, w int) bool {
		if w >= 0 {
			b.WriteString(seg)
		}
		return true
	})
	return b.String()
}

// Right-to-left text. Terminals differ: most (xterm, tmux, kitty,
// alacritty, Windows Terminal) lay every cell out left to right in the
// order the text is stored; some (VTE's GNOME Terminal, Konsole, mlterm)
// apply the Unicode bidirectional algorithm to each line. The app keeps
// the logical order — the order copying from the terminal gives back, and
// what a bidi terminal expects — and never reorders: reordering would be
// undone (scrambled twice) by the terminals that do bidi. What it adds is
// an isolate around each right-to-left run of a line (U+2068 FIRST STRONG
// ISOLATE … U+2069 POP DIRECTIONAL ISOLATE, zero cells wide in tmux as
// measured): on a bidi terminal the line then keeps the direction of its
// first left-to-right text, so an Arabic query does not turn its row
// around (checkbox to the right), and the numbers, brackets and "…" next
// to the run stay on their side of it instead of being pulled across;
// widths and truncation, done before, are unchanged.
const (
	fsi = "\u2068"
	pdi = "\u2069"
)

// isolateRTL wraps each right-to-left run of line in FSI … PDI. A run
// starts at a right-to-left letter and ends at the last right-to-left
// letter or digit before the next left-to-right letter, with the
// combining marks on it: what the bidi algorithm would lay out right to
// left anyway (digits after Arabic or Hebrew words join them, rules W2 and
// N1), so the isolate changes nothing inside the run and only keeps it
// from reaching past its ends.
func isolateRTL(line string) string {
	if !hasRTL(line) {
		return line
	}
	var b strings.Builder
	var pending strings.Builder // inside a run, since its last RTL letter
	in := false
	eachCell(line, func(seg string, w int) bool {
		cls := segClass(seg, w)
		switch {
		case cls == bidi.R || cls == bidi.AL || (in && (cls == bidi.AN || cls == bidi.EN)):
			if !in {
				b.WriteString(fsi)
				in = true
			}
			b.WriteString(pending.String())
			pending.Reset()
			b.WriteString(seg)
		case in && cls == bidi.L:
			b.WriteString(pdi)
			b.WriteString(pending.String())
			pending.Reset()
			b.WriteString(seg)
			in = false
		case in:
			pending.WriteString(seg)
		default:
			b.WriteString(seg)
		}
		return true
	})
	if in {
		b.WriteString(pdi)
		b.WriteString(pending.String())
	}
	return b.String()
}

// segClass is the bidi class of a grapheme cluster (its first rune's);
// escape sequences are neutral.
func segClass(seg string, w int) bidi.Class {
	if w < 0 {
		return bidi.ON
	}
	p, _ := bidi.LookupString(seg)
	return p.Class()
}

func hasRTL(s string) bool {
	for _, r := range s {
		if r < 0x590 {
			continue
		}
		p, _ := bidi.LookupRune(r)
		if c := p.Class(); c == bidi.R || c == bidi.AL {
			return true
		}
	}
	return false
}

// bidiControls are the embedding, override and isolate controls. Text
// from outside loses them (safe): a post could otherwise reverse the rest
// of a row on a bidi terminal, and the isolates the app adds are the only
// ones in a line.
var bidiControls = strings.NewReplacer(
	"\u202a", "", "\u202b", "", "\u202c", "", "\u202d", "", "\u202e", "",
	"\u2066", "", "\u2067", "", "\u2068", "", "\u2069", "")
