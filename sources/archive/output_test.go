package archive

import (
	"strings"
	"testing"
)

// TestWriteTextSanitises: an archived page's title and text cannot send
// the terminal escape sequences (issue 12).
func TestWriteTextSanitises(t *testing.T) {
	var b strings.Builder
	err := WriteText(&b, []Hit{{URL: "https://example.org/a\x07", Title: "Title\x1b]0;pwned\x07", Snippet: "text\x1b[2J\u009d52;c;aGk=\x07 more"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1. Title\n   https://example.org/a (undated, score 0.00)\n   text more\n"; b.String() != want {
		t.Errorf("WriteText = %q, want %q", b.String(), want)
	}
}

// A page archived without a title is named by its publisher or host.
func TestWriteTextNamesUntitledPages(t *testing.T) {
	var b strings.Builder
	if err := WriteText(&b, []Hit{
		{URL: "https://www.politifact.com/a", Title: " "},
		{URL: "https://apnews.com/b", Publisher: "AP News"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. (untitled) politifact.com\n", "2. (untitled) AP News\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("WriteText = %q, want it to hold %q", b.String(), want)
		}
	}
}
