package llm

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/musecheck/muse/sources"
)

// Kinds of failure. An *APIError matches its kind with errors.Is:
//
//	if errors.Is(err, llm.ErrContextLength) { ... }
var (
	ErrAuth          = errors.New("authentication failed")
	ErrModelNotFound = errors.New("model not found")
	ErrContextLength = errors.New("context length exceeded")
	ErrRateLimited   = errors.New("rate limited")
	ErrQuota         = errors.New("quota exhausted")
	ErrServer        = errors.New("server error")
	ErrBadRequest    = errors.New("request rejected")
	ErrTimeout       = errors.New("timed out")
	ErrUnavailable   = errors.New("server unreachable")
	ErrRefusal       = errors.New("model refused")
	ErrEmpty         = errors.New("empty answer")
	ErrMalformed     = errors.New("malformed answer")
	ErrStreamCut     = errors.New("stream cut before the end")
	// ErrContentFilter: the server's content filter blocked the prompt or
	// withheld the answer (Azure's content_filter, OpenRouter's
	// moderation). It is the server refusing, so errors.Is(err,
	// ErrRefusal) holds for it too.
	ErrContentFilter = errors.New("content filtered")
	// ErrInBand: the server answered 200 but sent an error object in place
	// of the answer, in the body or as a stream event (OpenRouter, and
	// OpenAI mid-stream).
	ErrInBand = errors.New("error in place of the answer")
)

// APIError is every error the client returns for a call that reached (or
// tried to reach) the server. Kind is one of the Err* values above.
type APIError struct {
	// Op says what was being done: "chat completion", "chat stream", "embeddings".
	Op string
	// Task and Model of the call; BaseURL of the server.
	Task, Model, BaseURL string
	// Status is the HTTP status, 0 when no response arrived (or 200 for a bad answer).
	Status int
	Kind   error
	// Code, Type, Param and Message are the server's error.code,
	// error.type, error.param, error.message.
	Code, Type, Param, Message string
	// Provider names the server's dialect when its answer shows it:
	// "Azure" (innererror, content_filter_results) or "OpenRouter"
	// (error.metadata), else from the host; "" when unknown.
	Provider string
	// Filtered is what a content filter flagged, in the server's words:
	// "hate, medium" (Azure's category and severity), "violence/graphic"
	// (OpenRouter's moderation reasons).
	Filtered []string
	// Quota names the quota a 429 says ran out, in the server's words
	// (Gemini's quotaId and limit: "GenerateRequestsPerDayPerProjectPerModel-FreeTier, 200").
	Quota string
	// Advice tells the user what to do about it.
	Advice string
	// RetryAfter is what the server asked us to wait (Retry-After, retry-after-ms).
	RetryAfter time.Duration
	// Err is the underlying error, if any.
	Err error

	retryable bool
}

func (e *APIError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "llm %s", e.Op)
	if e.Model != "" {
		fmt.Fprintf(&b, " (model %s)", e.Model)
	}
	fmt.Fprintf(&b, ": %v", e.Kind)
	if e.Status != 0 && e.Status != http.StatusOK {
		fmt.Fprintf(&b, " (HTTP %d)", e.Status)
	}
	if e.Message != "" {
		fmt.Fprintf(&b, ": %s", e.Message)
	} else if e.Err != nil {
		fmt.Fprintf(&b, ": %v", e.Err)
	}
	if len(e.Filtered) > 0 {
		fmt.Fprintf(&b, " (flagged: %s)", strings.Join(e.Filtered, "; "))
	}
	if e.Advice != "" {
		fmt.Fprintf(&b, " — %s", e.Advice)
	}
	return b.String()
}

// Is matches the error's Kind; a content filter's block is also a refusal.
func (e *APIError) Is(target error) bool {
	return target == e.Kind || (e.Kind == ErrContentFilter && target == ErrRefusal)
}

// Unwrap gives the underlying error (go-openai's, net's, context's).
func (e *APIError) Unwrap() error { return e.Err }

