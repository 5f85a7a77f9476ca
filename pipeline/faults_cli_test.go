package pipeline_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/musecheck/muse/cli"
	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/archive"
)

// The fault matrix as the user meets it: the muse command, configured
// only through its environment, against the loopback world. Exit code,
// stdout and the last stderr line are what a script or a journalist sees.
// The command is this test binary run as muse (TestMain), so no separate
// build is needed.

// TestMain runs the test binary as the muse command itself when
// MUSE_TEST_AS_MUSE=1.
func TestMain(m *testing.M) {
	if os.Getenv("MUSE_TEST_AS_MUSE") == "1" {
		os.Exit(cli.Main())
	}
	os.Exit(m.Run())
}

var museBin struct {
	once sync.Once
	path string
	err  error
}

// museCommand is the muse command for museCheck: this test binary, copied
// once into a folder any user may enter, for the row that runs it as
// another user (the build cache's folders are the owner's alone).
func museCommand(t *testing.T) string {
	t.Helper()
	museBin.once.Do(func() {
		dir, err := os.MkdirTemp("", "muse-faults-")
		if err != nil {
			museBin.err = err
			return
		}
		os.Chmod(dir, 0o755)
		museBin.path = filepath.Join(dir, "muse")
		museBin.err = copyExecutable(os.Args[0], museBin.path)
	})
	if museBin.err != nil {
		t.Fatalf("copy the test binary: %v", museBin.err)
	}
	return museBin.path
}

// copyExecutable copies the file at from to a new executable file to.
func copyExecutable(from, to string) error {
	in, err := os.Open(from)
	if err != nil {
		return err
	}
	defer in.Close()
	out, err := os.OpenFile(to, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o755)
	if err != nil {
		return err
	}
	if _, err := io.Copy(out, in); err != nil {
		out.Close()
		return err
	}
	return out.Close()
}

type cliResult struct {
	code           int
	stdout, stderr string
}

// lastLine is the one-line reason muse prints on failure.
func (r cliResult) lastLine() string {
	lines := strings.Split(strings.TrimSpace(r.stderr), "\n")
	return lines[len(lines)-1]
}

// cliRun says how to run muse: with the address guard on, as another
// user, in a prepared home directory.
type cliRun struct {
	guard bool
	uid   int      // 0: as ourselves
	home  string   // "": a fresh temporary directory
	env   []string // more of muse's environment, over the rest
}

func (fe *faultEnv) museCheck(t *testing.T, how cliRun, args ...string) cliResult {
	t.Helper()
	bin := museCommand(t)
	home := how.home
	if home == "" {
		home = t.TempDir()
	}
	ratings := fe.Cfg.RatingsFile
	env := []string{"MUSE_TEST_AS_MUSE=1", "PATH=" + os.Getenv("PATH"), "HOME=" + home, "XDG_DATA_HOME=" + filepath.Join(home, "data"),
		"XDG_CONFIG_HOME=" + filepath.Join(home, "config"), "XDG_CACHE_HOME=" + filepath.Join(home, "cache"),
		"HTTP_PROXY=" + fe.Proxy.String(), "OPENAI_BASE_URL=" + fe.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test",
		"MUSE_MODEL=test-model", "SEARXNG_URL=" + fe.Cfg.SearXNGURL, "MUSE_RATINGS=" + ratings, "MUSE_IGNORE_ROBOTS=1"}
	if !how.guard {
		env = append(env, "MUSE_ALLOW_PRIVATE_ADDRESSES=1")
	}
	env = append(env, how.env...)
	cmd := exec.Command(bin, append([]string{"check", "--before", testworld.Cutoff.Format(time.RFC3339)}, args...)...)
	cmd.Env = env
	if how.uid != 0 {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: &syscall.Credential{Uid: uint32(how.uid), Gid: uint32(how.uid)}}
	}
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	res := cliResult{stdout: stdout.String(), stderr: stderr.String()}
	var ee *exec.ExitError
	switch {
	case errors.As(err, &ee):
		res.code = ee.ExitCode()
	case err != nil:
		t.Fatal(err)
	}
	return res
}

