package llm

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"sync/atomic"
	"time"
	"unicode/utf8"

	"github.com/cenkalti/backoff/v5"
	openai "github.com/sashabaranov/go-openai"
)

// Schema asks the server for JSON that follows a JSON schema
// (response_format {"type":"json_schema"}). The schema must follow OpenAI's
// strict rules: every property listed in "required" and
// "additionalProperties": false on every object.
type Schema struct {
	// Name is the schema's name on the wire, by convention the task
	// ("queries", "evidence", "image_description"); [a-zA-Z0-9_-], at most 64.
	Name        string
	Description string
	// JSON is the JSON schema object.
	JSON json.RawMessage
	// Fallback is the answer-format instruction added to the last user message
	// when the server has no schema support, e.g. the paper's numbered list.
	// Empty means "answer with only a JSON object matching <schema>".
	Fallback string
}

func (s *Schema) fallbackText() string {
	if s.Fallback != "" {
		return s.Fallback
	}
	return "Answer with only a JSON object, no other text, that matches this JSON schema:\n" + string(s.JSON)
}

// Complete makes a chat call and returns the whole answer.
//
// The answer may come back with an error: an *APIError of kind ErrRefusal or
// ErrEmpty comes with a non-nil *Response whose Usage counts what the call
// spent. When Request.Schema is set and the server rejects response_format,
// the call is repeated once as plain text with Schema.Fallback appended, the
// client remembers that the server lacks schema support, and
// Response.Structured is false.
func (c *Client) Complete(ctx context.Context, req Request) (*Response, error) {
	return c.chat(ctx, req, nil)
}

// Stream makes a streamed chat call, calling onDelta with each piece of text
// as it arrives (onDelta may be nil), and asks the server to report usage in
// the last chunk (stream_options.include_usage).
//
// A stream that ends without a finish reason, or breaks after text has
// arrived, returns ErrStreamCut together with a *Response holding the partial
// text. A stream that fails before any text arrived is retried like Complete.
func (c *Client) Stream(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	if onDelta == nil {
		onDelta = func(string) {}
	}
	return c.chat(ctx, req, onDelta)
}

func (c *Client) chat(ctx context.Context, req Request, onDelta func(string)) (*Response, error) {
	if req.Task == "" {
		req.Task = TaskCorrection
	}
	if len(req.Messages) == 0 {
		return nil, fmt.Errorf("llm %s: no messages to send", req.Task)
	}
	msgs := req.Messages
	shortened, enlarged := false, false
	var earlier Usage // of a cut answer asked again
	dctx, cancel := context.WithTimeout(ctx, c.cfg.Deadline)
	defer cancel()
	for {
		resp, err := c.chatSchema(dctx, req, msgs, onDelta)
		if err != nil && ctx.Err() == nil && dctx.Err() != nil {
			err = c.deadlineError(req, onDelta != nil, err)
		}
		if resp != nil {
			resp.Shortened = shortened
			c.record(req.Task, resp.Usage)
		}
		if err != nil && errors.Is(err, ErrContextLength) {
			var ae *APIError
			if errors.As(err, &ae) {
				c.learnWindow(c.ModelFor(req.Task), windowFrom(ae.Message))
			}
		}
		if err != nil && errors.Is(err, ErrContextLength) && req.Shorten != nil && !shortened {
			if short := req.Shorten(); len(short) > 0 {
				msgs, shortened = short, true
				continue
			}
		}
		if more := c.largerLimit(dctx, req, msgs, resp, err); more > 0 && !enlarged {
			// Cut at the token limit (a reasoning model may spend it all
			// before any text): once more with a larger limit that fits.
			req.MaxTokens, enlarged = more, true
			earlier.Add(resp.Usage)
			continue
		}
		if resp != nil {
			resp.Enlarged = enlarged
			resp.Usage.Add(earlier) // the cut answer was paid for too
		}
		return resp, err
	}
}

// largerLimit is the answer limit to try again with after an answer cut at
// req.MaxTokens (finish_reason "length", with or without text): twice it,
// at most what the context window leaves; 0 when the answer was not cut,
// the call had no limit of its own, or no larger one fits.
func (c *Client) largerLimit(ctx context.Context, req Request, msgs []Message, resp *Response, err error) int {
	if resp == nil || resp.FinishReason != string(openai.FinishReasonLength) || req.MaxTokens <= 0 {
		return 0
	}
	if err != nil && !errors.Is(err, ErrEmpty) {
		return 0
	}
	more := 2 * req.MaxTokens
	if w := c.ContextWindow(ctx, req.Task); w.Tokens > 0 {
		more = min(more, w.Tokens-MessagesTokens(msgs))
	}
	if more <= req.MaxTokens {
		return 0
	}
	return more
}

