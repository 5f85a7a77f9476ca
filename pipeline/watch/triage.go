// Package watch is `muse watch`: posts from live feeds (sources/feeds)
// triaged cheap first — language, near-duplicate clusters, a match
// against imported fact-checks — then scored for check-worthiness by the
// model in batches, and the worthy ones queued as jobs for `muse worker`
// by a rule (a threshold, a per-hour budget, the day's spend cap). Nothing
// is published or submitted: a queued post is checked like any other, and
// the checker sees the result in the cases.
package watch

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/errgroup"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/posts"
)

// Matcher finds the imported fact-checks a text repeats: the engine
// (pipeline.Engine.MatchFactChecks). posted is the post's time when known:
// only fact-checks out by then are repeats.
type Matcher interface {
	MatchFactChecks(ctx context.Context, text, lang string, posted time.Time) ([]pipeline.FactCheck, error)
}

// Scorer scores many posts' check-worthiness in one call: the engine
// (pipeline.Engine.Worthiness).
type Scorer interface {
	Worthiness(ctx context.Context, texts []string) ([]prompts.WorthinessScore, pipeline.CallUsage, error)
}

// Rule says which scored posts are queued for the workers.
type Rule struct {
	// Threshold is the least score queued: 0 queues every post scored
	// (`muse watch --threshold 0`); `muse watch` gives DefaultThreshold
	// unless told otherwise.
	Threshold float64
	// PerHour is the most posts queued in any hour (0: DefaultPerHour);
	// the rest are held.
	PerHour int
	// SpendCapUSD, with Spent, holds every post once the day's spend
	// (the spend ledger's) has reached it: their checks could not run.
	SpendCapUSD float64
	Spent       func(ctx context.Context) (float64, error)
}

// DefaultRetain is how long a cluster no post has joined and no one acted
// on is kept.
const DefaultRetain = 7 * 24 * time.Hour

// The rule's defaults.
const (
	DefaultThreshold = 0.7
	DefaultPerHour   = 30
)

// Options set up a Triage.
type Options struct {
	Store   *Store
	Matcher Matcher // nil: no fact-check is matched
	// Scorer scores check-worthiness; nil leaves every post unscored,
	// with NoScore as the reason ("no model configured").
	Scorer  Scorer
	NoScore string
	Rule    Rule
	// Enqueue queues posts as jobs for the workers and returns the batch's
	// ID; nil queues nothing (the checker opens posts by hand).
	Enqueue func(ctx context.Context, cs []Cluster) (string, error)
	// Read reads a post given by its URL alone (a URL list); nil skips
	// such posts.
	Read func(ctx context.Context, url string) (*posts.Post, error)
	// BatchSize is how many posts one scoring call takes (0: 20); a
	// batch not full is scored after BatchWait (0: 10 s).
	BatchSize int
	BatchWait time.Duration
	// Capacity is how many recent clusters near-duplicates are looked
	// for among (0: 100,000): memory stays flat over a long watch.
	Capacity int
	// Retain is how long a cluster no post has joined is kept when no one
	// acted on it (new or dismissed) and none of its posts was delivered
	// again, with its posts (0: DefaultRetain; negative: for ever): the
	// store stays bounded over a long watch. A post of a forgotten cluster
	// delivered again counts as new; a post its feed keeps offering (X's
	// eligible posts, polled again and again) is never forgotten.
	Retain time.Duration
	// Limit stops the watch once this many posts were newly kept (0:
	// never); Watch then returns nil.
	Limit int
	// Changed is told of each cluster that is new, grew, was scored or
	// queued (from several goroutines; it must not block).
	Changed func(Cluster)
	// Warn is told what went wrong without stopping the watch.
	Warn func(string)
}

// Triage is a running triage.
type Triage struct {
	o       Options
	mu      sync.Mutex // the index, and the order of posts into the store
	ix      *index
	pending chan Cluster // to the scorer, while Watch runs
	// The posts are written in batches: one transaction for up to
	// commitEvery posts or commitAfter, whichever comes first (a feed
	// resumes from the cursor committed, so a crash loses nothing).
	b     *postTx
	fresh []Cluster // new clusters of the open transaction, scored once it commits
	grown map[int64]bool
	kept  int    // posts newly kept by this Watch
	stop  func() // stops this Watch's feeds (Options.Limit)
}

