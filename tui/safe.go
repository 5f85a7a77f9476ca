package tui

import "github.com/musecheck/muse/sources/sanitize"

// safe makes text from outside muse (the post, page titles, URLs, reasons,
// quotes, model text) harmless to print in a terminal: sources/sanitize
// removes C0 and C1 controls but newline and tab, and whole escape
// sequences, so no page can retitle the window, move the cursor or write
// the clipboard (OSC 52). Every such text the app shows goes through here.
// The bidi embedding, override and isolate controls go too (cells.go).
func safe(s string) string { return bidiControls.Replace(sanitize.String(s)) }
