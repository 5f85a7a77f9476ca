package cli

import (
	"archive/zip"
	"context"
	"encoding/json"
	"io"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources/tsa"
	"github.com/musecheck/muse/sources/tsa/tsatest"
)

// TestPackExport: `muse cases export ID --format pack -o FILE --tsa URL`
// writes a zip with the page the case kept, the manifest and the
// authority's time-stamp over it; an existing file is refused without
// --force and a symbolic link always, before the authority is asked.
func TestPackExport(t *testing.T) {
	dataDir := isolate(t)
	c := hostileCase()
	saveCase(t, dataDir, c)
	st, err := cases.Open(context.Background(), cases.DefaultPath(dataDir))
	if err != nil {
		t.Fatal(err)
	}
	html := []byte(`<html><head><title>Fact check</title></head><body><p>SPRINGFIELD (Reuters) - The city council has not banned bicycles.</p></body></html>`)
	if err := st.SaveSnapshot(context.Background(), c.ID, c.Sources[0].URL, c.Sources[0].URL, time.Date(2024, 2, 1, 9, 0, 0, 0, time.UTC),
		"The city council has not banned bicycles.", html); err != nil {
		t.Fatal(err)
	}
	st.Close()
	srv := tsatest.New(t)
	dir := t.TempDir()
	out := filepath.Join(dir, "case.zip")
	if _, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "pack"); code == 0 || !strings.Contains(errOut, "-o FILE") {
		t.Errorf("pack to stdout: exit %d\n%s", code, errOut)
	}
	_, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "pack", "-o", out, "--tsa", srv.URL)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	zr, err := zip.OpenReader(out)
	if err != nil {
		t.Fatal(err)
	}
	defer zr.Close()
	files := map[string][]byte{}
	for _, f := range zr.File {
		r, err := f.Open()
		if err != nil {
			t.Fatal(err)
		}
		files[f.Name], _ = io.ReadAll(r)
		r.Close()
	}
	var man export.Manifest
	if err := json.Unmarshal(files[export.PackManifest], &man); err != nil {
		t.Fatal(err)
	}
	if len(man.Pages) != 1 || man.Pages[0].URL != c.Sources[0].URL || string(files[man.Pages[0].HTML]) != string(html) || man.TSA != srv.URL {
		t.Errorf("manifest %+v", man)
	}
	if _, err := tsa.Verify(files[export.PackTimestamp], files[export.PackManifest]); err != nil {
		t.Error(err)
	}
	if srv.Requests.Load() != 1 {
		t.Errorf("%d time-stamp requests, want 1", srv.Requests.Load())
	}
	if _, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "pack", "-o", out, "--tsa", srv.URL); code == 0 || !strings.Contains(errOut, "--force") {
		t.Errorf("overwrite without --force: exit %d\n%s", code, errOut)
	}
	link := filepath.Join(dir, "link.zip")
	if err := os.Symlink(filepath.Join(dir, "elsewhere.zip"), link); err != nil {
		t.Fatal(err)
	}
	if _, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "pack", "-o", link, "--force", "--tsa", srv.URL); code == 0 || !strings.Contains(errOut, "symbolic link") {
		t.Errorf("through a link: exit %d\n%s", code, errOut)
	}
	if _, err := os.Lstat(filepath.Join(dir, "elsewhere.zip")); err == nil {
		t.Error("the pack was written through the link")
	}
	if srv.Requests.Load() != 1 {
		t.Errorf("refused exports asked the authority: %d requests", srv.Requests.Load())
	}
	if _, errOut, code := muse(t, "", nil, "cases", "export", c.ID, "--format", "pack", "-o", out, "--force"); code != 0 {
		t.Errorf("--force: exit %d\n%s", code, errOut)
	}
}
