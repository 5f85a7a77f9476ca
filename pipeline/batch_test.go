package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

func TestBatchResume(t *testing.T) {
	env := newE2E(t, nil)
	e, closeFn, err := NewFromConfig(context.Background(), env.cfg, env.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	input := strings.Join([]string{
		`{"text":"` + e2ePost + `","author":"City Rumours","handle":"@cityrumours","posted_at":"2024-02-01T12:00:00Z","url":"https://x.com/cityrumours/status/1"}`,
		`{"text":"Springfield mayor signed an order banning bicycles on Main Street","posted_at":"2024-02-01"}`,
		`this line is not JSON`,
		``,
		`{"text":"   "}`,
	}, "\n")
	out := filepath.Join(t.TempDir(), "out.jsonl")
	runOnce := func() BatchStats {
		done, err := FinishedKeys(out)
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.OpenFile(out, os.O_CREATE|os.O_APPEND|os.O_WRONLY, 0o644)
		if err != nil {
			t.Fatal(err)
		}
		defer f.Close()
		var progress bytes.Buffer
		st, err := RunBatch(context.Background(), e, strings.NewReader(input), f, BatchOptions{Parallel: 2, Done: done, Progress: &progress})
		if err != nil {
			t.Fatal(err)
		}
		if !strings.Contains(progress.String(), "/4 line") || !strings.Contains(progress.String(), "$0.0000 so far") {
			t.Errorf("progress %q", progress.String())
		}
		return st
	}
	st := runOnce()
	if st.LLMCalls == 0 || st.CostUSD != 0 { // test-model has no price
		t.Errorf("first run counted %d calls costing $%v", st.LLMCalls, st.CostUSD)
	}
	if st.Total != 4 || st.Done != 2 || st.Failed != 2 || st.Skipped != 0 {
		t.Fatalf("first run %+v", st)
	}
	// Counted by query calls, one per post checked: evidence calls stopped
	// early may still reach the server after the run returned.
	queryCalls := func() int {
		n := 0
		for _, c := range env.llm.ChatCalls() {
			if llmtest.SchemaName(*c.Chat) == "queries" {
				n++
			}
		}
		return n
	}
	calls := queryCalls()
	if calls != 2 {
		t.Fatalf("%d query calls for two posts", calls)
	}
	st = runOnce()
	if st.Total != 4 || st.Skipped != 2 || st.Failed != 2 || st.Done != 0 {
		t.Fatalf("rerun %+v", st)
	}
	if queryCalls() != calls {
		t.Error("the rerun called the model for finished posts")
	}
	b, _ := os.ReadFile(out)
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	if len(lines) != 6 {
		t.Fatalf("%d result lines", len(lines))
	}
	for _, l := range lines {
		var r BatchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result line %q: %v", l, err)
		}
		switch r.Line {
		case 1, 2:
			if r.Status != "done" || r.Check == nil || r.Check.Correction.Text == "" || r.Check.Cutoff.Format(time.DateOnly) != "2024-02-01" {
				t.Errorf("line %d: %+v", r.Line, r)
			}
			for _, s := range r.Check.Sources {
				if len(s.Paragraphs) > 0 {
					t.Error("page text in the output")
				}
			}
		case 3:
			if r.Status != "failed" || !strings.Contains(r.Error, "not a JSON post") {
				t.Errorf("bad line: %+v", r)
			}
		case 5:
			if r.Status != "failed" || !strings.Contains(r.Error, "no text") {
				t.Errorf("empty post: %+v", r)
			}
		default:
			t.Errorf("unexpected line %d", r.Line)
		}
	}
}

func TestCheckJSONKeys(t *testing.T) {
	env := newE2E(t, nil)
	c, err := e2eRun(t, env, env.opts())
	if err != nil {
		t.Fatal(err)
	}
	b, err := json.Marshal(c.ForOutput())
	if err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(b, &m); err != nil {
		t.Fatal(err)
	}
	need := map[string][]string{
		"post":       {"text"},
		"correction": {"text", "urls", "warnings"},
		"usage":      {"llm_calls", "prompt_tokens", "completion_tokens", "cost_usd", "seconds"},
	}
	for obj, keys := range need {
		o, _ := m[obj].(map[string]any)
		for _, k := range keys {
			if _, ok := o[k]; !ok {
				t.Errorf("%s.%s missing", obj, k)
			}
		}
	}
	src := m["sources"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "domain", "publisher", "published", "tier", "factuality", "bias", "rating_origin", "relevance", "status", "reason"} {
		if _, ok := src[k]; !ok {
			t.Errorf("sources[].%s missing", k)
		}
	}
	ev := m["evidence"].([]any)[0].(map[string]any)
	for _, k := range []string{"url", "quote", "kind", "verified", "included"} {
		if _, ok := ev[k]; !ok {
			t.Errorf("evidence[].%s missing", k)
		}
	}
	if _, ok := m["queries"].([]any)[0].(map[string]any)["text"]; !ok {
		t.Error("queries[].text missing")
	}

	var md bytes.Buffer
	if err := WriteMarkdown(&md, c); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"# Correction", "This post is false", "## Sources", "| high |", "excluded_cutoff",
		"after the cutoff", "## Evidence", "**refutes**, Reuters", quoteR1} {
		if !strings.Contains(md.String(), want) {
			t.Errorf("Markdown lacks %q", want)
		}
	}
}

