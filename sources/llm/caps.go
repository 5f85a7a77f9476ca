package llm

import (
	"errors"
	"net/http"
	"strings"
)

// Capabilities say which of the request parameters muse sends a model
// takes. The zero value is what muse sends unless told: temperature (see
// ZeroTemperature), the answer's limit as max_tokens (max_completion_tokens
// for the reasoning models OpenAI names o1, o3, o4, gpt-5), response_format
// json_schema and stream_options. Config.Capabilities sets them per model;
// a 400 that names one of them teaches the client the rest of the process.
type Capabilities struct {
	// NoTemperature: send no temperature (the model takes only its default).
	NoTemperature bool `json:"no_temperature,omitempty"`
	// MaxCompletionTokens: send the answer's limit as max_completion_tokens.
	MaxCompletionTokens bool `json:"max_completion_tokens,omitempty"`
	// Format is the response_format for a request with a schema: ""
	// (json_schema), FormatJSONObject, or FormatNone (the schema's plain
	// fallback instruction, no response_format).
	Format string `json:"format,omitempty"`
	// NoStreamOptions: send no stream_options (so no usage in a stream).
	NoStreamOptions bool `json:"no_stream_options,omitempty"`
}

// Response formats for Capabilities.Format.
const (
	FormatJSONSchema = "json_schema"
	FormatJSONObject = "json_object"
	FormatNone       = "none"
)

// Capabilities are what the client knows of a model: Config.Capabilities,
// then what the server taught it.
func (c *Client) Capabilities(model string) Capabilities {
	c.capsMu.Lock()
	defer c.capsMu.Unlock()
	if cp, ok := c.caps[model]; ok {
		return cp
	}
	cp := c.cfg.Capabilities[model]
	if isReasoningModel(model) {
		cp.NoTemperature, cp.MaxCompletionTokens = true, true
	}
	return cp
}

// Learned reports the capabilities the server taught the client, by model.
func (c *Client) Learned() map[string]Capabilities {
	c.capsMu.Lock()
	defer c.capsMu.Unlock()
	out := make(map[string]Capabilities, len(c.caps))
	for k, v := range c.caps {
		out[k] = v
	}
	return out
}

// learn reads a 400 that names a parameter the model does not take and
// records the change for the model (a response_format rejection only when
// the request had a schema); true when the request is worth sending
// again changed. Each parameter is learned once: a server that rejects the
// changed request too gets no third try.
func (c *Client) learn(model string, schema bool, err error) bool {
	param := unsupportedParam(err)
	if param == "" && isSchemaRejection(err) {
		param = "response_format"
	}
	if param == "" {
		return false
	}
	cp := c.Capabilities(model)
	was := cp
	switch param {
	case "temperature", "top_p":
		cp.NoTemperature = true
	case "max_tokens":
		cp.MaxCompletionTokens = true
	case "response_format", "json_schema":
		if !schema {
			return false
		}
		switch {
		case cp.Format == "" && strings.Contains(strings.ToLower(errorText(err)), "json_object"):
			cp.Format = FormatJSONObject
		default:
			cp.Format = FormatNone
		}
	default: // stream_options: the client stops sending it for every model (chatRetry)
		return false
	}
	if cp == was {
		return false
	}
	c.capsMu.Lock()
	c.caps[model] = cp
	c.capsMu.Unlock()
	if c.cfg.OnLearn != nil {
		c.cfg.OnLearn(model, cp)
	}
	return true
}

func errorText(err error) string {
	var e *APIError
	if !errors.As(err, &e) {
		return ""
	}
	return e.Message + " " + e.Code + " " + e.Type + " " + e.Param
}

// unsupportedParam names the parameter a server's 400 (or 422) says the
// model does not take, or "":
//
//   - OpenAI and Azure: "param": "temperature" with code
//     unsupported_parameter or unsupported_value ("Unsupported value:
//     'temperature' does not support 1e-06 with this model. Only the
//     default (1) value is supported."); "Unsupported parameter:
//     'max_tokens' is not supported with this model. Use
//     'max_completion_tokens' instead."; "Invalid parameter:
//     'response_format' of type 'json_schema' is not supported with this
//     model."
//   - LiteLLM: "litellm.UnsupportedParamsError: openai does not support
//     parameters: ['temperature'], for model=o1-mini. …"
//   - vLLM's request validation: "response_format.type Input should be
//     'text' or 'json_object'", "Stream options can only be defined when
//     `stream=True`."
func unsupportedParam(err error) string {
	var e *APIError
	if !errors.As(err, &e) || e.Kind != ErrBadRequest {
		return ""
	}
	if e.Status != http.StatusBadRequest && e.Status != http.StatusUnprocessableEntity && e.Status != http.StatusNotImplemented {
		return ""
	}
	msg := strings.ToLower(e.Message)
	code := strings.ToLower(e.Code)
	known := []string{"temperature", "top_p", "max_tokens", "response_format", "json_schema", "stream_options"}
	if p := strings.ToLower(e.Param); p != "" && (code == "unsupported_parameter" || code == "unsupported_value" ||
		strings.Contains(msg, "unsupported") || strings.Contains(msg, "not supported")) {
		for _, k := range known {
			if p == k || strings.HasPrefix(p, k+".") {
				return k
			}
		}
	}
	if !strings.Contains(msg, "unsupported") && !strings.Contains(msg, "not support") && !strings.Contains(msg, "input should be") &&
		!strings.Contains(msg, "can only be defined") && !strings.Contains(msg, "not allowed") && !strings.Contains(msg, "does not support") {
		return ""
	}
	for _, k := range known {
		// The parameter as the message quotes it: 'temperature', ['temperature'], `max_tokens`, response_format.type.
		for _, q := range []string{"'" + k + "'", "`" + k + "`", `"` + k + `"`, k + ".", k + " "} {
			if strings.Contains(msg, q) {
				return k
			}
		}
	}
	if strings.Contains(msg, "stream options") {
		return "stream_options"
	}
	return ""
}
