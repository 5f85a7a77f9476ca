package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// Runner is the part of the engine the app drives: run the stages of c
// from a stage on, publishing events, and own c until it returns.
type Runner interface {
	Run(ctx context.Context, c *pipeline.Check, from pipeline.Stage, events chan<- pipeline.Event) error
}

// engineEventMsg is one engine event for run gen. Token deltas may arrive
// merged: the bridge joins them rather than drop any when the UI lags.
type engineEventMsg struct {
	gen int
	ev  pipeline.Event
	ch  chan tea.Msg // where the next message of this run comes from
}

// runDoneMsg says run gen is over; check is the engine's record, handed
// back now that Run has returned and no longer owns it.
type runDoneMsg struct {
	gen   int
	check *pipeline.Check
	err   error
}

// startRun launches the engine on c in the background and returns the
// first message of the run. Later messages are read by waitRun; the
// channel is closed after runDoneMsg.
func startRun(ctx, appCtx context.Context, r Runner, c *pipeline.Check, from pipeline.Stage, gen int, out chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		go bridge(ctx, appCtx, r, c, from, gen, out)
		return waitRun(out)()
	}
}

// waitRun reads the next message of a run (the mods pattern: one Cmd per
// message, re-issued until the run is done).
func waitRun(out chan tea.Msg) tea.Cmd {
	return func() tea.Msg {
		msg, ok := <-out
		if !ok {
			return nil
		}
		return msg
	}
}

// bridge forwards engine events to out. Stage ends and items are always
// delivered; token deltas are merged while the UI is busy so the engine
// never waits on rendering. appCtx ends only when the app quits, so a run
// the user stopped still reports what it found.
func bridge(ctx, appCtx context.Context, r Runner, c *pipeline.Check, from pipeline.Stage, gen int, out chan tea.Msg) {
	defer close(out)
	events := make(chan pipeline.Event, 256)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, c, from, events) }()

	var pending *pipeline.Event // merged token deltas not yet delivered
	send := func(m tea.Msg) bool {
		select {
		case out <- m:
			return true
		case <-appCtx.Done():
			return false
		}
	}
	flush := func() bool {
		if pending == nil {
			return true
		}
		p := *pending
		pending = nil
		return send(engineEventMsg{gen, p, out})
	}
	handle := func(ev pipeline.Event) bool {
		if ev.Kind == pipeline.EventTokenDelta {
			if pending == nil {
				p := ev
				pending = &p
			} else {
				pending.Delta += ev.Delta
			}
			return true
		}
		return flush() && send(engineEventMsg{gen, ev, out})
	}
	for {
		var try chan tea.Msg // nil unless deltas wait: a nil channel never sends
		var msg tea.Msg
		if pending != nil {
			try, msg = out, engineEventMsg{gen, *pending, out}
		}
		select {
		case ev, ok := <-events:
			if !ok {
				events = nil
				continue
			}
			if !handle(ev) {
				return
			}
		case try <- msg:
			pending = nil
		case err := <-done:
			for drained := false; !drained; {
				select {
				case ev, ok := <-events:
					if !ok {
						drained = true
					} else if !handle(ev) {
						return
					}
				default:
					drained = true
				}
			}
			if flush() {
				send(runDoneMsg{gen, c, err})
			}
			return
		case <-appCtx.Done():
			return
		}
	}
}