func TestFaultCLI(t *testing.T) {
	t.Parallel()
	rows := []struct {
		name  string
		setup func(t *testing.T, fe *faultEnv)
		guard bool
		code  int
		last  []string // words of the last stderr line
		out   []string // words stdout must still carry
	}{
		{name: "healthy", code: 0, out: []string{"This post is false", "www.reuters.com"}},
		{name: "model rate-limits every call", setup: func(t *testing.T, fe *faultEnv) {
			fe.llmFault = func(_ string, _ int, w http.ResponseWriter, _ *http.Request) bool {
				openAIError(w, 429, "requests", "Rate limit reached for requests", "Retry-After", "0")
				return true
			}
		}, code: 1, last: []string{"muse: check not finished", "write search queries", "rate limited"}, out: []string{testworld.Post[:40]}},
		{name: "evidence model fails, correction not written", setup: func(t *testing.T, fe *faultEnv) {
			fe.llmFault = func(kind string, _ int, w http.ResponseWriter, _ *http.Request) bool {
				if kind != "evidence" {
					return false
				}
				openAIError(w, 500, "server_error", "The server had an error while processing your request.")
				return true
			}
		}, code: 1, last: []string{"check not finished", "evidence", "every model call failed"}, out: []string{"www.reuters.com"}},
		{name: "corrupt ratings file", setup: func(t *testing.T, fe *faultEnv) {
			fe.Cfg.RatingsFile = filepath.Join(t.TempDir(), "combined.json")
			os.WriteFile(fe.Cfg.RatingsFile, []byte(`{"version":5,"sources":[`), 0o644)
		}, code: 2, last: []string{"muse: load publisher ratings", "combined.json", "ends early"}},
		{name: "gzip bomb and a redirect to the router among the results", guard: true, setup: func(t *testing.T, fe *faultEnv) {
			fe.hosts["www.bomb.example"] = fixedPage("text/html", gzipOf(make([]byte, 64<<20)), "Content-Encoding", "gzip")
			fe.hosts["www.sneaky.example"] = http.RedirectHandler("http://192.168.1.1/admin", http.StatusFound)
			fe.extraURLs = []string{"http://www.bomb.example/springfield", "http://www.sneaky.example/springfield"}
		}, code: 0, out: []string{"This post is false", "www.reuters.com", "compression bomb", "refusing to connect to 192.168.1.1"}},
		{name: "search down", setup: func(t *testing.T, fe *faultEnv) {
			fe.Cfg.SearXNGURL = "http://127.0.0.1:1"
		}, code: 3, out: []string{"Search failed (searxng failed 3 queries: connection refused); nothing was checked"},
			last: []string{"no evidence could be obtained", "every web search provider failed"}},
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			if row.setup != nil {
				row.setup(t, fe)
			}
			res := fe.museCheck(t, cliRun{guard: row.guard}, testworld.Post)
			if res.code != row.code {
				t.Errorf("exit %d, want %d\nstderr:\n%s", res.code, row.code, res.stderr)
			}
			if row.last != nil {
				wantContains(t, "last stderr line", res.lastLine(), row.last...)
			}
			wantContains(t, "stdout", res.stdout, row.out...)
			if strings.Contains(res.stdout, "springfield-truth") || strings.Contains(res.stdout+res.stderr, "sk-test") {
				t.Error("output carries an invented URL or the API key")
			}
			t.Logf("%s → exit %d; %s", row.name, res.code, res.lastLine())
			if os.Getenv("MUSE_FAULTS_DUMP") != "" {
				t.Logf("stdout:\n%s\nstderr:\n%s", res.stdout, res.stderr)
			}
		})
	}
}

// TestFaultCLILostAnswers: muse check against a model server that loses
// evidence answers in each dialect of lostHabits. Every page lost: exit 3,
// the last stderr line names the cause, `--json` carries each page's
// not_judged status and reason and the partial evidence stage, and the
// correction says no page was judged, never "No credible source was
// found". One page lost: exit 0, and the report opens by saying which.
func TestFaultCLILostAnswers(t *testing.T) {
	t.Parallel()
	apTitle := testworld.Pages()["apnews.com"].Title
	type row struct {
		name  string
		h     http.HandlerFunc
		every bool
		json  bool
		of    string
	}
	var rows []row
	for _, habit := range lostHabits {
		rows = append(rows, row{habit.name + ", every page, --json", habit.h, true, true, habit.of})
	}
	rows = append(rows, row{lostHabits[0].name + ", every page", lostHabits[0].h, true, false, lostHabits[0].of},
		row{lostHabits[0].name + ", AP's page", lostHabits[0].h, false, false, lostHabits[0].of})
	for _, r := range rows {
		t.Run(r.name, func(t *testing.T) {
			t.Parallel()
			fe := newFaultEnv(t)
			fe.llmFault = func(kind string, _ int, w http.ResponseWriter, req *http.Request) bool {
				body, _ := io.ReadAll(req.Body)
				if kind == "evidence" && (r.every || strings.Contains(string(body), apTitle)) {
					r.h(w, req)
					return true
				}
				return false
			}
			args := []string{testworld.Post}
			if r.json {
				args = append([]string{"--json"}, args...)
			}
			res := fe.museCheck(t, cliRun{}, args...)
			t.Logf("exit %d; %s", res.code, res.lastLine())
			if strings.Contains(res.stdout, pipeline.NoSourceText[:40]) || strings.Contains(res.stdout+res.stderr, "sk-test") {
				t.Errorf("stdout says no credible source was found, or shows the key:\n%s", res.stdout)
			}
			if strings.Contains(r.name, "OpenRouter 200") {
				wantContains(t, "stdout", res.stdout, "upstream rejected key [redacted] (upstream provider Fireworks)")
			}
			if !r.every {
				if res.code != 0 {
					t.Fatalf("exit %d, want 0\nstderr:\n%s", res.code, res.stderr)
				}
				want := "> **Not judged:** 1 of 6 pages was not judged: " + fmt.Sprintf(r.of, "it") + "."
				if lines := reportOpening(res.stdout); len(lines) < 2 || lines[0] != want || !strings.HasPrefix(lines[1], "This post is false") {
					t.Errorf("the report does not open with %q and the correction:\n%s", want, res.stdout)
				}
				wantContains(t, "stdout", res.stdout, "not judged: "+lostHabits[0].reason)
				wantContains(t, "stderr", res.stderr, "muse: verdict: Refuted")
				return
			}
			if res.code != 3 {
				t.Fatalf("exit %d, want 3\nstderr:\n%s", res.code, res.stderr)
			}
			wantContains(t, "last stderr line", res.lastLine(), "no evidence could be obtained", "could not be used", fmt.Sprintf(r.of, "them"))
			if !r.json {
				if lines := reportOpening(res.stdout); len(lines) == 0 || !strings.HasPrefix(lines[0], pipeline.NotJudgedLead+": "+fmt.Sprintf(r.of, "all 6 pages")) {
					t.Errorf("the report does not open by saying no page was judged:\n%s", res.stdout)
				}
				return
			}
			var c pipeline.Check
			if err := json.Unmarshal([]byte(res.stdout), &c); err != nil {
				t.Fatalf("stdout is not the Check: %v\n%s", err, res.stdout)
			}
			noSourceOnlyWhenJudged(t, &c)
			notJudged := 0
			for _, s := range c.Sources {
				if s.Status == pipeline.StatusNotJudged && s.Reason != "" {
					notJudged++
				}
			}
			if notJudged != 6 || !strings.HasPrefix(c.Correction.Text, pipeline.NotJudgedLead) || len(c.Correction.Warnings) == 0 {
				t.Errorf("%d pages not judged in the JSON, correction %+v", notJudged, c.Correction)
			}
			for _, si := range c.Stages {
				if (si.Stage == pipeline.StageEvidence || si.Stage == pipeline.StageCorrection) && si.State != pipeline.StatePartial {
					t.Errorf("%s stage %+v, want partial", si.Stage, si)
				}
			}
		})
	}
}