type callInfo struct {
	op, task, model, baseURL string
	// provider is the client's dialect ("Azure"), when known.
	provider string
}

func (ci callInfo) newError(kind error, msg string) *APIError {
	return &APIError{Op: ci.op, Task: ci.task, Model: ci.model, BaseURL: ci.baseURL, Status: http.StatusOK, Kind: kind, Message: msg}
}

// classify turns whatever go-openai or net/http returned into an *APIError.
// The parent context's own cancellation is returned unchanged: the user
// stopped the call, there is nothing to advise.
func (ci callInfo) classify(parent context.Context, err error, info *respInfo) error {
	if err == nil {
		return nil
	}
	if perr := parent.Err(); perr != nil {
		return fmt.Errorf("llm %s: %w", ci.op, context.Cause(parent))
	}
	e := &APIError{Op: ci.op, Task: ci.task, Model: ci.model, BaseURL: ci.baseURL, Err: err}
	if info != nil {
		status, h := info.get()
		if status >= 400 {
			e.Status = status
			e.RetryAfter = retryAfter(h)
		}
	}
	ae, re := errorsAsAPI(err)
	switch {
	case ae != nil:
		if ae.HTTPStatusCode != 0 {
			e.Status = ae.HTTPStatusCode
		}
		e.Message = ae.Message
		e.Type = ae.Type
		if ae.Code != nil {
			e.Code = fmt.Sprint(ae.Code)
		}
		if ae.Param != nil {
			e.Param = *ae.Param
		}
	case re != nil:
		if re.HTTPStatusCode != 0 {
			e.Status = re.HTTPStatusCode
		}
		e.Message = bodyMessage(re.Body)
	}
	if info != nil {
		ci.readDialect(e, info.body())
	}
	if e.Status != 0 {
		ci.classifyStatus(e)
		return e
	}
	ci.classifyTransport(e, err)
	return e
}

