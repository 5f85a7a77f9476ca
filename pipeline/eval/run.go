package eval

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
)

// Result is one line of a results file: one system's correction of one
// post, its measures and the judge's scores.
type Result struct {
	PostID     string             `json:"post_id"`
	System     string             `json:"system"`
	Kind       string             `json:"kind"`
	Status     string             `json:"status"` // done|failed
	Error      string             `json:"error,omitempty"`
	Correction string             `json:"correction,omitempty"`
	URLs       []string           `json:"urls,omitempty"`
	Seconds    float64            `json:"seconds"`
	CostUSD    float64            `json:"cost_usd"`
	Measures   *Measures          `json:"measures,omitempty"`
	Judge      *prompts.Judgement `json:"judge,omitempty"`
	JudgeError string             `json:"judge_error,omitempty"`
	JudgeUSD   float64            `json:"judge_cost_usd,omitempty"`
	Gold       *Gold              `json:"gold,omitempty"`
	Usage      *llm.Usage         `json:"usage,omitempty"`
}

// Statuses of a result.
const (
	StatusDone   = "done"
	StatusFailed = "failed"
)

// Key names a result: post and system.
func (r Result) Key() string { return r.PostID + "\x00" + r.System }

// ReadResults reads a results file; a last line cut by a killed run is
// left out. A missing file has no results.
func ReadResults(path string) ([]Result, error) {
	f, err := os.Open(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []Result
	sc := bufio.NewScanner(f)
	sc.Buffer(make([]byte, 1<<20), 64<<20)
	for sc.Scan() {
		var r Result
		if json.Unmarshal(sc.Bytes(), &r) == nil && r.PostID != "" {
			out = append(out, r)
		}
	}
	return out, sc.Err()
}

// Latest keeps the last result of each post and system (a rerun's
// supersedes a failed one).
func Latest(rs []Result) []Result {
	idx := map[string]int{}
	var out []Result
	for _, r := range rs {
		if i, ok := idx[r.Key()]; ok {
			out[i] = r
			continue
		}
		idx[r.Key()] = len(out)
		out = append(out, r)
	}
	return out
}

// OpenResults opens a results file for appending, first ending a line a
// killed run left cut, so the next result starts on its own line.
func OpenResults(path string) (*os.File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_APPEND, 0o644)
	if err != nil {
		return nil, err
	}
	if st, err := f.Stat(); err == nil && st.Size() > 0 {
		last := make([]byte, 1)
		if _, err := f.ReadAt(last, st.Size()-1); err == nil && last[0] != '\n' {
			if _, err := f.Write([]byte("\n")); err != nil {
				f.Close()
				return nil, err
			}
		}
	}
	return f, nil
}

// Options tunes Run.
type Options struct {
	Systems []System
	// Judge, when set, scores each correction on the paper's criteria.
	Judge *Judge
	// Rater rates the cited publishers; Reader reads the cited pages now
	// (nil: links are not fetched).
	Rater  *ratings.Rater
	Reader *Reader
	// Parallel is how many corrections are made and scored at once
	// (default 2).
	Parallel int
	// SpendCapUSD caps what the whole run's model calls may cost (systems
	// and judge; zero: no cap): a call whose estimate would pass it is not
	// made, that item fails saying so, and no further item starts. Done
	// lists the keys (Result.Key) already done, skipped.
	SpendCapUSD float64
	SpentUSD    float64 // spent by the earlier runs of a resumed file
	Done        map[string]bool
	// Progress, when set, is told how the run goes: done/total, failures,
	// elapsed, ETA and spending, a line per item (TTY: one line in place).
	Progress io.Writer
	TTY      bool
}

// ErrSpendCap: the run's spend cap was reached; the items not started are
// left for a rerun with --resume.
var ErrSpendCap = errors.New("the run's spend cap was reached")

// spender is the run's spend cap as an llm.SpendGuard.
type spender struct {
	mu       sync.Mutex
	cap      float64
	spent    float64
	reserved float64
}

func (s *spender) guard(_ context.Context, c llm.Call) (func(float64), error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cap > 0 && s.spent+s.reserved+c.EstUSD > s.cap {
		return nil, &llm.SpendCapError{Scope: "eval run", CapUSD: s.cap, SpentUSD: s.spent + s.reserved, EstUSD: c.EstUSD, Task: c.Task, Setting: "--spend-cap"}
	}
	s.reserved += c.EstUSD
	est := c.EstUSD
	return func(actual float64) {
		s.mu.Lock()
		s.reserved -= est
		s.spent += actual
		s.mu.Unlock()
	}, nil
}

func (s *spender) over() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.cap > 0 && s.spent >= s.cap
}