// deadlineError says that a call ran out of Config.Deadline.
func (c *Client) deadlineError(req Request, stream bool, err error) error {
	ci := callInfo{op: "chat completion", task: req.Task, model: c.ModelFor(req.Task), baseURL: c.cfg.BaseURL, provider: c.provider}
	if stream {
		ci.op = "chat stream"
	}
	e := ci.newError(ErrTimeout, fmt.Sprintf("no complete answer within the call deadline of %s", c.cfg.Deadline))
	e.Status = 0
	e.Err = err
	e.Advice = "the server is too slow or does not stop; the text received is kept (raise the model deadline if the model is just slow)"
	return e
}

// chatSchema sends with the schema when the server supports it, and sends
// again changed when the server's 400 names a parameter the model does not
// take (learn): without temperature, with max_completion_tokens for
// max_tokens, with json_object and then no response_format for json_schema.
func (c *Client) chatSchema(ctx context.Context, req Request, msgs []Message, onDelta func(string)) (*Response, error) {
	model := c.ModelFor(req.Task)
	for tries := 0; ; tries++ {
		format := ""
		if req.Schema != nil {
			format = FormatNone
			if !c.noSchema.Load() {
				format = cmp.Or(c.Capabilities(model).Format, FormatJSONSchema)
			}
		}
		resp, err := c.chatRetry(ctx, req, msgs, format, onDelta)
		if tries < 4 && c.learn(model, req.Schema != nil, err) {
			if c.Capabilities(model).Format == FormatNone {
				c.noSchema.Store(true)
			}
			continue
		}
		if resp != nil {
			resp.Structured = format == FormatJSONSchema
		}
		return resp, err
	}
}

func (c *Client) chatRetry(ctx context.Context, req Request, msgs []Message, format string, onDelta func(string)) (*Response, error) {
	ci := callInfo{op: "chat completion", task: req.Task, model: c.ModelFor(req.Task), baseURL: c.cfg.BaseURL, provider: c.provider}
	if onDelta != nil {
		ci.op = "chat stream"
	}
	var resp *Response
	err := c.retry(ctx, func() error {
		creq := c.buildChat(req, msgs, ci.model, format)
		maxTokens, err := c.fitAnswer(ctx, ci, req, creq.Messages)
		if err != nil {
			resp = nil
			return err
		}
		if c.Capabilities(ci.model).MaxCompletionTokens {
			creq.MaxCompletionTokens = maxTokens
		} else {
			creq.MaxTokens = maxTokens
		}
		settle, err := c.reserve(ctx, Call{Task: req.Task, Model: ci.model,
			EstUSD: c.Estimate(Request{Task: req.Task, Messages: creq.Messages, Schema: req.Schema, MaxTokens: req.MaxTokens})})
		if err != nil {
			resp = nil
			return err
		}
		defer func() {
			spent := 0.0
			if resp != nil {
				spent = resp.Usage.CostUSD
				if resp.Usage.UnreportedCalls > 0 {
					// No usage from the server: held at muse's own count.
					spent += c.countedCost(ci.model, creq.Messages, resp.Text)
				}
			}
			settle(spent)
		}()
		if onDelta == nil {
			resp, err = c.completeOnce(ctx, ci, creq)
		} else {
			withUsage := !c.noStreamUsage.Load()
			resp, err = c.streamOnce(ctx, ci, creq, onDelta)
			if withUsage && isStreamOptionsRejection(err) {
				c.noStreamUsage.Store(true)
				resp, err = c.streamOnce(ctx, ci, creq, onDelta)
			}
		}
		return err
	})
	return resp, err
}

// retry runs op until it succeeds, fails with an error that is not worth
// retrying, or runs out of attempts. It waits what the server asked
// (Retry-After) or else an exponential backoff with jitter.
func (c *Client) retry(ctx context.Context, op func() error) error {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = c.cfg.RetryBaseDelay
	b.MaxInterval = c.cfg.MaxRetryWait
	b.Reset()
	for attempt := 0; ; attempt++ {
		err := op()
		if err == nil {
			return nil
		}
		var ae *APIError
		if !errors.As(err, &ae) || !ae.retryable || attempt >= c.cfg.MaxRetries || ctx.Err() != nil {
			return err
		}
		wait := ae.RetryAfter
		if wait <= 0 {
			wait = b.NextBackOff()
		}
		wait = min(wait, c.cfg.MaxRetryWait)
		if serr := c.sleep(ctx, wait); serr != nil {
			return fmt.Errorf("%w (stopped while waiting to retry: %v)", err, serr)
		}
	}
}