func TestDoctor(t *testing.T) {
	env := newE2E(t, nil, llmtest.WithModels("test-model", "other-model"))
	items := Doctor(context.Background(), env.cfg)
	got := map[string]DoctorItem{}
	for _, it := range items {
		got[it.Name] = it
	}
	for _, name := range []string{"configuration", "model", "search searxng", "ratings", "archive"} {
		if got[name].Status != DoctorOK {
			t.Errorf("%s: %+v", name, got[name])
		}
	}
	if !strings.Contains(got["model"].Detail, "other-model") || !strings.Contains(got["ratings"].Detail, "ratings.csv") {
		t.Errorf("details: %q / %q", got["model"].Detail, got["ratings"].Detail)
	}

	env.cfg.Model = "missing-model"
	env.cfg.SearXNGURL = env.llm.URL + "/nothing-here"
	env.cfg.RatingsFile = filepath.Join(t.TempDir(), "absent.csv")
	got = map[string]DoctorItem{}
	for _, it := range Doctor(context.Background(), env.cfg) {
		got[it.Name] = it
	}
	if got["model"].Status != DoctorWarn || !strings.Contains(got["model"].Fix, "MUSE_MODEL") {
		t.Errorf("unknown model: %+v", got["model"])
	}
	if got["search searxng"].Status != DoctorFail || got["ratings"].Status != DoctorFail || got["ratings"].Fix == "" {
		t.Errorf("broken search/ratings: %+v %+v", got["search searxng"], got["ratings"])
	}
}

func TestPostFromURL(t *testing.T) {
	env := newE2E(t, nil)
	e, closeFn, err := NewFromConfig(context.Background(), env.cfg, env.opts())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	u := pageURL("www.rumours.example", env.pages["www.rumours.example"])
	p, err := e.PostFromURL(context.Background(), u)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(p.Text, "Springfield BANS bicycles!") || p.URL != u || p.PostedAt.Format(time.DateOnly) != "2024-01-25" {
		t.Fatalf("post %+v", p)
	}
	if _, err := e.PostFromURL(context.Background(), "http://www.gone.example/nothing"); err == nil || !strings.Contains(err.Error(), "404") {
		t.Fatalf("missing page: %v", err)
	}
	if _, err := e.PostFromURL(context.Background(), "file:///etc/passwd"); err == nil {
		t.Fatal("file URL accepted")
	}
}

// A line over 16 MiB fails on its own, with its line number, and the lines
// around it are still checked; a line of exactly 16 MiB is read.
func TestBatchLineTooLong(t *testing.T) {
	e, err := New(Deps{Fetcher: noFetch{}, Extract: extract.Extract, Rater: unrated{}}, Options{NoLLM: true})
	if err != nil {
		t.Fatal(err)
	}
	exact := `{"text":"exactly the limit` + strings.Repeat(" ", maxBatchLine-len(`{"text":"exactly the limit"}`)) + `"}`
	input := strings.Join([]string{
		`{"text":"first post"}`,
		`{"text":"` + strings.Repeat("x", maxBatchLine) + `"}`,
		exact,
		`{"text":"after the long line"}`,
		strings.Repeat("y", maxBatchLine+1), // last, with no newline
	}, "\r\n")
	var mu sync.Mutex
	var checked []string
	run := func(_ context.Context, c *Check) error {
		mu.Lock()
		defer mu.Unlock()
		checked = append(checked, strings.TrimSpace(c.Post.Text))
		return nil
	}
	var out bytes.Buffer
	st, err := RunBatch(context.Background(), e, strings.NewReader(input), &out, BatchOptions{Parallel: 2, Run: run})
	if err != nil {
		t.Fatalf("RunBatch: %v", err)
	}
	if st.Total != 5 || st.Done != 3 || st.Failed != 2 {
		t.Errorf("stats %+v; want 5 total, 3 done, 2 failed", st)
	}
	got := map[int]BatchResult{}
	for l := range strings.Lines(out.String()) {
		var r BatchResult
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result line %.200q: %v", l, err)
		}
		got[r.Line] = r
	}
	for _, n := range []int{2, 5} {
		want := fmt.Sprintf("line %d: longer than 16 MiB", n)
		if r := got[n]; r.Status != "failed" || r.Error != want || r.Check != nil {
			t.Errorf("line %d: %+v; want failed with %q", n, r, want)
		}
	}
	for _, n := range []int{1, 3, 4} {
		if r := got[n]; r.Status != "done" || r.Key == "" {
			t.Errorf("line %d: status %q error %q; want done", n, r.Status, r.Error)
		}
	}
	slices.Sort(checked)
	if want := []string{"after the long line", "exactly the limit", "first post"}; !slices.Equal(checked, want) {
		t.Errorf("checked %q; want %q", checked, want)
	}
}

func TestReadBatchLine(t *testing.T) {
	type line struct {
		text    string
		tooLong bool
	}
	for _, c := range []struct {
		in   string
		want []line
	}{
		{"", nil},
		{"abcd", []line{{"abcd", false}}},
		{"abcd\r\nabcde\nab\r\n\nabcdef", []line{{"abcd", false}, {"", true}, {"ab", false}, {"", false}, {"", true}}},
		{"abcd\r\r\n", []line{{"", true}}},
		{"abcdefghij\nx\n", []line{{"", true}, {"x", false}}},
	} {
		// A 16-byte buffer (bufio's smallest) makes long lines span reads.
		br := bufio.NewReaderSize(strings.NewReader(c.in), 16)
		var got []line
		for {
			b, long, err := readBatchLine(br, 4)
			if err != nil && !errors.Is(err, io.EOF) {
				t.Fatalf("%q: %v", c.in, err)
			}
			if len(b) > 0 || long || err == nil {
				got = append(got, line{string(b), long})
			}
			if err != nil {
				break
			}
		}
		if !slices.Equal(got, c.want) {
			t.Errorf("%q: %v; want %v", c.in, got, c.want)
		}
	}
}
