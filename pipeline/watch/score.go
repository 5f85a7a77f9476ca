package watch

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// scoreLoop scores new clusters in batches: backlog first (read but not
// scored before a stop), then what Handle sends, a batch when BatchSize
// are waiting or BatchWait has passed. A batch the model server failed
// (down, timing out, answering garbage) is tried again, after BatchWait
// and then twice as long each time up to maxRetryWait, up to maxRetry
// clusters; the rest are tried on the next start. When the feeds end it
// scores what is left, unless the watch was stopped: then what is left
// keeps no score and is scored on the next start.
func (t *Triage) scoreLoop(ctx, watchCtx context.Context, pending <-chan Cluster, backlog []Cluster) {
	batch := backlog
	var retry []Cluster
	retryWait := t.o.BatchWait
	var retryAt time.Time
	flush := func() {
		for len(batch) > 0 && ctx.Err() == nil {
			n := min(len(batch), t.o.BatchSize)
			if t.scoreBatch(ctx, batch[:n]) {
				retryWait = t.o.BatchWait
			} else {
				if len(retry) < maxRetry {
					retry = append(retry, batch[:min(n, maxRetry-len(retry))]...)
				}
				retryAt = time.Now().Add(retryWait)
				retryWait = min(2*retryWait, max(maxRetryWait, t.o.BatchWait))
			}
			batch = batch[n:]
		}
		batch = batch[:0]
	}
	flush() // what was waiting from before, first
	timer := time.NewTimer(t.o.BatchWait)
	defer timer.Stop()
	for {
		select {
		case c, ok := <-pending:
			if !ok {
				if watchCtx.Err() == nil {
					flush()
				}
				return
			}
			batch = append(batch, c)
			if len(batch) >= t.o.BatchSize {
				flush()
				timer.Reset(t.o.BatchWait)
			}
		case <-timer.C:
			if len(retry) > 0 && !time.Now().Before(retryAt) {
				batch, retry = append(retry, batch...), nil
			}
			flush()
			timer.Reset(t.o.BatchWait)
		}
	}
}

// How a batch the model server failed is tried again.
const (
	maxRetry     = 1000
	maxRetryWait = 5 * time.Minute
)

// scoreBatch scores cs in one call and applies the rule to them; false
// when the call failed and is worth trying again.
func (t *Triage) scoreBatch(ctx context.Context, cs []Cluster) (ok bool) {
	cs = slices.Clone(cs)
	note := ""
	var scores []float64
	if t.o.Scorer == nil {
		note = t.o.NoScore
	} else {
		texts := make([]string, len(cs))
		for i := range cs {
			texts[i] = matchText(&cs[i].Post)
		}
		ws, _, err := t.o.Scorer.Worthiness(ctx, texts)
		switch {
		case ctx.Err() != nil:
			return true // stopped: scored on the next start
		case errors.Is(err, pipeline.ErrNoModel):
			note = t.o.NoScore
		case err != nil:
			note = "not scored yet: " + err.Error() + " (tried again later)"
			t.warn("score %d posts: %v (tried again later)", len(cs), err)
			defer func() { ok = false }()
		default:
			for i := range cs {
				if ws[i].OK {
					s := ws[i].Score
					cs[i].Score, cs[i].ScoreNote = &s, ws[i].Reason
					scores = append(scores, s)
				} else {
					cs[i].ScoreNote = "not scored: the model's answer left this post out"
				}
			}
		}
	}
	for i := range cs {
		if note != "" {
			cs[i].ScoreNote = note
		}
		if err := t.o.Store.setScore(ctx, cs[i].ID, cs[i].Score, cs[i].ScoreNote); err != nil {
			t.warn("%v", err)
		}
	}
	t.apply(ctx, cs)
	for _, c := range cs {
		t.refresh(ctx, c)
	}
	return true
}

// refresh tells Changed of the cluster as stored now.
func (t *Triage) refresh(ctx context.Context, c Cluster) {
	if t.o.Changed == nil {
		return
	}
	if full, err := t.o.Store.Cluster(ctx, c.ID); err == nil {
		c = full
	}
	t.changed(c)
}

// apply queues the scored clusters at or above the threshold, best first,
// as far as the per-hour budget and the spend cap allow; the rest of the
// worthy ones are held, saying why. Without Enqueue nothing is queued.
func (t *Triage) apply(ctx context.Context, cs []Cluster) {
	r := t.o.Rule
	var worthy []Cluster
	for _, c := range cs {
		if c.Score != nil && *c.Score >= r.Threshold {
			worthy = append(worthy, c)
		}
	}
	if len(worthy) == 0 || t.o.Enqueue == nil {
		return
	}
	slices.SortStableFunc(worthy, func(a, b Cluster) int { return cmp.Compare(*b.Score, *a.Score) })
	hold := func(cs []Cluster, why string) {
		for _, c := range cs {
			if err := t.o.Store.SetState(ctx, c.ID, StateHeld, why, ""); err != nil {
				t.warn("%v", err)
			}
		}
	}
	if r.SpendCapUSD > 0 && r.Spent != nil {
		spent, err := r.Spent(ctx)
		if err != nil {
			t.warn("read the day's spend: %v", err)
			hold(worthy, "held: the day's spend could not be read")
			return
		}
		if spent >= r.SpendCapUSD {
			hold(worthy, fmt.Sprintf("held: the day's spend cap is reached ($%.2f of $%.2f)", spent, r.SpendCapUSD))
			return
		}
	}
	n, err := t.o.Store.queuedSince(ctx, time.Now().Add(-time.Hour))
	if err != nil {
		t.warn("%v", err)
		return
	}
	room := max(r.PerHour-n, 0)
	if room < len(worthy) {
		hold(worthy[room:], fmt.Sprintf("held: the budget of %d posts an hour is spent", r.PerHour))
		worthy = worthy[:room]
	}
	if len(worthy) == 0 {
		return
	}
	id, err := t.o.Enqueue(ctx, worthy)
	if err != nil {
		t.warn("queue %d posts: %v", len(worthy), err)
		hold(worthy, "held: the queue refused them: "+err.Error())
		return
	}
	for _, c := range worthy {
		if err := t.o.Store.SetState(ctx, c.ID, StateQueued, fmt.Sprintf("score %.2f ≥ %.2f", *c.Score, r.Threshold), id); err != nil {
			t.warn("%v", err)
		}
	}
}