// buildChat makes the request body for the model's capabilities: a
// reasoning model (o1, o3, o4, gpt-5), or one the server said so of, gets
// no temperature and max_completion_tokens. format is the response_format
// for a request with a schema (FormatJSONSchema, FormatJSONObject or
// FormatNone); "" for one without.
func (c *Client) buildChat(req Request, msgs []Message, model, format string) openai.ChatCompletionRequest {
	cp := c.Capabilities(model)
	creq := openai.ChatCompletionRequest{Model: model}
	if !cp.NoTemperature {
		creq.Temperature = ZeroTemperature
	}
	if cp.MaxCompletionTokens {
		creq.MaxCompletionTokens = req.MaxTokens
	} else {
		creq.MaxTokens = req.MaxTokens
	}
	switch {
	case req.Schema != nil && format == FormatJSONSchema:
		creq.Messages = msgs
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{
			Type: openai.ChatCompletionResponseFormatTypeJSONSchema,
			JSONSchema: &openai.ChatCompletionResponseFormatJSONSchema{
				Name:        req.Schema.Name,
				Description: req.Schema.Description,
				Schema:      req.Schema.JSON,
				Strict:      true,
			},
		}
	case req.Schema != nil && format == FormatJSONObject:
		// JSON mode: the server makes the answer a JSON object, the
		// instruction says which.
		creq.Messages = withFormatNote(msgs, (&Schema{JSON: req.Schema.JSON}).fallbackText())
		creq.ResponseFormat = &openai.ChatCompletionResponseFormat{Type: openai.ChatCompletionResponseFormatTypeJSONObject}
	case req.Schema != nil:
		creq.Messages = withFormatNote(msgs, req.Schema.fallbackText())
	default:
		creq.Messages = msgs
	}
	return creq
}

// withFormatNote appends the answer-format instruction to the last user
// message (some chat templates reject two user turns in a row) or adds one.
func withFormatNote(msgs []Message, note string) []Message {
	out := make([]Message, len(msgs))
	copy(out, msgs)
	last := len(out) - 1
	if out[last].Role == openai.ChatMessageRoleUser {
		m := out[last]
		if m.MultiContent != nil {
			parts := make([]openai.ChatMessagePart, len(m.MultiContent), len(m.MultiContent)+1)
			copy(parts, m.MultiContent)
			m.MultiContent = append(parts, openai.ChatMessagePart{Type: openai.ChatMessagePartTypeText, Text: note})
		} else {
			m.Content = strings.TrimRight(m.Content, "\n") + "\n\n" + note
		}
		out[last] = m
		return out
	}
	return append(out, Message{Role: openai.ChatMessageRoleUser, Content: note})
}

func isReasoningModel(model string) bool {
	m := strings.ToLower(model)
	if i := strings.LastIndex(m, "/"); i >= 0 {
		m = m[i+1:] // "openai/o3-mini" on routers
	}
	for _, p := range []string{"o1", "o3", "o4", "gpt-5"} {
		if m == p || strings.HasPrefix(m, p+"-") {
			return true
		}
	}
	return false
}

func (c *Client) completeOnce(ctx context.Context, ci callInfo, creq openai.ChatCompletionRequest) (*Response, error) {
	info := &respInfo{maxBytes: c.wireCap()}
	actx, cancel := context.WithTimeout(context.WithValue(ctx, respInfoKey{}, info), c.cfg.Timeout)
	defer cancel()
	r, err := c.api.CreateChatCompletion(actx, creq)
	if err != nil {
		return nil, ci.classify(ctx, err, info)
	}
	_, header := info.get()
	resp := &Response{Model: r.Model, Usage: c.usageOf(ci.model, r.Usage, fromCache(header))}
	if len(r.Choices) == 0 {
		if e := ci.inBand(info.body()); e != nil {
			return resp, e // OpenRouter's 200 with {"error":…} and no choices
		}
		return resp, ci.newError(ErrEmpty, "the server returned no choices")
	}
	ch := r.Choices[0]
	resp.Text = StripReasoning(ch.Message.Content) // never the reasoning fields
	resp.FinishReason = string(ch.FinishReason)
	if len(resp.Text) > c.cfg.MaxAnswerBytes {
		resp.Text = capText(resp.Text, c.cfg.MaxAnswerBytes)
		return resp, ci.tooLarge(c.cfg.MaxAnswerBytes)
	}
	return resp, ci.checkAnswer(resp.Text, ch.Message.Refusal, resp.FinishReason, answerFilter(info.body()))
}