func (ci callInfo) classifyStatus(e *APIError) {
	msg := strings.ToLower(e.Message)
	code := strings.ToLower(e.Code)
	host := hostOf(ci.baseURL)
	switch {
	case isContentFilter(e):
		// Before the key: OpenRouter's moderation is a 403 too.
		e.Kind = ErrContentFilter
		e.Advice = contentFilterAdvice
	case e.Status == http.StatusUnauthorized || e.Status == http.StatusForbidden || code == "invalid_api_key":
		e.Kind = ErrAuth
		e.Advice = fmt.Sprintf("%s rejected the API key: check OPENAI_API_KEY (and OPENAI_BASE_URL if the key is for another server)", host)
		if e.Provider == "Azure" {
			e.Advice = fmt.Sprintf("%s rejected the API key: OPENAI_API_KEY must be a key of this Azure OpenAI resource (muse sends it as the api-key header)", host)
		}
	case code == "deploymentnotfound":
		e.Kind = ErrModelNotFound
		e.Advice = fmt.Sprintf("%s has no deployment for model %q: set MUSE_MODEL (or the per-task model) to the deployment's name, or name the deployment in OPENAI_BASE_URL", host, ci.model)
	case code == "model_not_found" || (e.Status == http.StatusNotFound && strings.Contains(msg, "model")):
		e.Kind = ErrModelNotFound
		e.Advice = fmt.Sprintf("%s has no model %q: set MUSE_MODEL (or the per-task model) to a model the server lists; for Ollama run `ollama pull %s`", host, ci.model, ci.model)
	case isContextLength(code, msg) || isContextLength(strings.ToLower(e.Type), ""):
		e.Kind = ErrContextLength
		e.Advice = "the prompt is longer than the model's context: shorten the article or use a model with a longer context"
	case e.Status == http.StatusTooManyRequests && code == "resource_exhausted" && !isDailyQuota(e.Quota) &&
		(e.RetryAfter > 0 || strings.Contains(strings.ToLower(e.Quota), "perminute")):
		// Gemini's per-minute limit: its message speaks of quota and
		// billing too, but it resets in retryDelay.
		e.Kind = ErrRateLimited
		e.Advice = fmt.Sprintf("%s's per-minute limit (%s) was reached; muse waits the %s it asks and retries, lower the parallelism if it keeps happening",
			cmp.Or(e.Provider, host), cmp.Or(e.Quota, "requests per minute"), e.RetryAfter.Round(time.Second))
		e.retryable = true
	case e.Status == http.StatusTooManyRequests && code == "resource_exhausted":
		e.Kind = ErrQuota
		e.Advice = fmt.Sprintf("%s's quota %s is used up and does not reset within minutes: a daily quota resets at midnight Pacific time; enable billing on the project or use another key",
			cmp.Or(e.Provider, host), cmp.Or(e.Quota, "(unnamed)"))
	case e.Status == http.StatusTooManyRequests && (code == "insufficient_quota" || strings.Contains(msg, "quota")):
		e.Kind = ErrQuota
		e.Advice = fmt.Sprintf("the account at %s has no quota left: check billing or use another key", host)
	case e.Status == http.StatusTooManyRequests:
		e.Kind = ErrRateLimited
		e.Advice = "the server is rate limiting; muse waits and retries, lower the parallelism if it keeps happening"
		e.retryable = true
	case e.Status == http.StatusRequestTimeout:
		e.Kind = ErrTimeout
		e.retryable = true
	case e.Status >= 500:
		e.Kind = ErrServer
		e.Advice = fmt.Sprintf("%s failed; muse retries, try again later if it persists", host)
		e.retryable = true
	case e.Status == http.StatusNotFound && e.Provider == "Azure":
		e.Kind = ErrBadRequest
		e.Advice = fmt.Sprintf("%s has no such deployment or API version: check that model (or the deployment in OPENAI_BASE_URL) names a deployment of this resource, and azure_api_version; or use the v1 API, OPENAI_BASE_URL=https://%s/openai/v1", host, host)
	case e.Status == http.StatusNotFound:
		e.Kind = ErrBadRequest
		e.Advice = fmt.Sprintf("%s has no such endpoint: OPENAI_BASE_URL should end in the API version, e.g. /v1", host)
	default:
		e.Kind = ErrBadRequest
	}
}

const contentFilterAdvice = "the server's content filter refused the text sent (a page or the post tripped it); its settings are the server's (on Azure, the deployment's content filter)"

// isContentFilter recognises a content filter's refusal: Azure's
// "content_filter" code (400 for a prompt, with innererror
// ResponsibleAIPolicyViolation) and OpenRouter's moderation (403 with the
// reasons in error.metadata).
func isContentFilter(e *APIError) bool {
	code := strings.ToLower(e.Code)
	return code == "content_filter" || code == "responsibleaipolicyviolation" || len(e.Filtered) > 0
}

// errorBody is an error object as the servers send it: OpenAI's
// {"error":{"message","type","param","code"}}, with Azure's innererror and
// OpenRouter's metadata.
type errorBody struct {
	Error *struct {
		Message    string          `json:"message"`
		Type       any             `json:"type"`
		Code       any             `json:"code"`
		InnerError *innerError     `json:"innererror"`
		Metadata   *routerMetadata `json:"metadata"`
	} `json:"error"`
}

// innerError is Azure's: the policy that blocked the prompt and what each
// category of the content filter found.
type innerError struct {
	Code   string                     `json:"code"`
	Result map[string]json.RawMessage `json:"content_filter_result"`
}

// routerMetadata is OpenRouter's error.metadata: the moderation's reasons,
// or the upstream provider and its raw error.
type routerMetadata struct {
	Reasons      []string `json:"reasons"`
	ProviderName string   `json:"provider_name"`
	Raw          any      `json:"raw"`
}

