// Recording: Record runs a check while keeping it as a case in the store as
// it goes: the Check after every event, the correction as it streams (at
// most a second behind), every draft of the correction, and a snapshot of
// each evidence page with its extracted text and raw HTML. A process killed
// mid-run leaves a case holding everything up to the last event it
// reported, and the streamed correction up to a second before the kill.
// Without OnEvent (nobody is shown the events: muse batch, muse worker)
// what a stage does as it goes (its start, its items: hits, sources,
// quotes, usage; its warnings and progress lines) is saved in the
// background, the newest Check at each save, a save at most every
// 250 ms (saveGap), and the snapshots of the
// pages it quotes are stored beside, several at once, so that the check
// does not wait for the store between them; a stage ending (or the run)
// waits for them all, so a kill loses at most what the stage under way
// did. It is what `muse check` and `muse batch` use; the TUI keeps its
// cases itself but stores the pages through the same Snapshotter.
package cases

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// RecordStore is the part of *Store a recording writes to.
type RecordStore interface {
	Save(ctx context.Context, c *pipeline.Check) error
	SaveDraft(ctx context.Context, id, text string, edited bool) error
	SaveSnapshot(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte) error
	Audit(ctx context.Context, id, action, detail string) error
}

// RecordOptions says where a recorded run goes.
type RecordOptions struct {
	// Store keeps the case; nil runs the check without keeping it
	// (--no-save).
	Store RecordStore
	// Pages returns the bytes of a page the engine read, as served
	// (pipeline.Engine.RawPage); nil, or a page it no longer has, stores
	// the snapshot with its extracted text only.
	Pages func(u string) ([]byte, bool)
	// Headers returns the HTTP response headers of a page the engine read
	// (pipeline.Engine.PageHeader); nil stores none.
	Headers func(u string) (http.Header, bool)
	// OnEvent receives every event once it has been saved, so that what a
	// person was shown is already on disk (progress lines, say).
	OnEvent func(pipeline.Event)
	// OnSaveError is told about the first failed write of each check; the
	// check goes on, and later writes are still tried.
	OnSaveError func(error)
	// OnConflict is told when the case was saved elsewhere meanwhile (the
	// save is kept all the same: see ConflictError), once per change.
	OnConflict func(*ConflictError)
	// Then, when set, is run on the Check once the engine's run ended
	// without error, beside the run's last writes (which keep a copy of
	// the Check as the run left it): a model call that follows the check,
	// such as the support map's judgement, does not wait for them. Record
	// returns once both are done; what Then adds is the caller's to save.
	Then func(ctx context.Context, c *pipeline.Check)
}

// NotKeptError is Keep's error for a check that ran to its end but whose
// case could not be saved: the result exists only where the caller shows
// it.
type NotKeptError struct {
	ID string
	// Err is the first failed save's error.
	Err error
	// Removed is true when the half-saved case was deleted, so that no
	// case is listed that does not hold the check.
	Removed bool
}

func (e *NotKeptError) Error() string {
	msg := fmt.Sprintf("the check finished but its case could not be kept (%v)", e.Err)
	if e.Removed {
		msg += fmt.Sprintf("; the half-saved case %s is removed", e.ID)
	}
	return msg
}

func (e *NotKeptError) Unwrap() error { return e.Err }

// Keep is Record for a caller that promised to keep the case (muse check,
// muse batch, muse worker): a check whose run ended without error but one
// of whose saves failed returns a *NotKeptError, after removing the
// half-saved case when the store can delete. The run's own error comes
// first. o.OnSaveError is still told of the failed save as it happens.
func Keep(ctx context.Context, e *pipeline.Engine, c *pipeline.Check, from pipeline.Stage, o RecordOptions) error {
	var mu sync.Mutex
	var saveErr error
	told := o.OnSaveError
	o.OnSaveError = func(err error) {
		mu.Lock()
		if saveErr == nil {
			saveErr = err
		}
		mu.Unlock()
		if told != nil {
			told(err)
		}
	}
	if err := Record(ctx, e, c, from, o); err != nil {
		return err
	}
	mu.Lock()
	defer mu.Unlock()
	if saveErr == nil {
		return nil
	}
	nk := &NotKeptError{ID: c.ID, Err: saveErr}
	if d, ok := o.Store.(interface {
		Delete(ctx context.Context, id string) error
	}); ok && d.Delete(context.WithoutCancel(ctx), c.ID) == nil {
		nk.Removed = true
	}
	return nk
}

