package pipeline

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/llm"
)

// What `muse watch` (pipeline/watch) asks of the engine: the imported
// fact-checks a post repeats, as a check finds them, and how check-worthy
// posts are, many in one model call.

// MatchFactChecks matches text against the imported fact-checks as a
// check does (its archive's ClaimMatcher), each marked ReviewerVerified as
// a check marks them; nothing when the engine has no archive that can.
// posted is when the text was posted, if known: then only fact-checks
// already out by then match (a repeat of a claim already checked), where a
// check, which passes none, takes later debunks too.
func (e *Engine) MatchFactChecks(ctx context.Context, text, lang string, posted time.Time) ([]FactCheck, error) {
	m, ok := e.deps.Archive.(ClaimMatcher)
	if !ok || strings.TrimSpace(text) == "" {
		return nil, nil
	}
	fcs, err := m.MatchFactChecks(ctx, text, lang, posted)
	if err != nil {
		return nil, err
	}
	r := &run{e: e}
	for i := range fcs {
		fcs[i].ReviewerVerified = r.reviewerVerified(fcs[i])
	}
	return fcs, nil
}

// TaskWorthiness is the model task of check-worthiness scores (its model
// may be set apart, as models.worthiness).
const TaskWorthiness = "worthiness"

const maxWorthinessPostChars = 1000

// Worthiness scores how check-worthy each text is, in one call: a
// factual, checkable claim about a public matter, as ClaimBuster and the
// CheckThat! lab define it. A text the answer left unscored is not OK.
// ErrNoModel without a model.
func (e *Engine) Worthiness(ctx context.Context, texts []string) ([]prompts.WorthinessScore, CallUsage, error) {
	m, ok := e.deps.Model.(*LLMModel)
	if !ok || m == nil || e.opts.NoLLM {
		return nil, CallUsage{}, ErrNoModel
	}
	if len(texts) == 0 {
		return nil, CallUsage{}, errors.New("no post to score")
	}
	cut := make([]string, len(texts))
	for i, t := range texts {
		if r := []rune(t); len(r) > maxWorthinessPostChars {
			t = string(r[:maxWorthinessPostChars]) + "…"
		}
		cut[i] = t
	}
	msgs, err := prompts.Worthiness(cut)
	if err != nil {
		return nil, CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: TaskWorthiness, Messages: msgs, Schema: prompts.WorthinessSchema(),
		MaxTokens: 60 + 40*len(texts)})
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	ws, err := prompts.ParseWorthiness(resp.Text, len(texts))
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	return ws, usageOf(resp), nil
}
