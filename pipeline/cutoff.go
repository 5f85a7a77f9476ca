package pipeline

import (
	"errors"
	"fmt"
	"time"

	"github.com/musecheck/muse/prompts"
)

// The cutoff. A check has none unless the checker sets one: a journalist
// checks a post hours or days after it appeared, and for a new claim the
// only evidence is what was published after it (the agency's denial, the
// wire's report, a fact-check of the post itself). Every page is shown
// with its time relative to the post instead (Source.Timing), and the
// correction is told which facts came after the post. The paper's
// evaluation protocol, which corrects a post as if at the moment it
// appeared, is one switch away: AsOfPost (`--as-of-post`).

// ErrNoPostTime is AsOfPost's error for a post whose time is not known.
var ErrNoPostTime = errors.New("the post's time is not known, so there is no cutoff at the post: give the posted time, or a cutoff date")

// AsOfPost is the cutoff of the paper's protocol: the post's own time, so
// that only pages published before the post count. It fails with
// ErrNoPostTime when the post's time is not known.
func AsOfPost(p Post) (time.Time, error) {
	if p.PostedAt.IsZero() {
		return time.Time{}, ErrNoPostTime
	}
	return p.PostedAt, nil
}

// Timing is a page's time relative to the post: prompts.Timing, derived
// from the page's published date and the post's time, never stored.
type Timing = prompts.Timing

// Relations of a page's time to the post's.
const (
	TimingBefore  = prompts.TimingBefore
	TimingAfter   = prompts.TimingAfter
	TimingSameDay = prompts.TimingSameDay
)

// StaleAge is how long before the post a page must have been published to
// be flagged as possibly stale (prompts.StaleAge).
const StaleAge = prompts.StaleAge

// Timing is the source's published date relative to the post's time; nil
// when either is unknown.
func (c *Check) Timing(s Source) *Timing {
	return prompts.TimingOf(s.Published, c.Post.PostedAt)
}

// sourceJSON is a Source as the Check's JSON writes it: with its time
// relative to the post, derived as it is written.
type sourceJSON struct {
	Source
	RelativeToPost *Timing `json:"relative_to_post,omitempty"`
}

// sourcesJSON are the Check's sources with their timing; nil stays nil
// (the JSON's "sources": null for a check not yet read).
func (c *Check) sourcesJSON() []sourceJSON {
	if c.Sources == nil {
		return nil
	}
	out := make([]sourceJSON, len(c.Sources))
	for i, s := range c.Sources {
		out[i] = sourceJSON{s, c.Timing(s)}
	}
	return out
}

// afterPost says how many of the k pages of fate f were published after
// the post, for the accounting's sentence: " (published after it)" when
// all were, " (1 of them published after it)" when some were, "" when none
// was or the post's time is not known.
func (c *Check) afterPost(f Fate, k int) string {
	after := 0
	for _, s := range c.Sources {
		if fateOf(s, c) == f && c.Timing(s).After() {
			after++
		}
	}
	switch {
	case after == 0:
		return ""
	case after == k:
		return " (published after it)"
	}
	return fmt.Sprintf(" (%d of them published after it)", after)
}