// capText cuts s to at most n bytes, at a character boundary.
func capText(s string, n int) string {
	if len(s) <= n {
		return s
	}
	for n > 0 && !utf8.RuneStart(s[n]) {
		n--
	}
	return s[:n]
}

// wireCap is the most bytes read for one chat answer: the text cap with
// room for JSON escapes and a stream's framing of every few characters.
func (c *Client) wireCap() int64 { return 16 * int64(c.cfg.MaxAnswerBytes) }

func (ci callInfo) tooLarge(limit int) *APIError {
	e := ci.newError(ErrTooLarge, fmt.Sprintf("the answer passed the cap of %d bytes", limit))
	e.Advice = "the model did not stop; the text received is kept (raise the answer cap if the model is just long-winded)"
	return e
}

// checkAnswer turns refusals, filtered answers and empty answers into
// typed errors. filtered is what the content filter flagged, when the
// server said (Azure's content_filter_results).
func (ci callInfo) checkAnswer(text, refusal, finish string, filtered []string) error {
	if refusal != "" {
		e := ci.newError(ErrRefusal, refusal)
		e.Advice = "the model declined; edit the input or try another model"
		return e
	}
	if finish == string(openai.FinishReasonContentFilter) {
		e := ci.newError(ErrContentFilter, "the answer was withheld by the server's content filter")
		e.Provider, e.Filtered = providerOf(ci.baseURL), filtered
		if len(filtered) > 0 {
			e.Provider = "Azure" // content_filter_results are Azure's
		}
		e.Advice = contentFilterAdvice
		return e
	}
	if finish == "error" {
		// OpenRouter ends an answer its upstream provider broke off so.
		return ci.newError(ErrInBand, `the server ended the answer with finish_reason "error"`)
	}
	if strings.TrimSpace(text) == "" {
		e := ci.newError(ErrEmpty, "the model returned no text")
		if finish == string(openai.FinishReasonLength) {
			e.Advice = "the token limit was reached before any text (a reasoning model may need a higher limit)"
		}
		return e
	}
	return nil
}

func (c *Client) streamOnce(ctx context.Context, ci callInfo, creq openai.ChatCompletionRequest, onDelta func(string)) (*Response, error) {
	creq.Stream = true
	if !c.noStreamUsage.Load() && !c.Capabilities(ci.model).NoStreamOptions {
		creq.StreamOptions = &openai.StreamOptions{IncludeUsage: true}
	}
	info := &respInfo{maxBytes: c.wireCap()}
	actx, cancel := context.WithCancel(context.WithValue(ctx, respInfoKey{}, info))
	defer cancel()
	// Idle timeout: a stream may run for minutes, but never silently.
	var idle atomic.Bool
	timer := time.AfterFunc(c.cfg.Timeout, func() { idle.Store(true); cancel() })
	defer timer.Stop()

	st, err := c.api.CreateChatCompletionStream(actx, creq)
	if err != nil {
		if idle.Load() {
			err = fmt.Errorf("no response headers after %s: %w", c.cfg.Timeout, context.DeadlineExceeded)
		}
		return nil, ci.classify(ctx, err, info)
	}
	defer st.Close()

	var raw, refusal strings.Builder
	sent := "" // the visible answer passed to onDelta so far
	show := func(v string) {
		switch {
		case strings.HasPrefix(v, sent) && len(v) > len(sent):
			onDelta(v[len(sent):])
			sent = v
		case !strings.HasPrefix(v, sent):
			sent = v // what was shown turned out to be reasoning (a lone </think>): the final text replaces it
		}
	}
	_, header := info.get()
	cached := fromCache(header)
	// Unreported until a chunk carries usage (a server without
	// stream_options sends none).
	resp := &Response{Usage: Usage{LLMCalls: 1, UnreportedCalls: 1}}
	if cached {
		resp.Usage = Usage{LLMCalls: 1, CachedCalls: 1}
	}
	chunks := 0
	var filtered []string // what a content filter flagged, at the finish
	for {
		chunk, err := recvChunk(st)
		if err == nil && chunk.Error != nil {
			if e := ci.inBand(chunk.raw); e != nil {
				err = e
			}
		}
		if err != nil {
			resp.Text = StripReasoning(raw.String())
			show(resp.Text)
			if errors.Is(err, ErrTooLarge) {
				return resp, ci.tooLarge(c.cfg.MaxAnswerBytes)
			}
			if errors.Is(err, io.EOF) && resp.FinishReason == "" && info.sawDone() {
				resp.FinishReason = "stop" // "[DONE]" ends a complete stream, finish reason or not
			}
			return resp, ci.streamEnd(ctx, err, resp, refusal.String(), filtered, chunks, idle.Load(), c.cfg.Timeout)
		}
		timer.Reset(c.cfg.Timeout)
		chunks++
		if chunk.Model != "" {
			resp.Model = chunk.Model
		}
		if chunk.Usage != nil {
			resp.Usage = c.usageOf(ci.model, *chunk.Usage, cached)
		}
		for _, ch := range chunk.Choices {
			if ch.Index != 0 {
				continue
			}
			if ch.Delta.Content != "" { // never ch.Delta.ReasoningContent
				raw.WriteString(ch.Delta.Content)
				if raw.Len()+refusal.Len() > c.cfg.MaxAnswerBytes {
					resp.Text = capText(StripReasoning(raw.String()), c.cfg.MaxAnswerBytes)
					return resp, ci.tooLarge(c.cfg.MaxAnswerBytes)
				}
				show(visibleSoFar(raw.String()))
			}
			refusal.WriteString(ch.Delta.Refusal)
			if ch.FinishReason != "" {
				resp.FinishReason = string(ch.FinishReason)
				filtered = answerFilter(chunk.raw)
			}
		}
	}
}