// readDialect reads what the error body says beyond OpenAI's fields:
// Azure's content filter results, OpenRouter's moderation reasons and
// upstream provider. The message is the server's own, kept as it is.
func (ci callInfo) readDialect(e *APIError, body []byte) {
	if e.Provider == "" {
		e.Provider = cmp.Or(ci.provider, providerOf(ci.baseURL))
	}
	if g := readGoogle(body); g != nil {
		ci.readGoogle(e, g)
		return
	}
	var b errorBody
	if len(body) == 0 || json.Unmarshal(body, &b) != nil || b.Error == nil {
		return
	}
	if e.Message == "" {
		e.Message = b.Error.Message
	}
	if e.Code == "" && b.Error.Code != nil {
		e.Code = fmt.Sprint(b.Error.Code)
	}
	if ie := b.Error.InnerError; ie != nil {
		e.Provider = "Azure"
		e.Filtered = flagged(ie.Result)
		if e.Code == "" {
			e.Code = ie.Code
		}
	}
	if md := b.Error.Metadata; md != nil {
		e.Provider = "OpenRouter"
		e.Filtered = md.Reasons
		if raw, ok := md.Raw.(string); ok && raw != "" && !strings.Contains(e.Message, raw) {
			e.Message += ": " + clipText(raw, 300)
		}
		if md.ProviderName != "" {
			e.Message += " (upstream provider " + md.ProviderName + ")"
		}
	}
}

// flagged lists the categories a content filter flagged, with their
// severity when it gives one ("hate, medium", "jailbreak"), by name.
func flagged(results map[string]json.RawMessage) []string {
	var out []string
	for _, name := range slices.Sorted(maps.Keys(results)) {
		var r struct {
			Filtered bool   `json:"filtered"`
			Severity string `json:"severity"`
		}
		if json.Unmarshal(results[name], &r) != nil || !r.Filtered {
			continue
		}
		if r.Severity != "" && r.Severity != "safe" {
			name += ", " + r.Severity
		}
		out = append(out, name)
	}
	return out
}

// answerFilter is what a content filter flagged in a chat answer or
// stream chunk: Azure's choices[0].content_filter_results.
func answerFilter(body []byte) []string {
	var a struct {
		Choices []struct {
			Results map[string]json.RawMessage `json:"content_filter_results"`
		} `json:"choices"`
	}
	if json.Unmarshal(body, &a) != nil || len(a.Choices) == 0 {
		return nil
	}
	return flagged(a.Choices[0].Results)
}

// inBand reads an error object sent with status 200 in place of the answer
// (OpenRouter's {"error":{"code":502,"message":…,"metadata":…}}, in the body
// or as a stream event); nil when body holds none.
func (ci callInfo) inBand(body []byte) *APIError {
	var b errorBody
	if json.Unmarshal(body, &b) != nil || b.Error == nil {
		return nil
	}
	e := ci.newError(ErrInBand, "")
	if t, ok := b.Error.Type.(string); ok {
		e.Type = t
	}
	ci.readDialect(e, body)
	if e.Message == "" {
		e.Message = "the server sent an error object in place of the answer"
	}
	if isContentFilter(e) {
		e.Kind = ErrContentFilter
		e.Advice = contentFilterAdvice
		return e
	}
	e.Advice = fmt.Sprintf("%s answered with an error in place of the answer; the message above is the server's", hostOf(ci.baseURL))
	return e
}

// googleError is the error object of Google's APIs (Gemini's
// OpenAI-compatible endpoint sends it wrapped in a JSON list):
// {"error": {"code", "message", "status", "details": [{"@type", …}]}}.
type googleError struct {
	Error *struct {
		Code    int    `json:"code"`
		Message string `json:"message"`
		Status  string `json:"status"`
		Details []struct {
			Type       string `json:"@type"`
			RetryDelay string `json:"retryDelay"`
			Violations []struct {
				QuotaID    string `json:"quotaId"`
				QuotaValue string `json:"quotaValue"`
			} `json:"violations"`
		} `json:"details"`
	} `json:"error"`
}

