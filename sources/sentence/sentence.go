// Package sentence splits a correction or a note into its sentences
// without breaking a URL, and keeps a citation written after a sentence
// with it.
package sentence

import (
	"strings"
	"unicode/utf8"

	"github.com/musecheck/muse/sources/links"
)

// urlSpans are the byte spans of the http(s) URLs written bare in s.
func urlSpans(s string) [][2]int {
	var out [][2]int
	for _, l := range links.Find(s) {
		if l.Kind == links.KindURL {
			if u := strings.ToLower(s[l.Start:l.End]); strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://") {
				out = append(out, [2]int{l.Start, l.End})
			}
		}
	}
	return out
}

// abbreviations end with a full stop without ending a sentence.
var abbreviations = map[string]bool{"mr": true, "mrs": true, "ms": true, "dr": true, "st": true, "vs": true,
	"etc": true, "e.g": true, "i.e": true, "no": true, "jan": true, "feb": true, "mar": true, "apr": true,
	"jun": true, "jul": true, "aug": true, "sep": true, "sept": true, "oct": true, "nov": true, "dec": true,
	"inc": true, "ltd": true, "co": true, "jr": true, "sr": true, "prof": true, "gov": true, "sen": true, "rep": true}

// Split splits flattened text after a sentence's end followed by a
// space — ".", "!", "?", "…", the Devanagari danda "।" and "॥", the
// Arabic question mark "؟" and the Urdu full stop "۔", with any closing
// quotes or brackets — and right after the CJK full stops "。！？", which
// take no space. Never inside a URL and not after an initial ("U.S.") or
// a common abbreviation. A trailing bare URL or "Source: URL" stays with
// the sentence before it, so dropping a sentence never orphans its
// citation.
func Split(s string) []string {
	spans := urlSpans(s)
	inURL := func(i int) bool {
		for _, sp := range spans {
			if i >= sp[0] && i < sp[1] {
				return true
			}
		}
		return false
	}
	var out []string
	start := 0
	for i := 0; i < len(s); {
		r, n := utf8.DecodeRuneInString(s[i:])
		switch {
		case strings.ContainsRune("。！？", r) && !inURL(i):
			end := i + n
			for end < len(s) {
				c, cn := utf8.DecodeRuneInString(s[end:])
				if !strings.ContainsRune(closers, c) {
					break
				}
				end += cn
			}
			out = append(out, strings.TrimSpace(s[start:end]))
			start, i = end, end
			continue
		case r == ' ' && i > 0 && !inURL(i-1) && endsSentence(s[start:i], func(j int) bool { return inURL(start + j) }):
			out = append(out, strings.TrimSpace(s[start:i]))
			start = i + 1
		}
		i += n
	}
	out = append(out, strings.TrimSpace(s[start:]))
	// Glue citation-only pieces ("https://…", "Source: https://…") to the
	// sentence before.
	var merged []string
	for _, p := range out {
		if p == "" {
			continue
		}
		if len(merged) > 0 && isCitationOnly(p, urlSpans(p)) {
			merged[len(merged)-1] = Join([]string{merged[len(merged)-1], p})
			continue
		}
		merged = append(merged, p)
	}
	return merged
}

// Join puts sentences back together: with a space, but after a
// CJK full stop, which takes none.
func Join(ps []string) string {
	var b strings.Builder
	for i, p := range ps {
		if i > 0 && !strings.ContainsRune("。！？", lastMark(ps[i-1])) {
			b.WriteByte(' ')
		}
		b.WriteString(p)
	}
	return b.String()
}

// lastMark is the last rune of s before any closing quotes.
func lastMark(s string) rune {
	r, _ := utf8.DecodeLastRuneInString(strings.TrimRight(s, closers))
	return r
}

// closers may follow a sentence's last mark.
const closers = `"')]”’»」』）`

// endsSentence reports whether the text before a space, w, ends a
// sentence; inURL says whether byte j of w is in a URL.
func endsSentence(w string, inURL func(j int) bool) bool {
	w = strings.TrimRight(w, closers)
	last, _ := utf8.DecodeLastRuneInString(w)
	switch {
	case last == '…' || strings.ContainsRune("।॥؟۔!?", last):
		return true
	case last != '.':
		return false
	case len(w) >= 2 && inURL(len(w)-2):
		return true // "… https://x.y/a.b. Next": the URL's sentence ends
	}
	word := w[:len(w)-1]
	if k := strings.LastIndexByte(word, ' '); k >= 0 {
		word = word[k+1:]
	}
	initial := len(word) == 1 && word[0] >= 'A' && word[0] <= 'Z'
	return !initial && !abbreviations[strings.ToLower(word)] && !(len(word) >= 2 && word[len(word)-2] == '.')
}

func isCitationOnly(p string, spans [][2]int) bool {
	if len(spans) == 0 {
		return false
	}
	rest := p[:spans[0][0]]
	prev := spans[0][0]
	for _, sp := range spans {
		rest += p[prev:sp[0]]
		prev = sp[1]
	}
	rest += p[prev:]
	return len(strings.Fields(rest)) <= 2
}
