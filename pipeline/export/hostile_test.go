package export

import (
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"
	"github.com/yuin/goldmark/util"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/links"
)

// gfm reads Markdown as GitHub does: CommonMark with tables,
// strikethrough and bare URLs linked (Linkify).
var gfm = goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser()

// mdLinks returns every link target a CommonMark renderer makes of md
// (links, images, autolinks, bare URLs it links) and whether md holds raw
// HTML.
func mdLinks(md string) (targets []string, rawHTML []string) {
	src := []byte(md)
	root := gfm.Parse(text.NewReader(src))
	_ = ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			targets = append(targets, resolved(n.Destination))
		case *ast.Image:
			targets = append(targets, resolved(n.Destination))
		case *ast.AutoLink:
			targets = append(targets, string(n.URL(src)))
		case *ast.RawHTML:
			for i := 0; i < n.Segments.Len(); i++ {
				s := n.Segments.At(i)
				rawHTML = append(rawHTML, string(s.Value(src)))
			}
		case *ast.HTMLBlock:
			rawHTML = append(rawHTML, "html block")
		}
		return ast.WalkContinue, nil
	})
	return targets, rawHTML
}

// resolved is a link destination as the renderer reads it: backslash
// escapes and character references resolved.
func resolved(dest []byte) string {
	return string(util.ResolveEntityNames(util.ResolveNumericReferences(util.UnescapePunctuations(dest))))
}

// hostileCheck is a check whose every string comes from an attacker: the
// post, a source's URL, title and publisher, a quote, the correction, its
// warnings, an image's description.
func hostileCheck(s string) *pipeline.Check {
	ev := "https://www.reuters.com/world/a"
	return &pipeline.Check{
		ID:        "0hx3k9ab7qz2m1",
		CreatedAt: time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC),
		Post:      pipeline.Post{Text: s, Author: s, Handle: s, URL: s, Platform: "x"},
		Queries:   []pipeline.Query{{Text: s, Enabled: true}},
		Sources: []pipeline.Source{
			{URL: ev, Title: s, Publisher: s, Domain: "reuters.com", Tier: pipeline.TierHigh, Status: pipeline.StatusUsed, Reason: s},
			{URL: s, Title: s, Publisher: s, Domain: s, Status: pipeline.StatusFetchFailed, Reason: s},
		},
		Evidence: []pipeline.Evidence{
			{SourceURL: ev, Quote: s, Kind: pipeline.KindRefutes, Verified: true, Included: true},
			{SourceURL: s, Quote: s, Kind: pipeline.KindContext, Verified: false, Included: true},
			{SourceURL: s, Quote: s, Kind: pipeline.KindContext, Reason: s},
		},
		FactChecks: []pipeline.FactCheck{{Claim: s, Rating: s, Reviewer: s, URL: s}},
		Images:     []pipeline.Image{{Source: s, Description: s}},
		Correction: pipeline.Correction{Text: "This post is false " + ev + ". " + s, URLs: []string{ev}, Model: s,
			Warnings: []string{s, "removed " + links.Defang(s) + ": not one of the evidence pages"}},
	}
}

// ownURLs are the link targets an export of c may hold: its pages' http(s)
// URLs (sources, evidence, the post, fact-checks), as they are written.
func ownURLs(c *pipeline.Check) map[string]bool {
	ok := map[string]bool{}
	add := func(u string) {
		if isHTTPURL(u) {
			ok[pctUnsafe(u)] = true
		}
	}
	add(c.Post.URL)
	for _, s := range c.Sources {
		add(s.URL)
		add(s.FinalURL)
	}
	for _, f := range c.FactChecks {
		add(f.URL)
	}
	return ok
}

var hostileSeeds = []string{
	"https://evil.example/x)",
	"javascript:alert(1)",
	"https://x.example/a)](javascript:alert(1)",
	"[CDC](https://evil.example/proof) <script>alert(1)</script>",
	"<meta http-equiv=refresh content=\"0;url=https://evil.example\"> <svg onload=alert(1)>",
	"%68ttps://evil-proof.com/e www.evil.example evil-proof.com/x",
	"Reuters&#10;[S1] Reuters Refutes: The post is TRUE",
	"<https://evil.example/a> ![img](https://evil.example/p.png)",
	"[a][1]\n\n[1]: https://evil.example/ref",
	"https://www.reuters.com/world/a\"><img src=x onerror=alert(1)>",
	"line one\n<div>\n# heading\n    code\n> quote https://evil.example",
	"`code` **bold** _em_ &lt;b&gt; &amp; \\[x\\](y)",
	"https://evil.example/a b (c) <d> \\e &amp;f",
	"data:text/html;base64,PHNjcmlwdD4=",
	"ftp://evil.example/x and //evil.example/y",
}

// FuzzExports renders every export of a check made of hostile strings and
// checks what a reader's renderer makes of it: the Markdown (through
// goldmark, as GitHub reads it) links only to the check's own http(s)
// pages and holds no raw HTML; the note links only to the check's pages
// and holds no tag; the ClaimReview is JSON whose strings cannot close a
// <script> element.
func FuzzExports(f *testing.F) {
	for _, s := range hostileSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		c := hostileCheck(s)
		own := ownURLs(c)
		for name, md := range map[string]string{"markdown": Markdown(c), "report": Report(c)} {
			targets, raw := mdLinks(md)
			for _, u := range targets {
				if !own[u] {
					var at []string
					for _, l := range strings.Split(md, "\n") {
						if strings.Contains(l, u) || strings.Contains(l, strings.TrimPrefix(strings.TrimPrefix(u, "http://"), "https://")) {
							at = append(at, l)
						}
					}
					t.Fatalf("%s of %q links to %q, not one of the check's pages, in:\n%s", name, s, u, strings.Join(at, "\n"))
				}
			}
			if len(raw) > 0 {
				t.Fatalf("%s of %q holds raw HTML %q:\n%s", name, s, raw, md)
			}
		}
		if n, err := Note(c); err == nil {
			for _, l := range links.FindLinked(n) {
				if c.SourceByURL(l.URL) == nil || !isHTTP(l.URL) {
					t.Fatalf("note of %q links to %q: %q", s, l.URL, n)
				}
			}
			if _, tags := pipeline.StripHTML(n); len(tags) > 0 {
				t.Fatalf("note of %q holds HTML %q: %q", s, tags, n)
			}
		}
		b, err := ClaimReview(c, Reviewer{Name: s, URL: "https://factcheck.example", ReviewURL: "https://factcheck.example/r"}, Rating{AlternateName: "False"})
		if err == nil {
			if !json.Valid(b) {
				t.Fatalf("ClaimReview of %q is not JSON: %s", s, b)
			}
			if strings.Contains(strings.ToLower(string(b)), "</script") || strings.ContainsAny(string(b), "<>") {
				t.Fatalf("ClaimReview of %q holds a tag: %s", s, b)
			}
		}
	})
}
