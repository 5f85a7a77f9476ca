package pipeline

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
	"github.com/sashabaranov/go-openai"
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
	return resp.Usage
}

// badAnswer marks the llm errors that are about what came back rather
// than about reaching the server — an answer malformed, empty, refused,
// withheld by a content filter or replaced by an error object — so stages
// can fall back instead of failing.
func badAnswer(err error) error {
	for _, kind := range []error{llm.ErrMalformed, llm.ErrEmpty, llm.ErrRefusal, llm.ErrContentFilter, llm.ErrInBand, llm.ErrTooLarge} {
		if errors.Is(err, kind) {
			return fmt.Errorf("%w: %w", ErrBadAnswer, err)
		}
	}
	return err
}

// unreadAnswer is an answer that came back but could not be parsed; text
// is what the model wrote, so that a refusal written as text is shown in
// the model's words.
type unreadAnswer struct {
	text string
	err  error
}

func (e *unreadAnswer) Error() string { return e.err.Error() }
func (e *unreadAnswer) Unwrap() error { return e.err }

// maxPostChars caps the post text sent in each prompt. Posts run to a few
// thousand characters at most on any platform; a pasted article of 50,000
// would otherwise be repeated in every call and overflow small contexts.
const maxPostChars = 6000

func promptPost(p Post, images []Image, v *Video) prompts.Post {
	text := p.Text
	if len(text) > maxPostChars {
		text = cutAtSentence(text, maxPostChars) + " […]"
	}
	pp := prompts.Post{Text: text, Author: p.Author, Handle: p.Handle, AuthorDescription: p.AuthorDescription,
		Platform: p.Platform, URL: p.URL, PostedAt: p.PostedAt}
	if p.Language != "" && p.Language != "en" {
		pp.Language = lang.Label(p.Language)
	}
	for _, im := range images {
		if d := imageNotes(im); d != "" {
			pp.ImageDescriptions = append(pp.ImageDescriptions, d)
		}
	}
	pp.Video = promptVideo(v)
	pp.Context = promptContext(p)
	return pp
}

// Queries implements Model.
func (m *LLMModel) Queries(ctx context.Context, in QueriesInput) ([]string, bool, CallUsage, error) {
	qs, _, informative, u, err := m.QueriesClaims(ctx, in)
	return qs, informative, u, err
}

// QueriesClaims implements ClaimsModel: the queries, and the post's
// checkable claims from the same answer.
func (m *LLMModel) QueriesClaims(ctx context.Context, in QueriesInput) ([]string, []string, bool, CallUsage, error) {
	pp := promptPost(in.Post, in.Images, in.Video)
	msgs, err := prompts.Queries(pp, in.N)
	if err != nil {
		return nil, nil, false, CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskQueries, Messages: msgs,
		Schema: prompts.QueriesSchema(pp, in.N), MaxTokens: maxQueryTokens})
	if err != nil {
		return nil, nil, false, usageOf(resp), badAnswer(err)
	}
	qs, informative, err := prompts.ParseQueries(resp.Text)
	if err != nil {
		return nil, nil, false, usageOf(resp), badAnswer(err)
	}
	return qs, prompts.ParseClaims(resp.Text), informative, usageOf(resp), nil
}

// Evidence implements Model. The page arrives already cut to the paragraphs
// most related to the post; should the server still find it too long, it is
// halved once.
func (m *LLMModel) Evidence(ctx context.Context, in EvidenceInput) ([]string, []string, CallUsage, error) {
	post := promptPost(in.Post, in.Images, in.Video)
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
		return nil, nil, usageOf(resp), badAnswer(&unreadAnswer{resp.Text, err})
	}
	return ref, ctxq, usageOf(resp), nil
}

