package export

import (
	"errors"
	"fmt"
	"strings"
	"unicode"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/sanitize"
	"github.com/musecheck/muse/sources/sentence"
)

// NoteLimit is the Community Notes length limit, in characters as
// NoteLength counts them.
const NoteLimit = 280

// Reasons Note refuses; each is wrapped with the details.
var (
	ErrNoCorrection = errors.New("the check has no correction to turn into a note")
	ErrNoURL        = errors.New("a note must cite at least one source URL and the correction cites none")
	ErrTooLong      = errors.New("the correction does not fit in a note")
	ErrDigest       = errors.New("a --no-llm digest is a reading list, not a note")
	ErrForeignLink  = errors.New("a note may link only to the check's pages")
	ErrMarkup       = errors.New("a note may not hold HTML")
)

// NoteLength counts s the way a note's length is checked, after trimming
// surrounding space:
//
//   - every http(s) URL counts as 1 character, however long (Community
//     Notes' rule); trailing sentence punctuation is not part of the URL;
//   - the rest is normalised to NFC and counted in grapheme clusters (what a
//     reader sees as one character): "e" + combining acute counts 1 like "é",
//     a flag, a skin-toned emoji or a ZWJ family emoji counts 1, a CJK
//     ideograph counts 1. Each space and line break counts 1.
//
// X's tweet counter weighs emoji and CJK as 2; notes are counted per
// character, so they are not weighted here.
func NoteLength(s string) int {
	s = norm.NFC.String(strings.TrimSpace(s))
	n, prev := 0, 0
	for _, loc := range urlSpans(s) {
		n += uniseg.GraphemeClusterCount(s[prev:loc[0]]) + 1
		prev = loc[1]
	}
	return n + uniseg.GraphemeClusterCount(s[prev:])
}

// urlSpans returns the byte spans of the http(s) URLs written out in s
// (sources/links finds them, without trailing punctuation), which is what
// Community Notes links and counts as 1.
func urlSpans(s string) [][2]int {
	var out [][2]int
	for _, l := range links.Find(s) {
		if l.Kind == links.KindURL && isHTTP(s[l.Start:l.End]) {
			out = append(out, [2]int{l.Start, l.End})
		}
	}
	return out
}

// isHTTP reports whether a link is written as an http(s) URL.
func isHTTP(u string) bool {
	u = strings.ToLower(u)
	return strings.HasPrefix(u, "http://") || strings.HasPrefix(u, "https://")
}

