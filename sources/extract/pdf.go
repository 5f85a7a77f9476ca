package extract

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"math"
	"mime"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/RadhiFadlillah/whatlanggo"
	"github.com/ledongthuc/pdf"

	"github.com/musecheck/muse/sources/lang"
)

// Official reports are often PDFs. ExtractPDF reads their text with
// ledongthuc/pdf (pure Go), rebuilding lines and paragraphs from where each
// glyph sits on the page, and takes title, author and dates from the
// document information dictionary: its CreationDate is the publication
// date, its ModDate the modification date.

// ErrNotPDF is returned by ExtractPDF for input that is not a PDF file.
var ErrNotPDF = errors.New("not a PDF document")

const (
	// maxPDFPages bounds how many pages are read: a report's findings are
	// in its first pages, and a 2,000-page annex is not a source to quote.
	maxPDFPages = 300
	// pdfBudget bounds the time spent on one document: pages not read by
	// then are left out, and a document whose structure sends the library
	// round in circles is an error.
	pdfBudget = 10 * time.Second
)

// ExtractContent extracts an article from a fetched body by its media
// type (a Content-Type header value, "" when unknown): PDF documents (or
// bodies that start as one) with ExtractPDF, everything else as HTML.
func (o Options) ExtractContent(body []byte, contentType, pageURL string) (*Article, error) {
	mt, _, _ := mime.ParseMediaType(contentType)
	if mt == "application/pdf" || isPDF(body) {
		return o.ExtractPDF(body, pageURL)
	}
	return o.Extract(body, pageURL)
}

// isPDF reports whether b starts as a PDF file does (the header may follow
// some junk, which readers accept within the first KiB).
func isPDF(b []byte) bool {
	return bytes.Contains(b[:min(len(b), 1024)], []byte("%PDF-"))
}

// ExtractPDF extracts an article from a PDF document. A PDF the library
// cannot read (damaged, encrypted with a password) is an error, never a
// panic.
func (o Options) ExtractPDF(b []byte, pageURL string) (a *Article, err error) {
	if !isPDF(b) {
		return nil, fmt.Errorf("extract %s: %w", describe(pageURL), ErrNotPDF)
	}
	defer func() {
		// The library reports some malformed input by panicking.
		if r := recover(); r != nil {
			a, err = nil, fmt.Errorf("extract %s: unreadable PDF: %v", describe(pageURL), r)
		}
	}()
	budget := o.pdfBudget
	if budget <= 0 {
		budget = pdfBudget
	}
	deadline := time.Now().Add(budget)
	r, err := pdf.NewReader(budgetReader{bytes.NewReader(b), deadline}, int64(len(b)))
	if err != nil {
		return nil, fmt.Errorf("extract %s: read PDF: %w", describe(pageURL), err)
	}
	if !pageTreeBounded(r.Trailer().Key("Root").Key("Pages"), 0, new(int)) {
		return nil, fmt.Errorf("extract %s: unreadable PDF: its page tree is cyclic or too deep", describe(pageURL))
	}
	info := r.Trailer().Key("Info")
	a = &Article{
		URL:    pageURL,
		Title:  cleanPDFString(info.Key("Title").Text()),
		Author: cleanPDFString(info.Key("Author").Text()),
	}
	for i := 1; i <= min(r.NumPage(), maxPDFPages) && time.Now().Before(deadline); i++ {
		// A page the library cannot read is left out; the others stay.
		if paras, err := pageParagraphs(r.Page(i)); err == nil {
			a.Paragraphs = append(a.Paragraphs, paras...)
		}
	}
	a.Text = strings.Join(a.Paragraphs, "\n\n")
	a.Words = lang.Words(a.Text)
	if a.Title == "" && len(a.Paragraphs) > 0 && len(a.Paragraphs[0]) <= 200 {
		a.Title = a.Paragraphs[0]
	}
	if len(a.Text) >= 200 {
		a.Language = whatlanggo.DetectLang(a.Text).Iso6391()
	}
	now := o.now().Add(24 * time.Hour)
	if t := parsePDFDate(info.Key("CreationDate").Text()); !t.After(now) {
		a.Published = t
	}
	if t := parsePDFDate(info.Key("ModDate").Text()); !t.After(now) && !t.Before(a.Published) {
		a.Modified = t
	}
	return a, nil
}

// cleanPDFString collapses whitespace and drops the NULs some writers
// leave in information strings.
func cleanPDFString(s string) string {
	return strings.Join(strings.Fields(strings.ReplaceAll(s, "\x00", "")), " ")
}

// pdfDate is the PDF date form (ISO 32000-1 §7.9.4), D:YYYYMMDDHHmmSSOHH'mm,
// where every part after the year may be missing.
var pdfDate = regexp.MustCompile(`^(?:D:)?(\d{4})(\d{2})?(\d{2})?(\d{2})?(\d{2})?(\d{2})?(?:([Zz+\-])(\d{2})?'?(\d{2})?'?)?`)

// parsePDFDate reads a PDF date, zero when absent or unreadable. A date
// without an offset is read as UTC.
func parsePDFDate(s string) time.Time {
	m := pdfDate.FindStringSubmatch(strings.TrimSpace(s))
	if m == nil {
		return time.Time{}
	}
	n := func(i, def int) int {
		if v, err := strconv.Atoi(m[i]); err == nil {
			return v
		}
		return def
	}
	mo, d, h, mi, sec := n(2, 1), n(3, 1), n(4, 0), n(5, 0), n(6, 0)
	if mo < 1 || mo > 12 || d < 1 || d > 31 || h > 23 || mi > 59 || sec > 59 {
		return time.Time{}
	}
	loc := time.UTC
	if m[7] == "+" || m[7] == "-" {
		off := n(8, 0)*3600 + n(9, 0)*60
		if m[7] == "-" {
			off = -off
		}
		loc = time.FixedZone("", off)
	}
	t := time.Date(n(1, 0), time.Month(mo), d, h, mi, sec, 0, loc)
	if t.Day() != d { // 31 February and the like
		return time.Time{}
	}
	return t
}

