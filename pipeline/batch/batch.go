package batch

import (
	"bufio"
	"bytes"
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

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
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

// UnmarshalJSON accepts posted_at as RFC 3339 or YYYY-MM-DD, the forms
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
	if s := strings.TrimSpace(raw.PostedAt); s != "" {
		for _, layout := range []string{time.RFC3339, time.DateOnly} {
			if t, err := time.Parse(layout, s); err == nil {
				p.PostedAt = t
				return nil
			}
		}
		return fmt.Errorf("posted_at %q: want RFC 3339 or YYYY-MM-DD", s)
	}
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
	// Progress, when set, receives one line per post finished, with the
	// batch's spending so far.
	Progress io.Writer
	// Run, when set, runs each check in place of e.Run(ctx, c, StageImages,
	// nil): `muse batch` uses it to keep every check as a case as it runs
	// (package record).
	Run func(ctx context.Context, c *pipeline.Check) error
}

// Stats says what a batch run did and what its model calls cost.
type Stats struct {
	Total, Skipped, Done, Failed int
	LLMCalls, CachedCalls        int
	CostUSD                      float64
}

// FinishedKeys reads an earlier output file and returns the keys of the
// posts it finished. A missing file is an empty set; a torn last line (a
// run killed mid-write) is ignored.
func FinishedKeys(path string) (map[string]bool, error) {
	done := map[string]bool{}
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return done, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read earlier results %s: %w", path, err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Result
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.Status == "done" && r.Key != "" {
			done[r.Key] = true
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("read earlier results %s: %w", path, err)
	}
	return done, nil
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
	var (
		mu       sync.Mutex
		st       = Stats{Total: len(jobs)}
		writeErr error
		finished int
	)
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
		if r.Check != nil {
			st.LLMCalls += r.Check.Usage.LLMCalls
			st.CachedCalls += r.Check.Usage.CachedCalls
			st.CostUSD += r.Check.Usage.CostUSD
		}
		finished++
		if opts.Progress != nil {
			why := ""
			if r.Error != "" {
				why = ": " + r.Error
			}
			fmt.Fprintf(opts.Progress, "%s %d/%d line %d %s · $%.4f so far%s\n", bar(finished+st.Skipped, st.Total),
				finished+st.Skipped, st.Total, r.Line, r.Status, st.CostUSD, why)
		}
	}
	sem := make(chan struct{}, opts.Parallel)
	var wg sync.WaitGroup
	for _, j := range jobs {
		if j.tooLong {
			write(Result{Line: j.line, Status: "failed", Error: fmt.Sprintf("line %d: longer than %d MiB", j.line, maxBatchLine>>20)})
			continue
		}
		var p Post
		if err := json.Unmarshal(j.raw, &p); err != nil {
			write(Result{Line: j.line, Status: "failed", Error: fmt.Sprintf("line %d is not a JSON post: %v", j.line, err)})
			continue
		}
		key := p.Key()
		if opts.Done[key] {
			mu.Lock()
			st.Skipped++
			mu.Unlock()
			continue
		}
		select {
		case sem <- struct{}{}:
		case <-ctx.Done():
		}
		if ctx.Err() != nil {
			break
		}
		wg.Go(func() {
			defer func() { <-sem }()
			write(checkOne(ctx, e, opts.Run, j.line, key, p))
		})
	}
	wg.Wait()
	if err := ctx.Err(); err != nil {
		return st, fmt.Errorf("batch stopped: %w", err)
	}
	return st, writeErr
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

func checkOne(ctx context.Context, e *pipeline.Engine, run func(context.Context, *pipeline.Check) error, line int, key string, p Post) Result {
	c := e.NewCheck(pipeline.Post{Text: p.Text, Author: p.Author, Handle: p.Handle, PostedAt: p.PostedAt, URL: p.URL,
		Images: p.Images}, time.Time{})
	if run == nil {
		run = func(ctx context.Context, c *pipeline.Check) error { return e.Run(ctx, c, pipeline.StageImages, nil) }
	}
	err := run(ctx, c)
	r := Result{Line: line, Key: key, Status: "done", Check: c.ForOutput()}
	if err != nil {
		r.Status, r.Error = "failed", err.Error()
		if errors.Is(err, pipeline.ErrEmptyPost) {
			r.Check = nil
		}
	}
	return r
}

// bar is a 20-character text progress bar.
func bar(n, total int) string {
	if total <= 0 {
		return "[" + strings.Repeat(" ", 20) + "]"
	}
	filled := n * 20 / total
	return "[" + strings.Repeat("#", filled) + strings.Repeat("-", 20-filled) + "]"
}