// Run makes and scores every system's correction of every post not in
// o.Done, writing each result to out as a JSON line as soon as it is
// scored, and returns them.
func Run(ctx context.Context, posts []Post, o Options, out io.Writer) ([]Result, error) {
	type item struct {
		p   Post
		sys System
	}
	var items []item
	for _, p := range posts {
		for _, s := range o.Systems {
			if s.Kind() == KindFile {
				if _, ok := p.Corrections[s.Name()]; !ok {
					continue
				}
			}
			if o.Done[p.ID+"\x00"+s.Name()] {
				continue
			}
			items = append(items, item{p, s})
		}
	}
	sp := &spender{cap: o.SpendCapUSD, spent: o.SpentUSD}
	if o.SpendCapUSD > 0 {
		ctx = llm.WithSpendGuard(ctx, sp.guard)
	}
	par := o.Parallel
	if par <= 0 {
		par = 2
	}
	prog := &progress{w: o.Progress, tty: o.TTY, total: len(items), start: time.Now(), spent: sp}
	prog.line()
	var mu sync.Mutex
	var results []Result
	var writeErr error
	var capped atomic.Bool
	g, gctx := errgroup.WithContext(ctx)
	g.SetLimit(par)
	for _, it := range items {
		if gctx.Err() != nil {
			break
		}
		if sp.over() || capped.Load() {
			capped.Store(true)
			break
		}
		g.Go(func() error {
			r, capErr := scoreOne(gctx, it.p, it.sys, o)
			if capErr {
				capped.Store(true)
			}
			mu.Lock()
			defer mu.Unlock()
			results = append(results, r)
			if b, err := json.Marshal(r); err == nil {
				if _, err := out.Write(append(b, '\n')); err != nil && writeErr == nil {
					writeErr = err
				}
			}
			prog.finish(r)
			return nil
		})
	}
	_ = g.Wait()
	prog.end()
	switch {
	case writeErr != nil:
		return results, fmt.Errorf("write results: %w", writeErr)
	case ctx.Err() != nil:
		return results, ctx.Err()
	case capped.Load() || sp.over():
		return results, fmt.Errorf("%w ($%.2f of $%.2f)", ErrSpendCap, sp.spent, sp.cap)
	}
	return results, nil
}

// scoreOne makes one correction and scores it.
func scoreOne(ctx context.Context, p Post, sys System, o Options) (Result, bool) {
	r := Result{PostID: p.ID, System: sys.Name(), Kind: sys.Kind()}
	out, err := sys.Correct(ctx, p)
	r.Seconds = out.Seconds
	r.CostUSD = out.Usage.CostUSD
	if out.Usage.LLMCalls > 0 {
		u := out.Usage
		r.Usage = &u
	}
	if err != nil {
		r.Status, r.Error = StatusFailed, err.Error()
		return r, errors.Is(err, llm.ErrSpendCap)
	}
	r.Status, r.Correction, r.URLs = StatusDone, out.Text, out.URLs
	if out.Language == "" {
		// Asked nothing else, a correction is due in the post's language.
		if d := lang.Detect(p.Post.Text); d.Reliable {
			out.Language = d.Code
		}
	}
	m, texts := Measure(ctx, out, o.Rater, o.Reader)
	r.Measures = &m
	if p.GoldURLs != nil {
		g := MatchGold(append(append([]string{}, out.URLs...), out.Read...), p.GoldURLs)
		r.Gold = &g
	}
	if o.Judge != nil {
		pages := map[string]*Page{}
		for _, l := range m.Links {
			pages[l.URL] = l.Page
		}
		jd, u, err := o.Judge.Score(ctx, p, out.Text, out.URLs, texts, pages)
		r.JudgeUSD = u.CostUSD
		if err != nil {
			r.JudgeError = err.Error()
			return r, errors.Is(err, llm.ErrSpendCap)
		}
		r.Judge = &jd
		if r.Gold != nil && p.GoldLabel != "" {
			v, u, err := o.Judge.Verdict(ctx, p, out.Text)
			r.JudgeUSD += u.CostUSD
			if err != nil {
				r.JudgeError = "verdict: " + err.Error()
				return r, errors.Is(err, llm.ErrSpendCap)
			}
			ok := v == p.GoldLabel
			r.Gold.Verdict, r.Gold.LabelCorrect = v, &ok
		}
	}
	return r, false
}

// progress prints how a run goes.
type progress struct {
	w                  io.Writer
	tty                bool
	total, done, fails int
	start              time.Time
	spent              *spender
}

func (p *progress) line() {
	if p.w == nil {
		return
	}
	el := time.Since(p.start).Round(time.Second)
	eta := "?"
	if p.done > 0 {
		eta = (time.Duration(float64(time.Since(p.start)) / float64(p.done) * float64(p.total-p.done))).Round(time.Second).String()
	}
	p.spent.mu.Lock()
	spent := p.spent.spent
	p.spent.mu.Unlock()
	s := fmt.Sprintf("eval: %d/%d scored, %d failed, %s elapsed, ETA %s, $%.4f spent", p.done, p.total, p.fails, el, eta, spent)
	if p.tty {
		fmt.Fprintf(p.w, "\r\x1b[K%s", s)
	} else {
		fmt.Fprintln(p.w, s)
	}
}

func (p *progress) finish(r Result) {
	p.done++
	if r.Status == StatusFailed {
		p.fails++
	}
	p.spent.mu.Lock()
	if p.spent.cap == 0 {
		p.spent.spent += r.CostUSD + r.JudgeUSD
	}
	p.spent.mu.Unlock()
	p.line()
}

func (p *progress) end() {
	if p.w != nil && p.tty {
		fmt.Fprintln(p.w)
	}
}
