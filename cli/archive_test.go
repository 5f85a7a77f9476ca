package cli

import (
	"encoding/json"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

// TestArchiveOnDatabaseURL: with MUSE_DATABASE_URL, what one checker's
// `muse archive add` stores, another's `muse archive search` (other data
// folder) finds; no archive.db is made, and doctor names the database
// without its password.
func TestArchiveOnDatabaseURL(t *testing.T) {
	db := pgdbtest.Fresh(t)
	env := []string{"MUSE_DATABASE_URL=" + db}
	dataDir := isolate(t)
	page, _ := filepath.Abs(filepath.Join("..", "sources", "extract", "testdata", "factcheck.html"))
	if _, errOut, code := muse(t, "", env, "archive", "add", page); code != 0 || !strings.Contains(errOut, "1 added, 0 failed") {
		t.Fatalf("archive add: exit %d, %s", code, errOut)
	}
	if _, err := os.Stat(filepath.Join(dataDir, "archive.db")); err == nil {
		t.Error("archive.db was made although the archive is in the database")
	}
	isolate(t) // another checker, another machine's data folder
	out, errOut, code := muse(t, "", env, "archive", "search", "--json", "5G towers virus")
	var hits []map[string]any
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) == 0 {
		t.Fatalf("archive search: exit %d, %v\n%s%s", code, err, out, errOut)
	}
	out, _, _ = muse(t, "", env, "doctor", "--json")
	var items []map[string]any
	json.Unmarshal([]byte(out), &items)
	for _, it := range items {
		if it["name"] == "archive" {
			d, _ := it["detail"].(string)
			if it["status"] != "ok" || !strings.Contains(d, "1 documents") || strings.Contains(d, pgPassword(db)) {
				t.Errorf("doctor archive item: %v", it)
			}
			return
		}
	}
	t.Errorf("doctor has no archive item:\n%s", out)
}

// pgPassword is the password in a database URL, or a string no detail
// holds when it has none.
func pgPassword(raw string) string {
	if u, err := url.Parse(raw); err == nil && u.User != nil {
		if p, ok := u.User.Password(); ok && p != "" {
			return p
		}
	}
	return "\x00no password\x00"
}

// TestArchiveAddMergesOnDatabaseURL: an import of more batches than a term
// keeps small postings rows for ends, on PostgreSQL, by merging them, with
// a line as it goes and one when done.
func TestArchiveAddMergesOnDatabaseURL(t *testing.T) {
	db := pgdbtest.Fresh(t)
	env := []string{"MUSE_DATABASE_URL=" + db}
	isolate(t)
	var b strings.Builder
	for i := range 17*2000 + 5 { // more than mergeRows (16) import batches of 2,000
		text := fmt.Sprintf("tide tables for harbour%d", i)
		if i%40 == 0 {
			text += " and the lock gates"
		}
		fmt.Fprintf(&b, "{\"url\":\"https://t.example/%d\",\"title\":\"Tides %d\",\"text\":%q}\n", i, i, text)
	}
	path := filepath.Join(t.TempDir(), "tides.jsonl")
	if err := os.WriteFile(path, []byte(b.String()), 0o644); err != nil {
		t.Fatal(err)
	}
	_, errOut, code := muse(t, "", env, "archive", "add", path)
	if code != 0 || !strings.Contains(errOut, "34005 added, 0 failed") {
		t.Fatalf("archive add: exit %d, %s", code, errOut)
	}
	if !strings.Contains(errOut, "muse: archive: merging postings rows, ") || !regexp.MustCompile(`postings of \d+ words merged, \d+ rows into \d+`).MatchString(errOut) {
		t.Errorf("archive add said nothing of merging:\n%s", errOut)
	}
	out, errOut, code := muse(t, "", env, "archive", "search", "--json", "lock gates harbour40")
	var hits []map[string]any
	if err := json.Unmarshal([]byte(out), &hits); code != 0 || err != nil || len(hits) == 0 || hits[0]["url"] != "https://t.example/40" {
		t.Fatalf("archive search after the merge: exit %d, %v\n%s%s", code, err, out, errOut)
	}
}
