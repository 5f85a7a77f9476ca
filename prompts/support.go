package prompts

import (
	"encoding/json"
	"regexp"
	"strconv"
	"strings"

	"github.com/kaptinlin/jsonrepair"

	"github.com/musecheck/muse/sources/llm"
)

// Support statuses a model gives a sentence of the correction.
const (
	SupportSupported   = "supported"
	SupportPartly      = "partly"
	SupportUnsupported = "unsupported"
)

// SupportSentence is one sentence of a correction with what it cites.
type SupportSentence struct {
	N     int // its place in the correction, from 1
	Text  string
	Pages []SupportPage
}

// SupportPage is a page a sentence cites, numbered across the prompt,
// with the quotes of it the correction rests on.
type SupportPage struct {
	N         int
	Publisher string
	Quotes    []string
}

// Support asks, in one call, whether each sentence is said by the quotes
// it cites.
func Support(p Post, sentences []SupportSentence) ([]llm.Message, error) {
	ss := make([]SupportSentence, len(sentences))
	for i, s := range sentences {
		s.Text = clean(s.Text)
		ss[i] = s
	}
	return messages("support", struct {
		Post      Post
		Sentences []SupportSentence
	}{cleanPost(p), ss})
}

// SupportSchema is Support's answer as a JSON schema (OpenAI strict).
func SupportSchema() *llm.Schema {
	item := map[string]any{"type": "object", "properties": map[string]any{
		"n":                   map[string]any{"type": "integer"},
		"status":              map[string]any{"type": "string", "enum": []string{SupportSupported, SupportPartly, SupportUnsupported}},
		"reason":              map[string]any{"type": "string"},
		"pages_not_saying_it": map[string]any{"type": "array", "items": map[string]any{"type": "integer"}},
	}, "required": []string{"n", "status", "reason", "pages_not_saying_it"}, "additionalProperties": false}
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"sentences": map[string]any{"type": "array", "items": item}}, "required": []string{"sentences"}, "additionalProperties": false})
	return &llm.Schema{Name: "support", Description: "whether each sentence is said by the quotes it cites", JSON: b}
}

// SupportJudgement is the model's word on one sentence.
type SupportJudgement struct {
	N      int
	Status string // SupportSupported, SupportPartly or SupportUnsupported
	Reason string
	// NotSaying are the numbers of the cited pages that do not say what
	// the sentence states.
	NotSaying []int
}

// ParseSupport reads Support's answer as real models write it: the JSON
// asked for, fenced or after a preamble or thinking, a bare array, an
// object keyed by sentence number, and paraphrased keys ("sentence",
// "verdict", "label", "explanation"). A sentence the answer leaves out,
// or gives no status the scale knows, is absent: it was not judged. An
// answer that judges no sentence is an error.
func ParseSupport(answer string) ([]SupportJudgement, error) {
	body, err := prepare("support", answer)
	if err != nil {
		return nil, err
	}
	var items []map[string]json.RawMessage
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "[") {
		if json.Unmarshal([]byte(t), &items) != nil {
			if fixed, err := jsonrepair.JSONRepair(t); err == nil {
				_ = json.Unmarshal([]byte(fixed), &items)
			}
		}
	}
	if items == nil {
		obj, ok := jsonObject(body)
		if !ok {
			return nil, malformed("support", answer, "no JSON object")
		}
		items = supportItems(obj)
	}
	var out []SupportJudgement
	for _, it := range items {
		if j, ok := supportItem(it); ok {
			out = append(out, j)
		}
	}
	if len(out) == 0 {
		return nil, malformed("support", answer, "no sentence judged")
	}
	return out, nil
}

// supportItems finds the per-sentence objects: under "sentences" (or a
// paraphrase), keyed by number, or the object itself for one sentence.
func supportItems(obj map[string]json.RawMessage) []map[string]json.RawMessage {
	for key, raw := range obj {
		switch strings.ToLower(key) {
		case "sentences", "results", "judgements", "judgments", "support", "items", "answers":
			var items []map[string]json.RawMessage
			if json.Unmarshal(raw, &items) == nil {
				return items
			}
		}
	}
	var out []map[string]json.RawMessage
	for key, raw := range obj {
		n := 0
		if m := sentenceKeyRe.FindStringSubmatch(key); m != nil {
			n, _ = strconv.Atoi(m[1])
		}
		var it map[string]json.RawMessage
		if n == 0 || json.Unmarshal(raw, &it) != nil {
			var s string
			if n > 0 && json.Unmarshal(raw, &s) == nil {
				out = append(out, map[string]json.RawMessage{"n": json.RawMessage(strconv.Itoa(n)), "status": raw})
			}
			continue
		}
		if _, ok := it["n"]; !ok {
			it["n"] = json.RawMessage(strconv.Itoa(n))
		}
		out = append(out, it)
	}
	if out == nil {
		out = []map[string]json.RawMessage{obj}
	}
	return out
}

var sentenceKeyRe = regexp.MustCompile(`(?i)^\s*(?:sentence|s)?\s*#?\s*(\d{1,3})\s*$`)

// supportItem reads one sentence's judgement; ok is false without a
// sentence number or a status on the scale.
func supportItem(it map[string]json.RawMessage) (SupportJudgement, bool) {
	var j SupportJudgement
	for key, raw := range it {
		switch strings.ToLower(strings.ReplaceAll(key, "-", "_")) {
		case "n", "sentence", "sentence_number", "number", "id", "index":
			j.N = keyedNumber(raw, sentenceKeyRe)
		case "status", "verdict", "label", "support", "judgement", "judgment", "rating", "supported":
			j.Status = supportStatus(raw)
		case "reason", "explanation", "why", "rationale", "note", "comment":
			_ = json.Unmarshal(raw, &j.Reason)
		case "pages_not_saying_it", "pages_not_saying", "not_saying", "not_supported_by", "unsupported_by", "miscited", "miscited_pages", "pages_not_supporting", "not_said_by":
			var elems []json.RawMessage
			if json.Unmarshal(raw, &elems) != nil {
				elems = []json.RawMessage{raw}
			}
			for _, e := range elems {
				if n := keyedNumber(e, articleKeyRe); n > 0 {
					j.NotSaying = append(j.NotSaying, n)
				}
			}
		}
	}
	j.Reason = strings.TrimSpace(j.Reason)
	return j, j.N > 0 && j.Status != ""
}

// supportStatus reads a status as models word it: "Supported", "fully
// supported", "partially supported", "partial", "not supported", true.
func supportStatus(raw json.RawMessage) string {
	var b bool
	if json.Unmarshal(raw, &b) == nil {
		if b {
			return SupportSupported
		}
		return SupportUnsupported
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return ""
	}
	s = strings.ToLower(strings.Trim(strings.TrimSpace(s), `".`))
	switch {
	case strings.HasPrefix(s, "part"), strings.Contains(s, "partial"), s == "mixed":
		return SupportPartly
	case strings.HasPrefix(s, "unsupported"), strings.HasPrefix(s, "not supported"), strings.HasPrefix(s, "not_supported"),
		s == "no", strings.HasPrefix(s, "contradict"), strings.HasPrefix(s, "refuted"):
		return SupportUnsupported
	case s == "yes", strings.HasPrefix(s, "support"), strings.HasPrefix(s, "fully"):
		return SupportSupported
	}
	return ""
}