// readGoogle reads a Google error body, list or object; nil for any other.
func readGoogle(body []byte) *googleError {
	body = bytes.TrimSpace(body)
	var g googleError
	if len(body) > 0 && body[0] == '[' {
		var list []googleError
		if json.Unmarshal(body, &list) != nil || len(list) == 0 {
			return nil
		}
		g = list[0]
	} else if json.Unmarshal(body, &g) != nil {
		return nil
	}
	if g.Error == nil || g.Error.Status == "" {
		return nil // OpenAI's own error objects have no status
	}
	return &g
}

// readGoogle puts what a Google error says into e: the message (never the
// raw JSON), the status as the code, the quota that ran out and the
// RetryInfo's retryDelay, honoured like Retry-After.
func (ci callInfo) readGoogle(e *APIError, g *googleError) {
	if p := providerOf(ci.baseURL); p != "" {
		e.Provider = p
	} else {
		e.Provider = "Gemini"
	}
	e.Message = g.Error.Message
	e.Code = g.Error.Status
	var quotas []string
	for _, d := range g.Error.Details {
		switch {
		case strings.HasSuffix(d.Type, "google.rpc.RetryInfo"):
			if dur, err := time.ParseDuration(d.RetryDelay); err == nil && dur > 0 && e.RetryAfter == 0 {
				e.RetryAfter = dur
			}
		case strings.HasSuffix(d.Type, "google.rpc.QuotaFailure"):
			for _, v := range d.Violations {
				q := v.QuotaID
				if v.QuotaValue != "" {
					q += ", limit " + v.QuotaValue
				}
				quotas = append(quotas, q)
			}
		}
	}
	e.Quota = strings.Join(quotas, "; ")
}

// isDailyQuota: a quota that resets daily (or never, a billing one), not
// within minutes.
func isDailyQuota(quota string) bool {
	q := strings.ToLower(quota)
	return strings.Contains(q, "perday") || strings.Contains(q, "per_day") || strings.Contains(q, "billing")
}

// providerOf names the hosted servers whose dialect muse reads by their host.
func providerOf(base string) string {
	h := strings.ToLower(hostOf(base))
	switch {
	case strings.HasSuffix(h, ".openai.azure.com") || strings.HasSuffix(h, ".azure.com"):
		return "Azure"
	case h == "openrouter.ai" || strings.HasSuffix(h, ".openrouter.ai"):
		return "OpenRouter"
	case h == "generativelanguage.googleapis.com":
		return "Gemini"
	}
	return ""
}

func clipText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if len(s) <= n {
		return s
	}
	return capText(s, n) + "…"
}

