package prompts

import (
	"math"
	"time"

	"github.com/dustin/go-humanize"
)

// Relations of a page's time to the post's (Timing.Relation).
const (
	TimingBefore  = "before"
	TimingAfter   = "after"
	TimingSameDay = "same_day" // a page dated by its day alone, the post's day: its order is not known
)

// StaleAge is how long before the post a page must have been published to
// be flagged as possibly stale: a year. It is a plain convention, not a
// tuned threshold: statistics, rules and officials change within a year,
// and a page that old is shown for the checker to judge, not kept out.
const StaleAge = aYear

// Timing is when a page was published relative to the post, derived from
// the page's date and the post's time whenever it is shown, never stored
// beside them: "3 days after the post".
type Timing struct {
	Relation string `json:"relation"` // before|after|same_day
	// Days is the whole days from the post to the page: negative before
	// it, 0 within a day (or on the post's day, for a page dated by its
	// day alone).
	Days int    `json:"days"`
	Text string `json:"text"` // "3 days after the post", "the same day as the post"
	// Stale: the page was published StaleAge or more before the post, so
	// what it says may have changed by then.
	Stale bool `json:"stale,omitempty"`
}

// After reports whether the page was published after the post.
func (t *Timing) After() bool { return t != nil && t.Relation == TimingAfter }

// TimingOf is the page's published time relative to the post's; nil when
// either is unknown. A page dated by its day alone (midnight, as most
// search engines and many pages give it) is compared by calendar day, in
// the page's zone: on the post's day its order is not known.
func TimingOf(published, posted time.Time) *Timing {
	if published.IsZero() || posted.IsZero() {
		return nil
	}
	t := &Timing{}
	if dayOnly(published) {
		py, pm, pd := published.Date()
		qy, qm, qd := posted.In(published.Location()).Date()
		pub := time.Date(py, pm, pd, 0, 0, 0, 0, time.UTC)
		post := time.Date(qy, qm, qd, 0, 0, 0, 0, time.UTC)
		t.Days = int(pub.Sub(post) / aDay)
		switch {
		case t.Days == 0:
			t.Relation, t.Text = TimingSameDay, "the same day as the post"
		default:
			t.Text = relTime(pub, post)
		}
	} else {
		d := published.Sub(posted)
		t.Days = int(d / aDay)
		t.Text = relTime(published, posted)
		if d > -time.Second && d < time.Second {
			t.Relation, t.Text = TimingSameDay, "at the time of the post"
		}
	}
	if t.Relation == "" {
		t.Relation = TimingBefore
		if published.After(posted) {
			t.Relation = TimingAfter
		}
	}
	t.Stale = posted.Sub(published) >= StaleAge
	return t
}

// dayOnly reports whether t looks like a date without a time of day: the
// first instant of its day in its own zone.
func dayOnly(t time.Time) bool {
	return t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0
}

// relTime is "3 days after the post" or "2 years before the post":
// go-humanize's steps, with a year of 365 days, so that a page a year
// before the post is said to be so exactly when it is flagged Stale.
func relTime(published, posted time.Time) string {
	return humanize.CustomRelTime(published, posted, "before the post", "after the post", magnitudes)
}

const (
	aDay   = 24 * time.Hour
	aMonth = 30 * aDay
	aYear  = 365 * aDay
)

var magnitudes = []humanize.RelTimeMagnitude{
	{D: time.Second, Format: "now", DivBy: time.Second},
	{D: 2 * time.Second, Format: "1 second %s", DivBy: 1},
	{D: time.Minute, Format: "%d seconds %s", DivBy: time.Second},
	{D: 2 * time.Minute, Format: "1 minute %s", DivBy: 1},
	{D: time.Hour, Format: "%d minutes %s", DivBy: time.Minute},
	{D: 2 * time.Hour, Format: "1 hour %s", DivBy: 1},
	{D: aDay, Format: "%d hours %s", DivBy: time.Hour},
	{D: 2 * aDay, Format: "1 day %s", DivBy: 1},
	{D: 7 * aDay, Format: "%d days %s", DivBy: aDay},
	{D: 14 * aDay, Format: "1 week %s", DivBy: 1},
	{D: aMonth, Format: "%d weeks %s", DivBy: 7 * aDay},
	{D: 2 * aMonth, Format: "1 month %s", DivBy: 1},
	{D: aYear, Format: "%d months %s", DivBy: aMonth},
	{D: 2 * aYear, Format: "1 year %s", DivBy: 1},
	{D: math.MaxInt64, Format: "%d years %s", DivBy: aYear},
}
