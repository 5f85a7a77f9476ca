package pipeline

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/lookalike"
	"github.com/musecheck/muse/sources/posts"
)

// Options tunes the engine. The zero value means the defaults below, which
// follow the paper where it says something and are documented where it
// does not.
type Options struct {
	// CorrectionLanguage is the language corrections are written in (ISO
	// 639-1), when the checker wants another than the post's.
	CorrectionLanguage string
	// NoLLM runs the extractive mode: queries from the post's key phrases,
	// evidence = the page paragraphs most related to the post, and a digest
	// of sources instead of a verdict. No model is called.
	NoLLM bool
	// FirstPassHits is how many hits each provider returns per query in the
	// first search (default 5); SecondPassHits in the wider second pass run
	// when no page refutes the post (default 10, as in the paper).
	FirstPassHits  int
	SecondPassHits int
	// MinCredibleHits: when the first search's open queries find fewer
	// hits from high- or medium-tier publishers, their second result page
	// is asked for (default 3; negative: never).
	MinCredibleHits int
	// OpenSearchOnly sends only the open queries, not also the ones
	// restricted to credible publishers' sites.
	OpenSearchOnly bool
	// MaxPages caps the pages read per search pass (default 30).
	MaxPages int
	// FetchParallel bounds concurrent page fetches (default 8).
	FetchParallel int
	// EvidenceParallel bounds the pages being read for evidence at once
	// (default 24: three calls of EvidenceBatch pages in flight), so 200
	// candidates that refute nothing take 9 model round trips rather than
	// 25; each answer is weighed before its slot frees, so once the best
	// pages have refuted the post no further page is sent.
	EvidenceParallel int
	// EvidenceBatch is the most pages sent in one evidence call (default 8,
	// at most 10): the post, the instructions and the system message then
	// go once per call rather than once per page.
	EvidenceBatch int
	// EvidenceTokens is the most page text sent per page, in the model's
	// tokens (o200k, the same share in every script; default
	// DefaultPageTokens, the paper's 20,000 characters; the setting
	// evidence.page_tokens): a page under it is sent whole, a longer one
	// cut to its passages most related to the post (sent.go). The spend
	// cap and the model's context window may lower it, and a page cut says
	// so (Source.Sent).
	EvidenceTokens int
	// MinWords: shorter pages are kept out as too short (default 100, the
	// paper's), counted in lang.Words: UAX #29 words, and in a script
	// written without spaces two characters a word.
	MinWords int
	// LexicalThreshold is the lowest Relevance (the share of the post's or
	// a query's key words on the page) a page may have (default 0.10:
	// below the 0.11 chosen on half of the real pairs to keep 98% of the
	// pages about the post; see TestRelevanceOnRealPairs).
	// EmbeddingThreshold is the lowest cosine similarity between the post
	// and a page's title and opening (first 2,000 characters) when an
	// Embedder is configured, for a page also under LexicalThreshold
	// (default 0.30: normalised sentence embeddings
	// such as OpenAI's text-embedding-3 put texts on the same event well
	// above it and unrelated news below it; the paper's 90/95 are raw dot
	// products of another model and do not carry over).
	LexicalThreshold   float64
	EmbeddingThreshold float64
	// RefutingPages: evidence stops once this many independent pages agree
	// on each claim of the post, confirming or refuting it, none
	// disagreeing (default 2).
	RefutingPages int
	// DigestPages is how many pages the --no-llm digest quotes (default 5).
	DigestPages int
	// DigestThreshold is the lowest share of the post's key words (or of a
	// query the checker wrote) a page must have to be quoted in the --no-llm
	// digest, where no model judges what the gate lets through (default
	// 0.23: the lowest keeping false passes at or under 10% on half of the
	// real pairs; see TestDigestGateOnRealPairs).
	DigestThreshold float64
	// Now is the clock; nil means time.Now.
	Now func() time.Time
	// SpendCapCheckUSD caps what the model calls of one check may cost
	// (what an earlier run of the same Check spent counts); zero: no cap.
	// A call whose estimated cost (llm.Client.Estimate) would pass it is
	// not made, and the stage that needed it fails with an error wrapping
	// llm.ErrSpendCap ("spend cap of $X per check reached: …"); what was
	// found so far is kept. It applies to models from sources/llm.
	SpendCapCheckUSD float64
	// Snapshots makes every event but token deltas carry a deep copy of
	// the Check (Event.Check), so that a caller can save the case as it
	// runs without racing the engine.
	Snapshots bool
	// ImageParallel bounds how many post images are loaded, read and
	// described at once, and how many pages' lead images are loaded at once
	// for visual relevance (default 4).
	ImageParallel int
	// Video bounds what is read of a post's video and says where its
	// files are written (muse's cache directory).
	Video VideoOptions
	// Posts configures reading a post by URL (PostFromURL): platform API
	// roots, the HTTP client, private addresses. Web pages are always read
	// with the engine's fetcher. NewFromConfig sets AllowPrivate from the
	// configuration.
	Posts posts.Options

	// Used by NewFromConfig only:
	// PageProxy, when set, fetches every page through this HTTP proxy
	// instead of the one HTTP_PROXY/HTTPS_PROXY name.
	PageProxy *url.URL
	// LLMTimeout bounds one model call attempt; LLMRetryDelay is the first
	// retry backoff (zero: sources/llm's defaults).
	LLMTimeout    time.Duration
	LLMRetryDelay time.Duration
	// LLMDeadline bounds a whole model call, retries and stream included
	// (zero: 120 s); LLMMaxAnswerBytes caps one answer (zero: 64 KiB).
	// Past either the call ends with a clear error and keeps what came.
	LLMDeadline       time.Duration
	LLMMaxAnswerBytes int
	// ContextWindow is the model's context in tokens (configuration key
	// context_window); zero means ask the server. Evidence calls and
	// max_tokens are sized so that prompt and answer fit.
	ContextWindow int
}

