package cli

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/eval"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// evalWorld is a loopback world, a judge double keyed on its refuting
// quote, and the environment that points muse at both.
func evalWorld(t *testing.T) (*testworld.Env, []string) {
	w, env, _ := evalWorldJudge(t)
	return w, env
}

// evalWorldJudge is evalWorld with its judge server.
func evalWorldJudge(t *testing.T) (*testworld.Env, []string, *llmtest.Server) {
	t.Helper()
	isolate(t)
	w := testworld.New(t, nil)
	judge := testworld.Judge(t, testworld.QuoteR1)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String(), "MUSE_NO_CACHE=1",
		"MUSE_JUDGE_BASE_URL=" + judge.BaseURL, "MUSE_JUDGE_MODEL=judge-model", "MUSE_JUDGE_API_KEY=sk-judge"}
	return w, env, judge
}

// TestEvalReusesCachedAnswers: a second run over the same posts asks
// neither the judge nor the model alone again: their answers come from
// the response cache, at no cost; --no-cache asks again.
func TestEvalReusesCachedAnswers(t *testing.T) {
	w, env, judge := evalWorldJudge(t)
	env = slices.DeleteFunc(env, func(s string) bool { return s == "MUSE_NO_CACHE=1" })
	posts := writeEvalPosts(t, 2)
	args := []string{"eval", posts, "--system", "alone=model", "--system", "people=file", "--no-fetch", "--json"}
	if _, errOut, code := muse(t, "", env, args...); code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	judged, modelled := judge.Count("/v1/chat/completions"), w.LLM.Count("/v1/chat/completions")
	if judged != 4 || modelled != 2 {
		t.Fatalf("first run: %d judge calls, %d model calls", judged, modelled)
	}
	out, errOut, code := muse(t, "", env, args...)
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	if j, m := judge.Count("/v1/chat/completions"), w.LLM.Count("/v1/chat/completions"); j != judged || m != modelled {
		t.Errorf("the second run asked again: %d judge calls, %d model calls", j-judged, m-modelled)
	}
	var s eval.Summary
	json.Unmarshal([]byte(out), &s)
	if len(s.Systems) != 2 || s.Systems[0].Metrics["overall"].N != 2 {
		t.Errorf("cached answers not scored: %s", out)
	}
	if _, _, code := muse(t, "", env, append(args, "--no-cache")...); code != 0 || judge.Count("/v1/chat/completions") != judged+4 {
		t.Errorf("--no-cache: exit %d, %d judge calls", code, judge.Count("/v1/chat/completions")-judged)
	}
}