// Record runs c through e from the stage `from`, keeping it as a case under
// c.ID (a new pipeline.NewID() when empty). e must be built with
// pipeline.Options.Snapshots, or the case is only saved before and after
// the run. It returns the engine's error; a failed save never stops the
// check.
func Record(ctx context.Context, e *pipeline.Engine, c *pipeline.Check, from pipeline.Stage, o RecordOptions) error {
	if c.ID == "" {
		c.ID = pipeline.NewID()
	}
	rec := &recording{o: o, id: c.ID, now: time.Now, background: o.OnEvent == nil, gap: saveGap}
	if o.Store != nil {
		rec.snaps = &Snapshotter{Store: o.Store, Pages: o.Pages, Headers: o.Headers}
	}
	// Writes outlive a cancel: an interrupted check is kept as far as it got.
	wctx := context.WithoutCancel(ctx)
	rec.save(wctx, c.Clone())
	if o.Store != nil {
		if err := o.Store.Audit(wctx, c.ID, ActionRan, "from the "+string(from)+" stage"); err != nil {
			rec.fail(err)
		}
	}
	events := make(chan pipeline.Event)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for ev := range events {
			rec.event(wctx, ev)
			if o.OnEvent != nil {
				o.OnEvent(ev)
			}
		}
	}()
	err := e.Run(ctx, c, from, events)
	close(events)
	<-done
	var then sync.WaitGroup
	if err == nil && o.Then != nil {
		ran := c
		c = c.Clone()
		then.Go(func() { o.Then(ctx, ran) })
	}
	rec.settle()
	rec.stopStream()
	rec.save(wctx, c)
	rec.snapshots(wctx, c)
	rec.draft(wctx, c.Correction)
	then.Wait()
	return err
}

type recording struct {
	o      RecordOptions
	id     string
	mu     sync.Mutex
	failed bool
	snaps  *Snapshotter // nil when nothing is kept
	now    func() time.Time
	// background: items are saved in the background (no OnEvent).
	background bool

	// The background save: the newest Check not saved yet, whether a
	// save is under way, and idle, told when none is.
	bmu     sync.Mutex
	pending *pipeline.Check
	saving  bool
	idle    *sync.Cond
	// gap is the least time between two background saves (saveGap; 0
	// in tests that count the saves), and hurry cuts it short when the
	// stage ends.
	gap   time.Duration
	hurry chan struct{}
	// The snapshots stored in the background, and the slots that bound
	// how many are written at once.
	side  sync.WaitGroup
	slots chan struct{}
	// The last draft this recording kept (the store would skip it again).
	drafted *pipeline.Correction
	// saveMu makes the Check's saves one at a time: two at once would
	// be based on the same version, and the second would be taken for
	// someone else's edit.
	saveMu sync.Mutex

	// The streamed correction: the text so far, the last snapshot of the
	// Check it belongs to, when it was last saved and the timer that saves
	// what came after (at most streamEvery behind).
	smu       sync.Mutex
	streamed  strings.Builder
	last      *pipeline.Check
	savedAt   time.Time
	unsaved   bool
	timer     *time.Timer
	streaming bool
}

// streamEvery is how often the streamed correction is saved: a kill loses
// at most this much of it, and a save (a whole Check) is not made per token.
const streamEvery = time.Second

func (r *recording) fail(err error) {
	r.mu.Lock()
	first := !r.failed
	r.failed = true
	r.mu.Unlock()
	if first && r.o.OnSaveError != nil {
		r.o.OnSaveError(fmt.Errorf("keep case %s: %w", r.id, err))
	}
}

