package search

import (
	"strings"
	"testing"

	"github.com/musecheck/muse/sources"
)

func TestParseCutoff(t *testing.T) {
	for in, want := range map[string]string{
		"2020-05-01":                 "2020-05-01T00:00:00Z",
		" 2020-05-01T12:30:00+02:00": "2020-05-01T10:30:00Z",
	} {
		got, err := ParseCutoff(in)
		if err != nil || !got.Equal(date(want)) {
			t.Errorf("ParseCutoff(%q) = %v, %v; want %s", in, got, err, want)
		}
	}
	for _, in := range []string{"", "May 1", "2020-13-01", "2020-05-01 12:00"} {
		if _, err := ParseCutoff(in); err == nil || !strings.Contains(err.Error(), "YYYY-MM-DD") {
			t.Errorf("ParseCutoff(%q) err = %v", in, err)
		}
	}
}

func TestWriteText(t *testing.T) {
	hits := []Hit{
		{URL: "https://fullfact.org/health/5g-coronavirus/", Title: "There is no link between 5G and the new coronavirus",
			Provider: "factcheck", Rank: 1, Published: date("2020-04-03T00:00:00Z"),
			Also:        []Origin{{Provider: "serpapi", Query: claim, Rank: 2}},
			ClaimReview: &sources.ClaimReview{Claim: "5G mobile networks spread COVID-19.", Rating: "Incorrect", Reviewer: "Full Fact"}},
		{URL: "https://apnews.com/x", Provider: "brave", Rank: 2},
	}
	var b strings.Builder
	if err := WriteText(&b, hits); err != nil {
		t.Fatal(err)
	}
	want := ` 1. There is no link between 5G and the new coronavirus
    https://fullfact.org/health/5g-coronavirus/
    factcheck #1, serpapi #2 · 2020-04-03
    fact-check: Full Fact rated "Incorrect": 5G mobile networks spread COVID-19.
 2. (untitled)
    https://apnews.com/x
    brave #2
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	WriteText(&b, nil)
	if b.String() != "no hits\n" {
		t.Errorf("empty: %q", b.String())
	}
}

func TestWriteJSON(t *testing.T) {
	var b strings.Builder
	if err := WriteJSON(&b, nil); err != nil || b.String() != "[]\n" {
		t.Errorf("empty: %q %v", b.String(), err)
	}
	b.Reset()
	h := Hit{URL: "https://fullfact.org/a", Title: "T", Provider: "factcheck", Query: "q", Rank: 1,
		Published: date("2020-04-03T00:00:00Z"), ClaimReview: &sources.ClaimReview{Claim: "c", Rating: "False"}}
	if err := WriteJSON(&b, []Hit{h, {URL: "https://x.org/", Provider: "brave", Query: "q", Rank: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"url": "https://fullfact.org/a"`, `"published": "2020-04-03T00:00:00Z"`,
		`"claim_review": {`, `"rating": "False"`, `"provider": "brave"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
	if strings.Count(b.String(), `"published"`) != 1 || strings.Contains(b.String(), `"also"`) {
		t.Errorf("empty fields not omitted:\n%s", b.String())
	}
}

// TestWriteTextSanitises: a title or claim from a provider cannot set the
// terminal title or clear the screen (issue 12).
func TestWriteTextSanitises(t *testing.T) {
	hits := []Hit{{URL: "https://example.org/x\x1b[2J", Title: "Real title\x1b]0;pwned\x07 \u009b2J",
		Provider: "searxng", Rank: 1, ClaimReview: &sources.ClaimReview{Claim: "claim\x1b]52;c;aGk=\x07", Rating: "False\a"}}}
	var b strings.Builder
	if err := WriteText(&b, hits); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\u009b") || !strings.Contains(out, "Real title ") || !strings.Contains(out, "https://example.org/x") {
		t.Errorf("WriteText = %q", out)
	}
}
