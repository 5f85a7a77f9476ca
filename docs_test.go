package main

import (
	"bytes"
	"fmt"
	"io/fs"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"unicode"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
)

// mdDoc is one Markdown file as the link check sees it: its links, and
// the anchors GitHub gives its headings.
type mdDoc struct {
	links   []mdLink
	anchors map[string]bool
}

// mdLink is one [text](dest) or ![alt](dest) of a file, with its line.
type mdLink struct {
	text, dest string
	line       int
}

var mdParser = goldmark.New(goldmark.WithExtensions(extension.Table)).Parser()

// parseMarkdown reads a Markdown file into its links and heading anchors. Links inside code spans and code blocks are not links, and the
// parser knows it (a regular expression would not).
func parseMarkdown(src []byte) *mdDoc {
	doc := &mdDoc{anchors: map[string]bool{}}
	root := mdParser.Parse(text.NewReader(src))
	seen := map[string]int{}
	ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Heading:
			heading := plainText(n, src)
			// GitHub's rule: the first heading with a slug gets it bare,
			// the next ones -1, -2, …
			s := slug(heading)
			if k := seen[s]; k > 0 {
				doc.anchors[fmt.Sprintf("%s-%d", s, k)] = true
			} else {
				doc.anchors[s] = true
			}
			seen[s]++
		case *ast.Link:
			doc.links = append(doc.links, mdLink{plainText(n, src), string(n.Destination), lineOf(n, src)})
		case *ast.Image:
			doc.links = append(doc.links, mdLink{plainText(n, src), string(n.Destination), lineOf(n, src)})
		}
		return ast.WalkContinue, nil
	})
	return doc
}

// plainText is the text of n's inline content, code spans included, as
// GitHub reads a heading to make its anchor.
func plainText(n ast.Node, src []byte) string {
	var b strings.Builder
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch c := c.(type) {
		case *ast.Text:
			b.Write(c.Segment.Value(src))
			if c.SoftLineBreak() {
				b.WriteByte(' ')
			}
		case *ast.String:
			b.Write(c.Value)
		}
		return ast.WalkContinue, nil
	})
	return b.String()
}

// lineOf is the line (from 1) where n's text starts, or where its block
// starts when it has no text.
func lineOf(n ast.Node, src []byte) int {
	off := -1
	ast.Walk(n, func(c ast.Node, entering bool) (ast.WalkStatus, error) {
		if t, ok := c.(*ast.Text); ok && entering {
			off = t.Segment.Start
			return ast.WalkStop, nil
		}
		return ast.WalkContinue, nil
	})
	for p := n; off < 0 && p != nil; p = p.Parent() {
		if p.Type() == ast.TypeBlock && p.Lines().Len() > 0 {
			off = p.Lines().At(0).Start
		}
	}
	if off < 0 {
		return 0
	}
	return bytes.Count(src[:off], []byte("\n")) + 1
}