func (o Options) withDefaults() Options {
	def := func(v *int, d int) {
		if *v <= 0 {
			*v = d
		}
	}
	def(&o.FirstPassHits, 5)
	def(&o.MinCredibleHits, 3)
	def(&o.SecondPassHits, 10)
	def(&o.MaxPages, 30)
	def(&o.FetchParallel, 8)
	def(&o.EvidenceParallel, 24)
	def(&o.EvidenceBatch, 8)
	def(&o.EvidenceTokens, DefaultPageTokens)
	def(&o.MinWords, 100)
	def(&o.RefutingPages, 2)
	def(&o.DigestPages, 5)
	def(&o.ImageParallel, 4)
	if o.LexicalThreshold <= 0 {
		o.LexicalThreshold = 0.10
	}
	if o.DigestThreshold <= 0 {
		o.DigestThreshold = 0.23
	}
	if o.EmbeddingThreshold <= 0 {
		o.EmbeddingThreshold = 0.30
	}
	if o.Now == nil {
		o.Now = time.Now
	}
	return o
}

// Engine runs the stages of the Muse method over Checks. One Engine serves
// any number of Checks, concurrently.
type Engine struct {
	deps Deps
	opts Options
	// imageCache holds the hashes of pages' lead images (visual.go).
	imageCache *imageHashes
	// lookalikes are the rated domains pages are compared with (flags.go),
	// built on first use.
	lookalikeOnce sync.Once
	lookalikes    *lookalike.Index
}

// ErrNoModel is returned when a check needs a model and none is configured.
var ErrNoModel = errors.New("no language model configured")

// New returns an engine over deps.
func New(deps Deps, opts Options) (*Engine, error) {
	opts = opts.withDefaults()
	if deps.Model == nil && !opts.NoLLM {
		return nil, ErrNoModel
	}
	if deps.Fetcher == nil || deps.Extract == nil {
		return nil, errors.New("pipeline: a fetcher and an extractor are required")
	}
	if deps.Rater == nil {
		return nil, errors.New("pipeline: a publisher rater is required")
	}
	return &Engine{deps: deps, opts: opts, imageCache: &imageHashes{}}, nil
}

// NoLLM reports whether the engine runs the extractive mode.
func (e *Engine) NoLLM() bool { return e.opts.NoLLM }

// NewCheck makes a Check for a post at the engine's time (NewCheckAt), in
// the engine's mode.
func (e *Engine) NewCheck(p Post, cutoff time.Time) *Check {
	c := NewCheckAt(p, cutoff, e.opts.Now())
	c.NoLLM = e.opts.NoLLM
	return c
}

