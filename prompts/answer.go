package prompts

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/kaptinlin/jsonrepair"

	"github.com/musecheck/muse/sources/llm"
)

// Parsers accept the JSON the schemas ask for, the same JSON wrapped in a
// Markdown code fence or surrounded by chatter, and the paper's plain-text
// formats. They never panic; an answer that fits no form is an error
// wrapping llm.ErrMalformed (llm.ErrRefusal for an apology, llm.ErrEmpty for
// nothing at all), so callers can tell the cases apart with errors.Is.

// stringArrays is a strict object schema whose properties are string arrays.
func stringArrays(names ...string) json.RawMessage {
	props := map[string]any{}
	for _, n := range names {
		props[n] = map[string]any{"type": "array", "items": map[string]any{"type": "string"}}
	}
	b, _ := json.Marshal(map[string]any{
		"type": "object", "properties": props, "required": names, "additionalProperties": false,
	})
	return b
}

// fallback renders a format template; an error leaves the generic
// "answer with JSON matching the schema" of llm.Schema, which the parsers
// also accept.
func fallback(name string, data any) string {
	s, err := render(name, data)
	if err != nil {
		return ""
	}
	return s
}

// prepare takes out a reasoning model's thinking (llm.StripReasoning), trims
// the answer, unwraps a Markdown code fence and recognises empty answers and
// refusals.
func prepare(what, text string) (string, error) {
	if !utf8.ValidString(text) {
		text = strings.ToValidUTF8(text, "\uFFFD")
	}
	body := strings.TrimSpace(strings.ReplaceAll(llm.StripReasoning(text), "\r\n", "\n"))
	body = unfence(body)
	if body == "" {
		return "", fmt.Errorf("prompts: parse %s answer: %w", what, llm.ErrEmpty)
	}
	if isRefusal(body) {
		return "", fmt.Errorf("prompts: parse %s answer %q: %w", what, snippet(body), llm.ErrRefusal)
	}
	return body, nil
}

var fenceRe = regexp.MustCompile("(?s)```[a-zA-Z0-9_-]*[ \\t]*\\n(.*?)\\n?```")

func unfence(s string) string {
	if m := fenceRe.FindStringSubmatch(s); m != nil {
		return strings.TrimSpace(m[1])
	}
	return s
}

// jsonObject finds the JSON object of an answer as real models write it:
// the whole answer, else the last complete top-level object in it (a model
// that drafts an object and then corrects it means the last one), else the
// same repaired by jsonrepair (single quotes, trailing commas, unescaped
// inner quotes, a missing closing brace).
func jsonObject(s string) (map[string]json.RawMessage, bool) {
	var obj map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &obj) == nil && obj != nil {
		return obj, true
	}
	spans := objectSpans(s)
	for i := len(spans) - 1; i >= 0; i-- {
		if json.Unmarshal([]byte(s[spans[i][0]:spans[i][1]]), &obj) == nil && obj != nil {
			return obj, true
		}
	}
	if t := strings.TrimSpace(s); !strings.HasPrefix(t, "{") && !strings.Contains(s, `{"`) && !strings.Contains(s, "{'") {
		return nil, false // prose with a brace in it is not JSON to repair
	}
	var candidates []string
	for i := len(spans) - 1; i >= 0; i-- {
		candidates = append(candidates, s[spans[i][0]:spans[i][1]])
	}
	if i := strings.LastIndexByte(s, '{'); i >= 0 && (len(spans) == 0 || i >= spans[len(spans)-1][1]) {
		candidates = append([]string{s[i:]}, candidates...) // an object never closed
	}
	if i := strings.IndexByte(s, '{'); i >= 0 {
		candidates = append(candidates, s[i:])
	}
	for _, c := range candidates {
		fixed, err := jsonrepair.JSONRepair(c)
		if err == nil && json.Unmarshal([]byte(fixed), &obj) == nil && obj != nil {
			return obj, true
		}
	}
	return nil, false
}

// objectSpans are the byte spans of the top-level {…} of s, braces inside
// double-quoted strings ignored.
func objectSpans(s string) [][2]int {
	var out [][2]int
	depth, start := 0, -1
	inStr, esc := false, false
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"' && depth > 0:
			inStr = true
		case c == '{':
			if depth == 0 {
				start = i
			}
			depth++
		case c == '}' && depth > 0:
			depth--
			if depth == 0 {
				out = append(out, [2]int{start, i + 1})
			}
		}
	}
	return out
}

// jsonArray accepts an answer that is a bare JSON array of strings.
func jsonArray(s string) ([]string, bool) {
	if !strings.HasPrefix(s, "[") {
		return nil, false
	}
	var arr []string
	if json.Unmarshal([]byte(s), &arr) != nil {
		return nil, false
	}
	return arr, true
}

// jsonStrings reads a list of strings, a single string, or a list of objects
// with a "quote"/"text"/"query" field.
func jsonStrings(raw json.RawMessage) []string {
	var one string
	if json.Unmarshal(raw, &one) == nil {
		return []string{one}
	}
	var many []json.RawMessage
	if json.Unmarshal(raw, &many) != nil {
		return nil
	}
	var out []string
	for _, m := range many {
		if json.Unmarshal(m, &one) == nil {
			out = append(out, one)
			continue
		}
		var obj map[string]any
		if json.Unmarshal(m, &obj) == nil {
			for _, k := range []string{"quote", "text", "query", "paragraph"} {
				if s, ok := obj[k].(string); ok {
					out = append(out, s)
					break
				}
			}
		}
	}
	return out
}

var listRe = regexp.MustCompile(`^\s*(?:\d{1,2}\s*[.):]|[-*•–])\s+(.*)$`)

// listItem recognises "1. text", "2) text", "- text", "* text", "• text".
func listItem(line string) (string, bool) {
	line = strings.ReplaceAll(line, "**", "")
	m := listRe.FindStringSubmatch(line)
	if m == nil {
		return "", false
	}
	return strings.TrimSpace(m[1]), true
}

var refusalRe = regexp.MustCompile(`(?i)^(?:i['’]m sorry|i am sorry|sorry,|i can(?:['’]t|not) (?:help|assist|comply|do that|provide)|i won['’]t|as an ai\b)`)

func isRefusal(s string) bool { return refusalRe.MatchString(strings.TrimSpace(s)) }

func malformed(what, text, why string) error {
	return fmt.Errorf("prompts: parse %s answer %q: %s: %w", what, snippet(text), why, llm.ErrMalformed)
}

func snippet(s string) string {
	s = oneLine(s)
	if r := []rune(s); len(r) > 80 {
		return string(r[:80]) + "…"
	}
	return s
}
