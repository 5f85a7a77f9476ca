package cli

import (
	"bufio"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/images/imagetest"
)

// TestStoresArePrivate: the case, archive and cache databases muse creates
// (with their -wal and -shm) are the user's alone under a permissive
// umask; `muse doctor` warns of a store others can read and of a config
// file holding a key that others can read.
func TestStoresArePrivate(t *testing.T) {
	old := syscall.Umask(0o002)
	defer syscall.Umask(old)
	dataDir := isolate(t)
	saveCase(t, dataDir, hostileCase())
	page := filepath.Join(t.TempDir(), "tides.jsonl")
	os.WriteFile(page, []byte(`{"url":"https://t.example/1","title":"Tides","text":"tide tables for the harbour"}`+"\n"), 0o644)
	if _, errOut, code := muse(t, "", nil, "archive", "add", page); code != 0 {
		t.Fatalf("archive add: exit %d\n%s", code, errOut)
	}
	files, _ := filepath.Glob(filepath.Join(dataDir, "*.db*"))
	if len(files) < 2 {
		t.Fatalf("stores: %q", files)
	}
	for _, f := range files {
		if st, err := os.Stat(f); err != nil || st.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v; want 600", f, st.Mode(), err)
		}
	}
	out, _, _ := muse(t, "", nil, "doctor", "--json")
	if !strings.Contains(out, `"name": "file permissions",`+"\n    \"status\": \"ok\"") {
		t.Errorf("doctor on private files:\n%s", out)
	}
	cfg := filepath.Join(os.Getenv("XDG_CONFIG_HOME"), "muse", "config.toml")
	os.MkdirAll(filepath.Dir(cfg), 0o700)
	os.WriteFile(cfg, []byte("openai_api_key = \"sk-0123456789\"\n"), 0o644)
	os.Chmod(filepath.Join(dataDir, "cases.db"), 0o644)
	out, _, code := muse(t, "", nil, "doctor", "--json")
	var items []struct{ Name, Status, Detail, Fix string }
	json.Unmarshal([]byte(out), &items)
	var found bool
	for _, it := range items {
		if it.Name == "file permissions" {
			found = true
			if it.Status != "warn" || !strings.Contains(it.Detail, "config.toml (644, holds a key)") || !strings.Contains(it.Detail, "cases.db (644)") ||
				!strings.HasPrefix(it.Fix, "chmod 600 ") {
				t.Errorf("doctor: %+v", it)
			}
		}
	}
	if !found {
		t.Errorf("doctor (exit %d) has no file permissions item:\n%s", code, out)
	}
}

// TestArchiveAddSkipsOversizedRecord: a JSONL line over the record limit
// is skipped with a message naming its line, and the records after it are
// imported.
func TestArchiveAddSkipsOversizedRecord(t *testing.T) {
	isolate(t)
	path := filepath.Join(t.TempDir(), "big.jsonl")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriter(f)
	w.WriteString(`{"url":"https://t.example/1","title":"Tides one","text":"tide tables for the harbour"}` + "\n")
	w.WriteString(`{"url":"https://t.example/big","text":"`)
	chunk := strings.Repeat("x", 1<<20)
	for range 65 {
		w.WriteString(chunk)
	}
	w.WriteString("\"}\n")
	w.WriteString(`{"url":"https://t.example/2","title":"Tides two","text":"lock gates of the harbour"}` + "\n")
	w.Flush()
	f.Close()
	_, errOut, code := muse(t, "", nil, "archive", "add", path)
	if !strings.Contains(errOut, "2 added, 1 failed") || !strings.Contains(errOut, "big.jsonl:2: the record is") {
		t.Errorf("archive add: exit %d\n%s", code, errOut)
	}
	out, _, _ := muse(t, "", nil, "archive", "search", "--json", "lock gates harbour")
	if !strings.Contains(out, "https://t.example/2") {
		t.Errorf("the record after the oversized one was not imported:\n%s", out)
	}
}

// TestNestedTOMLRefused: a config file or an overrides file of deeply
// nested inline tables (which the TOML decoder takes minutes and
// gigabytes over) is refused at once, naming the file and the line.
func TestNestedTOMLRefused(t *testing.T) {
	isolate(t)
	n := 78 << 10 / 4
	nested := "x = " + strings.Repeat("{a=", n) + "1" + strings.Repeat("}", n) + "\n"
	cfg := filepath.Join(t.TempDir(), "config.toml")
	os.WriteFile(cfg, []byte(nested), 0o600)
	start := time.Now()
	_, errOut, code := muse(t, "", nil, "--config", cfg, "doctor")
	if code == 0 || !strings.Contains(errOut, "read config "+cfg+": line 1: arrays or inline tables nested more than 16 deep") || time.Since(start) > 20*time.Second {
		t.Errorf("nested config: exit %d after %v\n%s", code, time.Since(start), errOut)
	}
	ov := filepath.Join(t.TempDir(), "overrides.toml")
	os.WriteFile(ov, []byte("[domains.\"example.com\"]\ntier = \"high\"\nnote = "+strings.Repeat("[", 5000)+strings.Repeat("]", 5000)+"\n"), 0o600)
	out, errOut, code := muse(t, "", []string{"MUSE_OVERRIDES=" + ov}, "sources", "rate", "example.com")
	if code == 0 || !strings.Contains(out+errOut, "nested more than 16 deep") {
		t.Errorf("nested overrides: exit %d\n%s%s", code, out, errOut)
	}
}

// TestCheckHostileImages: `muse check` with six 16-bit PNG bombs reads the
// first four, refuses each from its header, says so, and still corrects
// the post.
func TestCheckHostileImages(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	bomb := imagetest.PNG16(t, 7000, 7000)
	args := []string{"check", "--before", testworld.Cutoff.Format(time.RFC3339)}
	dir := t.TempDir()
	for i := range 6 {
		p := filepath.Join(dir, fmt.Sprintf("bomb%d.png", i))
		os.WriteFile(p, bomb, 0o600)
		args = append(args, "--image", p)
	}
	out, errOut, code := muse(t, "", env, append(args, testworld.Post)...)
	if code != 0 || !strings.Contains(errOut, "the post has 6 images; muse reads the first 4") ||
		strings.Count(errOut, "8 bytes a pixel") != 4 || !strings.Contains(out, "This post is") {
		t.Errorf("check with six bombs: exit %d\n%s\n%s", code, out, errOut)
	}
}

// TestLongUserRefused: a 100,000-character MUSE_USER is refused before a
// check runs (and pays), not after, when its case could not be kept.
func TestLongUserRefused(t *testing.T) {
	isolate(t)
	w := testworld.New(t, nil)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_USER=" + strings.Repeat("x", 100000)}
	out, errOut, code := muse(t, "", env, "check", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if code == 0 || !strings.Contains(errOut, "user (MUSE_USER) is 100000 bytes long; a checker's name is at most 128") {
		t.Errorf("long MUSE_USER: exit %d\n%s%s", code, out, errOut[:min(len(errOut), 400)])
	}
	if n := len(w.LLM.ChatCalls()); n != 0 {
		t.Errorf("%d model calls made before the name was refused", n)
	}
}