// reportOpening is what a Markdown report says first under "# Correction",
// its italic notes (the post's language) left out.
func reportOpening(md string) []string {
	var out []string
	if strings.HasPrefix(md, "# Correction") {
		_, md, _ = strings.Cut(md, "\n") // the heading, with the verdict when there is one
	}
	for _, l := range strings.Split(md, "\n") {
		if l == "" || strings.HasPrefix(l, "_") {
			continue
		}
		if strings.HasPrefix(l, "#") {
			break
		}
		out = append(out, l)
	}
	return out
}

// TestFaultCLIReadOnlyData runs muse as an unprivileged user (root ignores
// permission bits) over a data directory it may read but not write: the
// read-only mount or foreign-owned folder a newsroom machine may have.
func TestFaultCLIReadOnlyData(t *testing.T) {
	t.Parallel()
	if os.Getuid() != 0 {
		t.Skip("needs root to run muse as another user")
	}
	const nobody = 65534
	fe := newFaultEnv(t)
	home := t.TempDir()
	os.Chmod(filepath.Dir(home), 0o755) // the test's temporary root, so that muse can reach home
	data := filepath.Join(home, "data", "muse")
	st, err := archive.Open(context.Background(), filepath.Join(data, "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	st.Close()
	// The checkout may sit in a directory only root can enter (a mktemp
	// clone), so give nobody its own copy of the ratings fixture.
	fe.Cfg.RatingsFile = filepath.Join(home, "ratings.csv")
	if err := os.WriteFile(fe.Cfg.RatingsFile, testworld.RatingsCSV, 0o644); err != nil {
		t.Fatal(err)
	}
	filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
		if err == nil {
			mode := os.FileMode(0o444)
			if fi.IsDir() {
				mode = 0o555
			}
			os.Chmod(p, mode)
		}
		return nil
	})
	t.Cleanup(func() {
		filepath.Walk(home, func(p string, fi os.FileInfo, err error) error {
			if err == nil {
				os.Chmod(p, 0o755)
			}
			return nil
		})
	})
	res := fe.museCheck(t, cliRun{uid: nobody, home: home}, testworld.Post)
	t.Logf("read-only data directory → exit %d; stderr:\n%s", res.code, res.stderr)
	// The response cache and the archive are extras: the check runs
	// without them, and a warning names each file and why. The case it was
	// to keep is not kept, so it ends non-zero saying so (issue 12), with
	// the result on stdout.
	if res.code != 1 || !strings.Contains(res.lastLine(), "its case could not be kept") {
		t.Fatalf("exit %d over a read-only data directory, last line %q; want 1 saying the case is not kept; stderr:\n%s",
			res.code, res.lastLine(), res.stderr)
	}
	sep := string(filepath.Separator)
	wantContains(t, "stderr", res.stderr, "muse: warning: the response cache is left out",
		filepath.Join(home, "cache", "muse", "cache.db"), // XDG_CACHE_HOME
		"muse: warning: the local archive is left out", data+sep+"archive.db")
	wantContains(t, "stdout", res.stdout, "This post is false", "www.reuters.com")
}
