// Package jobs is muse's job queue: River (github.com/riverqueue/river) on
// the newsroom's PostgreSQL when MUSE_DATABASE_URL names one, and on a
// SQLite file under the data directory otherwise, through the same code.
//
// A batch enqueues one job per item; a job is unique by its key (the post's
// content and the check's options), so an item is worked once however many
// workers run and however often it is enqueued, while it is queued, running
// or done. Workers take jobs until they are stopped; a transient failure is
// retried with River's backoff, a Permanent one fails the job at once, and a
// job whose worker died is given to another worker once RescueAfter has
// passed. What a job produced is kept as its output, which Results reads.
package jobs

import (
	"cmp"
	"context"
	"crypto/rand"
	"database/sql"
	"embed"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"log/slog"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/stdlib"
	"github.com/riverqueue/river"
	"github.com/riverqueue/river/riverdriver"
	"github.com/riverqueue/river/riverdriver/riverpgxv5"
	"github.com/riverqueue/river/riverdriver/riversqlite"
	"github.com/riverqueue/river/rivermigrate"
	"github.com/riverqueue/river/rivertype"

	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sqlitedb"
)

//go:embed migrations
var migrations embed.FS

// Options says where the queue lives and how jobs are retried.
type Options struct {
	// DatabaseURL is a postgres:// URL; empty means the SQLite file at Path.
	DatabaseURL string
	Path        string
	// MaxAttempts is how often a job is tried before it fails; 0 means 5.
	MaxAttempts int
	// JobTimeout bounds one attempt; 0 means 30 minutes.
	JobTimeout time.Duration
	// RescueAfter is how long a job may stay running before it is taken
	// to belong to a dead worker (one killed outright) and given to
	// another; 0 means JobTimeout plus a minute. River's rescuer, run by
	// the elected leader among the workers, looks for such jobs when a
	// worker becomes leader and every 30 seconds after. A live worker
	// never holds a job that long: JobTimeout is cut to RescueAfter when
	// longer (River requires it), so its attempt is stopped and retried.
	RescueAfter time.Duration
	// Logger receives River's own log; nil discards it.
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.MaxAttempts <= 0 {
		o.MaxAttempts = 5
	}
	if o.JobTimeout <= 0 {
		o.JobTimeout = 30 * time.Minute
	}
	if o.RescueAfter <= 0 {
		o.RescueAfter = o.JobTimeout + time.Minute
	}
	o.JobTimeout = min(o.JobTimeout, o.RescueAfter)
	if o.Logger == nil {
		o.Logger = slog.New(slog.DiscardHandler)
	}
	return o
}

// The queues a job may wait in. A job that needs no model (a post queued
// with --no-llm) waits in QueueNoLLM, so that a worker started without a
// model takes those alone and leaves the others queued for a worker that
// has one; a worker with a model works both.
const (
	QueueDefault = river.QueueDefault
	QueueNoLLM   = "no_llm"
	// QueueScheduled holds the runs of Scheduled work, one at a time.
	QueueScheduled = "scheduled"
)

// Scheduled is work the workers do every Every, such as the recheck of
// saved cases: a River periodic job, inserted by the leader the workers
// elect among themselves, so that however many workers run, a run is
// done once (a run still queued or running is not queued again). The
// first run is queued when a leader starts. Run's output is kept as
// the job's; a failed run is not retried (the next one comes).
type Scheduled struct {
	Name  string // unique among the scheduled work; the job's key
	Every time.Duration
	Run   func(ctx context.Context) (json.RawMessage, error)
}

// scheduledArgs is the River job of a run of Scheduled work.
type scheduledArgs struct {
	Name string `json:"name" river:"unique"`
}

func (scheduledArgs) Kind() string { return "muse_scheduled" }

// Item is one piece of work of a batch.
type Item struct {
	Line    int             // its place in the batch, from 1
	Key     string          // what makes it the same work as another item
	Payload json.RawMessage // what the worker needs
	// Options says how the worker is to do it (a batch's per-run
	// options); nil for none. It is not part of the key: the caller puts
	// what makes two items different work into Key.
	Options json.RawMessage
	// Queue is the queue it waits in; "" is QueueDefault.
	Queue string
}