// NewCheckAt makes a Check for a post, created at now: its ID (NewIDAt),
// its images with their alt text, and its cutoff as the checker set it.
// A zero cutoff is none: every page up to now counts, those published after
// the post too, each shown with its time relative to the post (Timing).
// The paper's protocol, the cutoff at the post's own time, is AsOfPost.
func NewCheckAt(p Post, cutoff, now time.Time) *Check {
	c := &Check{
		ID:        NewIDAt(now),
		CreatedAt: now,
		Post:      p,
		Cutoff:    cutoff,
	}
	for _, src := range p.Images {
		c.Images = append(c.Images, Image{Source: src, AltText: strings.TrimSpace(p.AltTexts[src])})
	}
	c.Post.Videos = slices.Clone(p.Videos)
	for _, u := range pastedVideos(p.Text) { // a video linked in the post's words is read as its own
		if !slices.Contains(c.Post.Videos, u) {
			c.Post.Videos = append(c.Post.Videos, u)
		}
	}
	return c
}

// ErrNoEvidence is returned (wrapped, saying which) by a Run that ended
// without evidence because every page failed to be read, every search
// provider failed, or the model's answers could not be read or quoted
// nothing on their pages — and no matched fact-check could stand in. The
// Check is complete and worth keeping; a genuine "no credible source was
// found" is no error.
var ErrNoEvidence = errors.New("no evidence could be obtained")

// ErrEmptyPost is returned for a post with neither text nor images.
var ErrEmptyPost = errors.New("the post has no text and no images")

// run is one Run call: the Check it owns and how it reports.
type run struct {
	e      *Engine
	c      *Check
	events chan<- Event
	mu     sync.Mutex // guards c while a stage's workers write to it

	read     map[string]bool     // evidence stage: pages already quoted (canonical URL)
	excluded map[string]bool     // evidence stage: quotes the person unticked
	sent     map[string]PageSent // evidence stage: what is sent of each page (canonical URL)

	// sightings are the archive's first sightings of domains, asked once
	// a domain in a check however many of its pages are read.
	sightMu   sync.Mutex
	sightings map[string]*sighting

	// partial, set by the stage running, says what part of its work could
	// not be done: the stage is then StatePartial rather than StateDone.
	partial string
}

// Run runs the stages from `from` to the end over c, publishing events on
// events (which may be nil). Run owns *c until it returns: read it only
// through the copies events carry, or Clone it afterwards. Every event is
// delivered (sends block), so the receiver must keep reading until Run
// returns; Run never closes the channel. A cancelled run returns the
// context's error and c keeps everything found so far.
func (e *Engine) Run(ctx context.Context, c *Check, from Stage, events chan<- Event) (err error) {
	if c == nil {
		return errors.New("pipeline: nil check")
	}
	start := slices.Index(Stages, from)
	if start < 0 {
		return fmt.Errorf("pipeline: unknown stage %q", from)
	}
	r := &run{e: e, c: c, events: events}
	if e.opts.SpendCapCheckUSD > 0 {
		ctx = llm.WithSpendGuard(ctx, r.checkSpendGuard(c.Usage.CostUSD))
	}
	began := e.opts.Now()
	defer func() {
		c.Usage.Seconds += e.opts.Now().Sub(began).Seconds()
		done := Event{Kind: EventDone, Message: "check finished"}
		if err != nil {
			done.Err = err.Error()
			done.Message = "check stopped"
		}
		r.emit(done)
	}()
	if strings.TrimSpace(c.Post.Text) == "" && len(c.Post.Images) == 0 && len(c.Images) == 0 && !c.hasVideo() && len(c.Post.includedContext()) == 0 {
		return ErrEmptyPost
	}
	c.NoLLM = e.opts.NoLLM
	for _, st := range Stages { // a fresh check lists every stage, in order
		if !slices.ContainsFunc(c.Stages, func(si StageInfo) bool { return si.Stage == st }) {
			c.Stages = append(c.Stages, StageInfo{Stage: st, State: StateWaiting})
		}
	}
	for i, st := range Stages {
		if i < start {
			continue
		}
		if i > start {
			// Later stages will be redone; until then their output is stale.
			r.setState(st, StateWaiting, 0, 0, "")
		}
	}
	for _, w := range e.deps.Warnings {
		if !slices.ContainsFunc(c.Events, func(ev Event) bool { return ev.Kind == EventWarning && ev.Message == w }) {
			r.warn(from, "%s", w)
		}
	}
	for _, st := range Stages[start:] {
		if err := ctx.Err(); err != nil {
			return fmt.Errorf("check cancelled before %s: %w", st, err)
		}
		if err := r.stage(ctx, st); err != nil {
			return err
		}
	}
	if start <= slices.Index(Stages, StageEvidence) {
		return r.noEvidence()
	}
	return nil
}

