package pipeline

import "time"

// Stage names one step of the Muse method. Stages run in this order; the
// engine can start again from any of them with the Check's current contents.
type Stage string

const (
	StageImages     Stage = "images"
	StageQueries    Stage = "queries"
	StageSearch     Stage = "search"
	StageSources    Stage = "sources" // fetch, extract, date, rate, relevance, rank
	StageEvidence   Stage = "evidence"
	StageCorrection Stage = "correction"
)

// Stages lists every stage in run order.
var Stages = []Stage{StageImages, StageQueries, StageSearch, StageSources, StageEvidence, StageCorrection}

// Stage states.
const (
	StateWaiting = "waiting"
	StateRunning = "running"
	StateDone    = "done"
	StateFailed  = "failed"
	StateSkipped = "skipped"
	StateStale   = "stale" // an edit upstream made its output out of date
	// StatePartial: the stage finished but part of its work could not be
	// done (pages the model did not judge); StageInfo.Error says what.
	StatePartial = "partial"
)

// StageInfo is a stage's state in a Check.
type StageInfo struct {
	Stage   Stage   `json:"stage"`
	State   string  `json:"state"`
	Count   int     `json:"count"`
	Seconds float64 `json:"seconds"`
	// Error says why a failed stage failed, or what a partial one could
	// not do.
	Error string `json:"error,omitempty"`
}

// Event kinds.
const (
	EventStageStarted  = "stage_started"
	EventStageFinished = "stage_finished"
	EventStageFailed   = "stage_failed"
	EventItem          = "item"        // something was added or changed: a query, hit, source, quote
	EventTokenDelta    = "token_delta" // a piece of the streamed correction
	EventWarning       = "warning"
	EventProgress      = "progress" // a human progress line that is neither an item nor a warning
	EventDone          = "done"     // the run is over (finished, failed or cancelled); Err says which
	// EventUsage follows every model call: Item is the check's Usage so
	// far (a copy), for a live cost display. It is not kept in Check.Events.
	EventUsage = "usage"
)

// Event is what the engine publishes while it runs. The TUI turns events
// into tea messages; the headless CLI prints progress lines from them.
type Event struct {
	Time    time.Time `json:"time"`
	Kind    string    `json:"kind"`
	Stage   Stage     `json:"stage,omitempty"`
	Message string    `json:"message,omitempty"` // human words
	Count   int       `json:"count,omitempty"`
	Seconds float64   `json:"seconds,omitempty"`
	// State is the stage's state after a stage event (StateRunning,
	// StateDone, StatePartial, StateSkipped or StateFailed), as its
	// StageInfo records it, so no reader has to parse it out of Message.
	State string `json:"state,omitempty"`
	Delta string `json:"-"` // token text, for EventTokenDelta only
	// Text is, for EventTokenDelta, the correction so far as the finished
	// one will read: its source ids ([S1]) already replaced by their URLs,
	// so a preview need not show ids and then change them.
	Text string `json:"-"`
	Item any    `json:"-"`               // the Query, Hit, Source or Evidence added, for EventItem
	Err  string `json:"error,omitempty"` // for failures and EventDone
	// Check is a deep copy of the Check as it stood when the event was
	// published, taken under the engine's lock; set only with
	// Options.Snapshots, on every event but token deltas.
	Check *Check `json:"-"`
}
