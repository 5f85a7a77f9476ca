package export

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/tsa"
	"github.com/musecheck/muse/sources/tsa/tsatest"
)

const reutersHTML = `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8">
<title>Council approves [cycle] lanes | Reuters</title>
<link rel="canonical" href="https://www.reuters.com/a"></head>
<body><article><h1>Council approves cycle lanes</h1>
<p>SPRINGFIELD, March 1 (Reuters) - The council approved
new cycle lanes on Tuesday. No ban on bicycles was discussed.</p></article></body></html>`

// packCheck is sample() with a second used source the case kept no
// snapshot of.
func packCheck() *pipeline.Check {
	c := sample()
	c.Sources = append(c.Sources, pipeline.Source{URL: "https://apnews.com/b", Domain: "apnews.com", Status: pipeline.StatusUsed,
		FetchedAt: time.Date(2024, 3, 2, 10, 2, 0, 0, time.UTC)})
	return c
}

func packPages() []PackPage {
	return []PackPage{
		{URL: "https://www.reuters.com/a", FinalURL: "https://www.reuters.com/a", FetchedAt: time.Date(2024, 3, 2, 10, 1, 0, 0, time.UTC),
			Text: "SPRINGFIELD, March 1 (Reuters) - The council approved\nnew cycle lanes on Tuesday.", HTML: []byte(reutersHTML)},
		// Kept, but the check no longer rests on it.
		{URL: "https://blog.example/c", Text: "rumours", HTML: []byte("<html><body>rumours</body></html>")},
	}
}

// unzip reads the pack's members by name, in order.
func unzip(t *testing.T, b []byte) (map[string][]byte, []string) {
	t.Helper()
	zr, err := zip.NewReader(bytes.NewReader(b), int64(len(b)))
	if err != nil {
		t.Fatal(err)
	}
	files := map[string][]byte{}
	var names []string
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		body, err := io.ReadAll(r)
		r.Close()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name] = body
		names = append(names, f.Name)
	}
	return files, names
}

func TestPack(t *testing.T) {
	var buf bytes.Buffer
	c := packCheck()
	m, err := Pack(context.Background(), &buf, c, PackOptions{Pages: packPages(), Options: Options{Secrets: []string{"sk-secret-123"}}})
	if err != nil {
		t.Fatal(err)
	}
	files, names := unzip(t, buf.Bytes())
	want := []string{PackCorrection, PackCheck, "pages/001/text.txt", "pages/001/page.html", PackManifest}
	if strings.Join(names, " ") != strings.Join(want, " ") {
		t.Fatalf("members %v, want %v", names, want)
	}
	var man Manifest
	if err := json.Unmarshal(files[PackManifest], &man); err != nil {
		t.Fatal(err)
	}
	if man.Format != PackFormat || man.CaseID != c.ID || len(man.Files) != 4 || man.TSA != "" {
		t.Errorf("manifest %+v", man)
	}
	for _, f := range man.Files {
		sum := sha256.Sum256(files[f.Path])
		if hex.EncodeToString(sum[:]) != f.SHA256 || len(files[f.Path]) != f.Bytes {
			t.Errorf("%s: manifest says %s (%d bytes), the member is %x (%d bytes)", f.Path, f.SHA256, f.Bytes, sum, len(files[f.Path]))
		}
	}
	if len(man.Pages) != 1 || !man.Pages[0].Quoted || man.Pages[0].URL != "https://www.reuters.com/a" ||
		!man.Pages[0].FetchedAt.Equal(c.Sources[1].FetchedAt) || man.Pages[0].HTML != "pages/001/page.html" {
		t.Errorf("pages %+v", man.Pages)
	}
	if len(man.Missing) != 1 || man.Missing[0] != "https://apnews.com/b" {
		t.Errorf("missing %v, want the AP page the case kept no snapshot of", man.Missing)
	}
	if !bytes.Equal(files["pages/001/page.html"], []byte(reutersHTML)) {
		t.Error("the page's HTML is not kept as served")
	}
	if !strings.Contains(string(files[PackCorrection]), "This post is false") {
		t.Errorf("correction.md:\n%s", files[PackCorrection])
	}
	var back struct {
		pipeline.Check
		Snapshots []ManifestPage `json:"snapshots"`
	}
	if err := json.Unmarshal(files[PackCheck], &back); err != nil {
		t.Fatal(err)
	}
	if back.ID != c.ID || len(back.Snapshots) != 1 || back.Snapshots[0].HTMLSHA256 != man.Pages[0].HTMLSHA256 || back.Snapshots[0].TextSHA256 == "" {
		t.Errorf("check.json: id %q, snapshots %+v", back.ID, back.Snapshots)
	}
	if m.Pages[0].TextSHA256 != man.Pages[0].TextSHA256 {
		t.Error("the manifest returned is not the one written")
	}
}

