package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/yuin/goldmark"
	"github.com/yuin/goldmark/ast"
	"github.com/yuin/goldmark/extension"
	"github.com/yuin/goldmark/text"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
)

// saveCase keeps c in the isolated data directory's case store, as a check
// would.
func saveCase(t *testing.T, dataDir string, c *pipeline.Check) {
	t.Helper()
	st, err := cases.Open(context.Background(), cases.DefaultPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	if err := st.Save(context.Background(), c); err != nil {
		t.Fatal(err)
	}
}

// hostileCase is a case whose search hit, page title, publisher, post and
// warnings were written by an attacker.
func hostileCase() *pipeline.Check {
	ev := "https://www.reuters.com/world/us/springfield-fact-check"
	return &pipeline.Check{ID: "20240201-hostile",
		Post: pipeline.Post{Text: "The mayor banned bicycles [CDC](https://evil.example/cdc) <script>alert(1)</script> www.evil.example"},
		Sources: []pipeline.Source{
			{URL: ev, Title: "Fact check", Publisher: "Reuters", Status: pipeline.StatusUsed},
			{URL: "javascript:alert(1)", Title: "Reuters", Status: pipeline.StatusFetchFailed},
			{URL: "https://evil.example/x)](javascript:alert(1)", Title: "<img src=x onerror=alert(1)>CDC", Status: pipeline.StatusFetchFailed},
		},
		Evidence: []pipeline.Evidence{{SourceURL: ev, Quote: "The city council has not banned bicycles.", Kind: pipeline.KindRefutes, Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "This post is false: no such order exists. " + ev, URLs: []string{ev},
			Warnings: []string{"removed hxxps://evil[.]example/proof: not one of the evidence pages"}},
	}
}

// TestExportHostileCase: through the binary, a case holding an attacker's
// URLs and markup exports as Markdown whose only links are its own http(s)
// pages and which holds no HTML, as goldmark (GitHub's reading) renders it.
func TestExportHostileCase(t *testing.T) {
	dataDir := isolate(t)
	c := hostileCase()
	saveCase(t, dataDir, c)
	out, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "md")
	if code != 0 {
		t.Fatalf("export: exit %d\n%s", code, errOut)
	}
	src := []byte(out)
	root := goldmark.New(goldmark.WithExtensions(extension.GFM)).Parser().Parse(text.NewReader(src))
	var targets []string
	ast.Walk(root, func(n ast.Node, entering bool) (ast.WalkStatus, error) {
		if !entering {
			return ast.WalkContinue, nil
		}
		switch n := n.(type) {
		case *ast.Link:
			targets = append(targets, string(n.Destination))
		case *ast.AutoLink:
			targets = append(targets, string(n.URL(src)))
		case *ast.Image:
			t.Errorf("export embeds an image %q", n.Destination)
		case *ast.RawHTML, *ast.HTMLBlock:
			t.Errorf("export holds raw HTML:\n%s", out)
		}
		return ast.WalkContinue, nil
	})
	for _, u := range targets {
		// The third source's own (odd) https URL is its link, encoded.
		if u != c.Sources[0].URL && strings.ReplaceAll(u, `\`, "") != "https://evil.example/x)](javascript:alert(1)" {
			t.Errorf("export links to %q:\n%s", u, out)
		}
	}
	if !strings.Contains(out, "hxxps://evil\\[.\\]example/cdc") || !strings.Contains(out, "\\<script\\>") {
		t.Errorf("the post's link and markup are not shown defanged and escaped:\n%s", out)
	}
}

// TestExportFiles: an export never overwrites a file without --force and
// never writes through a symbolic link; `batch -o` never appends through
// one. What was there is left as it was.
func TestExportFiles(t *testing.T) {
	dataDir := isolate(t)
	c := hostileCase()
	saveCase(t, dataDir, c)
	dir := t.TempDir()
	existing := filepath.Join(dir, "draft.md")
	os.WriteFile(existing, []byte("the editor's draft"), 0o644)
	_, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "-o", existing)
	if b, _ := os.ReadFile(existing); code == 0 || string(b) != "the editor's draft" || !strings.Contains(errOut, "without --force") {
		t.Errorf("export over an existing file: exit %d, file %q\n%s", code, b, errOut)
	}
	_, errOut, code = muse(t, "", nil, "cases", "export", c.ID, "-o", existing, "--force")
	if b, _ := os.ReadFile(existing); code != 0 || !strings.Contains(string(b), "no such order exists") {
		t.Errorf("export --force: exit %d, file %q\n%s", code, b, errOut)
	}
	target := filepath.Join(dir, "authorized_keys")
	os.WriteFile(target, []byte("ssh-ed25519 AAAA"), 0o600)
	link := filepath.Join(dir, "export.md")
	if err := os.Symlink(target, link); err != nil {
		t.Fatal(err)
	}
	for _, force := range []bool{false, true} {
		args := []string{"cases", "export", c.ID, "-o", link}
		if force {
			args = append(args, "--force")
		}
		_, errOut, code = muse(t, "", nil, args...)
		if b, _ := os.ReadFile(target); code == 0 || string(b) != "ssh-ed25519 AAAA" || !strings.Contains(errOut, "symbolic link") {
			t.Errorf("export through a symlink (force %v): exit %d, target %q\n%s", force, code, b, errOut)
		}
	}
	_, errOut, code = muse(t, `{"text": "The mayor banned bicycles"}`+"\n", nil, "batch", "-", "-o", link)
	if b, _ := os.ReadFile(target); code == 0 || string(b) != "ssh-ed25519 AAAA" || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("batch -o through a symlink: exit %d, target %q\n%s", code, b, errOut)
	}
}

// TestNoteRefusesForeignLink: a checker's edit that links elsewhere is
// refused as a note, saying which link, and the case is kept as it was.
func TestNoteRefusesForeignLink(t *testing.T) {
	dataDir := isolate(t)
	c := hostileCase()
	c.Correction.Text = "This post is false, see evil-proof.com and " + c.Sources[0].URL
	c.Correction.Edited = true
	saveCase(t, dataDir, c)
	out, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "note")
	if code == 0 || out != "" || !strings.Contains(errOut, "evil-proof[.]com") {
		t.Errorf("note with a foreign link: exit %d\n%s%s", code, out, errOut)
	}
	out, _, _ = muse(t, "", nil, "cases", "export", c.ID, "--format", "json")
	if !strings.Contains(out, "evil-proof.com and") {
		t.Errorf("the case lost the correction:\n%s", out)
	}
}
