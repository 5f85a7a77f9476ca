package pipeline_test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"io/fs"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/pipeline/testworld"
)

// The key the CLI tests configure: long and unmistakable, so a scan of the
// data directory cannot miss it.
const cliTestKey = "sk-proj-MUSETESTKEY0123456789abcdef"

// cliEnv is the environment `muse` runs with against the fault world.
func (fe *faultEnv) cliEnv(t *testing.T, home string) []string {
	t.Helper()
	ratings := fe.Cfg.RatingsFile
	return []string{"MUSE_TEST_AS_MUSE=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HTTP_PROXY=" + fe.Proxy.String(), "OPENAI_BASE_URL=" + fe.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=" + cliTestKey,
		"MUSE_MODEL=gpt-4o-mini", "SEARXNG_URL=" + fe.Cfg.SearXNGURL, "MUSE_RATINGS=" + ratings, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1"}
}

func museRun(t *testing.T, env []string, args ...string) (stdout, stderr string, err error) {
	t.Helper()
	cmd := exec.Command(museCommand(t), args...)
	cmd.Env = env
	var o, e bytes.Buffer
	cmd.Stdout, cmd.Stderr = &o, &e
	err = cmd.Run()
	return o.String(), e.String(), err
}

// A `muse check` killed in the middle of the correction leaves a case
// holding everything it reported before: post, queries, sources, evidence,
// usage, and the correction stage marked running.
func TestCheckKilledMidRunKeepsTheCase(t *testing.T) {
	t.Parallel()
	fe := newFaultEnv(t)
	correction := make(chan struct{}, 1)
	release := make(chan struct{})
	defer close(release)
	fe.llmFault = func(kind string, _ int, w http.ResponseWriter, r *http.Request) bool {
		if kind != "correction" {
			return false
		}
		select {
		case correction <- struct{}{}:
		default:
		}
		select { // hold the call until the process is gone
		case <-release:
		case <-r.Context().Done():
		}
		return true
	}
	home := t.TempDir()
	env := fe.cliEnv(t, home)
	cmd := exec.Command(museCommand(t), "check", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	cmd.Env = env
	stderr, err := cmd.StderrPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	var lines []string
	lineCh := make(chan string)
	go func() {
		sc := bufio.NewScanner(stderr)
		for sc.Scan() {
			lineCh <- sc.Text()
		}
		close(lineCh)
	}()
	// Wait until the process has reported the correction started (it
	// prints an event only once it is saved) and the call is in flight.
	started, called := false, false
	deadline := time.After(60 * time.Second)
	for !started || !called {
		select {
		case l, ok := <-lineCh:
			if !ok {
				t.Fatalf("muse ended early:\n%s", strings.Join(lines, "\n"))
			}
			lines = append(lines, l)
			started = started || strings.Contains(l, "correction…")
		case <-correction:
			called = true
		case <-deadline:
			cmd.Process.Kill()
			t.Fatalf("no correction call; stderr:\n%s", strings.Join(lines, "\n"))
		}
	}
	if err := cmd.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	go func() {
		for range lineCh {
		}
	}()
	cmd.Wait()

	out, errOut, err := museRun(t, env, "cases", "--json")
	if err != nil {
		t.Fatalf("muse cases: %v\n%s", err, errOut)
	}
	var list []struct {
		ID string `json:"id"`
	}
	if err := json.Unmarshal([]byte(out), &list); err != nil || len(list) != 1 {
		t.Fatalf("cases list %q: %v", out, err)
	}
	out, errOut, err = museRun(t, env, "cases", "export", list[0].ID, "--format", "json")
	if err != nil {
		t.Fatalf("muse cases export: %v\n%s", err, errOut)
	}
	var c pipeline.Check
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("export is not a Check: %v\n%s", err, out)
	}
	if c.Post.Text != testworld.Post || len(c.Queries) == 0 || len(c.Sources) == 0 || len(c.IncludedEvidence()) == 0 {
		t.Errorf("case lost work: post %q, %d queries, %d sources, %d quotes", c.Post.Text, len(c.Queries), len(c.Sources), len(c.IncludedEvidence()))
	}
	if c.Usage.ByStage[string(pipeline.StageEvidence)].LLMCalls == 0 {
		t.Errorf("case usage %+v lacks the evidence calls", c.Usage)
	}
	states := map[pipeline.Stage]string{}
	for _, si := range c.Stages {
		states[si.Stage] = si.State
	}
	if states[pipeline.StageEvidence] != pipeline.StateDone || states[pipeline.StageCorrection] != pipeline.StateRunning {
		t.Errorf("stage states %v, want evidence done and correction running", states)
	}
	// Every event the process reported is in the case's log.
	logged := map[string]bool{}
	for _, ev := range c.Events {
		if line := export.ProgressLine(ev); line != "" {
			logged["muse: "+line] = true
		}
	}
	for _, l := range lines {
		if !logged[l] {
			t.Errorf("stderr line %q is not in the saved case", l)
		}
	}
}

// After a whole run through the CLI — check, cache, case, snapshots — no
// file under the data and cache directories holds the API key, and the case kept the
// evidence pages with their raw HTML.
func TestDataDirectoryHoldsNoKey(t *testing.T) {
	t.Parallel()
	fe := newFaultEnv(t)
	home := t.TempDir()
	env := fe.cliEnv(t, home)
	out, errOut, err := museRun(t, env, "check", "--json", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if err != nil {
		t.Fatalf("muse check: %v\n%s", err, errOut)
	}
	last := errOut[strings.LastIndex(strings.TrimRight(errOut, "\n"), "\n")+1:]
	if !strings.Contains(last, "kept as case ") || !strings.Contains(errOut, "model calls") {
		t.Errorf("stderr does not end with the case ID and usage:\n%s", errOut)
	}
	var c pipeline.Check
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(last, c.ID) {
		t.Errorf("case ID %q not on the last line %q", c.ID, last)
	}
	if u := c.Usage.ByStage[string(pipeline.StageCorrection)]; u.LLMCalls != 1 || u.CostUSD <= 0 {
		t.Errorf("--json usage by stage %+v", c.Usage.ByStage)
	}
	files := 0
	scan := func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		files++
		b, err := os.ReadFile(path)
		if err != nil {
			t.Error(err)
			return nil
		}
		if bytes.Contains(b, []byte(cliTestKey)) || bytes.Contains(b, []byte("MUSETESTKEY")) {
			t.Errorf("%s holds the API key", path)
		}
		return nil
	}
	filepath.WalkDir(filepath.Join(home, "data"), scan)
	filepath.WalkDir(filepath.Join(home, "cache"), scan) // the response cache, under XDG_CACHE_HOME
	if files < 3 {
		t.Errorf("only %d files in the data and cache directories", files)
	}
	if strings.Contains(out+errOut, "MUSETESTKEY") {
		t.Error("the key is in the output")
	}
	// The snapshot of a quoted page is kept with its raw HTML.
	md, errOut, err := museRun(t, env, "cases", "export", c.ID, "--format", "md")
	if err != nil {
		t.Fatalf("export: %v\n%s", err, errOut)
	}
	if !strings.Contains(md, "www.reuters.com") {
		t.Errorf("exported case lacks its sources:\n%s", md)
	}
	// A rerun goes through the cache (TestCacheRerunIsFree shows a whole
	// identical rerun is free; here parallel evidence calls may pick other
	// pages, so only the query call is sure to repeat), and --no-save
	// keeps no case.
	out2, errOut, err := museRun(t, env, "check", "--json", "--no-save", "--before", testworld.Cutoff.Format(time.RFC3339), testworld.Post)
	if err != nil {
		t.Fatalf("rerun: %v\n%s", err, errOut)
	}
	var c2 pipeline.Check
	json.Unmarshal([]byte(out2), &c2)
	if q := c2.Usage.ByStage[string(pipeline.StageQueries)]; q.CachedCalls != 1 || q.CostUSD != 0 || strings.Contains(errOut, "kept as case") {
		t.Errorf("rerun usage %+v; stderr:\n%s", c2.Usage, errOut)
	}
	if list, _, _ := museRun(t, env, "cases", "--json"); strings.Count(list, `"id"`) != 1 {
		t.Errorf("after a --no-save rerun the cases are %s", list)
	}
}