// streamChunk is one stream event: a chat.completion.chunk, or an error
// object sent in its place or beside it (OpenRouter's mid-stream errors).
type streamChunk struct {
	openai.ChatCompletionStreamResponse
	Error json.RawMessage `json:"error"`
	raw   []byte
}

// recvChunk reads the next event of a stream. go-openai's Recv would drop
// an "error" beside the choices; an event that starts with {"error": it
// already returns as an *openai.APIError.
func recvChunk(st *openai.ChatCompletionStream) (streamChunk, error) {
	var ch streamChunk
	raw, err := st.RecvRaw()
	if err != nil {
		return ch, err
	}
	if err := json.Unmarshal(raw, &ch); err != nil {
		return ch, err
	}
	if string(ch.Error) == "null" {
		ch.Error = nil
	}
	ch.raw = raw
	return ch, nil
}

// streamEnd decides what the end of a stream means. io.EOF after a finish
// reason is the normal end ([DONE] or a server that just closes).
func (ci callInfo) streamEnd(ctx context.Context, err error, resp *Response, refusal string, filtered []string, chunks int, idle bool, timeout time.Duration) error {
	if errors.Is(err, io.EOF) && resp.FinishReason != "" {
		return ci.checkAnswer(resp.Text, refusal, resp.FinishReason, filtered)
	}
	if perr := ctx.Err(); perr != nil {
		return fmt.Errorf("llm %s: %w", ci.op, context.Cause(ctx))
	}
	var ie *APIError
	if errors.As(err, &ie) && (ie.Kind == ErrInBand || ie.Kind == ErrContentFilter) {
		return ie // an error object beside the choices (recvChunk)
	}
	if ae, _ := errorsAsAPI(err); ae != nil {
		// An event that is only {"error":…}: go-openai read it.
		body, _ := json.Marshal(map[string]any{"error": ae})
		if e := ci.inBand(body); e != nil {
			return e
		}
	}
	if _, re := errorsAsAPI(err); re != nil {
		return ci.classify(ctx, err, nil)
	}
	e := ci.newError(ErrStreamCut, "")
	e.Err = err
	switch {
	case idle:
		e.Message = fmt.Sprintf("no data for %s after %d chunks", timeout, chunks)
	case errors.Is(err, io.EOF):
		e.Message = fmt.Sprintf("the stream ended after %d chunks without a finish reason", chunks)
	default:
		e.Message = fmt.Sprintf("the stream broke after %d chunks: %v", chunks, err)
	}
	if resp.Text == "" {
		// Nothing reached the caller yet, so trying again is safe.
		e.retryable = true
		e.Advice = "the connection dropped before any text; muse retries"
	} else {
		e.Advice = "the answer is incomplete; the partial text is kept, run the step again for a full answer"
	}
	return e
}
