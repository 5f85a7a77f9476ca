package pipeline

import (
	"context"
	"fmt"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/prompts"
)

// evidenceAnswerTokens caps the answer about n pages: up to four quoted
// paragraphs a page, plus room for the JSON around them.
func evidenceAnswerTokens(n int) int { return maxEvidenceTokens + 600*(n-1) }

// EvidencePages implements EvidenceBatcher: one prompt with the pages
// fenced and numbered, the answer keyed by number. Should the server find
// the prompt too long, every page is halved once.
func (m *LLMModel) EvidencePages(ctx context.Context, in EvidencePagesInput) ([]PageQuotes, CallUsage, error) {
	post := promptPost(in.Post, in.Images)
	pages := make([]prompts.Page, len(in.Pages))
	longest := 0
	for i, p := range in.Pages {
		pages[i] = prompts.Page{URL: p.URL, Title: p.Title, Publisher: p.Publisher, Published: p.Published, Paragraphs: p.Paragraphs}
		longest = max(longest, pages[i].Chars())
	}
	msgs, err := prompts.EvidencePages(post, pages, prompts.MaxArticleChars)
	if err != nil {
		return nil, CallUsage{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskEvidence, Messages: msgs,
		Schema: prompts.EvidencePagesSchema(), MaxTokens: evidenceAnswerTokens(len(pages)),
		Shorten: func() []llm.Message {
			short, err := prompts.EvidencePages(post, pages, longest/2)
			if err != nil {
				return nil
			}
			return short
		}})
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	pqs, err := prompts.ParseEvidencePages(resp.Text)
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	out := make([]PageQuotes, len(pqs))
	for i, q := range pqs {
		out[i] = PageQuotes{Page: q.Article, Refutes: q.Refutes, Context: q.Context}
	}
	return out, usageOf(resp), nil
}
