package links

import (
	"regexp"
	"slices"
	"strings"
)

// Remove takes out of text every link whose URL keep refuses (keep gets
// Link.URL), leaving its label when it has one, and tidies what the hole
// leaves: a lead-in such as "More at" or "see also", an empty "()", a
// footnote mark "[2]" and its "[2]: …" line, a list item left empty, a
// space before punctuation. It repeats until no refused link is left, so
// that text joined by a removal cannot form a new link. removed lists the
// URLs taken out, each once, in the order found. Text without a refused
// link is returned as it is.
func Remove(text string, keep func(url string) bool) (clean string, removed []string) {
	return remove(text, keep, Find)
}

// RemoveLinked is Remove of every link FindLinked finds: for text to be
// published on X, where a bare "evil.com" is a link too.
func RemoveLinked(text string, keep func(url string) bool) (clean string, removed []string) {
	return remove(text, keep, FindLinked)
}

func remove(text string, keep func(url string) bool, find func(string) []Link) (clean string, removed []string) {
	for {
		var changed bool
		text, changed = removeOnce(text, keep, find, &removed)
		if !changed {
			return text, removed
		}
		text = tidy(text)
	}
}

// removeOnce is one pass; every pass that changes the text shortens it, so
// Remove ends.
func removeOnce(text string, keep func(string) bool, find func(string) []Link, removed *[]string) (string, bool) {
	var b strings.Builder
	last, changed := 0, false
	for _, l := range find(text) {
		if keep(l.URL) {
			continue
		}
		changed = true
		if !slices.Contains(*removed, l.URL) {
			*removed = append(*removed, l.URL)
		}
		b.WriteString(text[last:l.Start])
		last = l.End
		label := l.Label
		if len(find(label)) > 0 {
			label = "" // a label that is itself a link goes with it
		}
		if label != "" {
			b.WriteString(label)
			continue
		}
		// Take a lead-in ("More at", "see also:") with the link.
		s := b.String()
		if cut := leadIn(s); cut < len(s) {
			b.Reset()
			b.WriteString(s[:cut])
		}
	}
	if !changed {
		return text, false
	}
	b.WriteString(text[last:])
	return b.String(), true
}

// leadIn returns where a lead-in at the end of s starts, len(s) if none.
// Only the last words are looked at (a lead-in is short), starting at a
// word boundary.
func leadIn(s string) int {
	start := max(0, len(s)-48)
	for start > 0 && !strings.ContainsRune(" \t\n([", rune(s[start-1])) {
		start++
		if start >= len(s) {
			return len(s)
		}
	}
	if m := reLeadIn.FindStringSubmatchIndex(s[start:]); m != nil {
		return start + m[2]
	}
	return len(s)
}

// reLeadIn is the words that only introduce a link, at the end of the text
// before it.
var reLeadIn = regexp.MustCompile(`(?i)(?:^|[\s(\[])((?:for\s+)?(?:(?:read\s+)?more(?:\s+(?:info(?:rmation)?|details))?(?:\s+(?:at|here|on|in))?|see(?:\s+also)?(?:\s+(?:here|at|on))?|available\s+(?:at|here|on)|details\s+(?:at|here)|sources?|proof|evidence|via|link|here|at)[ \t]*:?[ \t]*)$`)

var (
	emptyBrackets = regexp.MustCompile(`\(\s*[,;:]?\s*\)|\[\s*\]|<\s*>`)
	doubleStop    = regexp.MustCompile(`([.!?])(?:[ \t]+[.,;:!?])+`)
	pauseStop     = regexp.MustCompile(`[,;:]+([.!?])`)
	spaceBefore   = regexp.MustCompile(`[ \t]+([.,;:!?])`)
	doubleSpaces  = regexp.MustCompile(`[ \t]{2,}`)
	emptyItem     = regexp.MustCompile(`(?m)^[ \t]*(?:[-*+•]|\d+[.)])?[ \t]*[.,;:]?[ \t]*$`)
	blankLines    = regexp.MustCompile(`\n{3,}`)
)

// tidy cleans the holes removed links leave.
func tidy(s string) string {
	s = emptyBrackets.ReplaceAllString(s, "")
	s = doubleStop.ReplaceAllString(s, "$1")
	s = spaceBefore.ReplaceAllString(s, "$1")
	s = pauseStop.ReplaceAllString(s, "$1")
	s = doubleSpaces.ReplaceAllString(s, " ")
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " \t")
	}
	s = strings.Join(lines, "\n")
	s = emptyItem.ReplaceAllString(s, "")
	s = blankLines.ReplaceAllString(s, "\n\n")
	return strings.TrimSpace(s)
}