// isContextLength recognises the servers' ways of saying the prompt and
// answer do not fit: OpenAI's context_length_exceeded, vLLM's 400 "maximum
// context length", llama.cpp's exceed_context_size_error ("the request
// exceeds the available context size", a 500 in older builds) and Ollama's
// "input length exceeds the context length".
func isContextLength(code, msg string) bool {
	if code == "context_length_exceeded" || code == "string_above_max_length" || code == "exceed_context_size_error" {
		return true
	}
	for _, s := range []string{"maximum context length", "context length", "context_length", "context window", "too many tokens",
		"prompt is too long", "exceeds the context", "exceed_context_size", "available context size", "context size",
		"context shift is disabled", "input is too large to process"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func (ci callInfo) classifyTransport(e *APIError, err error) {
	host := hostOf(ci.baseURL)
	var se *json.SyntaxError
	var te *json.UnmarshalTypeError
	var ne net.Error
	switch {
	case errors.Is(err, ErrTooLarge):
		e.Kind = ErrTooLarge
		e.Status = http.StatusOK
		e.Advice = fmt.Sprintf("%s sent more than muse accepts for one answer", host)
	case errors.As(err, &se) || errors.As(err, &te):
		e.Kind = ErrMalformed
		e.Status = http.StatusOK
		e.Advice = fmt.Sprintf("%s answered with something that is not OpenAI JSON: is OPENAI_BASE_URL an OpenAI-compatible API?", host)
	case errors.Is(err, context.DeadlineExceeded) || (errors.As(err, &ne) && ne.Timeout()):
		e.Kind = ErrTimeout
		e.Advice = fmt.Sprintf("%s did not answer in time", host)
		e.retryable = true
	case errors.Is(err, syscall.ECONNREFUSED):
		e.Kind = ErrUnavailable
		e.Advice = fmt.Sprintf("nothing listens at %s: is the server running?", host)
	case errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) || errors.Is(err, syscall.ECONNRESET):
		e.Kind = ErrUnavailable
		e.Advice = fmt.Sprintf("%s dropped the connection", host)
		e.retryable = true
	default:
		var ue *url.Error
		if errors.As(err, &ue) {
			e.Kind = ErrUnavailable
			e.Advice = fmt.Sprintf("could not reach %s", host)
			e.retryable = true
			return
		}
		e.Kind = ErrBadRequest
	}
}

// retryAfter reads OpenAI's retry-after-ms, then the standard Retry-After
// (sources.RetryAfter: seconds or an HTTP date).
func retryAfter(h http.Header) time.Duration {
	if h == nil {
		return 0
	}
	if v := strings.TrimSpace(h.Get("Retry-After-Ms")); v != "" {
		if ms, err := strconv.ParseFloat(v, 64); err == nil && ms >= 0 && ms < float64(sources.MaxRetryAfter/time.Millisecond) {
			return time.Duration(ms * float64(time.Millisecond))
		}
	}
	d, _ := sources.RetryAfter(h, time.Now())
	return d
}

// bodyMessage pulls a message out of an error body go-openai could not
// parse as {"error":{...}}: Ollama's native {"error":"..."} or plain text.
func bodyMessage(body []byte) string {
	var m struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
		Detail  any    `json:"detail"`
	}
	if json.Unmarshal(body, &m) == nil {
		switch v := m.Error.(type) {
		case string:
			return v
		case map[string]any:
			if s, ok := v["message"].(string); ok {
				return s
			}
		}
		if m.Message != "" {
			return m.Message
		}
		if s, ok := m.Detail.(string); ok {
			return s
		}
	}
	if g := readGoogle(body); g != nil {
		return g.Error.Message
	}
	var v any
	if json.Unmarshal(body, &v) == nil {
		// JSON of a shape muse does not know: its first message, never
		// the raw JSON.
		if m := firstMessage(v); m != "" {
			return m
		}
		return fmt.Sprintf("the server's error (%d bytes of JSON) has no message", len(body))
	}
	s := strings.TrimSpace(string(body))
	if len(s) > 300 {
		s = s[:300] + "…"
	}
	return s
}

// firstMessage is the first "message" string in a JSON value, depth first.
func firstMessage(v any) string {
	switch v := v.(type) {
	case map[string]any:
		if s, ok := v["message"].(string); ok && s != "" {
			return s
		}
		for _, k := range slices.Sorted(maps.Keys(v)) {
			if m := firstMessage(v[k]); m != "" {
				return m
			}
		}
	case []any:
		for _, x := range v {
			if m := firstMessage(x); m != "" {
				return m
			}
		}
	}
	return ""
}

// isSchemaRejection says whether the server refused the request because of
// response_format (servers without structured output support).
func isSchemaRejection(err error) bool {
	var e *APIError
	if !errors.As(err, &e) || e.Kind != ErrBadRequest {
		return false
	}
	if e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity && e.Status != http.StatusNotImplemented {
		return false
	}
	m := strings.ToLower(e.Message + " " + e.Code + " " + e.Type)
	return strings.Contains(m, "response_format") || strings.Contains(m, "json_schema") || strings.Contains(m, "response format")
}

// isStreamOptionsRejection: older servers reject stream_options.
func isStreamOptionsRejection(err error) bool {
	var e *APIError
	if !errors.As(err, &e) || e.Kind != ErrBadRequest {
		return false
	}
	m := strings.ToLower(e.Message + " " + e.Code)
	return strings.Contains(m, "stream_options") || strings.Contains(m, "include_usage")
}

func hostOf(base string) string {
	if u, err := url.Parse(base); err == nil && u.Host != "" {
		return u.Host
	}
	return base
}
