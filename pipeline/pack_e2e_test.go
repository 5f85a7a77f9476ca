package pipeline_test

import (
	"archive/zip"
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io"
	"net/url"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
)

// TestPackTiesCitedPagesByHash: a check of the loopback world kept as a
// case stores each quoted page with its HTTP response headers as the
// server sent them; the evidence pack holds them (headers.txt), and the
// SHA-256 the pack gives each cited page's HTML is the one the Check's
// JSON and the ClaimReview export name for that page, computed from the
// bytes as served.
func TestPackTiesCitedPagesByHash(t *testing.T) {
	env := testworld.New(t, nil)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	store, err := cases.Open(context.Background(), filepath.Join(t.TempDir(), "cases.db"))
	if err != nil {
		t.Fatal(err)
	}
	defer store.Close()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
	ctx := context.Background()
	if err := cases.Record(ctx, e, c, pipeline.StageImages, cases.RecordOptions{Store: store, Pages: e.RawPage, Headers: e.PageHeader}); err != nil {
		t.Fatal(err)
	}
	cited := c.CitedSources()
	if len(cited) == 0 {
		t.Fatalf("the correction cites no page: %q", c.Correction.Text)
	}
	for _, s := range cited {
		u, err := url.Parse(s.URL)
		if err != nil {
			t.Fatal(err)
		}
		page, ok := env.Pages[u.Host]
		if !ok {
			t.Fatalf("%s is not a page of the world", s.URL)
		}
		sum := sha256.Sum256([]byte(testworld.ArticleHTML(page)))
		if s.SHA256 != hex.EncodeToString(sum[:]) {
			t.Errorf("%s: SHA-256 %q, want that of the page as served %x", s.URL, s.SHA256, sum)
		}
	}
	js, err := export.JSON(c)
	if err != nil {
		t.Fatal(err)
	}
	snaps, err := store.Snapshots(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	man, err := export.Pack(ctx, &buf, c, export.PackOptions{Pages: cases.PackPages(snaps)})
	if err != nil {
		t.Fatal(err)
	}
	review, err := export.ClaimReview(c, export.Reviewer{Name: "Springfield Checks", URL: "https://checks.example/"}, export.Rating{AlternateName: "False"})
	if err != nil {
		t.Fatal(err)
	}
	var doc struct {
		Citation []struct {
			Type       string `json:"@type"`
			ContentURL string `json:"contentUrl"`
			SHA256     string `json:"sha256"`
		} `json:"citation"`
	}
	if err := json.Unmarshal(review, &doc); err != nil {
		t.Fatal(err)
	}
	if len(doc.Citation) != len(cited) {
		t.Errorf("ClaimReview cites %d pages, the correction %d:\n%s", len(doc.Citation), len(cited), review)
	}
	for i, s := range cited {
		var mp *export.ManifestPage
		for k := range man.Pages {
			if man.Pages[k].URL == s.URL {
				mp = &man.Pages[k]
			}
		}
		if mp == nil {
			t.Errorf("the pack has no page %s", s.URL)
			continue
		}
		if mp.HTMLSHA256 != s.SHA256 {
			t.Errorf("%s: pack hash %s, check %s", s.URL, mp.HTMLSHA256, s.SHA256)
		}
		if !bytes.Contains(js, []byte(`"sha256": "`+s.SHA256+`"`)) {
			t.Errorf("the Check's JSON does not name %s's hash %s", s.URL, s.SHA256)
		}
		if i < len(doc.Citation) && (doc.Citation[i].SHA256 != s.SHA256 || doc.Citation[i].Type != "MediaObject" || doc.Citation[i].ContentURL != s.FinalURL) {
			t.Errorf("ClaimReview citation %d = %+v, want %s at %s", i, doc.Citation[i], s.SHA256, s.FinalURL)
		}
		if mp.Headers == "" || mp.HeadersSHA256 == "" {
			t.Errorf("%s: no headers in the pack: %+v", s.URL, mp)
		}
	}
	files := map[string]string{}
	for _, f := range man.Files {
		files[f.Path] = f.SHA256
	}
	if len(man.Pages) > 0 {
		h := man.Pages[0].Headers
		if files[h] == "" {
			t.Errorf("headers member %q not listed among the files", h)
		}
		zr, err := zip.NewReader(bytes.NewReader(buf.Bytes()), int64(buf.Len()))
		if err != nil {
			t.Fatal(err)
		}
		f, err := zr.Open(h)
		if err != nil {
			t.Fatal(err)
		}
		body, _ := io.ReadAll(f)
		f.Close()
		if !strings.Contains(string(body), "Content-Type: text/html; charset=utf-8\r\n") {
			t.Errorf("%s holds %q, not the headers as served", h, body)
		}
		snapHeader := snaps[0].Header
		if snapHeader.Get("Content-Type") != "text/html; charset=utf-8" || snapHeader.Get("Date") == "" {
			t.Errorf("snapshot headers %v, want the server's Content-Type and Date", snapHeader)
		}
	}
}
