package pipeline

import (
	"fmt"
	"strings"
	"time"
)

// timeLayouts are the forms ParseTime reads, most precise first.
var timeLayouts = []string{time.RFC3339, "2006-01-02 15:04", "2006-01-02T15:04", time.DateOnly}

// ParseTime reads a time a person typed — a flag (--before, --posted-at),
// the app's compose form, a batch line's posted_at: RFC 3339, YYYY-MM-DD
// HH:MM (or with a T), or YYYY-MM-DD. A form without a zone is UTC, and a
// day alone is its first instant, so a cutoff of 2020-05-01 leaves that
// day out. Empty (or blank) is the zero time.
func ParseTime(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range timeLayouts {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time: use YYYY-MM-DD, YYYY-MM-DD HH:MM or RFC 3339 (2020-05-01T12:00:00Z)", s)
}
