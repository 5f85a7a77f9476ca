package prompts

import (
	"encoding/json"
	"strings"

	"github.com/musecheck/muse/sources/llm"
)

// VerdictLabels are AVeriTeC's verdicts.
var VerdictLabels = []string{"Supported", "Refuted", "Not Enough Evidence", "Conflicting Evidence/Cherrypicking"}

// Verdict asks which AVeriTeC verdict a correction reaches on its post's
// claim (muse eval's label accuracy on AVeriTeC, with a judge).
func Verdict(p Post, correction string) ([]llm.Message, error) {
	return messages("verdict", struct {
		Labels     []string
		Post       Post
		Correction string
	}{VerdictLabels, cleanPost(p), strings.TrimSpace(clean(correction))})
}

// VerdictSchema is Verdict's answer as a JSON schema.
func VerdictSchema() *llm.Schema {
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": map[string]any{
		"verdict": map[string]any{"type": "string", "enum": VerdictLabels}}, "required": []string{"verdict"}, "additionalProperties": false})
	return &llm.Schema{Name: "verdict", Description: "the verdict a correction reaches", JSON: b}
}

// ParseVerdict reads Verdict's answer: one of VerdictLabels.
func ParseVerdict(answer string) (string, error) {
	body, err := prepare("verdict", answer)
	if err != nil {
		return "", err
	}
	if obj, ok := jsonObject(body); ok {
		var v string
		if json.Unmarshal(obj["verdict"], &v) == nil {
			body = v
		}
	}
	body = strings.Trim(strings.TrimSpace(body), `".`)
	for _, l := range VerdictLabels {
		if strings.EqualFold(body, l) {
			return l, nil
		}
	}
	return "", malformed("verdict", body, "not one of the verdicts")
}