// Job is an item as a worker receives it.
type Job struct {
	ID        int64
	Key       string
	Payload   json.RawMessage
	Options   json.RawMessage // as queued; nil for a job queued without (or before muse kept them)
	Attempt   int             // from 1
	CreatedAt time.Time       // when it was queued: with ID, what tells it from a job of another queue
}

// Handler does one job. The output is kept (also when the attempt fails,
// so a partial result is not lost); an error retries the job unless it is
// Permanent.
type Handler func(ctx context.Context, j Job) (output json.RawMessage, err error)

// Permanent marks an error that retrying cannot fix (a post that cannot be
// read, a refused input): the job fails at once with it.
func Permanent(err error) error { return river.JobCancel(err) }

// args is the River job: unique by Key alone. Options came later: a job
// queued before has none, and reads as such.
type args struct {
	Key     string          `json:"key" river:"unique"`
	Payload json.RawMessage `json:"payload"`
	Options json.RawMessage `json:"options,omitempty"`
}

func (args) Kind() string { return "muse_check" }

// Queue is an open job queue.
type Queue struct {
	o      Options
	db     *sql.DB // muse's batch tables, on either engine
	dollar bool    // placeholders are $1… (PostgreSQL) rather than ?
	r      backend
	closer func()
}

// backend is River over one driver; the two drivers differ only in their
// transaction type.
type backend interface {
	insert(ctx context.Context, a river.JobArgs, o *river.InsertOpts) (*rivertype.JobInsertResult, error)
	list(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error)
	work(ctx context.Context, cfg *river.Config, grace time.Duration) error
}

type riverBackend[TTx any] struct {
	driver riverdriver.Driver[TTx]
	client *river.Client[TTx]
}

func (b *riverBackend[TTx]) insert(ctx context.Context, a river.JobArgs, o *river.InsertOpts) (*rivertype.JobInsertResult, error) {
	return b.client.Insert(ctx, a, o)
}

func (b *riverBackend[TTx]) list(ctx context.Context, p *river.JobListParams) (*river.JobListResult, error) {
	return b.client.JobList(ctx, p)
}

// work runs a working client until ctx is done, then stops it: jobs in
// hand get grace to finish; past it they are cancelled, and so retried by
// another worker later.
func (b *riverBackend[TTx]) work(ctx context.Context, cfg *river.Config, grace time.Duration) error {
	c, err := river.NewClient(b.driver, cfg)
	if err != nil {
		return err
	}
	if err := c.Start(context.WithoutCancel(ctx)); err != nil {
		return err
	}
	<-ctx.Done()
	stopCtx, cancel := context.WithTimeout(context.Background(), grace)
	defer cancel()
	if err := c.Stop(stopCtx); err != nil {
		hard, cancelHard := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancelHard()
		return c.StopAndCancel(hard)
	}
	return nil
}

// Open opens the queue, creating its tables (River's and muse's) on first
// use.
func Open(ctx context.Context, o Options) (*Queue, error) {
	o = o.withDefaults()
	if o.DatabaseURL != "" {
		return openPostgres(ctx, o)
	}
	return openSQLite(ctx, o)
}

func openSQLite(ctx context.Context, o Options) (*Queue, error) {
	if o.Path == "" {
		return nil, errors.New("open job queue: no database URL and no file path")
	}
	// River runs several operations at once; one connection lets SQLite's
	// busy timeout order them instead of failing with SQLITE_BUSY.
	db, err := sqlitedb.Open(o.Path, sqlitedb.Options{Busy: 10 * time.Second, MaxConns: 1})
	if err != nil {
		return nil, fmt.Errorf("open job queue %s: %w", o.Path, err)
	}
	drv := riversqlite.New(db)
	if err := migrateRiver(ctx, drv); err != nil {
		db.Close()
		return nil, fmt.Errorf("open job queue %s: %w", o.Path, err)
	}
	sub, _ := fs.Sub(migrations, "migrations/sqlite")
	if err := sqlitedb.Migrate(ctx, db, "jobs", sub); err != nil {
		db.Close()
		return nil, fmt.Errorf("open job queue %s: %w", o.Path, err)
	}
	c, err := river.NewClient(drv, clientConfig(o, nil, 0))
	if err != nil {
		db.Close()
		return nil, err
	}
	return &Queue{o: o, db: db, r: &riverBackend[*sql.Tx]{driver: drv, client: c}, closer: func() { db.Close() }}, nil
}

