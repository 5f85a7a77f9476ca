package prompts

import (
	"encoding/json"
	"math"
	"strings"

	"github.com/musecheck/muse/sources/llm"
)

// Worthiness asks how check-worthy each of several posts is (muse watch's
// triage: one call for many posts).
func Worthiness(posts []string) ([]llm.Message, error) {
	cleaned := make([]string, len(posts))
	for i, p := range posts {
		cleaned[i] = strings.TrimSpace(clean(p))
	}
	return messages("worthiness", struct{ Posts []string }{cleaned})
}

// WorthinessSchema is Worthiness's answer as a JSON schema.
func WorthinessSchema() *llm.Schema {
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"posts": map[string]any{"type": "array", "items": map[string]any{"type": "object", "properties": map[string]any{
			"n": map[string]any{"type": "integer"}, "score": map[string]any{"type": "number"}, "reason": map[string]any{"type": "string"}},
			"required": []string{"n", "score", "reason"}, "additionalProperties": false}}},
		"required": []string{"posts"}, "additionalProperties": false})
	return &llm.Schema{Name: "worthiness", Description: "how check-worthy each post is", JSON: b}
}

// WorthinessScore is one post's answer.
type WorthinessScore struct {
	Score  float64
	Reason string
	OK     bool // the answer scored this post
}

// ParseWorthiness reads Worthiness's answer for n posts: a score for each
// post the answer names by its number (1…n), clamped to [0, 1]; a post
// the answer leaves out, or scores with something that is not a number,
// is not OK. An answer that scores none is an error.
func ParseWorthiness(answer string, n int) ([]WorthinessScore, error) {
	body, err := prepare("worthiness", answer)
	if err != nil {
		return nil, err
	}
	var items []json.RawMessage
	if t := strings.TrimSpace(body); strings.HasPrefix(t, "[") {
		_ = json.Unmarshal([]byte(t), &items)
	} else if obj, ok := jsonObject(body); ok {
		_ = json.Unmarshal(obj["posts"], &items)
	}
	out := make([]WorthinessScore, n)
	scored := 0
	for i, raw := range items {
		var it struct {
			N      json.Number `json:"n"`
			Score  json.Number `json:"score"`
			Reason string      `json:"reason"`
		}
		if json.Unmarshal(raw, &it) != nil {
			continue
		}
		k := i
		if v, err := it.N.Int64(); err == nil {
			k = int(v) - 1
		}
		s, err := it.Score.Float64()
		if err != nil || k < 0 || k >= n || math.IsNaN(s) || out[k].OK {
			continue
		}
		if s > 1 && s <= 100 && s == math.Trunc(s) {
			s /= 100 // a percentage
		}
		out[k] = WorthinessScore{Score: min(max(s, 0), 1), Reason: oneLine(clean(it.Reason)), OK: true}
		scored++
	}
	if scored == 0 {
		return nil, malformed("worthiness", body, "no post scored")
	}
	return out, nil
}