// pageParagraphs rebuilds a page's text as paragraphs: glyphs on the same
// baseline form a line (a space where the gap between two glyphs is wider
// than a fifth of the font size), and a line further below the previous
// one than 1.5 times the page's line spacing starts a paragraph.
func pageParagraphs(p pdf.Page) (paras []string, err error) {
	defer func() {
		if r := recover(); r != nil {
			paras, err = nil, fmt.Errorf("unreadable page: %v", r)
		}
	}()
	if p.V.IsNull() {
		return nil, nil
	}
	if hangs(p.V.Key("Contents")) {
		return nil, errors.New("content stream ends inside a hex string")
	}
	lines := pageLines(p.Content().Text)
	if len(lines) == 0 {
		return nil, nil
	}
	// Lines inside a paragraph sit closest together: the smallest gap is
	// the line spacing.
	spacing := math.Inf(1)
	for i := 1; i < len(lines); i++ {
		if g := lines[i-1].y - lines[i].y; g > 0 {
			spacing = min(spacing, g)
		}
	}
	var out []string
	var cur []string
	flush := func() {
		if s := strings.Join(strings.Fields(strings.Join(cur, " ")), " "); s != "" {
			out = append(out, s)
		}
		cur = cur[:0]
	}
	for i, l := range lines {
		if i > 0 && lines[i-1].y-l.y > 1.5*spacing {
			flush()
		}
		cur = append(cur, l.text)
	}
	flush()
	return out, nil
}

// errPDFBudget ends the reading of a document that took too long.
var errPDFBudget = errors.New("took longer than its time budget")

// budgetReader is the PDF file as the library reads it. Every read checks
// the deadline and, once past it, panics with errPDFBudget, which
// ExtractPDF recovers: a damaged file whose cross-reference sections point
// back at each other makes the library read for ever, and this ends it.
type budgetReader struct {
	r        io.ReaderAt
	deadline time.Time
}

func (b budgetReader) ReadAt(p []byte, off int64) (int, error) {
	if time.Now().After(b.deadline) {
		panic(errPDFBudget)
	}
	return b.r.ReadAt(p, off)
}

// pageTreeBounded reports whether the page tree under node is at most 32
// levels deep and holds at most 100,000 nodes: the library follows it
// without checking, and a tree whose Kids lead back to an ancestor makes it
// loop for ever. seen counts the nodes visited.
func pageTreeBounded(node pdf.Value, depth int, seen *int) bool {
	if *seen++; depth > 32 || *seen > 100_000 {
		return false
	}
	kids := node.Key("Kids")
	for i := range kids.Len() {
		if kid := kids.Index(i); kid.Key("Type").Name() == "Pages" && !pageTreeBounded(kid, depth+1, seen) {
			return false
		}
	}
	return true
}

// hangs reports whether a page's content streams end inside a hex string
// (an unclosed "<"), on which the library's lexer loops for ever: a damaged
// or hostile PDF must not stall a check.
func hangs(contents pdf.Value) bool {
	var rs []io.Reader
	if contents.Kind() == pdf.Array {
		for i := range contents.Len() {
			rs = append(rs, contents.Index(i).Reader())
		}
	} else {
		rs = append(rs, contents.Reader())
	}
	return unclosedHex(bufio.NewReader(io.MultiReader(rs...)))
}

// unclosedHex scans PDF content for a hex string left open at its end,
// skipping comments, literal strings (with their escapes and nested
// parentheses) and the "<<" of dictionaries, as the library's lexer does.
func unclosedHex(r *bufio.Reader) bool {
	depth, inHex, inComment := 0, false, false
	for {
		c, err := r.ReadByte()
		if err != nil {
			return inHex
		}
		switch {
		case inComment:
			inComment = c != '\n' && c != '\r'
		case depth > 0:
			switch c {
			case '\\':
				r.ReadByte()
			case '(':
				depth++
			case ')':
				depth--
			}
		case inHex:
			inHex = c != '>'
		case c == '%':
			inComment = true
		case c == '(':
			depth = 1
		case c == '<':
			if next, _ := r.Peek(1); len(next) == 1 && next[0] == '<' {
				r.ReadByte()
			} else {
				inHex = true
			}
		}
	}
}

type pdfLine struct {
	y    float64
	text string
}

// pageLines groups glyphs into lines, top of the page first: glyphs whose
// baselines are within a third of the font size of the line's first one.
func pageLines(glyphs []pdf.Text) []pdfLine {
	gs := slices.Clone(glyphs)
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].Y > gs[j].Y })
	var lines []pdfLine
	for start := 0; start < len(gs); {
		end := start + 1
		for end < len(gs) && gs[start].Y-gs[end].Y <= max(gs[start].FontSize, 1)/3 {
			end++
		}
		lines = append(lines, pdfLine{gs[start].Y, lineText(gs[start:end])})
		start = end
	}
	return lines
}

// lineText writes a line's glyphs left to right, with a space where the
// gap between two is wider than a fifth of the font size.
func lineText(gs []pdf.Text) string {
	sort.SliceStable(gs, func(i, j int) bool { return gs[i].X < gs[j].X })
	var b strings.Builder
	lastEnd := math.Inf(1)
	for _, g := range gs {
		if g.X-lastEnd > max(g.FontSize, 1)/5 {
			b.WriteByte(' ')
		}
		b.WriteString(g.S)
		lastEnd = g.X + g.W
	}
	return b.String()
}
