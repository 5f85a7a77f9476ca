package pipeline

import (
	"strings"
	"testing"
	"time"
)

func TestParseTime(t *testing.T) {
	for in, want := range map[string]string{
		"2020-05-01":                 "2020-05-01T00:00:00Z",
		" 2020-05-01T12:30:00+02:00": "2020-05-01T10:30:00Z",
		"2020-05-01 12:30":           "2020-05-01T12:30:00Z",
		"2020-05-01T12:30":           "2020-05-01T12:30:00Z",
		"":                           "0001-01-01T00:00:00Z",
	} {
		got, err := ParseTime(in)
		w, _ := time.Parse(time.RFC3339, want)
		if err != nil || !got.Equal(w) {
			t.Errorf("ParseTime(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"May 1", "2020-13-01", "2020-05-01 25:00", "yesterday"} {
		if _, err := ParseTime(in); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
			t.Errorf("ParseTime(%q) err = %v, want one naming the forms", in, err)
		}
	}
}
