package main

import (
	"encoding/json"
	"net/url"
	"os"
	"path/filepath"
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
	page, _ := filepath.Abs(filepath.Join("sources", "extract", "testdata", "factcheck.html"))
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