// Note turns the check's correction into a Community Notes-ready note: plain
// text (Markdown links become "label URL", emphasis marks go, whitespace is
// collapsed to single spaces) of at most NoteLimit characters as NoteLength
// counts them, citing at least one URL.
//
// When the correction's text cites no URL, the first of Correction.URLs is
// appended. A correction the person edited that is too long is refused
// with ErrTooLong: their sentences are not muse's to drop. When the
// model's note is too long, whole trailing sentences are dropped
// — never part of a sentence — and if that removes every URL the first
// dropped one is appended again, so the note still cites a source. When
// even the first sentence with one URL does not fit, Note refuses with
// ErrTooLong and says by how much; it never truncates mid-sentence.
func Note(c *pipeline.Check) (string, error) {
	if c == nil || strings.TrimSpace(c.Correction.Text) == "" {
		return "", fmt.Errorf("write note: %w", ErrNoCorrection)
	}
	if c.Correction.Unsourced() {
		// Say what the check found, from its accounting.
		return "", fmt.Errorf("write note: %w: %s", ErrNoCorrection, c.Account().Summary)
	}
	if c.NoLLM {
		return "", fmt.Errorf("write note: %w", ErrDigest)
	}
	text := plainText(sanitize.String(c.Correction.Text))
	if _, tags := pipeline.StripHTML(text); len(tags) > 0 {
		return "", fmt.Errorf("write note: %w: the correction holds HTML markup (%s); a note is plain text, remove it", ErrMarkup, strings.Join(tags, ", "))
	}
	if len(urlSpans(text)) == 0 {
		first := ""
		for _, u := range c.Correction.URLs {
			if u = strings.TrimSpace(u); isHTTP(u) {
				first = u
				break
			}
		}
		if first == "" {
			return "", fmt.Errorf("write note: %w", ErrNoURL)
		}
		text += " " + first
	}
	// X links what its URL pattern finds, a bare "evil.com" too: every
	// link the note makes must be one of the check's own pages.
	for _, l := range links.FindLinked(text) {
		// A sentence's closing mark in another script ("।") may be read
		// as part of the URL; the page is the one without it.
		if !isHTTP(l.URL) || c.SourceByURL(l.URL) == nil && c.SourceByURL(links.Normalise(strings.TrimRightFunc(text[l.Start:l.End], unicode.IsPunct))) == nil {
			return "", fmt.Errorf("write note: %w: the correction links to %s, which is not one of the check's pages; remove it", ErrForeignLink, links.Defang(l.URL))
		}
	}
	if NoteLength(text) <= NoteLimit {
		return text, nil
	}
	if c.Correction.Edited {
		// The checker's words are theirs to cut: refuse, never drop one.
		return "", fmt.Errorf("write note: %w: your edited correction is %d characters, %d over the limit of %d (each link counts as 1); shorten it",
			ErrTooLong, NoteLength(text), NoteLength(text)-NoteLimit, NoteLimit)
	}
	sents := sentences(text)
	for k := len(sents) - 1; k >= 1; k-- {
		kept := joinSentences(sents[:k])
		if len(urlSpans(kept)) == 0 {
			rest := joinSentences(sents[k:])
			sp := urlSpans(rest)[0] // text has a URL, and kept has none
			kept += " " + rest[sp[0]:sp[1]]
		}
		if NoteLength(kept) <= NoteLimit {
			return kept, nil
		}
	}
	first := sents[0]
	if len(urlSpans(first)) == 0 {
		first += " x" // any URL counts 1
	}
	return "", fmt.Errorf("write note: %w: its first sentence with one link is %d characters, %d over the limit of %d (each link counts as 1); shorten it",
		ErrTooLong, NoteLength(first), NoteLength(first)-NoteLimit, NoteLimit)
}

// plainText flattens the Markdown a model or a person may write into the
// plain text a note takes.
func plainText(s string) string {
	var md strings.Builder
	prev := 0
	for _, l := range links.Find(s) {
		if l.Kind != links.KindMarkdown || !isHTTP(l.URL) {
			continue
		}
		md.WriteString(s[prev:l.Start])
		prev = l.End
		u := l.URL
		label := strings.TrimSpace(l.Label)
		if label == "" || label == u || len(urlSpans(label)) > 0 {
			md.WriteString(u)
		} else {
			md.WriteString(label + " " + u)
		}
	}
	md.WriteString(s[prev:])
	s = md.String()
	s = strings.NewReplacer("**", "", "__", "", "<http", "http").Replace(s)
	// A URL written as <https://...> loses its opening bracket above; the
	// closing one goes here, outside URLs only.
	var b strings.Builder
	prev = 0
	for _, sp := range urlSpans(s) {
		b.WriteString(s[prev:sp[1]])
		prev = sp[1]
		if prev < len(s) && s[prev] == '>' {
			prev++
		}
	}
	b.WriteString(s[prev:])
	return strings.Join(strings.Fields(b.String()), " ")
}

// sentences and joinSentences split a note into its sentences and put
// them back together (package sentence).
var sentences, joinSentences = sentence.Split, sentence.Join

// Clip is s cut to its first n user-perceived characters (grapheme
// clusters: a letter with its combining marks, a Devanagari conjunct, a
// ZWJ emoji sequence each count 1 and are never split), with "…" added
// when it was cut.
func Clip(s string, n int) string {
	if uniseg.GraphemeClusterCount(s) <= n {
		return s
	}
	var b strings.Builder
	g := uniseg.NewGraphemes(s)
	for i := 0; i < n && g.Next(); i++ {
		b.WriteString(g.Str())
	}
	return b.String() + "…"
}