// writeEvalPosts writes n variants of the world's post, posted at its
// cutoff, each with a person's note citing the world's refuting page.
func writeEvalPosts(t *testing.T, n int) string {
	t.Helper()
	var b bytes.Buffer
	for i := range n {
		line, _ := json.Marshal(map[string]any{"id": fmt.Sprint(i), "text": fmt.Sprintf("%s (%d)", testworld.Post, i),
			"posted_at":   testworld.Cutoff.Format(time.RFC3339),
			"corrections": map[string]string{"people": "Not true: the council banned nothing. https://www.reuters.com/world/springfield-bicycles"}})
		b.Write(append(line, '\n'))
	}
	p := filepath.Join(t.TempDir(), "posts.jsonl")
	if err := os.WriteFile(p, b.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

// TestEvalThroughTheBinary: muse, the model alone and people's notes on
// the loopback world, judged by a model apart: the JSON summary, the
// results file and the HTML page.
func TestEvalThroughTheBinary(t *testing.T) {
	_, env := evalWorld(t)
	posts := writeEvalPosts(t, 3)
	dir := t.TempDir()
	results, page := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "report.html")
	out, errOut, code := muse(t, "", env, "eval", posts, "--system", "muse=muse", "--system", "alone=model", "--system", "people=file",
		"-o", results, "--html", page, "--json")
	if code != 0 {
		t.Fatalf("exit %d\n%s", code, errOut)
	}
	var s eval.Summary
	if err := json.Unmarshal([]byte(out), &s); err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	by := map[string]eval.SystemSummary{}
	for _, ss := range s.Systems {
		by[ss.Name] = ss
	}
	m, a, p := by["muse"], by["alone"], by["people"]
	if m.Posts != 3 || a.Posts != 3 || p.Posts != 3 || m.Judged != 3 || m.Failed+a.Failed+p.Failed != 0 {
		t.Fatalf("systems: %+v", s.Systems)
	}
	// muse cites the world's refuting page, which the judge reads; the
	// model alone cites nothing.
	if m.Metrics["overall"].Mean != 8 || a.Metrics["overall"].Mean != 3 || m.Metrics["m_reachable"].Mean != 1 {
		t.Errorf("overall: muse %+v, alone %+v", m.Metrics["overall"], a.Metrics["overall"])
	}
	if !strings.Contains(errOut, "eval: 9/9 scored, 0 failed") {
		t.Errorf("progress: %s", errOut)
	}
	rs, _ := eval.ReadResults(results)
	if len(rs) != 9 {
		t.Errorf("%d results in the file, want 9", len(rs))
	}
	html, err := os.ReadFile(page)
	if err != nil || strings.Count(string(html), "<svg") != len(s.Metrics) {
		t.Errorf("HTML report: %v, %d plots for %d metrics", err, strings.Count(string(html), "<svg"), len(s.Metrics))
	}
	// The same file reported again, as text.
	out, _, code = muse(t, "", env, "eval", "report", results)
	if code != 0 || !strings.Contains(out, "overall quality (0–10)") || !strings.Contains(out, "█") {
		t.Errorf("eval report: exit %d\n%s", code, out)
	}
	// Without --resume an existing results file is not appended to.
	if _, errOut, code := muse(t, "", env, "eval", posts, "-o", results); code != 2 || !strings.Contains(errOut, "--resume") {
		t.Errorf("existing file: exit %d %s", code, errOut)
	}
	// A post without a time cannot be checked as of it: that correction
	// fails, the report still comes, and the exit code says so.
	untimed := filepath.Join(dir, "untimed.jsonl")
	os.WriteFile(untimed, []byte(`{"id":"u","text":"`+testworld.Post+`"}`+"\n"), 0o644)
	out, errOut, code = muse(t, "", env, "eval", untimed, "--system", "muse=muse", "--no-fetch")
	if code != 1 || !strings.Contains(errOut, "1 of 1 corrections failed") || !strings.Contains(out, "muse (muse): 1 posts, 1 failed") {
		t.Errorf("untimed post: exit %d\n%s\n%s", code, out, errOut)
	}
	// The judge may not be the model under test.
	if _, errOut, code := muse(t, "", append(env, "MUSE_JUDGE_MODEL=test-model", "MUSE_JUDGE_BASE_URL="), "eval", posts, "--system", "alone=model"); code != 2 || !strings.Contains(errOut, "apart") {
		t.Errorf("judge = model under test: exit %d %s", code, errOut)
	}
}

// TestEvalResumesAfterKill: 100 posts × 3 systems on the loopback world;
// the run is killed with SIGKILL part way and resumed: every post and
// system is scored once, and the report's page has every plot.
func TestEvalResumesAfterKill(t *testing.T) {
	if testing.Short() {
		t.Skip("a run of 300 corrections")
	}
	_, env := evalWorld(t)
	posts := writeEvalPosts(t, 100)
	dir := t.TempDir()
	results, page := filepath.Join(dir, "results.jsonl"), filepath.Join(dir, "report.html")
	args := []string{"eval", posts, "--system", "muse=muse", "--system", "alone=model", "--system", "people=file", "-o", results, "-j", "4"}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), "MUSE_TEST_AS_MUSE=1"), env...)
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	for lines(results) < 40 {
		if ctx.Err() != nil {
			t.Fatal("the run did not get to 40 results")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cmd.Process.Kill() // SIGKILL: no chance to tidy up
	cmd.Wait()
	killed := lines(results)
	if killed >= 300 {
		t.Fatalf("the run finished (%d lines) before it was killed", killed)
	}
	out, errOut, code := muse(t, "", env, append(args, "--resume", "--html", page)...)
	if code != 0 {
		t.Fatalf("resume: exit %d\n%s", code, errOut)
	}
	rs, err := eval.ReadResults(results)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]int{}
	for _, r := range rs {
		if r.Status == eval.StatusDone {
			seen[r.Key()]++
		}
	}
	if len(seen) != 300 {
		t.Errorf("%d corrections done, want 300", len(seen))
	}
	for k, n := range seen {
		if n != 1 {
			t.Errorf("%q scored %d times", k, n)
		}
	}
	if !strings.Contains(out, "muse (muse): 100 posts, 0 failed") {
		t.Errorf("report:\n%s", out)
	}
	checkPlotsInChromium(t, page)
}