func (r *recording) save(ctx context.Context, c *pipeline.Check) {
	if r.o.Store == nil {
		return
	}
	r.saveMu.Lock()
	err := r.o.Store.Save(ctx, c)
	r.saveMu.Unlock()
	var conflict *ConflictError
	switch {
	case errors.As(err, &conflict):
		if r.o.OnConflict != nil {
			r.o.OnConflict(conflict)
		}
	case err != nil:
		r.fail(err)
	}
}

func (r *recording) event(ctx context.Context, ev pipeline.Event) {
	if r.o.Store == nil {
		return
	}
	if ev.Kind == pipeline.EventTokenDelta {
		r.delta(ctx, ev.Delta, ev.Text)
		return
	}
	if ev.Check != nil {
		r.smu.Lock()
		r.last = ev.Check
		_, corr := ev.Item.(pipeline.Correction)
		switch {
		case ev.Stage == pipeline.StageCorrection && ev.Kind == pipeline.EventStageStarted:
			r.streamed.Reset()
			r.streaming = true
		case corr, ev.Kind == pipeline.EventDone,
			ev.Stage == pipeline.StageCorrection && (ev.Kind == pipeline.EventStageFinished || ev.Kind == pipeline.EventStageFailed):
			r.streaming, r.unsaved = false, false // the correction as written is in the Check itself
		}
		r.smu.Unlock()
		if r.background && ev.Kind != pipeline.EventStageFinished && ev.Kind != pipeline.EventStageFailed {
			r.saveLater(ctx, ev.Check)
		} else {
			r.settle()
			r.save(ctx, r.withStream(ev.Check))
		}
	}
	if ev.Kind != pipeline.EventItem {
		return
	}
	switch it := ev.Item.(type) {
	case pipeline.Evidence:
		if ev.Check != nil {
			r.beside(func() { r.snapshot(ctx, ev.Check, it.SourceURL) })
		}
	case pipeline.Correction:
		r.draft(ctx, it)
	}
}

// saveLater saves c in the background: after the save under way, if
// any, and not at all if a newer Check comes first.
func (r *recording) saveLater(ctx context.Context, c *pipeline.Check) {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	r.pending = c
	if r.saving {
		return
	}
	r.saving = true
	go func() {
		for {
			r.bmu.Lock()
			c := r.pending
			r.pending = nil
			if c == nil {
				r.saving = false
				if r.idle != nil {
					r.idle.Broadcast()
				}
				r.bmu.Unlock()
				return
			}
			r.bmu.Unlock()
			r.save(ctx, r.withStream(c))
			r.pause()
		}
	}()
}

// saveGap is the least time between two background saves: the events
// that come meanwhile are saved together, the newest Check. A save is the
// whole Check (its JSON, tens of kilobytes, and a transaction), and a
// check's items come in bursts (a search's hits, the pages read), so
// without it a queued check made about 26 saves, the store's CPU and
// round trips shared with the checks of the other workers. The stage's
// end does not wait for it (settle), and saves its own Check, so a kill
// still loses at most what the stage under way did.
const saveGap = 250 * time.Millisecond

// pause waits r.gap after a background save, or until settle hurries it.
func (r *recording) pause() {
	if r.gap <= 0 {
		return
	}
	t := time.NewTimer(r.gap)
	defer t.Stop()
	select {
	case <-t.C:
	case <-r.hurried():
	}
}

// hurried is the channel settle wakes a pausing background save with.
func (r *recording) hurried() chan struct{} {
	r.bmu.Lock()
	defer r.bmu.Unlock()
	if r.hurry == nil {
		r.hurry = make(chan struct{}, 1)
	}
	return r.hurry
}

// sideWrites bounds the snapshots a recording stores at once.
const sideWrites = 4

// beside runs write, a store write that does not touch the case's Check
// (a page's snapshot), in the background when the items are saved so,
// at most sideWrites at once; settle waits for it. Otherwise it runs at
// once.
func (r *recording) beside(write func()) {
	if !r.background {
		write()
		return
	}
	if r.slots == nil {
		r.slots = make(chan struct{}, sideWrites)
	}
	r.side.Add(1)
	go func() {
		defer r.side.Done()
		r.slots <- struct{}{}
		defer func() { <-r.slots }()
		write()
	}()
}

