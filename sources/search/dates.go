package search

import (
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

var relativeDate = regexp.MustCompile(`^(\d+)\s+(second|minute|hour|day|week|month|year)s?\s+ago$`)

// parseDate reads a provider's date string: the absolute forms of
// sources.ParseDate, or a relative one ("3 days ago") counted back from
// now, the time of the answer. Unknown forms give the zero time: a hit
// without a date is still a hit.
func parseDate(s string, now time.Time) time.Time {
	if t := sources.ParseDate(s); !t.IsZero() {
		return t
	}
	m := relativeDate.FindStringSubmatch(strings.ToLower(strings.TrimSpace(s)))
	if m == nil {
		return time.Time{}
	}
	n, err := strconv.Atoi(m[1])
	if err != nil {
		return time.Time{}
	}
	switch m[2] {
	case "second":
		return now.Add(-time.Duration(n) * time.Second)
	case "minute":
		return now.Add(-time.Duration(n) * time.Minute)
	case "hour":
		return now.Add(-time.Duration(n) * time.Hour)
	case "day":
		return now.AddDate(0, 0, -n)
	case "week":
		return now.AddDate(0, 0, -7*n)
	case "month":
		return now.AddDate(0, -n, 0)
	default:
		return now.AddDate(-n, 0, 0)
	}
}

// snippetDate splits the date Google prefixes to many snippets
// ("May 1, 2023 ... The rest") off the snippet.
func snippetDate(snippet string, now time.Time) (time.Time, string) {
	head, rest, ok := strings.Cut(snippet, " ... ")
	if !ok || len(head) > 24 {
		return time.Time{}, snippet
	}
	t := parseDate(head, now)
	if t.IsZero() {
		return t, snippet
	}
	return t, rest
}

// lastDay is the last calendar day (UTC) on which something published before
// the instant could have appeared: for a cutoff at midnight that is the day
// before, otherwise the cutoff's own day. Engines filter by whole days.
func lastDay(before time.Time) time.Time {
	d := before.UTC().Add(-time.Nanosecond)
	return time.Date(d.Year(), d.Month(), d.Day(), 0, 0, 0, 0, time.UTC)
}

// firstDay starts the date window sent to engines that need both ends of a
// range; the web has nothing older worth citing.
func firstDay() time.Time { return time.Date(1970, 1, 1, 0, 0, 0, 0, time.UTC) }
