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
	"time"

	"github.com/musecheck/muse/pipeline"
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

// Enqueue queues one job per post of in (JSON lines of Post). options names
// what else makes two checks of one post different (the model, the number
// of hits…): the same post under other options is checked again.
func Enqueue(ctx context.Context, q *jobs.Queue, in io.Reader, options string) (Enqueued, error) {
	var out Enqueued
	var items []jobs.Item
	br := bufio.NewReaderSize(in, 64<<10)
	for line := 1; ; line++ {
		raw, tooLong, err := readBatchLine(br, maxBatchLine)
		if len(raw) > 0 || tooLong {
			it, why := item(line, raw, tooLong, options)
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

// Work checks queued posts with e, n at a time, until ctx is done; then it
// finishes the checks in hand within grace, or releases them to another
// worker. run, when set, runs each check (muse keeps each as a case).
func Work(ctx context.Context, q *jobs.Queue, e *pipeline.Engine, n int, grace time.Duration,
	run func(context.Context, *pipeline.Check) error) error {
	return q.Work(ctx, n, grace, func(ctx context.Context, j jobs.Job) (json.RawMessage, error) {
		var p Post
		if err := json.Unmarshal(j.Payload, &p); err != nil {
			return nil, jobs.Permanent(fmt.Errorf("queued post: %w", err))
		}
		res, err := checkOne(ctx, e, run, 0, j.Key, p)
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
	})
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
