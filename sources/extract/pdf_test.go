package extract

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/lang"
)

// buildPDF writes a PDF 1.4 file with one page per element of pages, in
// Helvetica: each string is a line, "" an extra line of space (a paragraph
// break). info holds the document information entries, unescaped.
func buildPDF(info map[string]string, pages ...[]string) []byte {
	esc := strings.NewReplacer(`\`, `\\`, `(`, `\(`, `)`, `\)`)
	var objs []string
	add := func(s string) int { objs = append(objs, s); return len(objs) }
	catalog := add("") // filled in below, once the page tree's number is known
	font := add("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>")
	var kids []string
	pagesObj := len(objs) + 1 + 2*len(pages)
	for _, lines := range pages {
		var c strings.Builder
		c.WriteString("BT /F1 11 Tf 14 TL 72 750 Td\n")
		for _, l := range lines {
			if l == "" {
				c.WriteString("0 -14 Td\n")
				continue
			}
			fmt.Fprintf(&c, "(%s) Tj T*\n", esc.Replace(l))
		}
		c.WriteString("ET")
		content := add(fmt.Sprintf("<< /Length %d >>\nstream\n%s\nendstream", c.Len(), c.String()))
		page := add(fmt.Sprintf("<< /Type /Page /Parent %d 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 %d 0 R >> >> /Contents %d 0 R >>", pagesObj, font, content))
		kids = append(kids, fmt.Sprintf("%d 0 R", page))
	}
	add(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", strings.Join(kids, " "), len(pages)))
	objs[catalog-1] = fmt.Sprintf("<< /Type /Catalog /Pages %d 0 R >>", pagesObj)
	var d strings.Builder
	d.WriteString("<<")
	for k, v := range info {
		fmt.Fprintf(&d, " /%s (%s)", k, esc.Replace(v))
	}
	d.WriteString(" >>")
	infoObj := add(d.String())

	var b bytes.Buffer
	b.WriteString("%PDF-1.4\n%\xe2\xe3\xcf\xd3\n")
	offsets := make([]int, len(objs))
	for i, o := range objs {
		offsets[i] = b.Len()
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", i+1, o)
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(objs)+1)
	for _, off := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", off)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root %d 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(objs)+1, catalog, infoObj, xref)
	return b.Bytes()
}

var reportPages = [][]string{
	{
		"Measles vaccination coverage report 2022",
		"",
		"Coverage with the second dose rose to 93 percent in 2022,",
		"up from 91 percent the year before, according to school records.",
		"",
		"The rise was largest in the northern districts (4 points).",
	},
	{
		"No district reported an outbreak linked to the vaccine itself.",
	},
}

func TestExtractPDF(t *testing.T) {
	doc := buildPDF(map[string]string{
		"Title": "Measles vaccination coverage, 2022", "Author": "Office of Public Health",
		"CreationDate": "D:20230214103000+01'00'", "ModDate": "D:20230301090000Z",
	}, reportPages...)
	a, err := Options{Now: testNow}.ExtractContent(doc, "application/pdf", "https://health.example.gov/reports/measles-2022.pdf")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{
		"Measles vaccination coverage report 2022",
		"Coverage with the second dose rose to 93 percent in 2022, up from 91 percent the year before, according to school records.",
		"The rise was largest in the northern districts (4 points).",
		"No district reported an outbreak linked to the vaccine itself.",
	}
	if strings.Join(a.Paragraphs, "\n") != strings.Join(want, "\n") {
		t.Errorf("paragraphs\n got %q\nwant %q", a.Paragraphs, want)
	}
	if a.Title != "Measles vaccination coverage, 2022" || a.Author != "Office of Public Health" {
		t.Errorf("title %q author %q", a.Title, a.Author)
	}
	if !a.Published.Equal(time.Date(2023, 2, 14, 9, 30, 0, 0, time.UTC)) || !a.Modified.Equal(time.Date(2023, 3, 1, 9, 0, 0, 0, time.UTC)) {
		t.Errorf("published %v modified %v", a.Published, a.Modified)
	}
	if a.Language != "en" || a.Words != lang.Words(a.Text) || a.Text != strings.Join(a.Paragraphs, "\n\n") {
		t.Errorf("language %q words %d", a.Language, a.Words)
	}

	// No information dictionary entries: the first line is the title, and
	// a PDF is recognised by its bytes whatever the server calls it.
	doc = buildPDF(map[string]string{}, reportPages...)
	if a, err = (Options{Now: testNow}).ExtractContent(doc, "application/octet-stream", ""); err != nil {
		t.Fatal(err)
	}
	if a.Title != want[0] || !a.Published.IsZero() || !a.Modified.IsZero() {
		t.Errorf("title %q published %v modified %v", a.Title, a.Published, a.Modified)
	}

	// A saved PDF reads like a saved page.
	path := filepath.Join(t.TempDir(), "report.pdf")
	if err := os.WriteFile(path, doc, 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err = (Options{Now: testNow}).ExtractFile(path, ""); err != nil || len(a.Paragraphs) != len(want) {
		t.Errorf("ExtractFile: %v, %+v", err, a)
	}

	// HTML still goes to the HTML extractor.
	if _, err := (Options{Now: testNow}).ExtractContent([]byte("<html><body><p>Hello.</p></body></html>"), "text/html; charset=utf-8", ""); err != nil {
		t.Errorf("HTML by content type: %v", err)
	}
}

// TestExtractPDFBadInput feeds damaged PDFs, among them three on which
// the library alone never returns: a content stream ending inside a hex
// string, a page tree whose Kids lead back to itself, and a cross-reference
// section whose /Prev is itself.
func TestExtractPDFBadInput(t *testing.T) {
	good := buildPDF(map[string]string{"Title": "T"}, reportPages...)
	xref := regexp.MustCompile(`startxref\n(\d+)`).FindSubmatch(good)[1]
	for name, in := range map[string][]byte{
		"not a PDF":         []byte("<html><p>hi</p></html>"),
		"truncated":         good[:len(good)/2],
		"garbage":           append([]byte("%PDF-1.7\n"), bytes.Repeat([]byte{0x01, 0x9c, 0x02, 0x1f}, 200)...),
		"bad xref":          bytes.Replace(good, []byte("startxref\n"), []byte("startxref\n9"), 1),
		"cyclic page tree":  bytes.Replace(good, []byte("/Kids [4 0 R 6 0 R]"), []byte("/Kids [7 0 R 6 0 R]"), 1),
		"cyclic xref chain": bytes.Replace(good, []byte(" >>\nstartxref"), []byte(" /Prev "+string(xref)+" >>\nstartxref"), 1),
	} {
		if bytes.Equal(in, good) {
			t.Fatalf("%s: the fixture did not change", name)
		}
		a, err := Options{Now: testNow, pdfBudget: time.Second}.ExtractPDF(in, "")
		if err == nil {
			t.Errorf("%s: no error, article %+v", name, a)
			continue
		}
		if strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error should be one line: %q", name, err)
		}
	}
	// An unclosed hex string costs the page it is on, not the document.
	open := bytes.Replace(good, []byte("\nET\nendstream"), []byte("\n<a\nendstream"), 1)
	a, err := Options{Now: testNow, pdfBudget: time.Second}.ExtractPDF(open, "")
	if err != nil || len(a.Paragraphs) != 1 || !strings.HasPrefix(a.Paragraphs[0], "No district") {
		t.Errorf("unclosed hex string: %v, %q", err, a.Paragraphs)
	}
	if _, err := (Options{}).ExtractPDF([]byte("plain"), ""); !errors.Is(err, ErrNotPDF) {
		t.Errorf("err = %v, want ErrNotPDF", err)
	}
}

func TestParsePDFDate(t *testing.T) {
	for in, want := range map[string]string{
		"D:20230214103000+01'00'": "2023-02-14T09:30:00Z",
		"D:20230214103000-05'30":  "2023-02-14T16:00:00Z",
		"D:20230214103000Z":       "2023-02-14T10:30:00Z",
		"D:20230214":              "2023-02-14T00:00:00Z",
		"D:2023":                  "2023-01-01T00:00:00Z",
		"20230214103000":          "2023-02-14T10:30:00Z",
	} {
		w, _ := time.Parse(time.RFC3339, want)
		if got := parsePDFDate(in); !got.Equal(w) {
			t.Errorf("parsePDFDate(%q) = %v, want %s", in, got, want)
		}
	}
	for _, in := range []string{"", "yesterday", "D:20231345", "D:20230231"} {
		if got := parsePDFDate(in); !got.IsZero() {
			t.Errorf("parsePDFDate(%q) = %v, want zero", in, got)
		}
	}
}