func openPostgres(ctx context.Context, o Options) (*Queue, error) {
	pool, err := pgdb.Open(ctx, o.DatabaseURL)
	if err != nil {
		return nil, fmt.Errorf("open job queue: %w", err)
	}
	drv := riverpgxv5.New(pool)
	if err := migrateRiver(ctx, drv); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open job queue: %w", err)
	}
	sub, _ := fs.Sub(migrations, "migrations/postgres")
	if err := pgdb.Migrate(ctx, pool, "jobs", sub); err != nil {
		pool.Close()
		return nil, fmt.Errorf("open job queue: %w", err)
	}
	c, err := river.NewClient(drv, clientConfig(o, nil, 0))
	if err != nil {
		pool.Close()
		return nil, err
	}
	db := stdlib.OpenDBFromPool(pool)
	return &Queue{o: o, db: db, dollar: true, r: &riverBackend[pgx.Tx]{driver: drv, client: c},
		closer: func() { db.Close(); pool.Close() }}, nil
}

// migrateRiver applies River's own migrations.
func migrateRiver[TTx any](ctx context.Context, drv riverdriver.Driver[TTx]) error {
	m, err := rivermigrate.New(drv, &rivermigrate.Config{Logger: slog.New(slog.DiscardHandler)})
	if err != nil {
		return err
	}
	if _, err := m.Migrate(ctx, rivermigrate.DirectionUp, nil); err != nil {
		return fmt.Errorf("river migrations: %w", err)
	}
	return nil
}

// clientConfig is River's configuration; a worker (w set) takes up to n
// jobs at a time from each of queues (QueueDefault when none is given).
func clientConfig(o Options, w *river.Workers, n int, queues ...string) *river.Config {
	cfg := &river.Config{
		Logger:               o.Logger,
		MaxAttempts:          o.MaxAttempts,
		JobTimeout:           o.JobTimeout,
		RescueStuckJobsAfter: o.RescueAfter,
		FetchPollInterval:    200 * time.Millisecond,
	}
	if w != nil {
		if len(queues) == 0 {
			queues = []string{QueueDefault}
		}
		cfg.Workers = w
		cfg.Queues = map[string]river.QueueConfig{}
		for _, name := range queues {
			cfg.Queues[name] = river.QueueConfig{MaxWorkers: n}
		}
	}
	return cfg
}

// Close closes the queue's database handles.
func (q *Queue) Close() { q.closer() }

// Enqueue adds a batch of items and returns the batch's ID. An item whose
// key is already queued, running or done joins the batch as that job.
func (q *Queue) Enqueue(ctx context.Context, items []Item) (batchID string, duplicates int, err error) {
	batchID = newBatchID(time.Now())
	if _, err := q.db.ExecContext(ctx, q.sql("INSERT INTO muse_batch (batch_id, created_at, total) VALUES (?, ?, ?)"),
		batchID, q.now(), len(items)); err != nil {
		return "", 0, fmt.Errorf("enqueue: %w", err)
	}
	for _, it := range items {
		opts := &river.InsertOpts{MaxAttempts: q.o.MaxAttempts, Queue: cmp.Or(it.Queue, QueueDefault), UniqueOpts: river.UniqueOpts{ByArgs: true}}
		res, err := q.r.insert(ctx, args{Key: it.Key, Payload: it.Payload, Options: it.Options}, opts)
		if err != nil {
			return batchID, duplicates, fmt.Errorf("enqueue line %d: %w", it.Line, err)
		}
		if res.UniqueSkippedAsDuplicate {
			duplicates++
		}
		if _, err := q.db.ExecContext(ctx, q.sql("INSERT INTO muse_batch_item (batch_id, line, job_id) VALUES (?, ?, ?)"),
			batchID, it.Line, res.Job.ID); err != nil {
			return batchID, duplicates, fmt.Errorf("enqueue line %d: %w", it.Line, err)
		}
	}
	return batchID, duplicates, nil
}

