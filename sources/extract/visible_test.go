package extract

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// story is enough visible text for the main-text extractor to pick the
// article; hidden is put inside it.
func story(hidden string) []byte {
	var b strings.Builder
	b.WriteString(`<!doctype html><html><head><title>Photo does not show flooding in Lagos</title></head><body><article><h1>Photo does not show flooding in Lagos</h1>`)
	for i := 0; i < 6; i++ {
		fmt.Fprintf(&b, "<p>Visible paragraph %d: the photograph shared on social media was taken in 2012 in another city, according to the agency that holds the original and to the photographer who took it.</p>", i)
		if i == 2 {
			b.WriteString(hidden)
		}
	}
	b.WriteString(`</article></body></html>`)
	return []byte(b.String())
}

// TestHiddenTextDropped is issue 12's attack: text no reader of the page
// sees became a verified, included quote.
func TestHiddenTextDropped(t *testing.T) {
	for name, hidden := range map[string]string{
		"hidden attribute":   `<p hidden>SECRET the post is true, say officials.</p>`,
		"hidden until found": `<div hidden="until-found"><p>SECRET the post is true, say officials.</p></div>`,
		"display none":       `<p style="color:red; DISPLAY : none !important">SECRET the post is true, say officials.</p>`,
		"visibility hidden":  `<div style="visibility:hidden"><p>SECRET the post is true, say officials.</p></div>`,
		"font-size 0":        `<p style="font-size:0px">SECRET the post is true, say officials.</p>`,
		"font-size 0em":      `<p style="font-size: 0.0em">SECRET the post is true, say officials.</p>`,
		"aria-hidden block":  `<div aria-hidden="true"><p>SECRET the post is true, say officials.</p></div>`,
		"template":           `<template><p>SECRET the post is true, say officials.</p></template>`,
		"noscript":           `<noscript><p>SECRET the post is true, say officials.</p></noscript>`,
	} {
		a, err := Options{Now: benchNow}.Extract(story(hidden), "https://www.reuters.com/world/x")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if strings.Contains(a.Text, "SECRET") {
			t.Errorf("%s: hidden text extracted: %q", name, a.Text)
		}
		if !strings.Contains(a.Text, "Visible paragraph 5") {
			t.Errorf("%s: the visible story is lost: %q", name, a.Text)
		}
	}
	// Shown text with similar markup stays.
	for name, shown := range map[string]string{
		"font-size 12px":    `<p style="font-size:12px">SHOWN the post is false, say officials.</p>`,
		"display block":     `<p style="display:block">SHOWN the post is false, say officials.</p>`,
		"aria-hidden false": `<p aria-hidden="false">SHOWN the post is false, say officials.</p>`,
		"aria-hidden icon":  `<p>SHOWN the post is false, <span aria-hidden="true">→</span> say officials.</p>`,
	} {
		a, err := Options{Now: benchNow}.Extract(story(shown), "https://www.reuters.com/world/x")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if !strings.Contains(a.Text, "SHOWN the post is false") {
			t.Errorf("%s: visible text dropped: %q", name, a.Text)
		}
	}
}

// TestEntitiesDoNotReachTheTerminal: &#27; decodes to ESC during parsing,
// so the article itself must come out clean (issue 12).
func TestEntitiesDoNotReachTheTerminal(t *testing.T) {
	page := story(`<p>Evidence&#27;]0;pwned&#7; paragraph&#27;]52;c;Y3VybCBldmlsIHwgc2g=&#27;\ that &#27;[2J&#27;[Hclears &#x9b;2J the &#13;screen.</p>`)
	page = []byte(strings.Replace(string(page), "<title>", "<title>&#27;]2;title&#7;", 1))
	a, err := Options{Now: benchNow}.Extract(page, "https://www.reuters.com/world/x")
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "Evidence paragraph that clears") {
		t.Errorf("the paragraph is lost: %q", a.Text)
	}
	for what, s := range map[string]string{"title": a.Title, "text": a.Text} {
		if i := strings.IndexFunc(s, func(r rune) bool { return r < 0x20 && r != '\n' && r != '\t' || r >= 0x7f && r <= 0x9f }); i >= 0 {
			t.Errorf("%s keeps a control at %d: %q", what, i, s)
		}
	}
	if a.Text != strings.Join(a.Paragraphs, "\n\n") {
		t.Error("Text is not the paragraphs joined")
	}
}

func hugePage(paragraphs int) []byte {
	var b strings.Builder
	b.WriteString("<html><head><title>Live</title></head><body><article>")
	for i := 0; i < paragraphs; i++ {
		fmt.Fprintf(&b, "<p>Paragraph %d says something about the flood in Lagos and the photo that went round.</p>", i)
	}
	b.WriteString("</article></body></html>")
	return []byte(b.String())
}

func TestTooLarge(t *testing.T) {
	start := time.Now()
	_, err := Extract(hugePage(10_000), "https://example.org/live")
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "page too large to read") || !strings.Contains(err.Error(), "https://example.org/live") {
		t.Fatalf("10,000 paragraphs: %v", err)
	}
	if d := time.Since(start); d > 5*time.Second {
		t.Errorf("refusing took %s", d)
	}
	page := story("")
	for name, o := range map[string]Options{
		"bytes":    {MaxBytes: 100},
		"elements": {MaxElements: 10},
		"text":     {MaxText: 100},
		"time":     {TimeBudget: time.Nanosecond},
	} {
		if _, err := o.Extract(page, ""); !errors.Is(err, ErrTooLarge) {
			t.Errorf("%s budget: %v", name, err)
		}
	}
	if _, err := (Options{Now: benchNow}).Extract(page, ""); err != nil {
		t.Errorf("an ordinary page: %v", err)
	}
}

// BenchmarkExtractHugePage is issue 12's 10,000-paragraph page, refused by
// the budget; the same page read without a budget (as before); and a
// 2,500-paragraph page (215 KB of text) within it. Run: go test -run '^$'
// -bench HugePage -benchmem -benchtime 1x ./sources/extract/
func BenchmarkExtractHugePage(b *testing.B) {
	unbounded := Options{Now: benchNow, MaxText: 1 << 30, TimeBudget: time.Hour}
	for _, c := range []struct {
		name string
		n    int
		o    Options
	}{
		{"10000", 10_000, Options{Now: benchNow}},
		{"10000-unbounded", 10_000, unbounded},
		{"2500", 2_500, Options{Now: benchNow}},
	} {
		page := hugePage(c.n)
		b.Run(c.name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; i < b.N; i++ {
				c.o.Extract(page, "")
			}
		})
	}
}
