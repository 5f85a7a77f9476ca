package llm

import (
	"context"
	"errors"
	"fmt"
	"net/http"

	"github.com/musecheck/muse/sources/httpcache"
)

// ErrSpendCap is wrapped by the error of a call that was not made because
// its estimated cost would pass a spend cap (see *SpendCapError).
var ErrSpendCap = errors.New("spend cap reached")

// SpendCapError says which cap stopped a call, what was spent and what the
// call could have cost.
type SpendCapError struct {
	Scope    string  // "check" or "day"
	CapUSD   float64 // the cap
	SpentUSD float64 // spent (and reserved by calls in flight) under this cap so far
	EstUSD   float64 // the refused call's estimated cost
	Task     string
	Setting  string // what to change to raise the cap
}

func (e *SpendCapError) Error() string {
	s := fmt.Sprintf("spend cap of $%.2f per %s reached: $%.4f spent, and the next %s call could cost up to $%.4f",
		e.CapUSD, e.Scope, e.SpentUSD, e.Task, e.EstUSD)
	if e.Setting != "" {
		s += " (raise " + e.Setting + " to go on)"
	}
	return s
}

func (e *SpendCapError) Is(target error) bool { return target == ErrSpendCap }

// Call describes a model request about to be sent, for a SpendGuard.
type Call struct {
	Task   string
	Model  string
	EstUSD float64 // estimated cost: see Client.Estimate
}

// SpendGuard is asked before every model request. It returns an error
// (wrapping ErrSpendCap) to refuse the call, or a settle function that the
// client calls exactly once when the request is over with what it really
// cost (0 for a failed or cached one). Reserving the estimate until then
// keeps calls running in parallel from passing a cap together.
type SpendGuard func(ctx context.Context, call Call) (settle func(actualUSD float64), err error)

type guardKey struct{}

// WithSpendGuard adds a guard to the calls made with ctx, on top of
// Config.SpendGuard: the engine uses it for the per-check cap.
func WithSpendGuard(ctx context.Context, g SpendGuard) context.Context {
	if g == nil {
		return ctx
	}
	gs, _ := ctx.Value(guardKey{}).([]SpendGuard)
	return context.WithValue(ctx, guardKey{}, append(gs[:len(gs):len(gs)], g))
}

// DefaultCompletionEstimate is the completion length assumed, for the cost
// estimate, of a call without MaxTokens (the streamed correction): a
// generous note with its reasoning.
const DefaultCompletionEstimate = 1000

// Estimate is an upper-bound guess of what a chat request costs before it
// is sent: the prompt at four characters a token (images at 1,000 tokens
// each, roughly a detailed 1024px tile set) plus MaxTokens (or
// DefaultCompletionEstimate) of completion, at the model's price. A model
// without a price (a local one) is estimated at 0 and never refused.
func (c *Client) Estimate(req Request) float64 {
	if req.Task == "" {
		req.Task = TaskCorrection
	}
	chars, images := 0, 0
	for _, m := range req.Messages {
		chars += len(m.Content)
		for _, p := range m.MultiContent {
			chars += len(p.Text)
			if p.ImageURL != nil {
				images++
			}
		}
	}
	if req.Schema != nil {
		chars += len(req.Schema.JSON)
	}
	completion := req.MaxTokens
	if completion <= 0 {
		completion = DefaultCompletionEstimate
	}
	return c.Cost(c.ModelFor(req.Task), chars/4+1+images*1000, completion)
}

// reserve asks every guard (the client's, then the context's) about call.
// On refusal it settles what was already reserved.
func (c *Client) reserve(ctx context.Context, call Call) (func(float64), error) {
	var guards []SpendGuard
	if c.cfg.SpendGuard != nil {
		guards = append(guards, c.cfg.SpendGuard)
	}
	if gs, ok := ctx.Value(guardKey{}).([]SpendGuard); ok {
		guards = append(guards, gs...)
	}
	var settles []func(float64)
	settleAll := func(usd float64) {
		for _, s := range settles {
			s(usd)
		}
	}
	for _, g := range guards {
		s, err := g(ctx, call)
		if err != nil {
			settleAll(0)
			return nil, fmt.Errorf("llm %s: %w", call.Task, err)
		}
		if s != nil {
			settles = append(settles, s)
		}
	}
	return settleAll, nil
}

// fromCache reports whether a response was replayed by sources/httpcache.
func fromCache(h http.Header) bool {
	return h != nil && h.Get(httpcache.HeaderCache) == "hit"
}