func lines(path string) int {
	f, err := os.Open(path)
	if err != nil {
		return 0
	}
	defer f.Close()
	n := 0
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 16<<20)
	for sc.Scan() {
		n++
	}
	return n
}

// checkPlotsInChromium opens the report in headless Chromium (Debian's
// chromium) and checks that every plot was drawn: the DOM it built has an
// SVG in every figure, and its screenshot has as many bands of the bars'
// colour as the page has bars wide enough to see. Without Chromium, it
// says so and checks nothing more.
func checkPlotsInChromium(t *testing.T, page string) {
	t.Helper()
	bin, err := exec.LookPath("chromium")
	if err != nil {
		t.Log("chromium is not installed: the report's page was not opened in a browser")
		return
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	flags := []string{"--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars", "--force-device-scale-factor=1"}
	out, err := exec.CommandContext(ctx, bin, append(flags, "--dump-dom", "file://"+page)...).Output()
	if err != nil {
		t.Fatalf("chromium: %v", err)
	}
	dom := string(out)
	figures := strings.Count(dom, `<figure class="plot"`)
	t.Logf("chromium built %d figures, %d SVGs, %d bars", figures, strings.Count(dom, "<svg"), strings.Count(dom, "<rect"))
	if figures == 0 || strings.Count(dom, "<svg") != figures || strings.Count(dom, "<rect") < figures {
		t.Errorf("chromium built %d figures, %d SVGs, %d bars", figures, strings.Count(dom, "<svg"), strings.Count(dom, "<rect"))
	}
	html, _ := os.ReadFile(page)
	visible := 0
	for _, m := range regexp.MustCompile(`<rect class="bar"[^>]* width="([0-9.]+)"`).FindAllStringSubmatch(string(html), -1) {
		if w, _ := strconv.ParseFloat(m[1], 64); w >= 2 {
			visible++
		}
	}
	shot := filepath.Join(t.TempDir(), "report.png")
	if err := exec.CommandContext(ctx, bin, append(flags, "--window-size=800,6000", "--screenshot="+shot, "file://"+page)...).Run(); err != nil {
		t.Fatalf("chromium screenshot: %v", err)
	}
	f, err := os.Open(shot)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatal(err)
	}
	// Bands: runs of pixel rows holding the bars' colour (#4a7ab7).
	bands, in := 0, false
	b := img.Bounds()
	for y := b.Min.Y; y < b.Max.Y; y++ {
		row := false
		for x := b.Min.X; x < b.Max.X && !row; x++ {
			r, g, bl, _ := img.At(x, y).RGBA()
			row = r>>8 == 0x4a && g>>8 == 0x7a && bl>>8 == 0xb7
		}
		if row && !in {
			bands++
		}
		in = row
	}
	t.Logf("the screenshot has %d bars drawn; the page has %d wide enough to see", bands, visible)
	if visible == 0 || bands != visible {
		t.Errorf("chromium drew %d bars, the page has %d", bands, visible)
	}
}