// New sets up a triage on o.Store: the recent clusters are indexed again
// and those read but not scored before a stop are scored first.
func New(ctx context.Context, o Options) (*Triage, error) {
	if o.Store == nil {
		return nil, errors.New("watch: no store")
	}
	if o.BatchSize <= 0 {
		o.BatchSize = 20
	}
	if o.BatchWait <= 0 {
		o.BatchWait = 10 * time.Second
	}
	if o.Capacity <= 0 {
		o.Capacity = 100_000
	}
	if o.Retain == 0 {
		o.Retain = DefaultRetain
	}
	if !(o.Rule.Threshold >= 0 && o.Rule.Threshold <= 1) {
		return nil, fmt.Errorf("watch: threshold %v: a score from 0 to 1", o.Rule.Threshold)
	}
	if o.Rule.PerHour <= 0 {
		o.Rule.PerHour = DefaultPerHour
	}
	if o.NoScore == "" {
		o.NoScore = "not scored: no model configured"
	}
	t := &Triage{o: o, ix: newIndex(o.Capacity)}
	if _, err := o.Store.Recent(ctx, 1); err != nil {
		return nil, err
	}
	t.rebuild(ctx)
	return t, nil
}

func (t *Triage) warn(format string, a ...any) {
	if t.o.Warn != nil {
		t.o.Warn(fmt.Sprintf(format, a...))
	}
}

func (t *Triage) changed(c Cluster) {
	if t.o.Changed != nil {
		t.o.Changed(c)
	}
}

// Watch reads every feed from its stored cursor and triages what comes,
// until ctx is done or every feed has ended (a URL list ends; a stream
// does not): then the posts waiting for a score are scored and Watch
// returns. A feed that fails for good stops the watch with its error.
func (t *Triage) Watch(ctx context.Context, fs ...feeds.Feed) error {
	unscored, err := t.o.Store.unscored(ctx, t.o.Scorer != nil)
	if err != nil {
		return err
	}
	scoreCtx, stopScoring := context.WithCancel(context.WithoutCancel(ctx))
	defer stopScoring()
	pending := make(chan Cluster, 4*t.o.BatchSize)
	t.mu.Lock()
	if t.pending != nil {
		t.mu.Unlock()
		return errors.New("watch: already watching")
	}
	t.pending = pending
	t.mu.Unlock()
	scored := make(chan struct{})
	go func() {
		defer close(scored)
		t.scoreLoop(scoreCtx, ctx, pending, unscored)
	}()
	fctx, stopFeeds := context.WithCancel(ctx)
	defer stopFeeds()
	t.mu.Lock()
	t.kept, t.stop = 0, stopFeeds
	t.mu.Unlock()
	g, gctx := errgroup.WithContext(fctx)
	flushDone := make(chan struct{})
	go func() {
		// A quiet feed's last posts are committed too, and the old
		// clusters forgotten now and then.
		tick := time.NewTicker(commitAfter)
		defer tick.Stop()
		var pruned time.Time
		for {
			select {
			case <-flushDone:
				return
			case <-tick.C:
				if err := t.Flush(gctx); err != nil && gctx.Err() == nil {
					t.warn("%v", err)
				}
				if t.o.Retain > 0 && time.Since(pruned) >= pruneEvery(t.o.Retain) {
					pruned = time.Now()
					if err := t.prune(gctx); err != nil && gctx.Err() == nil {
						t.warn("%v", err)
					}
				}
			}
		}
	}()
	for _, f := range fs {
		if w, ok := f.(feeds.Warner); ok {
			name := f.Name()
			w.SetWarn(func(s string) { t.warn("%s: %s", name, s) })
		}
		g.Go(func() error {
			cursor, err := t.o.Store.Cursor(gctx, f.Name())
			if err != nil {
				return err
			}
			err = f.Run(gctx, cursor, func(p feeds.Post) error {
				_, err := t.Handle(gctx, f.Name(), p)
				return err
			})
			if err != nil && gctx.Err() == nil {
				return fmt.Errorf("%s: %w", f.Name(), err)
			}
			return nil
		})
	}
	err = g.Wait()
	close(flushDone)
	t.mu.Lock()
	if cerr := t.commit(context.WithoutCancel(ctx)); cerr != nil && err == nil {
		err = cerr
	}
	t.pending, t.stop = nil, nil
	limited := t.o.Limit > 0 && t.kept >= t.o.Limit
	t.mu.Unlock()
	close(pending) // the feeds are done: score what is left, then stop
	<-scored
	if err == nil && !limited {
		err = ctx.Err()
	}
	return err
}

