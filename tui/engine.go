package tui

import (
	"context"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// Runner is the part of the engine the app drives: run the stages of c
// from a stage on, publishing events, and own c until it returns. The app
// shows the copy of the check each event carries (Event.Check: the
// engine's Options.Snapshots), so it keeps no merge rules of its own; a
// runner without snapshots is shown when it returns. Between runs the
// person's changes go through the Check's edit methods (pipeline's
// edit.go), which hold the rules of what each change does.
type Runner interface {
	Run(ctx context.Context, c *pipeline.Check, from pipeline.Stage, events chan<- pipeline.Event) error
}

// engineEventMsg is one engine event for run gen. While the UI lags, token
// deltas arrive merged and only the latest snapshot of the check is kept
// (coalesce).
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

// bridge forwards engine events to out without ever making the engine wait
// on rendering: while the UI is busy, events queue, and the queue keeps
// only what still matters (coalesce). appCtx ends only when the app quits,
// so a run the user stopped still reports what it found.
func bridge(ctx, appCtx context.Context, r Runner, c *pipeline.Check, from pipeline.Stage, gen int, out chan tea.Msg) {
	defer close(out)
	events := make(chan pipeline.Event, 256)
	done := make(chan error, 1)
	go func() { done <- r.Run(ctx, c, from, events) }()

	var queue []pipeline.Event // not yet delivered, oldest first
	send := func(m tea.Msg) bool {
		select {
		case out <- m:
			return true
		case <-appCtx.Done():
			return false
		}
	}
	for {
		var try chan tea.Msg // nil unless events wait: a nil channel never sends
		var head tea.Msg
		if len(queue) > 0 {
			try, head = out, engineEventMsg{gen, queue[0], out}
		}
		select {
		case ev := <-events:
			queue = coalesce(queue, ev)
		case try <- head:
			queue = queue[1:]
		case err := <-done:
			// Run has returned, so every event it sent is in the buffer.
			for drained := false; !drained; {
				select {
				case ev := <-events:
					queue = coalesce(queue, ev)
				default:
					drained = true
				}
			}
			for _, ev := range queue {
				if !send(engineEventMsg{gen, ev, out}) {
					return
				}
			}
			send(runDoneMsg{gen, c, err})
			return
		case <-appCtx.Done():
			return
		}
	}
}

// coalesce adds ev to the undelivered events. Token deltas join the delta
// before them; an event whose only news is a newer snapshot of the check
// (an item, a usage figure, a warning or progress line: all of them in the
// snapshot) replaces the one before it of that sort. Stage events and the
// end of the run are always delivered, in order.
func coalesce(queue []pipeline.Event, ev pipeline.Event) []pipeline.Event {
	if n := len(queue); n > 0 {
		last := &queue[n-1]
		switch {
		case ev.Kind == pipeline.EventTokenDelta && last.Kind == pipeline.EventTokenDelta:
			last.Delta += ev.Delta
			last.Text = ev.Text
			return queue
		case snapshotOnly(ev) && snapshotOnly(*last):
			*last = ev
			return queue
		}
	}
	return append(queue, ev)
}

func snapshotOnly(ev pipeline.Event) bool {
	if ev.Check == nil {
		return false
	}
	switch ev.Kind {
	case pipeline.EventItem, pipeline.EventUsage, pipeline.EventWarning, pipeline.EventProgress:
		return true
	}
	return false
}