func TestPackRedacts(t *testing.T) {
	c := packCheck()
	c.Correction.Text += " sk-secret-123"
	pages := packPages()
	pages[0].Text += " sk-secret-123"
	var buf bytes.Buffer
	if _, err := Pack(context.Background(), &buf, c, PackOptions{Pages: pages, Options: Options{Secrets: []string{"sk-secret-123"}}}); err != nil {
		t.Fatal(err)
	}
	files, _ := unzip(t, buf.Bytes())
	for name, body := range files {
		if bytes.Contains(body, []byte("sk-secret-123")) {
			t.Errorf("%s holds the secret", name)
		}
	}
}

func TestPackTimestamp(t *testing.T) {
	srv := tsatest.New(t)
	var buf bytes.Buffer
	stamp := func(ctx context.Context, digest []byte) ([]byte, error) {
		resp, _, err := tsa.Stamp(ctx, nil, srv.URL, digest)
		return resp, err
	}
	if _, err := Pack(context.Background(), &buf, packCheck(), PackOptions{Pages: packPages(), Stamp: stamp, TSA: srv.URL}); err != nil {
		t.Fatal(err)
	}
	files, _ := unzip(t, buf.Bytes())
	tok := files[PackTimestamp]
	if len(tok) == 0 || srv.Requests.Load() != 1 {
		t.Fatalf("no token in the pack (%d requests)", srv.Requests.Load())
	}
	if !bytes.Contains(files[PackManifest], []byte(`"tsa": "`+srv.URL+`"`)) {
		t.Error("the manifest does not name the authority")
	}
	if _, err := tsa.Verify(tok, files[PackManifest]); err != nil {
		t.Error(err)
	}
	openssl, err := exec.LookPath("openssl")
	if err != nil {
		t.Skip("openssl is not on PATH: the token is not checked by it")
	}
	dir := t.TempDir()
	for name, b := range map[string][]byte{"manifest.json": files[PackManifest], "manifest.json.tsr": tok, "ca.pem": srv.CAPEM} {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			t.Fatal(err)
		}
	}
	out, err := exec.Command(openssl, "ts", "-verify", "-data", filepath.Join(dir, "manifest.json"),
		"-in", filepath.Join(dir, "manifest.json.tsr"), "-CAfile", filepath.Join(dir, "ca.pem")).CombinedOutput()
	if err != nil || !strings.Contains(string(out), "Verification: OK") {
		t.Fatalf("openssl ts -verify: %v\n%s", err, out)
	}
}

func TestPackTimestampFails(t *testing.T) {
	var buf bytes.Buffer
	stamp := func(context.Context, []byte) ([]byte, error) { return nil, io.ErrUnexpectedEOF }
	if _, err := Pack(context.Background(), &buf, packCheck(), PackOptions{Stamp: stamp}); err == nil || buf.Len() != 0 {
		t.Errorf("a failed time-stamp gave err %v and %d bytes written", err, buf.Len())
	}
}

// TestMarkdownSaysFlagsAndOrigins: the report names a flagged page's flag,
// and how many origins the quotes come from.
func TestMarkdownSaysFlagsAndOrigins(t *testing.T) {
	c := sample()
	c.Sources[0].Flags = []pipeline.SourceFlag{{Kind: pipeline.FlagLookalike, Of: "reuters.com", Reason: "its domain looks like reuters.com (extra words)"}}
	md := Markdown(c)
	if !strings.Contains(md, "**flagged:** its domain looks like reuters.com (extra words)") {
		t.Errorf("no flag in:\n%s", md)
	}
	if !strings.Contains(md, "_Quoted: 1 page, 1 origin._") {
		t.Errorf("no origins line in:\n%s", md)
	}
}