// Handle triages one post p of the feed named feed, before the model: it
// is recorded with its cursor, in the cluster of its near-duplicates or a
// new one (language detected, matched against the fact-checks); a new
// cluster waits for its score. A post recorded before only moves the
// cursor and is marked seen again (it and its cluster are remembered
// while its feed keeps offering it). The cluster comes back (zero when
// nothing was recorded).
func (t *Triage) Handle(ctx context.Context, feed string, p feeds.Post) (Cluster, error) {
	if err := ctx.Err(); err != nil {
		return Cluster{}, err
	}
	if p.Post == nil || p.ID == "" {
		return Cluster{}, t.setCursor(ctx, feed, p.Cursor)
	}
	post := p.Post
	if strings.TrimSpace(post.Text) == "" && len(post.Images) == 0 && post.URL != "" {
		if t.o.Read == nil {
			return Cluster{}, t.setCursor(ctx, feed, p.Cursor)
		}
		read, err := t.o.Read(ctx, post.URL)
		if err != nil {
			if ctx.Err() != nil {
				return Cluster{}, ctx.Err()
			}
			t.warn("read %s: %v (skipped)", post.URL, err)
			return Cluster{}, t.setCursor(ctx, feed, p.Cursor)
		}
		post = read
	}
	text := post.Text
	sk := sketchOf(text)
	t.mu.Lock()
	defer t.mu.Unlock()
	cluster, found := t.ix.find(sk, p.ImageKeys)
	var nc *newCluster
	if !found {
		nc = &newCluster{sketch: sk, post: post, imageKeys: p.ImageKeys, lang: postLang(text, p.Langs)}
		if t.o.Matcher != nil && sk.ok {
			fcs, err := t.o.Matcher.MatchFactChecks(ctx, matchText(post), nc.lang, post.PostedAt)
			if err != nil {
				if ctx.Err() != nil {
					return Cluster{}, ctx.Err()
				}
				t.warn("match %s against the fact-checks: %v", p.ID, err)
			}
			nc.factChecks = fcs
		}
	}
	if t.b == nil {
		b, err := t.o.Store.begin(ctx)
		if err != nil {
			return Cluster{}, err
		}
		t.b = b
	}
	// A stop between two statements must not leave half a post: the
	// statements run to the end whatever ctx says.
	id, size, fresh, err := t.o.Store.add(context.WithoutCancel(ctx), t.b, feed, p.ID, cluster, nc, time.Now())
	if err != nil {
		t.rollback()
		return Cluster{}, err
	}
	t.b.setCursor(feed, p.Cursor)
	t.b.posts++
	var c Cluster
	switch {
	case !fresh:
	case !found:
		t.ix.add(id, sk, p.ImageKeys)
		now := time.Now().UTC()
		c = Cluster{ID: id, PostID: p.ID, Post: *post, Lang: nc.lang, Size: 1, First: now, Last: now, FactChecks: nc.factChecks, State: StateNew}
		t.fresh = append(t.fresh, c)
	default:
		t.ix.addImages(id, p.ImageKeys)
		c = Cluster{ID: id, Size: size}
		if t.grown == nil {
			t.grown = map[int64]bool{}
		}
		t.grown[id] = true
	}
	if fresh {
		if t.kept++; t.o.Limit > 0 && t.kept >= t.o.Limit && t.stop != nil {
			t.stop()
		}
	}
	if t.b.posts >= commitEvery || time.Since(t.b.start) >= commitAfter {
		if err := t.commit(ctx); err != nil {
			return Cluster{}, err
		}
	}
	return c, nil
}

// How posts are grouped into transactions.
const (
	commitEvery = 256
	commitAfter = 250 * time.Millisecond
)