// noEvidence says why a check that ran its evidence stage has no evidence,
// when its accounting says it could not check (Accounting.Checked) rather
// than checked and found nothing.
func (r *run) noEvidence() error {
	c := r.c
	if len(c.IncludedEvidence()) > 0 || slices.ContainsFunc(c.Evidence, func(e Evidence) bool { return e.Verified }) {
		return nil
	}
	if len(r.factCheckEvidence()) > 0 {
		return nil // a published fact-check of the claim is evidence the correction cites
	}
	a := c.Account()
	if a.Checked() {
		return nil
	}
	n := a.Counts
	judged, lost := c.judging()
	switch {
	case a.searchFailed():
		return fmt.Errorf("%w: every web search provider failed (%s)", ErrNoEvidence, strings.Join(a.failedProviders(), "; "))
	case len(lost) > 0:
		// Not "no credible source": the pages not judged may hold one.
		return fmt.Errorf("%w: the model's answers could not be used for %d of %s: %s",
			ErrNoEvidence, len(lost), pageCount(judged+len(lost)), lostWhy(lost, "them"))
	case n[FateNothing] > 0:
		return fmt.Errorf("%w: the model's answers could not be used (for %s quoting nothing that is on the page)",
			ErrNoEvidence, pageCount(n[FateNothing]))
	case n[FateFetchFailed] > 0 && n[FateTooShort]+n[FateNotFetched]+n[FatePartial]+n[FateBlocked] == 0:
		return fmt.Errorf("%w: every page failed to be read (%s)", ErrNoEvidence, pageCount(n[FateFetchFailed]))
	case n[FatePartial] > 0:
		return fmt.Errorf("%w: no page could be read whole: %s", ErrNoEvidence, lowerFirst(a.Summary))
	}
	return fmt.Errorf("%w: no page could be read: %s", ErrNoEvidence, lowerFirst(a.Summary))
}

// lowerFirst puts a sentence's first letter in lower case, to follow a colon.
func lowerFirst(s string) string {
	if s == "" {
		return s
	}
	return strings.ToLower(s[:1]) + s[1:]
}

// stage runs one stage with its start and finish events.
func (r *run) stage(ctx context.Context, st Stage) error {
	t0 := r.e.opts.Now()
	r.partial = ""
	r.setState(st, StateRunning, 0, 0, "")
	r.emit(Event{Kind: EventStageStarted, Stage: st, State: StateRunning, Message: string(st) + " started"})
	var (
		count   int
		skipped bool
		err     error
	)
	switch st {
	case StageImages:
		count, skipped, err = r.images(ctx)
	case StageQueries:
		count, err = r.queries(ctx)
	case StageSearch:
		count, err = r.search(ctx)
	case StageSources:
		count, err = r.sources(ctx)
	case StageEvidence:
		count, err = r.evidence(ctx)
	case StageCorrection:
		count, err = r.correction(ctx)
	}
	secs := r.e.opts.Now().Sub(t0).Seconds()
	if err != nil {
		if ctxErr := ctx.Err(); ctxErr != nil && !errors.Is(err, ctxErr) {
			// Say it was the cancel, whatever the call it interrupted reported.
			err = fmt.Errorf("%s: %w (%v)", st, ctxErr, err)
		}
		r.setState(st, StateFailed, count, secs, err.Error())
		r.emit(Event{Kind: EventStageFailed, Stage: st, State: StateFailed, Count: count, Seconds: secs, Err: err.Error(),
			Message: fmt.Sprintf("%s failed: %v", st, err)})
		return err
	}
	state := StateDone
	msg := fmt.Sprintf("%s: %d (%.1fs)", st, count, secs)
	switch {
	case skipped:
		state, msg = StateSkipped, fmt.Sprintf("%s: skipped", st)
	case r.partial != "":
		state, msg = StatePartial, fmt.Sprintf("%s: %d, partly: %s (%.1fs)", st, count, r.partial, secs)
	}
	r.setState(st, state, count, secs, r.partial)
	r.emit(Event{Kind: EventStageFinished, Stage: st, State: state, Count: count, Seconds: secs, Message: msg})
	return nil
}

