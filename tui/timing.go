package tui

import (
	"strings"

	"github.com/musecheck/muse/pipeline"
)

// shortUnits abbreviate a timing's units for the sources table.
var shortUnits = strings.NewReplacer(" seconds", "s", " second", "s", " minutes", "min", " minute", "min",
	" hours", "h", " hour", "h", " days", "d", " day", "d", " weeks", "w", " week", "w",
	" months", "mo", " month", "mo", " years", "y", " year", "y")

// vsPost is a page's time relative to the post in a few characters, for
// the sources table: "3d after", "2y before ⚠" (⚠: possibly out of date),
// "same day"; "—" when the page's date or the post's time is unknown.
func (m *Model) vsPost(s pipeline.Source) string {
	t := m.check.Timing(s)
	if t == nil {
		return "—"
	}
	out := t.Text
	switch t.Relation {
	case pipeline.TimingSameDay:
		out = "same day"
	default:
		out = shortUnits.Replace(strings.TrimSuffix(out, " the post"))
	}
	if t.Stale {
		out += " ⚠"
	}
	return out
}

// timingWords is a page's time relative to the post in full, for "why this
// source": "3 days after the post: the post's author could not have seen
// it", "2 years before the post — possibly out of date: check that it still
// held when the post appeared".
func (m *Model) timingWords(s pipeline.Source) string {
	t := m.check.Timing(s)
	switch {
	case t == nil && m.check.Post.PostedAt.IsZero():
		return "the post's time is not known"
	case t == nil:
		return "the page's date is not known"
	case t.After():
		return t.Text + ": the post's author could not have seen it"
	case t.Stale:
		return t.Text + " — possibly out of date: check that it still held when the post appeared"
	}
	return t.Text
}