// commit ends the open transaction, then sends its new clusters to be
// scored and tells Changed of them. t.mu is held.
func (t *Triage) commit(ctx context.Context) error {
	if t.b == nil {
		return nil
	}
	err := t.b.commit(context.WithoutCancel(ctx))
	t.b = nil
	fresh := t.fresh
	t.fresh = nil
	if err != nil {
		t.grown = nil
		t.rebuild(ctx)
		return err
	}
	for _, c := range fresh {
		t.changed(c)
		if t.pending != nil {
			select {
			case t.pending <- c:
			case <-ctx.Done():
				// read and kept: scored on the next start
			}
		}
	}
	grown := t.grown
	t.grown = nil
	if t.o.Changed != nil {
		for id := range grown {
			if c, err := t.o.Store.Cluster(ctx, id); err == nil {
				t.changed(c) // as stored now
			}
		}
	}
	return nil
}

// rollback drops the open transaction and what the index learnt from it.
func (t *Triage) rollback() {
	if t.b != nil {
		t.b.rollback()
		t.b, t.fresh, t.grown = nil, nil, nil
		t.rebuild(context.Background())
	}
}

// rebuild indexes the stored clusters again.
func (t *Triage) rebuild(ctx context.Context) {
	t.ix = newIndex(t.o.Capacity)
	recent, err := t.o.Store.Recent(ctx, t.o.Capacity/2)
	if err != nil {
		t.warn("index the clusters again: %v", err)
		return
	}
	for i := len(recent) - 1; i >= 0; i-- {
		c := recent[i]
		t.ix.add(c.ID, c.sketch, c.imageKeys)
	}
}

// pruneEvery is how often the clusters older than retain are looked for:
// a tenth of it, from a minute to an hour.
func pruneEvery(retain time.Duration) time.Duration {
	return min(max(retain/10, time.Minute), time.Hour)
}

// pruneBatch is how many clusters one transaction forgets: the feed waits
// for it, not for the whole of what is forgotten.
const pruneBatch = 500

// prune forgets the clusters older than Options.Retain that no one acted
// on, in the store and in the index, then the IDs of the posts seen
// before then (a cluster that posts keep joining keeps its count, not
// every post's ID).
func (t *Triage) prune(ctx context.Context) error {
	before := time.Now().Add(-t.o.Retain)
	for ctx.Err() == nil {
		t.mu.Lock()
		err := t.commit(ctx)
		var gone []forgotten
		if err == nil {
			gone, err = t.o.Store.prune(ctx, before, pruneBatch)
		}
		for _, f := range gone {
			t.ix.remove(f.id, f.sketch, f.imageKeys)
		}
		t.mu.Unlock()
		if err != nil {
			return err
		}
		if len(gone) < pruneBatch {
			break
		}
	}
	for ctx.Err() == nil {
		n, err := t.o.Store.prunePosts(ctx, before, 4*pruneBatch)
		if err != nil || n < 4*pruneBatch {
			return err
		}
	}
	return ctx.Err()
}

// Flush commits the posts triaged so far.
func (t *Triage) Flush(ctx context.Context) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	return t.commit(ctx)
}

// setCursor moves feed's cursor, in the open transaction when there is
// one (the posts before it are kept with it).
func (t *Triage) setCursor(ctx context.Context, feed, cursor string) error {
	t.mu.Lock()
	defer t.mu.Unlock()
	if t.b != nil {
		t.b.setCursor(feed, cursor)
		return nil
	}
	return t.o.Store.SetCursor(ctx, feed, cursor)
}

// postLang is the post's language: detected from its text when the
// detector is sure of it, else the one its author declared, else unknown
// (""). A short post's unsure guess is often another language altogether
// (an English tweet read as Norwegian or Czech), which the list would
// state as fact.
func postLang(text string, declared []string) string {
	d := lang.Detect(text)
	if d.Code != "" && d.Reliable {
		return d.Code
	}
	for _, l := range declared {
		if c := lang.Normalise(l); c != "" {
			return c
		}
	}
	return ""
}

// matchText is what is matched against the fact-checks: the post's text
// and the card of the page it shares.
func matchText(p *posts.Post) string {
	s := p.Text
	if c := p.Card; c != nil {
		s += "\n" + c.Title + "\n" + c.Description
	}
	for _, im := range p.Images {
		if im.Alt != "" {
			s += "\n" + im.Alt
		}
	}
	return s
}