// emit publishes ev, recording everything but items and token deltas in the
// Check's log.
func (r *run) emit(ev Event) {
	if ev.Time.IsZero() {
		ev.Time = r.e.opts.Now()
	}
	ev.Item = cloneItem(ev.Item)
	logged := ev.Kind != EventItem && ev.Kind != EventTokenDelta && ev.Kind != EventUsage
	if logged || (r.e.opts.Snapshots && ev.Kind != EventTokenDelta) {
		r.mu.Lock()
		if logged {
			r.c.Events = append(r.c.Events, ev)
		}
		if r.e.opts.Snapshots && ev.Kind != EventTokenDelta {
			ev.Check = r.c.Clone()
		}
		r.mu.Unlock()
	}
	if r.events != nil {
		r.events <- ev
	}
}

func (r *run) warn(st Stage, format string, args ...any) {
	r.emit(Event{Kind: EventWarning, Stage: st, Message: fmt.Sprintf(format, args...)})
}

// warnLocked and itemLocked emit while r.mu is held by the caller.
func (r *run) warnLocked(st Stage, format string, args ...any) {
	r.mu.Unlock()
	defer r.mu.Lock()
	r.warn(st, format, args...)
}

func (r *run) itemLocked(st Stage, it any, msg string) {
	r.mu.Unlock()
	defer r.mu.Lock()
	r.item(st, it, msg)
}

func (r *run) item(st Stage, it any, msg string) {
	r.emit(Event{Kind: EventItem, Stage: st, Item: it, Message: msg})
}

func (r *run) setState(st Stage, state string, count int, secs float64, errText string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.c.setStage(StageInfo{Stage: st, State: state, Count: count, Seconds: secs, Error: errText})
}

// addUsage accounts one model call to a stage and publishes the running
// usage.
func (r *run) addUsage(st Stage, u CallUsage) {
	if u == (CallUsage{}) {
		return
	}
	r.mu.Lock()
	us := &r.c.Usage
	us.Add(u)
	if us.ByStage == nil {
		us.ByStage = map[string]StageUsage{}
	}
	s := us.ByStage[string(st)]
	s.Add(u)
	us.ByStage[string(st)] = s
	snapshot := *us
	snapshot.ByStage = maps.Clone(us.ByStage) // parallel evidence calls write it
	r.mu.Unlock()
	r.emit(Event{Kind: EventUsage, Stage: st, Item: snapshot,
		Message: fmt.Sprintf("%d model calls, %d tokens, %s", snapshot.LLMCalls,
			snapshot.Tokens(), snapshot.CostText())})
}

// checkSpendGuard enforces Options.SpendCapCheckUSD over this run's model
// calls, starting from what the Check had already spent. Calls in flight
// hold their estimate, so parallel evidence calls cannot pass the cap
// together.
func (r *run) checkSpendGuard(spent float64) llm.SpendGuard {
	var mu sync.Mutex
	capUSD := r.e.opts.SpendCapCheckUSD
	return func(_ context.Context, call llm.Call) (func(float64), error) {
		mu.Lock()
		defer mu.Unlock()
		if spent+call.EstUSD > capUSD {
			return nil, &llm.SpendCapError{Scope: "check", CapUSD: capUSD, SpentUSD: spent, EstUSD: call.EstUSD,
				Task: call.Task, Setting: "spend_cap_check_usd or MUSE_SPEND_CAP_CHECK_USD"}
		}
		spent += call.EstUSD
		return func(actual float64) {
			mu.Lock()
			spent += actual - call.EstUSD
			mu.Unlock()
		}, nil
	}
}
