package search

import (
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	now := date("2024-04-29T12:00:00Z")
	for in, want := range map[string]string{
		"2020-03-31T00:00:00":       "2020-03-31T00:00:00Z",
		"2020-03-31T16:55:00.123Z":  "2020-03-31T16:55:00.123Z",
		"2022-01-19T10:12:00+01:00": "2022-01-19T09:12:00Z",
		"2020-03-31":                "2020-03-31T00:00:00Z",
		"Apr 23, 2020":              "2020-04-23T00:00:00Z",
		"June 26, 2020":             "2020-06-26T00:00:00Z",
		"3 days ago":                "2024-04-26T12:00:00Z",
		"1 hour ago":                "2024-04-29T11:00:00Z",
		"2 weeks ago":               "2024-04-15T12:00:00Z",
	} {
		got := parseDate(in, now)
		if !got.Equal(date(want)) {
			t.Errorf("parseDate(%q) = %v, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "yesterday-ish", "13/45/2020"} {
		if got := parseDate(in, now); !got.IsZero() {
			t.Errorf("parseDate(%q) = %v, want zero", in, got)
		}
	}
}

func TestSnippetDate(t *testing.T) {
	now := time.Now()
	d, rest := snippetDate("Mar 31, 2020 ... A claim that 5G networks", now)
	if !d.Equal(date("2020-03-31T00:00:00Z")) || rest != "A claim that 5G networks" {
		t.Errorf("got %v %q", d, rest)
	}
	d, rest = snippetDate("Some text ... more text", now)
	if !d.IsZero() || rest != "Some text ... more text" {
		t.Errorf("no date: got %v %q", d, rest)
	}
}

func TestLastDay(t *testing.T) {
	for in, want := range map[string]string{
		"2020-05-01T00:00:00Z":      "2020-04-30",
		"2020-05-01T00:00:01Z":      "2020-05-01",
		"2020-05-01T01:00:00+02:00": "2020-04-30", // 23:00 UTC the day before
	} {
		if got := lastDay(date(in)).Format(time.DateOnly); got != want {
			t.Errorf("lastDay(%s) = %s, want %s", in, got, want)
		}
	}
}
