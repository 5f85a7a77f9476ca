package batch

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"regexp"
	"slices"
	"sync"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/jobs"
	"github.com/musecheck/muse/sources/llm"
)

// A queued batch (`muse batch FILE --queue`, `muse worker`): the posts go
// into the job queue (sources/jobs, River) and any number of worker
// processes, on any machine that reaches the database, check them. A post
// is checked once however many workers run: its job is unique by the
// post's key and the check's options.

// Enqueued says what Enqueue queued.
type Enqueued struct {
	BatchID    string
	Posts      int      // lines queued
	Duplicates int      // of those, posts already queued, running or done
	Bad        []string // lines that are not a post, as "line N: why"
}

// CheckOptions are the options of `muse batch` that change how each post
// is checked (its flags --hits, --page-tokens, --no-llm, --correction-language and
// --no-save). A queued job carries the ones it was queued with, in its
// River args, and the worker checks it with them; a job queued before jobs
// carried options has none and is checked with the worker's defaults, as
// it was then.
type CheckOptions struct {
	// Hits is the first search's hits per query (0: the worker's
	// hits_per_query).
	Hits  int  `json:"hits,omitempty"`
	NoLLM bool `json:"no_llm,omitempty"`
	// CorrectionLanguage is the language to write corrections in (ISO
	// 639-1; "": the post's).
	CorrectionLanguage string `json:"correction_language,omitempty"`
	// NoSave keeps no case of the check, nor its pages' snapshots. It is
	// not part of the job's key: the check is the same.
	NoSave bool `json:"no_save,omitempty"`
	// AsOfPost puts the cutoff at the post's time (Options.AsOfPost).
	AsOfPost bool `json:"as_of_post,omitempty"`
	// PageTokens is the most tokens of each page the model reads for
	// evidence (--page-tokens; 0: the worker's evidence.page_tokens).
	PageTokens int `json:"page_tokens,omitempty"`
}

// OptionsOf are the check options o and noSave set.
func OptionsOf(o pipeline.Options, noSave bool) CheckOptions {
	return CheckOptions{Hits: o.FirstPassHits, NoLLM: o.NoLLM, CorrectionLanguage: o.CorrectionLanguage, NoSave: noSave, PageTokens: o.EvidenceTokens}
}

// Apply sets co on the engine options o (NoSave turns Snapshots off; the
// caller keeps no case).
func (co CheckOptions) Apply(o pipeline.Options) pipeline.Options {
	o.FirstPassHits, o.NoLLM, o.CorrectionLanguage = co.Hits, co.NoLLM, co.CorrectionLanguage
	if co.PageTokens > 0 {
		o.EvidenceTokens = co.PageTokens
	}
	o.Snapshots = o.Snapshots && !co.NoSave
	return o
}

// key is what co adds to a post's job key, with the model the posts are
// queued for: the same post under other options (or for another model)
// is checked again. Its form is the one jobs were keyed by before they
// carried their options, so a post queued then is not checked twice.
func (co CheckOptions) key(model string) string {
	k := fmt.Sprintf("model=%s hits=%d no-llm=%t", model, co.Hits, co.NoLLM)
	if co.CorrectionLanguage != "" {
		k += " correction-language=" + co.CorrectionLanguage
	}
	if co.AsOfPost {
		k += " as-of-post"
	}
	if co.PageTokens > 0 {
		k += fmt.Sprintf(" page-tokens=%d", co.PageTokens)
	}
	return k
}

// Enqueue queues one job per post of in (JSON lines of Post), each to be
// checked with co. model names the model the posts are queued for: with co,
// what makes two checks of one post different.
func Enqueue(ctx context.Context, q *jobs.Queue, in io.Reader, model string, co CheckOptions) (Enqueued, error) {
	var out Enqueued
	var items []jobs.Item
	options, opts := co.key(model), co.encode()
	br := bufio.NewReaderSize(in, 64<<10)
	for line := 1; ; line++ {
		raw, tooLong, err := readBatchLine(br, maxBatchLine)
		if len(raw) > 0 || tooLong {
			it, why := item(line, raw, tooLong, options)
			it.Options = opts
			if co.NoLLM {
				it.Queue = jobs.QueueNoLLM // a worker without a model can take it
			}
			if why != "" {
				out.Bad = append(out.Bad, fmt.Sprintf("line %d: %s", line, why))
			} else {
				items = append(items, it)
			}
		}
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, fmt.Errorf("read posts: %w", err)
		}
	}
	if len(items) == 0 {
		return out, errors.New("no post to queue")
	}
	id, dups, err := q.Enqueue(ctx, items)
	out.BatchID, out.Posts, out.Duplicates = id, len(items), dups
	return out, err
}

