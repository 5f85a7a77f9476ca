package pipeline

import (
	"context"
	"errors"
	"fmt"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/prompts"
)

// LLMModel is the Model (and Embedder) that talks to an OpenAI-compatible
// server through sources/llm with the prompts of package prompts.
type LLMModel struct {
	Client *llm.Client
	// Embeddings turns on embedding relevance; otherwise Embed is not used.
	Embeddings bool
}

// Query, evidence and image answers are short; capping them bounds what a
// model that rambles can cost.
const (
	maxQueryTokens    = 400
	maxEvidenceTokens = 1200
	maxImageTokens    = 600
)

func usageOf(resp *llm.Response) CallUsage {
	if resp == nil {
		return CallUsage{}
	}
	u := resp.Usage
	return CallUsage{Calls: u.Calls, CachedCalls: u.CachedCalls, PromptTokens: u.PromptTokens,
		CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD}
}

// badAnswer marks the llm errors that are about what the model said rather
// than about reaching it, so stages can fall back instead of failing.
func badAnswer(err error) error {
	if errors.Is(err, llm.ErrMalformed) || errors.Is(err, llm.ErrEmpty) || errors.Is(err, llm.ErrRefusal) {
		return fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	return err
}

// maxPostChars caps the post text sent in each prompt. Posts run to a few
// thousand characters at most on any platform; a pasted article of 50,000
// would otherwise be repeated in every call and overflow small contexts.
const maxPostChars = 6000

func promptPost(p Post, images []Image) prompts.Post {
	text := p.Text
	if len(text) > maxPostChars {
		text = cutAtSentence(text, maxPostChars) + " […]"
	}
	pp := prompts.Post{Text: text, Author: p.Author, Handle: p.Handle, AuthorDescription: p.AuthorDescription,
		Platform: p.Platform, URL: p.URL, PostedAt: p.PostedAt}
	for _, im := range images {
		if d := imageNotes(im); d != "" {
			pp.ImageDescriptions = append(pp.ImageDescriptions, d)
		}
	}
	return pp
}

// Queries implements Model.
func (m *LLMModel) Queries(ctx context.Context, in QueriesInput) ([]string, bool, CallUsage, error) {
	msgs, err := prompts.Queries(promptPost(in.Post, in.Images), in.N)
	if err != nil {
		return nil, false, CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskQueries, Messages: msgs,
		Schema: prompts.QueriesSchema(in.N), MaxTokens: maxQueryTokens})
	if err != nil {
		return nil, false, usageOf(resp), badAnswer(err)
	}
	qs, informative, err := prompts.ParseQueries(resp.Text)
	if err != nil {
		return nil, false, usageOf(resp), badAnswer(err)
	}
	return qs, informative, usageOf(resp), nil
}

// Evidence implements Model. The page arrives already cut to the paragraphs
// most related to the post; should the server still find it too long, it is
// halved once.
func (m *LLMModel) Evidence(ctx context.Context, in EvidenceInput) ([]string, []string, CallUsage, error) {
	post := promptPost(in.Post, in.Images)
	page := prompts.Page{URL: in.URL, Title: in.Title, Publisher: in.Publisher, Published: in.Published, Paragraphs: in.Paragraphs}
	msgs, err := prompts.EvidenceWithLimit(post, page, prompts.MaxArticleChars)
	if err != nil {
		return nil, nil, CallUsage{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskEvidence, Messages: msgs,
		Schema: prompts.EvidenceSchema(), MaxTokens: maxEvidenceTokens,
		Shorten: func() []llm.Message {
			short, err := prompts.EvidenceWithLimit(post, page, page.Chars()/2)
			if err != nil {
				return nil
			}
			return short
		}})
	if err != nil {
		return nil, nil, usageOf(resp), badAnswer(err)
	}
	ref, ctxq, err := prompts.ParseEvidence(resp.Text)
	if err != nil {
		return nil, nil, usageOf(resp), badAnswer(err)
	}
	return ref, ctxq, usageOf(resp), nil
}

// Correction implements Model, streaming the answer.
func (m *LLMModel) Correction(ctx context.Context, in CorrectionInput, onDelta func(string)) (string, CallUsage, error) {
	var items []prompts.EvidenceItem
	for _, e := range in.Evidence {
		items = append(items, prompts.EvidenceItem{URL: e.URL, Publisher: e.Publisher, Tier: e.Tier,
			Published: e.Published, Kind: e.Kind, Quotes: []string{e.Quote}})
	}
	msgs, err := prompts.Correction(promptPost(in.Post, in.Images), items)
	if err != nil {
		return "", CallUsage{}, err
	}
	resp, err := m.Client.Stream(ctx, llm.Request{Task: llm.TaskCorrection, Messages: msgs}, onDelta)
	text := ""
	if resp != nil {
		text = resp.Text
	}
	if err != nil {
		return text, usageOf(resp), badAnswer(err)
	}
	return text, usageOf(resp), nil
}

// Describe implements Model from what is known about the image (alt text,
// caption, text in it, people), without sending the image itself.
func (m *LLMModel) Describe(ctx context.Context, p Post, img Image) (string, CallUsage, error) {
	msgs, err := prompts.ImageDescription(promptPost(p, nil), prompts.ImageInput{Caption: img.Caption,
		People: img.People, OCRText: img.OCRText, AltText: img.AltText})
	if err != nil {
		return "", CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskVision, Messages: msgs,
		Schema: prompts.ImageDescriptionSchema(), MaxTokens: maxImageTokens})
	if err != nil {
		return "", usageOf(resp), badAnswer(err)
	}
	d, err := prompts.ParseImageDescription(resp.Text)
	return d, usageOf(resp), badAnswer(err)
}

// ModelName implements Model.
func (m *LLMModel) ModelName(task string) string { return m.Client.ModelFor(task) }

// Embed implements Embedder.
func (m *LLMModel) Embed(ctx context.Context, texts []string) ([][]float32, CallUsage, error) {
	v, u, err := m.Client.Embed(ctx, texts)
	return v, CallUsage{Calls: u.Calls, CachedCalls: u.CachedCalls, PromptTokens: u.PromptTokens,
		CompletionTokens: u.CompletionTokens, CostUSD: u.CostUSD}, err
}