// Work runs up to n jobs at a time with h, taken from queues
// (QueueDefault when none is given), until ctx is done; then it stops
// taking jobs and gives the ones in hand grace to finish (past it they are
// released, to be retried by another worker). The scheduled work, if any,
// is done besides, a run at a time.
func (q *Queue) Work(ctx context.Context, n int, grace time.Duration, queues []string, h Handler, scheduled ...Scheduled) error {
	n = max(n, 1)
	// River counts the jobs in hand per queue; the n are for all of them.
	// A job taken while n are in hand goes back to wait a second (a
	// snooze, not an attempt).
	inHand := make(chan struct{}, n)
	w := river.NewWorkers()
	river.AddWorker(w, river.WorkFunc(func(ctx context.Context, j *river.Job[args]) error {
		select {
		case inHand <- struct{}{}:
			defer func() { <-inHand }()
		default:
			return river.JobSnooze(time.Second)
		}
		out, err := h(ctx, Job{ID: j.ID, Key: j.Args.Key, Payload: j.Args.Payload, Options: j.Args.Options, Attempt: j.Attempt, CreatedAt: j.CreatedAt})
		if len(out) > 0 {
			if rerr := river.RecordOutput(ctx, out); rerr != nil && err == nil {
				err = rerr
			}
		}
		return err
	}))
	cfg := clientConfig(q.o, w, n, queues...)
	if len(scheduled) > 0 {
		byName := map[string]Scheduled{}
		for _, sc := range scheduled {
			if sc.Name == "" || sc.Every <= 0 || sc.Run == nil {
				return fmt.Errorf("scheduled work %q: a name, an interval and a function are needed", sc.Name)
			}
			byName[sc.Name] = sc
			cfg.PeriodicJobs = append(cfg.PeriodicJobs, river.NewPeriodicJob(river.PeriodicInterval(sc.Every),
				func() (river.JobArgs, *river.InsertOpts) {
					return scheduledArgs{Name: sc.Name}, &river.InsertOpts{Queue: QueueScheduled, MaxAttempts: 1,
						UniqueOpts: river.UniqueOpts{ByArgs: true, ByState: []rivertype.JobState{rivertype.JobStateAvailable,
							rivertype.JobStatePending, rivertype.JobStateRunning, rivertype.JobStateRetryable, rivertype.JobStateScheduled}}}
				}, &river.PeriodicJobOpts{ID: sc.Name, RunOnStart: true}))
		}
		river.AddWorker(w, river.WorkFunc(func(ctx context.Context, j *river.Job[scheduledArgs]) error {
			sc, ok := byName[j.Args.Name]
			if !ok {
				return river.JobCancel(fmt.Errorf("no scheduled work named %q here", j.Args.Name))
			}
			out, err := sc.Run(ctx)
			if len(out) > 0 {
				if rerr := river.RecordOutput(ctx, out); rerr != nil && err == nil {
					err = rerr
				}
			}
			return err
		}))
		cfg.Queues[QueueScheduled] = river.QueueConfig{MaxWorkers: 1}
	}
	return q.r.work(ctx, cfg, grace)
}

// States of an item, as muse reports them.
const (
	Queued  = "queued"
	Running = "running"
	Done    = "done"
	Failed  = "failed"
)

func state(s rivertype.JobState) string {
	switch s {
	case rivertype.JobStateRunning:
		return Running
	case rivertype.JobStateCompleted:
		return Done
	case rivertype.JobStateCancelled, rivertype.JobStateDiscarded:
		return Failed
	}
	return Queued // available, scheduled, retryable, pending
}

// Result is one item of a batch as it stands.
type Result struct {
	Line   int             `json:"line"`
	JobID  int64           `json:"job_id"`
	State  string          `json:"state"`
	Output json.RawMessage `json:"output,omitempty"`
	Error  string          `json:"error,omitempty"` // the last attempt's error
	Tries  int             `json:"attempts"`
	// Queued is when the job was enqueued, Started when its last attempt
	// began, Finished when it ended (nil while it has not), and Worker
	// the River client that made the last attempt ("" before any).
	Queued   time.Time  `json:"queued_at"`
	Started  *time.Time `json:"started_at,omitempty"`
	Finished *time.Time `json:"finished_at,omitempty"`
	Worker   string     `json:"worker,omitempty"`
}