// slug is the anchor GitHub gives a heading: lowercase, letters, digits,
// marks, '-' and '_' kept, spaces made '-', everything else dropped.
func slug(heading string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(heading)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.IsMark(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

// markdownFiles are the repository's Markdown files: README.md, docs/ and
// any other, leaving out hidden folders and test fixtures (testdata).
func markdownFiles(t *testing.T) []string {
	t.Helper()
	var files []string
	err := filepath.WalkDir(".", func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && p != "." && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
			return filepath.SkipDir
		}
		if !d.IsDir() && strings.HasSuffix(p, ".md") {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return files
}

// lineAnchor is GitHub's anchor for lines of a file that is not Markdown.
var lineAnchor = regexp.MustCompile(`^L\d+(-L\d+)?$`)

// checkLink says what is wrong with a link of file, or "" when it names an
// existing file of the repository (and, with an #anchor into a Markdown
// file, one of its headings). load parses a Markdown file.
func checkLink(file string, l mdLink, load func(string) (*mdDoc, error)) string {
	if l.dest == "" {
		return "empty link"
	}
	u, err := url.Parse(l.dest)
	if err != nil {
		return fmt.Sprintf("not a URL: %v", err)
	}
	if u.Scheme != "" || u.Host != "" {
		return "" // http(s), mailto…: not fetched
	}
	target := file
	if u.Path != "" {
		if strings.HasPrefix(u.Path, "/") {
			target = filepath.Clean(strings.TrimPrefix(u.Path, "/")) // from the repository's root, as GitHub reads it
		} else {
			target = filepath.Join(filepath.Dir(file), u.Path)
		}
		if target == ".." || strings.HasPrefix(target, ".."+string(filepath.Separator)) {
			return "points outside the repository"
		}
		if _, err := os.Stat(target); err != nil {
			return fmt.Sprintf("no file %s in the repository", target)
		}
	}
	if u.Fragment == "" {
		return ""
	}
	if !strings.HasSuffix(target, ".md") {
		if lineAnchor.MatchString(u.Fragment) {
			return ""
		}
		return fmt.Sprintf("#%s: %s is not Markdown, so it has no headings to point at", u.Fragment, target)
	}
	doc, err := load(target)
	if err != nil {
		return err.Error()
	}
	if !doc.anchors[u.Fragment] {
		return fmt.Sprintf("no heading of %s has the anchor #%s", target, u.Fragment)
	}
	return ""
}

// TestDocsLinks: every relative link in the repository's Markdown names a
// file that exists, and every #anchor a heading of the file it points at
// (GitHub's anchors). Web links are not fetched.
func TestDocsLinks(t *testing.T) {
	docs := map[string]*mdDoc{}
	load := func(p string) (*mdDoc, error) {
		if d, ok := docs[p]; ok {
			return d, nil
		}
		src, err := os.ReadFile(p)
		if err != nil {
			return nil, err
		}
		docs[p] = parseMarkdown(src)
		return docs[p], nil
	}
	files := markdownFiles(t)
	var readme, docsDir bool
	for _, f := range files {
		readme = readme || f == "README.md"
		docsDir = docsDir || filepath.Dir(f) == "docs"
	}
	if !readme || !docsDir {
		t.Fatalf("found only %q: want README.md and docs/*.md", files)
	}
	links := 0
	for _, f := range files {
		doc, err := load(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, l := range doc.links {
			links++
			if why := checkLink(f, l, load); why != "" {
				t.Errorf("%s:%d: link [%s](%s): %s", f, l.line, l.text, l.dest, why)
			}
		}
	}
	if links == 0 {
		t.Fatal("no links found: the parser no longer reads the files")
	}
}

// TestDocsSlug: anchors as GitHub makes them.
func TestDocsSlug(t *testing.T) {
	for heading, want := range map[string]string{
		"Install and run":                    "install-and-run",
		"Exit codes":                         "exit-codes",
		"`muse check` and `muse batch`":      "muse-check-and-muse-batch",
		"Errors, retries & time-outs":        "errors-retries--time-outs",
		"Publisher tiers (the paper's rule)": "publisher-tiers-the-papers-rule",
		"snake_case keys":                    "snake_case-keys",
		"Языки":                              "языки",
	} {
		if got := slug(heading); got != want {
			t.Errorf("slug(%q) = %q, want %q", heading, got, want)
		}
	}
	doc := parseMarkdown([]byte("# A\n\n## Notes\n\n## Notes\n\nsee [x](#notes-1) and `[y](nowhere.md)`\n"))
	if !doc.anchors["notes"] || !doc.anchors["notes-1"] {
		t.Errorf("anchors %v, want notes and notes-1", doc.anchors)
	}
	if len(doc.links) != 1 || doc.links[0].dest != "#notes-1" || doc.links[0].line != 7 {
		t.Errorf("links %+v, want only #notes-1 on line 7 (a link in a code span is text)", doc.links)
	}
}