// settle waits for the background writes to end, dropping the Check
// waiting to be saved: the caller saves a newer one next.
func (r *recording) settle() {
	h := r.hurried()
	r.bmu.Lock()
	r.pending = nil
	if r.idle == nil {
		r.idle = sync.NewCond(&r.bmu)
	}
	if r.saving {
		select {
		case h <- struct{}{}:
		default:
		}
	}
	for r.saving {
		r.idle.Wait()
	}
	r.bmu.Unlock()
	r.side.Wait()
}

// withStream is c with the correction streamed so far, while one streams
// (c, an event's Check, has not got it); that save holds the text.
func (r *recording) withStream(c *pipeline.Check) *pipeline.Check {
	r.smu.Lock()
	defer r.smu.Unlock()
	if !r.streaming || r.streamed.Len() == 0 {
		return c
	}
	c = c.Clone()
	c.Correction.Text = r.streamed.String()
	r.unsaved, r.savedAt = false, r.now()
	return c
}

// delta adds streamed text, saving the case with the correction so far
// when the last such save is a second old, and otherwise making sure one
// happens within the second. sofar, when the engine gives it, is the
// whole text so far with its source ids already URLs: that is what is kept.
func (r *recording) delta(ctx context.Context, text, sofar string) {
	r.smu.Lock()
	defer r.smu.Unlock()
	if sofar != "" {
		r.streamed.Reset()
		text = sofar
	}
	r.streamed.WriteString(text)
	r.unsaved = true
	if r.now().Sub(r.savedAt) >= streamEvery {
		r.flushLocked(ctx)
		return
	}
	if r.timer == nil {
		r.timer = time.AfterFunc(streamEvery-r.now().Sub(r.savedAt), func() {
			r.smu.Lock()
			defer r.smu.Unlock()
			r.timer = nil
			r.flushLocked(ctx)
		})
	}
}

// flushLocked saves the last snapshot of the Check with the correction
// streamed so far, if there is text not saved yet. r.smu is held.
func (r *recording) flushLocked(ctx context.Context) {
	if !r.unsaved || !r.streaming || r.last == nil {
		return
	}
	c := r.last.Clone()
	c.Correction.Text = r.streamed.String()
	r.unsaved, r.savedAt = false, r.now()
	r.save(ctx, c)
}

// stopStream drops a pending stream save: the run is over and the whole
// Check is saved next.
func (r *recording) stopStream() {
	r.smu.Lock()
	defer r.smu.Unlock()
	if r.timer != nil {
		r.timer.Stop()
		r.timer = nil
	}
	r.streaming = false
}

// draft keeps the model's correction (the store skips a repeat, and so,
// without asking it, does a recording of the draft it kept last).
func (r *recording) draft(ctx context.Context, corr pipeline.Correction) {
	if r.o.Store == nil || strings.TrimSpace(corr.Text) == "" {
		return
	}
	if d := r.drafted; d != nil && d.Text == corr.Text && d.Edited == corr.Edited {
		return
	}
	if err := r.o.Store.SaveDraft(ctx, r.id, corr.Text, corr.Edited); err != nil {
		r.fail(err)
		return
	}
	r.drafted = &corr
}

// snapshots stores every page the check rests on not stored yet.
func (r *recording) snapshots(ctx context.Context, c *pipeline.Check) {
	if r.snaps == nil {
		return
	}
	if err := r.snaps.Save(ctx, c); err != nil {
		r.fail(err)
	}
}

func (r *recording) snapshot(ctx context.Context, c *pipeline.Check, u string) {
	if r.snaps == nil {
		return
	}
	if err := r.snaps.SaveSource(ctx, c, u); err != nil {
		r.fail(err)
	}
}

// SnapshotStore is the part of *Store that keeps pages.
type SnapshotStore interface {
	SaveSnapshot(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte) error
}