func item(line int, raw []byte, tooLong bool, options string) (jobs.Item, string) {
	if tooLong {
		return jobs.Item{}, "longer than 16 MiB"
	}
	var p Post
	if err := json.Unmarshal(raw, &p); err != nil {
		return jobs.Item{}, "not a JSON post: " + plainJSONError(err)
	}
	if p.Text == "" && p.URL == "" && len(p.Images) == 0 {
		return jobs.Item{}, "the post has no text, URL or images"
	}
	b, _ := json.Marshal(p)
	sum := sha256.Sum256([]byte(p.Key() + "\x00" + options))
	return jobs.Item{Line: line, Key: hex.EncodeToString(sum[:16]), Payload: b}, ""
}

// encode is co as a job carries it: nil for the defaults, so that a job
// without options and one queued before jobs had them read alike.
func (co CheckOptions) encode() json.RawMessage {
	if co == (CheckOptions{}) {
		return nil
	}
	b, _ := json.Marshal(co)
	return b
}

// jobOptions reads the options a job was queued with.
func jobOptions(j jobs.Job) (CheckOptions, error) {
	var co CheckOptions
	if len(j.Options) == 0 {
		return co, nil
	}
	if err := json.Unmarshal(j.Options, &co); err != nil {
		return co, fmt.Errorf("queued options: %w", err)
	}
	return co, nil
}

// Engines gives the engine a queued job is checked on for the options it
// was queued with, and the RunFunc that runs its checks (nil: e.Run,
// unkept). EnginesFor makes one.
type Engines func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, error)

// EnginesFor builds an engine with build the first time a set of options
// is asked for and keeps it for the jobs queued with the same; closeAll
// closes every engine built (with the close func build returned).
func EnginesFor(build func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, func() error, error)) (e Engines, closeAll func() error) {
	type built struct {
		e   *pipeline.Engine
		run RunFunc
	}
	var (
		mu      sync.Mutex
		have    = map[CheckOptions]built{}
		closers []func() error
	)
	e = func(ctx context.Context, co CheckOptions) (*pipeline.Engine, RunFunc, error) {
		mu.Lock()
		defer mu.Unlock()
		if b, ok := have[co]; ok {
			return b.e, b.run, nil
		}
		// The engine outlives the job that asked for it first.
		eng, run, closeFn, err := build(context.WithoutCancel(ctx), co)
		if err != nil {
			return nil, nil, err
		}
		if closeFn != nil {
			closers = append(closers, closeFn)
		}
		have[co] = built{eng, run}
		return eng, run, nil
	}
	closeAll = func() error {
		mu.Lock()
		defer mu.Unlock()
		var errs []error
		for _, c := range closers {
			errs = append(errs, c())
		}
		closers, have = nil, map[CheckOptions]built{}
		return errors.Join(errs...)
	}
	return e, closeAll
}

// WorkOptions tunes Work.
type WorkOptions struct {
	// Parallel is how many posts are checked at once (default 1).
	Parallel int
	// Grace is how long, once ctx is done, the checks in hand may take to
	// finish before they are released to another worker.
	Grace time.Duration
	// Cases, when set, is where Run keeps the cases: a job tried again (it
	// failed on a busy model, its worker was stopped or killed) resumes its
	// saved check from the first stage not finished, so the model calls
	// already made are not made again.
	Cases CaseReader
	// NoModel says the worker has no model: it takes only the posts
	// queued with --no-llm and leaves the others queued for a worker that
	// has one.
	NoModel bool
	// Scheduled is work done besides, on a schedule, each time once however
	// many workers run (RecheckCases: the recheck of saved cases).
	Scheduled []jobs.Scheduled
}

// CaseReader reads a saved case: *cases.Store.
type CaseReader interface {
	Get(ctx context.Context, id string) (*pipeline.Check, error)
}

// Work checks queued posts until ctx is done, each on the engine engines
// gives for the options it was queued with (muse keeps each check as a
// case under CaseID); then it finishes the checks in hand within o.Grace,
// or releases them to another worker.
func Work(ctx context.Context, q *jobs.Queue, engines Engines, o WorkOptions) error {
	queues := []string{jobs.QueueDefault, jobs.QueueNoLLM}
	if o.NoModel {
		queues = []string{jobs.QueueNoLLM}
	}
	return q.Work(ctx, max(o.Parallel, 1), o.Grace, queues, func(ctx context.Context, j jobs.Job) (json.RawMessage, error) {
		var p Post
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return nil, jobs.Permanent(fmt.Errorf("queued post: %w", err))
		}
		co, err := jobOptions(j)
		if err != nil {
			return nil, jobs.Permanent(err)
		}
		e, run, err := engines(ctx, co)
		if err != nil {
			return engineFailed(j, co, err)
		}
		c, from, err := resume(ctx, o.Cases, e, j, p)
		var unread *unreadPost
		var res Result
		switch {
		case errors.As(err, &unread):
			res = Result{Key: j.Key, Status: "failed", Error: err.Error()}
		case err != nil:
			return nil, err // the case store cannot be read now: tried again later
		default: // from "": every stage finished before the job could be marked done; the support map may not be judged
			res, err = checkOne(ctx, e, run, 0, j.Key, c, from)
			if err == nil && ctx.Err() != nil {
				// Stopped once the stages were done, so maybe in the support
				// map's judgement: tried again, that judgement is asked then.
				err = fmt.Errorf("stopped after the check's stages: %w", context.Cause(ctx))
				res.Status, res.Error = "failed", err.Error()
			}
		}
		out, merr := json.Marshal(res)
		if merr != nil {
			return nil, jobs.Permanent(merr)
		}
		if err == nil {
			return out, nil
		}
		if transient(ctx, err) {
			return out, err
		}
		return out, jobs.Permanent(err)
	}, o.Scheduled...)
}

