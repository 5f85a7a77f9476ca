package sources

import (
	"net/http"
	"testing"
	"time"
)

func TestParseDate(t *testing.T) {
	for in, want := range map[string]string{
		// JSON-LD and meta tags
		"2019-11-19T10:00:00Z":           "2019-11-19T10:00:00Z",
		"2019-11-19T10:00:00+0000":       "2019-11-19T10:00:00Z",
		"2019-11-19T22:00:00.000-05:00":  "2019-11-20T03:00:00Z",
		"2019-11-19T10:00+01:00":         "2019-11-19T09:00:00Z",
		"2019-11-19T10:00":               "2019-11-19T10:00:00Z",
		"2019-11-19 10:00:00":            "2019-11-19T10:00:00Z",
		"2019-11-19 10:00:00 +0100":      "2019-11-19T09:00:00Z",
		" 2019-11-19\n":                  "2019-11-19T00:00:00Z",
		"Tue, 19 Nov 2019 10:00:00 GMT":  "2019-11-19T10:00:00Z",
		"Tue, 5 Nov 2019 10:00:00 +0200": "2019-11-05T08:00:00Z",
		// search APIs
		"2020-03-31T00:00:00":      "2020-03-31T00:00:00Z",
		"2020-03-31T16:55:00.123Z": "2020-03-31T16:55:00.123Z",
		"Apr 23, 2020":             "2020-04-23T00:00:00Z",
		"June 26, 2020":            "2020-06-26T00:00:00Z",
		"2 Jan 2021":               "2021-01-02T00:00:00Z",
		"14 February 2022":         "2022-02-14T00:00:00Z",
	} {
		w, err := time.Parse(time.RFC3339Nano, want)
		if err != nil {
			t.Fatal(err)
		}
		if got := ParseDate(in); !got.Equal(w) {
			t.Errorf("ParseDate(%q) = %v, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "yesterday", "3 days ago", "13/45/2020", "2020-13-01"} {
		if got := ParseDate(in); !got.IsZero() {
			t.Errorf("ParseDate(%q) = %v, want zero", in, got)
		}
	}
}

func TestRetryAfter(t *testing.T) {
	now := time.Date(2024, 4, 29, 12, 0, 0, 0, time.UTC)
	for _, c := range []struct {
		value string
		want  time.Duration
		ok    bool
	}{
		{"120", 2 * time.Minute, true},
		{" 0 ", 0, true},
		{"Mon, 29 Apr 2024 12:00:30 GMT", 30 * time.Second, true},
		{"Mon, 29 Apr 2024 11:00:00 GMT", 0, true}, // already past
		{"", 0, false},
		{"-5", 0, false},
		{"soon", 0, false},
		// Too many seconds for a Duration: used to wrap into a negative wait.
		{"10000000000", MaxRetryAfter, true},
		{"9223372036854775807", MaxRetryAfter, true},
		{"86401", MaxRetryAfter, true},
		{"86400", 24 * time.Hour, true},
		{"Fri, 31 Dec 9999 23:59:59 GMT", MaxRetryAfter, true},
	} {
		h := http.Header{}
		if c.value != "" {
			h.Set("Retry-After", c.value)
		}
		if got, ok := RetryAfter(h, now); got != c.want || ok != c.ok {
			t.Errorf("RetryAfter(%q) = %s, %v; want %s, %v", c.value, got, ok, c.want, c.ok)
		}
	}
}

func TestNativeDates(t *testing.T) {
	for in, want := range map[string]string{
		"公開日：令和5年2月14日 9時30分": "公開日：2023-02-14 9時30分",
		"令和元年5月1日":            "2019-05-01",
		"令和元年3月1日":            "令和元年3月1日", // before the era began: left alone
		"平成31年4月30日":          "2019-04-30",
		"平成31年5月1日":           "平成31年5月1日", // after it ended
		"平成２年１２月３日":           "1990-12-03",
		"2023年2月30日":          "2023年2月30日", // no such day
		"２０２３年２月１４日":          "2023-02-14",
		"2023년 2월 14일":        "2023-02-14",
		"14 ก.พ. 2566":        "2023-02-14",
		"๑๔ กุมภาพันธ์ พ.ศ. ๒๕๖๖":    "2023-02-14",
		"14 กุมภาพันธ์ 2023":         "2023-02-14",
		"١٤ فبراير ٢٠٢٣":             "2023-02-14",
		"14 شباط 2023":               "2023-02-14",
		"23 رجب 1444 هـ":             "              ",
		"The 14th of February, 2023": "The 14th of February, 2023",
	} {
		if got, _ := NativeDates(in); got != want {
			t.Errorf("NativeDates(%q) = %q, want %q", in, got, want)
		}
	}
	if got := FoldDigits("٢٠٢٣-০২-١٤ ৯:३০ ２"); got != "2023-02-14 9:30 2" {
		t.Errorf("FoldDigits: %q", got)
	}
	if got := ParseDate("٢٠٢٣-٠٢-١٤"); !got.Equal(time.Date(2023, 2, 14, 0, 0, 0, 0, time.UTC)) {
		t.Errorf("ParseDate in Arabic-Indic digits: %v", got)
	}
}

// A partial date is written and read back in ISO 8601's reduced precision,
// as a saved check keeps it, and nothing else is read as one.
func TestPartialDateText(t *testing.T) {
	for _, c := range []struct {
		p    PartialDate
		text string
	}{{PartialDate{Year: 2008}, "2008"}, {PartialDate{Year: 2020, Month: time.March}, "2020-03"}, {PartialDate{}, ""}} {
		b, err := c.p.MarshalText()
		if err != nil || string(b) != c.text {
			t.Errorf("%+v written %q (%v), want %q", c.p, b, err, c.text)
		}
		var back PartialDate
		if err := back.UnmarshalText(b); err != nil || back != c.p {
			t.Errorf("%q read as %+v (%v), want %+v", b, back, err, c.p)
		}
	}
	for _, bad := range []string{"2008-03-14", "March 2008", "08", "2008-13"} {
		var p PartialDate
		if err := p.UnmarshalText([]byte(bad)); err == nil {
			t.Errorf("%q read as %+v, want an error", bad, p)
		}
	}
}
