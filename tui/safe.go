package tui

import "strings"

// safe makes text from outside muse (the post, page titles, URLs, reasons,
// quotes, model text) harmless to print in a terminal: it drops the C0
// controls but newline and tab, DEL, and the C1 controls (U+0080–U+009F),
// so no escape sequence in a page can retitle the window, move the cursor
// or write the clipboard (OSC 52). Every such text the app shows goes
// through here.
func safe(s string) string {
	if strings.IndexFunc(s, unsafeRune) < 0 {
		return s
	}
	return strings.Map(func(r rune) rune {
		if unsafeRune(r) {
			return -1
		}
		return r
	}, s)
}

func unsafeRune(r rune) bool {
	switch {
	case r == '\n' || r == '\t':
		return false
	case r < 0x20 || r == 0x7f:
		return true
	}
	return r >= 0x80 && r <= 0x9f
}
