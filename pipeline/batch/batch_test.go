package batch

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
	"regexp"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/setup"

	"github.com/musecheck/muse/pipeline"

	"github.com/musecheck/muse/pipeline/testworld"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

func TestBatchResume(t *testing.T) {
	env := testworld.New(t, nil)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	input := strings.Join([]string{
		`{"text":"` + testworld.Post + `","author":"City Rumours","handle":"@cityrumours","posted_at":"2024-02-01T12:00:00Z","url":"https://x.com/cityrumours/status/1"}`,
		`{"text":"Springfield mayor signed an order banning bicycles on Main Street","posted_at":"2024-02-01"}`,
		`this line is not JSON`,
		``,
		`{"text":"   "}`,
	}, "\n")
	out := filepath.Join(t.TempDir(), "out.jsonl")
	runOnce := func(cost string) Stats {
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
		st, err := Run(context.Background(), e, strings.NewReader(input), f, Options{Parallel: 2, Done: done, Progress: &progress})
		if err != nil {
			t.Fatal(err)
		}
		if p := progress.String(); !strings.Contains(p, "muse: batch: ") || !strings.Contains(p, " done, ") ||
			!regexp.MustCompile(cost).MatchString(p) || !strings.Contains(p, "line 3 failed: line 3 is not a JSON post") {
			t.Errorf("progress %q", progress.String())
		}
		return st
	}
	// Tokens spent on test-model, which has no price, are not "$0.0000".
	st := runOnce(`, [1-9][0-9]* tokens so far \(no price for the model\)`)
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
		for _, c := range env.LLM.ChatCalls() {
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
	st = runOnce(`, \$0\.0000 so far`) // nothing is spent on a resume with nothing to check
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
		var r Result
		if err := json.Unmarshal([]byte(l), &r); err != nil {
			t.Fatalf("result line %q: %v", l, err)
		}
		switch r.Line {
		case 1, 2:
			// No cutoff unless --as-of-post (TestBatchAsOfPost): the post's time is kept.
			if r.Status != "done" || r.Check == nil || r.Check.Correction.Text == "" || !r.Check.Cutoff.IsZero() ||
				r.Check.Post.PostedAt.Format(time.DateOnly) != "2024-02-01" {
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

// A line over 16 MiB fails on its own, with its line number, and the lines
// around it are still checked; a line of exactly 16 MiB is read.
func TestBatchLineTooLong(t *testing.T) {
	e, err := pipeline.New(pipeline.Deps{Fetcher: noFetch{}, Extract: extract.Extract, Rater: unrated{}}, pipeline.Options{NoLLM: true})
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
	run := func(_ context.Context, c *pipeline.Check, _ pipeline.Stage) error {
		mu.Lock()
		defer mu.Unlock()
		checked = append(checked, strings.TrimSpace(c.Post.Text))
		return nil
	}
	var out bytes.Buffer
	st, err := Run(context.Background(), e, strings.NewReader(input), &out, Options{Parallel: 2, Run: run})
	if err != nil {
		t.Fatalf("Run: %v", err)
	}
	if st.Total != 5 || st.Done != 3 || st.Failed != 2 {
		t.Errorf("stats %+v; want 5 total, 3 done, 2 failed", st)
	}
	got := map[int]Result{}
	for l := range strings.Lines(out.String()) {
		var r Result
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

// TestPlainLineErrors: a bad input line is explained in words a person can
// act on, not in Go's type names.
func TestPlainLineErrors(t *testing.T) {
	for in, want := range map[string]string{
		`{"text": 5}`:                   `"text" should be a string, not a number`,
		`{"images": "a.png"}`:           `"images" should be a list, not a string`,
		`["a post"]`:                    `want a JSON object {"text": …}, not a list`,
		`{"text": "x",}`:                `invalid character '}' looking for beginning of object key string (at character 14)`,
		`{"posted_at": "next tuesday"}`: `posted_at: "next tuesday" is not a time: use YYYY-MM-DD, YYYY-MM-DD HH:MM or RFC 3339 (2020-05-01T12:00:00Z)`,
	} {
		var p Post
		err := json.Unmarshal([]byte(in), &p)
		if err == nil {
			t.Fatalf("%s: no error", in)
		}
		got := plainJSONError(err)
		if got != want || strings.Contains(got, "Go ") || strings.Contains(got, "batch.Post") {
			t.Errorf("%s: %q, want %q", in, got, want)
		}
	}
}

// TestProgressLine: on a terminal the line is redrawn in place with the
// count, failures, elapsed time, ETA and cost; elsewhere one plain line per
// post.
func TestProgressLine(t *testing.T) {
	at := time.Date(2024, 1, 1, 12, 0, 0, 0, time.UTC)
	now := func() time.Time { return at }
	var plain bytes.Buffer
	p := newProgress(&plain, false, 5, 1, now)
	at = at.Add(10 * time.Second)
	p.finished(2, false, "", llm.Usage{LLMCalls: 2, CostUSD: 0.01})
	at = at.Add(10 * time.Second)
	p.finished(3, true, "every model call failed", llm.Usage{LLMCalls: 1, CostUSD: 0.02})
	at = at.Add(10 * time.Second)
	p.finished(4, false, "", llm.Usage{LLMCalls: 3, UnreportedCalls: 3}) // a server that sends no usage
	p.close()
	want := "muse: batch: 4 posts to check (1 already done, skipped)\n" +
		"muse: 1/4 done, 0 failed, 10s elapsed, ETA 30s, $0.0100 so far\n" +
		"muse: 2/4 done, 1 failed, 20s elapsed, ETA 20s, $0.0300 so far; line 3 failed: every model call failed\n" +
		"muse: 3/4 done, 1 failed, 30s elapsed, ETA 10s, ≥$0.0300 so far\n"
	if plain.String() != want {
		t.Errorf("plain progress:\n%s\nwant:\n%s", plain.String(), want)
	}
	var tty bytes.Buffer
	p = newProgress(&tty, true, 2, 0, now)
	p.finished(1, true, "no text", llm.Usage{})
	p.finished(2, false, "", llm.Usage{LLMCalls: 2, UnreportedCalls: 2})
	p.close()
	out := tty.String()
	if strings.Count(out, "\n") != 3 || !strings.Contains(out, "\r") || !strings.Contains(out, "muse: line 1 failed: no text\n") ||
		!strings.HasSuffix(out, "2/2 done, 1 failed, 0s elapsed, cost unknown so far\n") {
		t.Errorf("terminal progress %q", out)
	}
}

// A batch line that gives a post by its URL without its text is read from
// the URL, the line's fields laid over it, as muse check does; one that
// cannot be read fails with the reason.
func TestBatchReadsPostsGivenByURL(t *testing.T) {
	env := testworld.New(t, nil)
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	u := testworld.PageURL("www.rumours.example", env.Pages["www.rumours.example"])
	input := `{"url":"` + u + `","handle":"@typed"}` + "\n" + `{"url":"http://www.gone.example/nothing"}` + "\n"
	var out bytes.Buffer
	st, err := Run(context.Background(), e, strings.NewReader(input), &out, Options{Parallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	if st.Done != 1 || st.Failed != 1 {
		t.Fatalf("stats %+v\n%s", st, out.String())
	}
	seen := 0
	for line := range strings.Lines(out.String()) {
		var r Result
		if err := json.Unmarshal([]byte(line), &r); err != nil {
			t.Fatal(err)
		}
		seen += r.Line
		switch r.Line {
		case 1:
			if r.Status != "done" || !strings.HasPrefix(r.Check.Post.Text, "Springfield BANS bicycles!") || r.Check.Post.Handle != "@typed" {
				t.Errorf("line 1: %s %q, post %+v", r.Status, r.Error, r.Check.Post)
			}
		case 2:
			if r.Status != "failed" || !strings.Contains(r.Error, "404") || r.Key == "" {
				t.Errorf("line 2: %+v", r)
			}
		}
	}
	if seen != 3 {
		t.Errorf("result lines %q, want lines 1 and 2", out.String())
	}
}