// engineFailed is what a job gets when the worker has no engine for the
// options it was queued with: a result saying why, kept as the job's
// output so that `muse batch results` shows it. A post that needs a model
// reaches a worker without one only if it was queued in the no-model
// queue by hand; it fails at once (the worker's configuration will not
// change while it runs). Anything else (stores that cannot be opened now)
// is tried again later, maybe elsewhere.
func engineFailed(j jobs.Job, co CheckOptions, err error) (json.RawMessage, error) {
	if errors.Is(err, pipeline.ErrNoModel) {
		err = fmt.Errorf("the post was queued to be checked with a model (without --no-llm) and this worker has none: %w", err)
	} else {
		err = fmt.Errorf("the engine for options %+v: %w", co, err)
	}
	out, merr := json.Marshal(Result{Key: j.Key, Status: "failed", Error: err.Error()})
	if merr != nil {
		return nil, jobs.Permanent(merr)
	}
	if errors.Is(err, pipeline.ErrNoModel) {
		return out, jobs.Permanent(err)
	}
	return out, err
}

// CaseID is the case a queued job's check is kept under: the same for
// every attempt of the job, by any worker, and never the same for two jobs
// (the queue's job IDs start again in a new queue, so the time the job was
// queued and its key count too). It is a Check ID like any other
// (pipeline.IDFor), starting with the time the job was queued.
func CaseID(j jobs.Job) string {
	return pipeline.IDFor(j.CreatedAt, fmt.Appendf(nil, "%d\x00%d\x00%s", j.ID, j.CreatedAt.UnixNano(), j.Key))
}

// resume returns the job's check and the stage to run it from: its saved
// case and the first stage the case has not finished ("" when every stage
// has), or a new check from the first stage when nothing was saved (a post
// given by its URL without its text is read then; a failure to read it is an
// *unreadPost).
func resume(ctx context.Context, store CaseReader, e *pipeline.Engine, j jobs.Job, p Post) (*pipeline.Check, pipeline.Stage, error) {
	id := CaseID(j)
	if store != nil {
		saved, err := store.Get(ctx, id)
		switch {
		case errors.Is(err, cases.ErrNotFound):
		case err != nil:
			return nil, "", fmt.Errorf("resume the check of job %d: %w", j.ID, err)
		case saved.Post.URL == p.URL && (saved.Post.Text == p.Text || p.post().NeedsReading()):
			return saved, firstUnfinished(saved), nil
		default:
			// Not this post's check (its text was redacted when saved, say):
			// checked afresh, under a case of its own.
			id = pipeline.NewID()
		}
	}
	co, _ := jobOptions(j) // Work has read them already
	c, err := newCheck(ctx, e, p, co.AsOfPost)
	if err != nil {
		return nil, "", &unreadPost{err}
	}
	c.ID = id
	return c, pipeline.StageImages, nil
}

// unreadPost is a queued post given by its URL that could not be read.
type unreadPost struct{ err error }

func (u *unreadPost) Error() string { return u.err.Error() }
func (u *unreadPost) Unwrap() error { return u.err }

// firstUnfinished is the first stage of c not done or skipped: where a
// check interrupted by a kill, a stop or a failure goes on.
func firstUnfinished(c *pipeline.Check) pipeline.Stage {
	for _, st := range pipeline.Stages {
		i := slices.IndexFunc(c.Stages, func(si pipeline.StageInfo) bool { return si.Stage == st })
		if i < 0 || (c.Stages[i].State != pipeline.StateDone && c.Stages[i].State != pipeline.StateSkipped) {
			return st
		}
	}
	return ""
}

// transient reports whether a failed check may succeed when tried again:
// the model server was busy, failing or unreachable, or the worker was
// stopped. A post that cannot be read, a refused key or a spend cap is not.
func transient(ctx context.Context, err error) bool {
	if ctx.Err() != nil || errors.Is(err, context.DeadlineExceeded) {
		return true
	}
	for _, k := range []error{llm.ErrRateLimited, llm.ErrServer, llm.ErrTimeout, llm.ErrUnavailable, llm.ErrStreamCut} {
		if errors.Is(err, k) {
			return true
		}
	}
	return false
}

// IsBatchID reports whether s is a queued batch's ID (as Enqueue prints
// it) rather than a results file's name.
func IsBatchID(s string) bool { return batchIDPattern.MatchString(s) }

var batchIDPattern = regexp.MustCompile(`^b-\d{8}-\d{6}-[0-9a-f]{8}$`)
