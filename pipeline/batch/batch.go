package batch

import (
	"bufio"
	"bytes"
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/llm"
)

// Post is one line of a `muse batch` input file.
type Post struct {
	Text     string    `json:"text"`
	Author   string    `json:"author,omitempty"`
	Handle   string    `json:"handle,omitempty"`
	PostedAt time.Time `json:"posted_at,omitzero"`
	URL      string    `json:"url,omitempty"`
	Images   []string  `json:"images,omitempty"`
}

// UnmarshalJSON reads posted_at as pipeline.ParseTime does, the forms
// `muse check --posted-at` takes.
func (p *Post) UnmarshalJSON(b []byte) error {
	type plain Post
	var raw struct {
		plain
		PostedAt string `json:"posted_at"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	*p = Post(raw.plain)
	t, err := pipeline.ParseTime(raw.PostedAt)
	if err != nil {
		return fmt.Errorf("posted_at: %w", err)
	}
	p.PostedAt = t
	return nil
}

// Key identifies a post across runs, so a rerun can skip it: its URL when
// it has one, else a hash of everything given.
func (p Post) Key() string {
	if u := strings.TrimSpace(p.URL); u != "" {
		return sources.Key(u)
	}
	b, _ := json.Marshal(p)
	sum := sha256.Sum256(b)
	return "sha256:" + hex.EncodeToString(sum[:12])
}

// Result is one line of `muse batch` output: the post's line number
// and key, and either its Check or why it failed. A failed post is tried
// again on the next run; a done one is not.
type Result struct {
	Line   int             `json:"line"`
	Key    string          `json:"key"`
	Status string          `json:"status"` // done|failed
	Error  string          `json:"error,omitempty"`
	Check  *pipeline.Check `json:"check,omitempty"`
}

// Options tunes Run.
type Options struct {
	// Parallel is how many posts run at once (default 4).
	Parallel int
	// Done lists keys already finished (from an earlier output file).
	Done map[string]bool
	// Progress, when set, is told how the batch goes (stderr): a line
	// before the first post, then done/total, failures, elapsed time, ETA
	// and spending so far as each post finishes; with TTY, on one line
	// updated in place.
	Progress io.Writer
	TTY      bool
	// AsOfPost puts each check's cutoff at its post's time, the paper's
	// protocol (--as-of-post); a post whose time is not known fails,
	// saying so. Otherwise a check has no cutoff.
	AsOfPost bool
	// Run, when set, runs each check in place of e.Run(ctx, c, from, nil):
	// `muse batch` uses it to keep every check as a case under its ID as it
	// runs (cases.Record).
	Run RunFunc
}

// RunFunc runs a check from the stage from, as cases.Record does, and
// has its support map judged: each post's check has its case ID (c.ID)
// set before. From "" (a queued check whose every stage is done) it only
// has the support map judged, if it is not yet.
type RunFunc func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error

// Stats says what a batch run did and what its model calls cost.
type Stats struct {
	Total, Skipped, Done, Failed int
	// NothingFound and NotChecked count the checks that ended without
	// evidence, by their accounting (pipeline.Accounting): checked and
	// found nothing (done), or could not check (failed, ErrNoEvidence).
	NothingFound, NotChecked int
	// Verdicts counts the checks by their verdict: what they found, not
	// whether they ran.
	Verdicts              map[pipeline.Verdict]int
	LLMCalls, CachedCalls int
	CostUSD               float64
	// UnreportedCalls counts the calls whose server reported no usage:
	// their cost is unknown, not 0.
	UnreportedCalls int
}

// Usage is the run's model calls and cost.
func (st Stats) Usage() llm.Usage {
	return llm.Usage{LLMCalls: st.LLMCalls, CachedCalls: st.CachedCalls, CostUSD: st.CostUSD, UnreportedCalls: st.UnreportedCalls}
}

// Count counts a check without evidence by its accounting's conclusion.
func (st *Stats) Count(conclusion string) {
	switch conclusion {
	case pipeline.ConclusionNothingFound:
		st.NothingFound++
	case pipeline.ConclusionNotChecked:
		st.NotChecked++
	}
}

// CountCheck counts a check by its accounting's conclusion (Count) and
// by its verdict.
func (st *Stats) CountCheck(c *pipeline.Check) {
	st.Count(c.Account().Conclusion)
	st.countVerdict(c.Verdicts().Post)
}

func (st *Stats) countVerdict(v pipeline.Verdict) {
	if v == "" {
		return
	}
	if st.Verdicts == nil {
		st.Verdicts = map[pipeline.Verdict]int{}
	}
	st.Verdicts[v]++
}

// Counts says how the posts ended, the checks without evidence apart, and
// their verdicts: "5 done (1 checked and found nothing), 2 failed (1
// could not be checked); verdicts: 3 supported, 1 refuted, 1 not enough
// evidence".
func (st Stats) Counts() string {
	s := fmt.Sprintf("%d done", st.Done)
	if st.NothingFound > 0 {
		s += fmt.Sprintf(" (%d checked and found nothing)", st.NothingFound)
	}
	s += fmt.Sprintf(", %d failed", st.Failed)
	if st.NotChecked > 0 {
		s += fmt.Sprintf(" (%d could not be checked)", st.NotChecked)
	}
	var vs []string
	for _, v := range pipeline.AllVerdicts {
		if n := st.Verdicts[v]; n > 0 {
			vs = append(vs, fmt.Sprintf("%d %s", n, strings.ToLower(v.Label())))
		}
	}
	if len(vs) > 0 {
		s += "; verdicts: " + strings.Join(vs, ", ")
	}
	return s
}

// FinishedKeys reads an earlier output file and returns the keys of the
// posts it finished. A missing file is an empty set; a torn last line (a
// run killed mid-write) is ignored.
func FinishedKeys(path string) (map[string]bool, error) {
	rs, err := ReadResults(path)
	if err != nil {
		return nil, err
	}
	done := map[string]bool{}
	for _, r := range rs {
		if r.Status == "done" && r.Key != "" {
			done[r.Key] = true
		}
	}
	return done, nil
}

// Outcome is what a results file says of one post: its last result
// (a rerun appends a new one), without the Check.
type Outcome struct {
	Line       int     `json:"line"`
	Key        string  `json:"key"`
	Status     string  `json:"status"` // done|failed
	Error      string  `json:"error,omitempty"`
	Correction string  `json:"correction"`
	CostUSD    float64 `json:"cost_usd"`
	// Conclusion is the check's accounting's (pipeline.Accounting):
	// evidence, nothing_found or could_not_check.
	Conclusion string `json:"conclusion,omitempty"`
	// Verdict is the check's verdict (pipeline.Check.Verdicts), derived
	// when the results are read; "" for none (a digest, a failure).
	Verdict pipeline.Verdict `json:"verdict,omitempty"`
	// UnreportedCalls counts the model calls whose server reported no
	// usage: the cost is at least CostUSD, not CostUSD.
	UnreportedCalls int `json:"unreported_calls,omitempty"`
	usage           llm.Usage
}

// ReadResults reads an output file of Run: the last result of each post,
// in the order posts first appear. A missing file holds none; lines that
// are not results (a torn last line) are skipped.
func ReadResults(path string) ([]Outcome, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return []Outcome{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read earlier results %s: %w", path, err)
	}
	defer f.Close()
	out := []Outcome{}
	at := map[string]int{}
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Result
		if json.Unmarshal(sc.Bytes(), &r) != nil || r.Status == "" {
			continue
		}
		o := Outcome{Line: r.Line, Key: r.Key, Status: r.Status, Error: r.Error}
		if r.Check != nil {
			o.Correction, o.CostUSD = r.Check.Correction.Text, r.Check.Usage.CostUSD
			o.UnreportedCalls, o.usage = r.Check.Usage.UnreportedCalls, r.Check.Usage.Usage
			o.Conclusion = r.Check.Account().Conclusion
			o.Verdict = r.Check.Verdicts().Post
		}
		id := cmp.Or(r.Key, fmt.Sprint("line ", r.Line))
		if i, ok := at[id]; ok {
			out[i] = o
			continue
		}
		at[id] = len(out)
		out = append(out, o)
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read earlier results %s: %w", path, err)
	}
	return out, nil
}

// WriteStatus prints the counts of a results file and each failure, for
// people.
func WriteStatus(w io.Writer, rs []Outcome) error {
	var st Stats
	var u llm.Usage
	for _, r := range rs {
		if r.Status == "done" {
			st.Done++
		} else {
			st.Failed++
		}
		st.Count(r.Conclusion)
		st.countVerdict(r.Verdict)
		u.Add(r.usage)
	}
	if _, err := fmt.Fprintf(w, "%d posts: %s; %s\n", len(rs), st.Counts(), u.CostText()); err != nil {
		return err
	}
	for _, r := range rs {
		if r.Status != "done" {
			if _, err := fmt.Fprintf(w, "line %d failed: %s\n", r.Line, r.Error); err != nil {
				return err
			}
		}
	}
	return nil
}

// Run checks every post of in (JSON lines of Post), Parallel at a
// time, writing one Result line per post to out as each finishes.
// Posts in opts.Done are skipped. A bad line (not JSON, or longer than
// 16 MiB) or a failed check is a "failed" result and the rest go on;
// Run fails only when the input cannot be read, the output cannot be
// written, or ctx is cancelled.
func Run(ctx context.Context, e *pipeline.Engine, in io.Reader, out io.Writer, opts Options) (Stats, error) {
	if opts.Parallel <= 0 {
		opts.Parallel = 4
	}
	type job struct {
		line    int
		raw     []byte
		tooLong bool // raw is dropped: the line is over maxBatchLine
	}
	var jobs []job
	br := bufio.NewReaderSize(in, 1<<20)
	for n := 1; ; n++ {
		raw, tooLong, err := readBatchLine(br, maxBatchLine)
		if err != nil && !errors.Is(err, io.EOF) {
			return Stats{}, fmt.Errorf("read posts: line %d: %w", n, err)
		}
		if tooLong || len(bytes.TrimSpace(raw)) > 0 {
			jobs = append(jobs, job{n, raw, tooLong})
		}
		if err != nil {
			break
		}
	}
	// Every line is read and parsed first, so that the progress line
	// knows how many posts there are to check.
	type task struct {
		line int
		key  string
		post Post
		bad  string // why the line is not a post
	}
	var tasks []task
	skipped := 0
	for _, j := range jobs {
		t := task{line: j.line}
		switch {
		case j.tooLong:
			t.bad = fmt.Sprintf("line %d: longer than %d MiB", j.line, maxBatchLine>>20)
		default:
			if err := json.Unmarshal(j.raw, &t.post); err != nil {
				t.bad = fmt.Sprintf("line %d is not a JSON post: %s", j.line, plainJSONError(err))
			} else if t.key = t.post.Key(); opts.Done[t.key] {
				skipped++
				continue
			}
		}
		tasks = append(tasks, t)
	}
	var (
		mu       sync.Mutex
		st       = Stats{Total: len(jobs), Skipped: skipped}
		writeErr error
		prog     *progressPrinter
	)
	if opts.Progress != nil {
		prog = newProgress(opts.Progress, opts.TTY, st.Total, skipped, time.Now)
		defer prog.close()
	}
	write := func(r Result) {
		b, err := json.Marshal(r)
		mu.Lock()
		defer mu.Unlock()
		if err == nil {
			_, err = out.Write(append(b, '\n'))
		}
		if err != nil && writeErr == nil {
			writeErr = fmt.Errorf("write result of line %d: %w", r.Line, err)
		}
		if r.Status == "done" {
			st.Done++
		} else {
			st.Failed++
		}
		var u llm.Usage
		if r.Check != nil {
			st.CountCheck(r.Check)
			u = r.Check.Usage.Usage
			st.LLMCalls += u.LLMCalls
			st.CachedCalls += u.CachedCalls
			st.CostUSD += u.CostUSD
			st.UnreportedCalls += u.UnreportedCalls
		}
		if prog != nil {
			prog.finished(r.Line, r.Status != "done", r.Error, u)
		}
	}
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(opts.Parallel)
	for _, t := range tasks {
		if t.bad != "" {
			write(Result{Line: t.line, Status: "failed", Error: t.bad})
			continue
		}
		if gctx.Err() != nil {
			break
		}
		g.Go(func() error {
			c, err := newCheck(ctx, e, t.post, opts.AsOfPost)
			if err != nil {
				write(Result{Line: t.line, Key: t.key, Status: "failed", Error: err.Error()})
				return nil
			}
			r, _ := checkOne(ctx, e, opts.Run, t.line, t.key, c, pipeline.StageImages)
			write(r)
			return nil
		})
	}
	g.Wait()
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("batch stopped: %w", err)
	}
	return st, writeErr
}

// plainJSONError says what is wrong with a line in words rather than Go
// types: which field has the wrong kind of value, or where the JSON breaks.
func plainJSONError(err error) string {
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	switch {
	case errors.As(err, &se):
		return fmt.Sprintf("%s (at character %d)", strings.TrimPrefix(se.Error(), "json: "), se.Offset)
	case errors.As(err, &te) && te.Field != "":
		field := te.Field[strings.LastIndex(te.Field, ".")+1:] // "plain.text": the decoder's path through embedded types
		return fmt.Sprintf("%q should be %s, not %s", field, jsonKind(te.Type.Kind().String()), article(te.Value))
	case errors.As(err, &te):
		return fmt.Sprintf("want a JSON object {\"text\": …}, not %s", article(te.Value))
	}
	return strings.TrimPrefix(err.Error(), "json: ")
}

// jsonKind names a Go kind as JSON does.
func jsonKind(k string) string {
	switch k {
	case "string":
		return "a string"
	case "slice", "array":
		return "a list"
	case "struct", "map":
		return "an object"
	case "bool":
		return "true or false"
	}
	return "a number"
}

func article(v string) string {
	if v == "array" {
		return "a list"
	}
	if v == "object" {
		return "an object"
	}
	return "a " + v
}

// maxBatchLine is the longest input line Run reads: a post, with its
// image URLs, is far smaller, so a longer line is a mistake (a binary file,
// a missing newline) and fails alone rather than being held in memory.
const maxBatchLine = 16 << 20

// readBatchLine reads one line without its "\n" or "\r\n", as
// bufio.ScanLines splits them. A line longer than max is read to its end
// but not kept, and tooLong is set. err is io.EOF after the last line (with
// that line's bytes, if it had no newline).
func readBatchLine(br *bufio.Reader, max int) (line []byte, tooLong bool, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		if !tooLong {
			if len(line)+len(chunk) > max+2 { // room for a "\r\n" not yet trimmed
				tooLong, line = true, nil
			} else {
				line = append(line, chunk...)
			}
		}
		if errors.Is(err, bufio.ErrBufferFull) {
			continue
		}
		line = bytes.TrimSuffix(line, []byte("\n"))
		line = bytes.TrimSuffix(line, []byte("\r"))
		if !tooLong && len(line) > max {
			tooLong, line = true, nil
		}
		if err == nil && tooLong {
			return nil, true, nil
		}
		if errors.Is(err, io.EOF) && len(line) == 0 && !tooLong {
			return nil, false, io.EOF
		}
		return line, tooLong, err
	}
}

// post is the batch line's post as the engine takes it.
func (p Post) post() pipeline.Post {
	return pipeline.Post{Text: p.Text, Author: p.Author, Handle: p.Handle, PostedAt: p.PostedAt, URL: p.URL, Images: p.Images}
}

// newCheck is the check of a post, not yet run: a post given by its URL
// alone is read from there first, the line's other fields laid over it
// (Engine.ReadPost, as muse check does). Its cutoff is none, or with
// asOfPost the post's time (pipeline.AsOfPost).
func newCheck(ctx context.Context, e *pipeline.Engine, p Post, asOfPost bool) (*pipeline.Check, error) {
	post, err := e.ReadPost(ctx, p.post())
	if err != nil {
		return nil, err
	}
	var cutoff time.Time
	if asOfPost {
		if cutoff, err = pipeline.AsOfPost(post); err != nil {
			return nil, fmt.Errorf("as of the post: %w (posted_at)", err)
		}
	}
	return e.NewCheck(post, cutoff), nil
}

// judgeSupport judges the support map of a finished check's correction in
// one model call, as muse check does. A failure is not the post's: its
// sentences stay "not judged", which the output says.
func judgeSupport(ctx context.Context, e *pipeline.Engine, c *pipeline.Check) bool {
	if strings.TrimSpace(c.Correction.Text) == "" {
		return false
	}
	before := len(c.SupportJudgements)
	_ = e.JudgeSupport(ctx, c)
	return len(c.SupportJudgements) != before
}

// checkOne runs a post's check c from the stage from, returning its result
// line and the check's error (which the result only names), so a queue can
// tell a transient failure from a permanent one.
func checkOne(ctx context.Context, e *pipeline.Engine, run RunFunc, line int, key string, c *pipeline.Check, from pipeline.Stage) (Result, error) {
	if run == nil {
		run = func(ctx context.Context, c *pipeline.Check, from pipeline.Stage) error {
			if from != "" { // "": every stage is done
				if err := e.Run(ctx, c, from, nil); err != nil {
					return err
				}
			}
			judgeSupport(ctx, e, c)
			return nil
		}
	}
	err := run(ctx, c, from)
	r := Result{Line: line, Key: key, Status: "done", Check: c.ForOutput()}
	if err != nil {
		r.Status, r.Error = "failed", err.Error()
		if errors.Is(err, pipeline.ErrEmptyPost) {
			r.Check = nil
		}
	}
	return r, err
}