// Status counts a batch's items by state.
type Status struct {
	BatchID string `json:"batch_id"`
	Total   int    `json:"total"`
	Queued  int    `json:"queued"`
	Running int    `json:"running"`
	Done    int    `json:"done"`
	Failed  int    `json:"failed"`
}

// ErrUnknownBatch is returned for a batch ID the queue never issued.
var ErrUnknownBatch = errors.New("no such batch")

// Results returns every item of the batch, in line order.
func (q *Queue) Results(ctx context.Context, batchID string) ([]Result, error) {
	var total int
	err := q.db.QueryRowContext(ctx, q.sql("SELECT total FROM muse_batch WHERE batch_id = ?"), batchID).Scan(&total)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("batch %s: %w", batchID, ErrUnknownBatch)
	} else if err != nil {
		return nil, fmt.Errorf("batch %s: %w", batchID, err)
	}
	rows, err := q.db.QueryContext(ctx, q.sql("SELECT line, job_id FROM muse_batch_item WHERE batch_id = ? ORDER BY line"), batchID)
	if err != nil {
		return nil, fmt.Errorf("batch %s: %w", batchID, err)
	}
	var out []Result
	for rows.Next() {
		var r Result
		if err := rows.Scan(&r.Line, &r.JobID); err != nil {
			rows.Close()
			return nil, err
		}
		out = append(out, r)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	jobs := map[int64]*rivertype.JobRow{}
	const page = 500
	for i := 0; i < len(out); i += page {
		var ids []int64
		for _, r := range out[i:min(i+page, len(out))] {
			ids = append(ids, r.JobID)
		}
		res, err := q.r.list(ctx, river.NewJobListParams().IDs(ids...).First(len(ids)))
		if err != nil {
			return nil, fmt.Errorf("batch %s: %w", batchID, err)
		}
		for _, j := range res.Jobs {
			jobs[j.ID] = j
		}
	}
	for i := range out {
		j, ok := jobs[out[i].JobID]
		if !ok { // removed by River's cleaner after its retention period
			out[i].State = Failed
			out[i].Error = "the job is no longer in the queue"
			continue
		}
		out[i].State, out[i].Tries = state(j.State), j.Attempt
		out[i].Queued, out[i].Started, out[i].Finished = j.CreatedAt, j.AttemptedAt, j.FinalizedAt
		if n := len(j.AttemptedBy); n > 0 {
			out[i].Worker = j.AttemptedBy[n-1]
		}
		if o := j.Output(); len(o) > 0 {
			out[i].Output = json.RawMessage(o)
		}
		if n := len(j.Errors); n > 0 {
			out[i].Error = j.Errors[n-1].Error
		}
	}
	return out, nil
}

// BatchStatus counts the batch's items by state.
func (q *Queue) BatchStatus(ctx context.Context, batchID string) (Status, error) {
	rs, err := q.Results(ctx, batchID)
	if err != nil {
		return Status{}, err
	}
	st := Status{BatchID: batchID, Total: len(rs)}
	for _, r := range rs {
		switch r.State {
		case Queued:
			st.Queued++
		case Running:
			st.Running++
		case Done:
			st.Done++
		case Failed:
			st.Failed++
		}
	}
	return st, nil
}

// sql writes the statement's ? placeholders as $1, $2… on PostgreSQL.
func (q *Queue) sql(s string) string {
	if q.dollar {
		return pgdb.Rebind(s)
	}
	return s
}

// now is the batch time as each engine stores it.
func (q *Queue) now() any {
	t := time.Now().UTC()
	if q.dollar {
		return t
	}
	return t.Format(time.RFC3339Nano)
}

// newBatchID is sortable by time and unlikely to collide: b-YYYYMMDD-HHMMSS-rand.
func newBatchID(t time.Time) string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("b-%s-%x", t.UTC().Format("20060102-150405"), b)
}