// Correction implements Model, streaming the answer.
func (m *LLMModel) Correction(ctx context.Context, in CorrectionInput, onDelta func(string)) (string, CallUsage, error) {
	post := promptPost(in.Post, in.Images, in.Video)
	post.Claims = in.Claims
	msgs, err := prompts.Correction(post, promptEvidence(in.Evidence), lang.Label(in.Language))
	if err != nil {
		return "", CallUsage{}, err
	}
	if last := len(msgs) - 1; in.Insist && msgs[last].Role == "user" {
		msgs[last].Content = strings.TrimRight(msgs[last].Content, "\n") +
			fmt.Sprintf("\n\nWrite the whole correction in %s, whatever the language of the post and of the sources.", lang.Label(cmp.Or(in.Language, "en")))
	}
	resp, err := m.Client.Stream(ctx, llm.Request{Task: llm.TaskCorrection, Messages: msgs}, onDelta)
	text := ""
	if resp != nil {
		text = resp.Text
	}
	if err != nil {
		return text, usageOf(resp), badAnswer(err)
	}
	if resp.FinishReason == string(openai.FinishReasonLength) {
		return text, usageOf(resp), ErrAnswerCut
	}
	return text, usageOf(resp), nil
}

// Describe implements Model from what is known about the image (alt text,
// caption, text in it, people), without sending the image itself.
func (m *LLMModel) Describe(ctx context.Context, p Post, img Image) (string, CallUsage, error) {
	msgs, err := prompts.ImageDescription(promptPost(p, nil, nil), prompts.ImageInput{Caption: img.Caption,
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

// ContextWindow is the evidence model's context window (see
// llm.Client.ContextWindow).
func (m *LLMModel) ContextWindow(ctx context.Context) llm.Window {
	return m.Client.ContextWindow(ctx, llm.TaskEvidence)
}

// ModelName implements Model.
func (m *LLMModel) ModelName(task string) string { return m.Client.ModelFor(task) }

// Embed implements Embedder.
func (m *LLMModel) Embed(ctx context.Context, texts []string) ([][]float32, CallUsage, error) {
	return m.Client.Embed(ctx, texts)
}

// VisionModel is a Model that can also look at an image. LLMModel is one;
// whether the server's model really accepts images is known only by asking,
// and a model that does not answers ErrNoVision.
type VisionModel interface {
	// DescribeImage writes the informative description of an image shown
	// to the model as a data: URL, with what is already known of it (text
	// read by OCR, alt text) as notes.
	DescribeImage(ctx context.Context, post Post, img Image, dataURL string) (description string, u CallUsage, err error)
}

// ErrNoVision: the model refused the request because it does not take
// images. The images stage then describes images from OCR and alt text.
var ErrNoVision = errors.New("the model does not accept images")

// DescribeImage implements VisionModel with the paper's in-context prompt:
// the image itself, plus the text read from it and its alt text.
func (m *LLMModel) DescribeImage(ctx context.Context, p Post, img Image, dataURL string) (string, CallUsage, error) {
	msgs, err := prompts.ImageDescription(promptPost(p, nil, nil), prompts.ImageInput{URL: dataURL,
		OCRText: img.OCRText, AltText: img.AltText})
	if err != nil {
		return "", CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskVision, Messages: msgs,
		Schema: prompts.ImageDescriptionSchema(), MaxTokens: maxImageTokens})
	if err != nil {
		if noVision(err) {
			return "", usageOf(resp), fmt.Errorf("%w: %w", ErrNoVision, err)
		}
		return "", usageOf(resp), badAnswer(err)
	}
	d, err := prompts.ParseImageDescription(resp.Text)
	if err != nil {
		return "", usageOf(resp), badAnswer(err)
	}
	return d, usageOf(resp), nil
}

// noVision recognises a server's "this model cannot read images" answer:
// a 400 whose message speaks of images (OpenAI: "image_url is only
// supported by certain models"; vLLM, llama.cpp and Ollama word it their
// own way but all name images or vision).
func noVision(err error) bool {
	var ae *llm.APIError
	if !errors.As(err, &ae) || ae.Kind != llm.ErrBadRequest {
		return false
	}
	msg := strings.ToLower(ae.Message)
	for _, w := range []string{"image", "vision", "multimodal", "multi-modal"} {
		if strings.Contains(msg, w) {
			return true
		}
	}
	return false
}

// evidenceAnswerTokens caps the answer about n pages: up to four quoted
// paragraphs a page (a page rarely bears on a claim in more than two
// stances), plus room for the JSON around them.
func evidenceAnswerTokens(n int) int { return maxEvidenceTokens + 600*(n-1) }

// EvidencePages implements EvidenceBatcher: one prompt with the pages
// fenced and numbered, the answer keyed by number. The call is sized to
// the model's context window (llm.Client.ContextWindow): when the prompt
// and the answer it needs would not fit — or the server says they do not —
// it sends fewer pages per call, then shorter pages, then asks for a
// shorter answer, instead of retrying unchanged.
func (m *LLMModel) EvidencePages(ctx context.Context, in EvidencePagesInput) ([]PageQuotes, CallUsage, error) {
	post := promptPost(in.Post, in.Images, in.Video)
	post.Claims = in.Claims
	pages := make([]prompts.Page, len(in.Pages))
	for i, p := range in.Pages {
		pages[i] = prompts.Page{URL: p.URL, Title: p.Title, Publisher: p.Publisher, Published: p.Published, Paragraphs: p.Paragraphs}
	}
	return m.evidenceCall(ctx, post, pages, evidenceShape{chars: prompts.MaxArticleChars, answer: evidenceAnswerTokens(len(pages))})
}

// evidenceShape is how much one evidence call sends and asks for.
type evidenceShape struct {
	chars  int // page text per page
	answer int // max_tokens
}

// Floors of shrinking: below them a call is not worth making.
const (
	minEvidenceChars  = 400
	minEvidenceAnswer = 300
)

func (m *LLMModel) evidenceCall(ctx context.Context, post prompts.Post, pages []prompts.Page, sh evidenceShape) ([]PageQuotes, CallUsage, error) {
	longest := 0
	for _, p := range pages {
		longest = max(longest, p.Chars())
	}
	sh.chars = min(sh.chars, max(longest, 1))
	msgs, err := prompts.EvidencePages(post, pages, sh.chars)
	if err != nil {
		return nil, CallUsage{}, fmt.Errorf("%w: %w", ErrBadAnswer, err)
	}
	if w := m.Client.ContextWindow(ctx, llm.TaskEvidence); w.Tokens > 0 && llm.MessagesTokens(msgs)+sh.answer > w.Tokens {
		if out, u, err, ok := m.shrinkEvidence(ctx, post, pages, sh); ok {
			return out, u, err
		}
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskEvidence, Messages: msgs,
		Schema: prompts.EvidencePagesSchema(), MaxTokens: sh.answer})
	if errors.Is(err, llm.ErrContextLength) {
		if out, u, err2, ok := m.shrinkEvidence(ctx, post, pages, sh); ok {
			used := usageOf(resp)
			used.Add(u)
			return out, used, err2
		}
	}
	if err != nil && resp != nil && resp.FinishReason == string(openai.FinishReasonLength) && errors.Is(err, llm.ErrEmpty) {
		// Hidden reasoning spent the whole limit, the larger one too.
		err = fmt.Errorf("%w: %w", ErrAnswerCut, err)
	}
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	// Cut at its length limit even after the client asked again with a
	// larger one: with several pages, asked about again in smaller calls
	// (judgeBatch); with one, what came before the cut is kept and the
	// page says its answer was cut.
	cut := resp.FinishReason == string(openai.FinishReasonLength)
	if cut && len(pages) > 1 {
		return nil, usageOf(resp), fmt.Errorf("%w: %w", ErrBadAnswer, ErrAnswerCut)
	}
	pqs, err := prompts.ParseEvidencePages(resp.Text)
	if err != nil {
		if cut {
			err = fmt.Errorf("%w: %w", ErrAnswerCut, err)
		}
		return nil, usageOf(resp), badAnswer(&unreadAnswer{resp.Text, err})
	}
	out := make([]PageQuotes, len(pqs))
	for i, q := range pqs {
		out[i] = PageQuotes{Page: q.Article, Refutes: q.Refutes, Supports: q.Supports, Context: q.Context, Claims: q.Claims}
	}
	if cut {
		out = closedQuotes(out, resp.Text)
	}
	return out, usageOf(resp), nil
}

// ErrAnswerCut marks an answer cut at its length limit (finish_reason
// "length") even after it was asked for again with a larger one.
var ErrAnswerCut = errors.New("the model's answer was cut at its length limit")

// closedQuotes keeps, of an answer about one page cut at its length limit,
// the quotes written whole: a quote the repair of the cut JSON closed is
// the part of one before the cut, and is left out. The result says the
// answer was cut.
func closedQuotes(pqs []PageQuotes, raw string) []PageQuotes {
	whole := func(qs []string) []string {
		var out []string
		for _, q := range qs {
			if b, err := json.Marshal(q); err == nil && strings.Contains(raw, string(b)) {
				out = append(out, q)
			}
		}
		return out
	}
	for i := range pqs {
		pqs[i].Refutes, pqs[i].Supports, pqs[i].Context, pqs[i].Cut = whole(pqs[i].Refutes), whole(pqs[i].Supports), whole(pqs[i].Context), true
	}
	if len(pqs) == 0 {
		pqs = []PageQuotes{{Page: 1, Cut: true}}
	}
	return pqs
}

// shrinkEvidence makes the call smaller by one step — half the pages in
// each of two calls, else half the page text, else half the answer — and
// makes it; ok is false when nothing can shrink any more.
func (m *LLMModel) shrinkEvidence(ctx context.Context, post prompts.Post, pages []prompts.Page, sh evidenceShape) ([]PageQuotes, CallUsage, error, bool) {
	switch {
	case len(pages) > 1:
		half := len(pages) / 2
		first, u1, err1 := m.evidenceCall(ctx, post, pages[:half], evidenceShape{sh.chars, evidenceAnswerTokens(half)})
		second, u2, err2 := m.evidenceCall(ctx, post, pages[half:], evidenceShape{sh.chars, evidenceAnswerTokens(len(pages) - half)})
		for i := range second {
			if second[i].Page > 0 {
				second[i].Page += half
			}
		}
		u := u1
		u.Add(u2)
		// A half that failed fails the call: its pages must not read as
		// pages where the model found nothing (the other half's quotes are
		// lost with it, the price of one answer per call).
		if err := cmp.Or(err1, err2); err != nil {
			return nil, u, err, true
		}
		return append(first, second...), u, nil, true
	case sh.chars/2 >= minEvidenceChars:
		out, u, err := m.evidenceCall(ctx, post, pages, evidenceShape{sh.chars / 2, sh.answer})
		return out, u, err, true
	case sh.answer/2 >= minEvidenceAnswer:
		out, u, err := m.evidenceCall(ctx, post, pages, evidenceShape{sh.chars, sh.answer / 2})
		return out, u, err, true
	}
	return nil, CallUsage{}, nil, false
}

// ErrBadAnswer marks a model answer that could not be used (malformed JSON,
// empty, a refusal). Stages recover from it where the paper has a fallback;
// transport and configuration errors are not recovered from.
var ErrBadAnswer = errors.New("unusable model answer")

// maxSupportTokens caps the support map's answer: a short reason a
// sentence.
func maxSupportTokens(n int) int { return 200 + 120*n }

// JudgeSupport implements SupportJudge: one call for every sentence, with
// the correction's model.
func (m *LLMModel) JudgeSupport(ctx context.Context, p Post, sentences []prompts.SupportSentence) ([]prompts.SupportJudgement, CallUsage, error) {
	msgs, err := prompts.Support(promptPost(p, nil, nil), sentences)
	if err != nil {
		return nil, CallUsage{}, err
	}
	resp, err := m.Client.Complete(ctx, llm.Request{Task: llm.TaskCorrection, Messages: msgs,
		Schema: prompts.SupportSchema(), MaxTokens: maxSupportTokens(len(sentences))})
	if err != nil {
		return nil, usageOf(resp), badAnswer(err)
	}
	js, err := prompts.ParseSupport(resp.Text)
	if err != nil {
		return nil, usageOf(resp), badAnswer(&unreadAnswer{resp.Text, err})
	}
	return js, usageOf(resp), nil
}
