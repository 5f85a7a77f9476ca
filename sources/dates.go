package sources

import (
	"net/http"
	"strconv"
	"strings"
	"time"
)

// dateLayouts are the absolute date forms pages and APIs write: ISO 8601
// with and without zone, seconds and fractions (JSON-LD, meta tags,
// SearXNG, Brave, Mastodon), bare days, HTTP dates (RFC 1123), and the
// English "Jan 2, 2006" / "2 January 2006" forms that search engines show
// beside a result and X's embed shows under a post.
var dateLayouts = []string{
	time.RFC3339Nano,
	"2006-01-02T15:04:05Z0700",
	"2006-01-02T15:04:05.999999999Z0700",
	"2006-01-02T15:04Z07:00",
	"2006-01-02T15:04:05",
	"2006-01-02T15:04:05.999999999",
	"2006-01-02T15:04",
	"2006-01-02 15:04:05Z07:00",
	"2006-01-02 15:04:05 Z0700",
	"2006-01-02 15:04:05",
	"2006-01-02",
	time.RFC1123Z,
	time.RFC1123,
	"Mon, 2 Jan 2006 15:04:05 -0700",
	"Jan 2, 2006",
	"January 2, 2006",
	"2 Jan 2006",
	"2 January 2006",
}

// ParseDate reads a date as a page or an API writes it (see dateLayouts),
// giving the zero time when s is empty or in no known form: a missing date
// is common and never an error. A form without a zone is read as UTC.
func ParseDate(s string) time.Time {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}
	}
	for _, l := range dateLayouts {
		if t, err := time.Parse(l, s); err == nil {
			return t
		}
	}
	return time.Time{}
}

// RetryAfter reads a Retry-After header (RFC 9110 §10.2.3): a number of
// seconds, or an HTTP date counted from now (a date already past is no
// wait). ok is false when the header is absent or unreadable, so a caller
// can fall back to its service's own rate-limit headers. The wait is at
// most MaxRetryAfter.
func RetryAfter(h http.Header, now time.Time) (wait time.Duration, ok bool) {
	v := strings.TrimSpace(h.Get("Retry-After"))
	if v == "" {
		return 0, false
	}
	if secs, err := strconv.Atoi(v); err == nil && secs >= 0 {
		// Compared in seconds: multiplying first overflows a Duration
		// (10000000000 s wrapped into a negative wait, read as "no wait").
		if secs > int(MaxRetryAfter/time.Second) {
			return MaxRetryAfter, true
		}
		return time.Duration(secs) * time.Second, true
	}
	if t, err := http.ParseTime(v); err == nil {
		return min(max(0, t.Sub(now)), MaxRetryAfter), true
	}
	return 0, false
}

// MaxRetryAfter caps the wait RetryAfter reports. A server asking for more
// than a day is not asking for a retry any caller would make (every caller
// bounds its own wait far below this), and the cap keeps the sum of a wait
// and the time already spent from overflowing.
const MaxRetryAfter = 24 * time.Hour