// HeaderSnapshotStore is a SnapshotStore that keeps a page's HTTP response
// headers too (as *Store does).
type HeaderSnapshotStore interface {
	SaveSnapshotHeaders(ctx context.Context, id, pageURL, finalURL string, fetchedAt time.Time, text string, rawHTML []byte, header http.Header) error
}

// Snapshotter stores, under a check's case, the page behind each source the
// check rests on: its extracted text and, while the engine still holds it,
// the page as served. Each read of a page is stored once; a page read again
// (a rerun of the sources stage) is stored again, replacing the older
// snapshot. Safe for concurrent use.
type Snapshotter struct {
	// Store keeps the snapshots; required.
	Store SnapshotStore
	// Pages returns a page's bytes as served (pipeline.Engine.RawPage);
	// nil, or a page it no longer has, stores the extracted text only.
	Pages func(u string) ([]byte, bool)
	// Headers returns a page's HTTP response headers as received
	// (pipeline.Engine.PageHeader); nil stores none.
	Headers func(u string) (http.Header, bool)

	mu    sync.Mutex
	saved map[string]time.Time // case ID + "\x00" + URL → FetchedAt stored
}

// Save stores every page the check rests on that is not stored yet: each
// source quoted as evidence and each source marked used or boosted. It
// tries every page and returns what failed, joined.
func (s *Snapshotter) Save(ctx context.Context, c *pipeline.Check) error {
	if c == nil {
		return nil
	}
	var errs []error
	seen := map[string]bool{}
	try := func(u string) {
		if seen[u] {
			return
		}
		seen[u] = true
		if err := s.SaveSource(ctx, c, u); err != nil {
			errs = append(errs, err)
		}
	}
	for _, ev := range c.Evidence {
		try(ev.SourceURL)
	}
	for _, src := range c.Sources {
		if src.Status == pipeline.StatusUsed || src.Status == pipeline.StatusBoosted {
			try(src.URL)
		}
	}
	return errors.Join(errs...)
}

// SaveSource stores the page of the check's source at u (its URL or final
// URL) unless this read of it is stored already. A URL that is not one of
// the check's sources is skipped.
func (s *Snapshotter) SaveSource(ctx context.Context, c *pipeline.Check, u string) error {
	if s == nil || s.Store == nil || c == nil || c.ID == "" {
		return nil
	}
	src := c.SourceByURL(u)
	if src == nil {
		return nil
	}
	key := c.ID + "\x00" + src.URL
	s.mu.Lock()
	if at, ok := s.saved[key]; ok && at.Equal(src.FetchedAt) {
		s.mu.Unlock()
		return nil
	}
	if s.saved == nil {
		s.saved = map[string]time.Time{}
	}
	// Claimed before the write so that concurrent callers do not store the
	// same page twice; given back if the write fails, so a later call tries
	// again.
	s.saved[key] = src.FetchedAt
	s.mu.Unlock()
	var raw []byte
	if s.Pages != nil {
		var ok bool
		if raw, ok = s.Pages(src.URL); !ok && src.FinalURL != "" {
			raw, _ = s.Pages(src.FinalURL)
		}
	}
	var header http.Header
	if s.Headers != nil {
		var ok bool
		if header, ok = s.Headers(src.URL); !ok && src.FinalURL != "" {
			header, _ = s.Headers(src.FinalURL)
		}
	}
	text := strings.Join(src.Paragraphs, "\n\n")
	save := func() error { return s.Store.SaveSnapshot(ctx, c.ID, src.URL, src.FinalURL, src.FetchedAt, text, raw) }
	if hs, ok := s.Store.(HeaderSnapshotStore); ok {
		save = func() error {
			return hs.SaveSnapshotHeaders(ctx, c.ID, src.URL, src.FinalURL, src.FetchedAt, text, raw, header)
		}
	}
	if err := save(); err != nil {
		s.mu.Lock()
		if at, ok := s.saved[key]; ok && at.Equal(src.FetchedAt) {
			delete(s.saved, key)
		}
		s.mu.Unlock()
		return err
	}
	return nil
}
