package llm

import (
	"context"
	"fmt"
	"strings"

	openai "github.com/sashabaranov/go-openai"
)

// embedBatch keeps each request well under OpenAI's 2048-input limit and
// small enough for local servers.
const embedBatch = 128

// Embed returns one vector per text, in order, from the embeddings model
// (ModelFor("embeddings")). Usage is added to the "embeddings" task.
func (c *Client) Embed(ctx context.Context, texts []string) ([][]float32, Usage, error) {
	var total Usage
	out := make([][]float32, 0, len(texts))
	for start := 0; start < len(texts); start += embedBatch {
		batch := texts[start:min(start+embedBatch, len(texts))]
		vecs, u, err := c.embedBatch(ctx, batch)
		total.Add(u)
		c.record(TaskEmbeddings, u)
		if err != nil {
			return nil, total, fmt.Errorf("embed texts %d-%d of %d: %w", start+1, start+len(batch), len(texts), err)
		}
		out = append(out, vecs...)
	}
	return out, total, nil
}

func (c *Client) embedBatch(ctx context.Context, batch []string) ([][]float32, Usage, error) {
	ctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
	defer cancel()
	model := c.ModelFor(TaskEmbeddings)
	ci := callInfo{op: "embeddings", task: TaskEmbeddings, model: model, baseURL: c.cfg.BaseURL, provider: c.provider}
	input := make([]string, len(batch))
	for i, t := range batch {
		// OpenAI rejects empty strings in input.
		if strings.TrimSpace(t) == "" {
			t = " "
		}
		input[i] = t
	}
	var res openai.EmbeddingResponse
	cached := false
	err := c.retry(ctx, func() error {
		chars := 0
		for _, t := range input {
			chars += len(t)
		}
		settle, err := c.reserve(ctx, Call{Task: TaskEmbeddings, Model: model, EstUSD: c.Cost(model, chars/4+1, 0)})
		if err != nil {
			return err
		}
		info := &respInfo{}
		actx, cancel := context.WithTimeout(context.WithValue(ctx, respInfoKey{}, info), c.cfg.Timeout)
		defer cancel()
		res, err = c.api.CreateEmbeddings(actx, openai.EmbeddingRequest{
			Input:          input,
			Model:          openai.EmbeddingModel(model),
			EncodingFormat: openai.EmbeddingEncodingFormatFloat,
		})
		_, header := info.get()
		cached = err == nil && fromCache(header)
		if err != nil || cached {
			settle(0)
		} else {
			settle(c.Cost(model, res.Usage.PromptTokens, 0))
		}
		return ci.classify(ctx, err, info)
	})
	if err != nil {
		return nil, Usage{}, err
	}
	u := Usage{LLMCalls: 1, PromptTokens: res.Usage.PromptTokens}
	if cached {
		u.CachedCalls = 1
	} else {
		u.CostUSD = c.Cost(model, res.Usage.PromptTokens, 0)
	}
	vecs := make([][]float32, len(batch))
	for _, d := range res.Data {
		if d.Index < 0 || d.Index >= len(batch) || vecs[d.Index] != nil {
			return nil, u, ci.newError(ErrMalformed, fmt.Sprintf("embedding index %d out of range or repeated", d.Index))
		}
		vecs[d.Index] = d.Embedding
	}
	for i, v := range vecs {
		if len(v) == 0 {
			return nil, u, ci.newError(ErrMalformed, fmt.Sprintf("no embedding for input %d of %d", i+1, len(batch)))
		}
	}
	return vecs, u, nil
}
