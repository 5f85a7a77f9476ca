package prompts

import (
	"errors"
	"slices"
	"testing"

	"github.com/musecheck/muse/sources/llm"
)

// Answers as GPT-4o, Llama 3.1, Qwen3 and Mistral write them: each must
// give the same quotes as the clean JSON would.
func TestParseEvidenceAsRealModelsWriteIt(t *testing.T) {
	const q1 = `The agency said the claim is "false" and the train was not carrying weapons.`
	const q2 = "Officials said 100,000 gallons were recovered."
	cases := map[string]string{
		"clean":           `{"refutes":["The agency said the claim is \"false\" and the train was not carrying weapons."],"context":["Officials said 100,000 gallons were recovered."]}`,
		"single quotes":   `{'refutes': ['The agency said the claim is "false" and the train was not carrying weapons.'], 'context': ['Officials said 100,000 gallons were recovered.']}`,
		"trailing commas": `{"refutes": ["The agency said the claim is \"false\" and the train was not carrying weapons.",], "context": ["Officials said 100,000 gallons were recovered.",],}`,
		"inner quotes":    `{"refutes": ["The agency said the claim is "false" and the train was not carrying weapons."], "context": ["Officials said 100,000 gallons were recovered."]}`,
		"draft then final": `Draft: {"refutes": ["wrong"], "context": []}
Let me fix that.
{"refutes": ["The agency said the claim is \"false\" and the train was not carrying weapons."], "context": ["Officials said 100,000 gallons were recovered."]}`,
		"fenced": "Here you go:\n```json\n" + `{"refutes":["The agency said the claim is \"false\" and the train was not carrying weapons."],"context":["Officials said 100,000 gallons were recovered."]}` + "\n```",
		"think with brace": `<think>The post says {"train": "weapons"}. I need {refutes}.</think>
{"refutes":["The agency said the claim is \"false\" and the train was not carrying weapons."],"context":["Officials said 100,000 gallons were recovered."]}`,
		"leading think": `Okay, the user wants {"refutes": [...]}. Let me look.</think>
{"refutes":["The agency said the claim is \"false\" and the train was not carrying weapons."],"context":["Officials said 100,000 gallons were recovered."]}`,
		"bold headers": `**1. Explicit refutation:**
- "The agency said the claim is "false" and the train was not carrying weapons."

**2. Implicit refutation:**
- "Officials said 100,000 gallons were recovered."`,
		"bold headers outside colon": `**Explicit refutation**:
1. The agency said the claim is "false" and the train was not carrying weapons.
**Implicit refutation**:
1. Officials said 100,000 gallons were recovered.`,
	}
	for name, answer := range cases {
		ref, ctx, err := ParseEvidence(answer)
		if err != nil || !slices.Equal(ref, []string{q1}) || !slices.Equal(ctx, []string{q2}) {
			t.Errorf("%s: refutes %q, context %q, err %v", name, ref, ctx, err)
		}
	}
}

func TestParseAnswersThatAreNotAnswers(t *testing.T) {
	for name, tc := range map[string]struct {
		answer string
		want   error
	}{
		"empty":                  {"", llm.ErrEmpty},
		"only thinking":          {"<think>Let me consider {the post", llm.ErrEmpty},
		"refusal":                {"I'm sorry, but I can't help with that.", llm.ErrRefusal},
		"prose":                  {"The article discusses the derailment at length but I am not sure.", llm.ErrMalformed},
		"html":                   {"<html><body><h1>502 Bad Gateway</h1></body></html>", llm.ErrMalformed},
		"another task":           {`{"queries": ["east palestine derailment"]}`, llm.ErrMalformed},
		"another task, repaired": {`{'description': 'a train',}`, llm.ErrMalformed},
	} {
		_, _, err := ParseEvidence(tc.answer)
		if !errors.Is(err, tc.want) {
			t.Errorf("%s: err %v, want %v", name, err, tc.want)
		}
		if _, err := ParseEvidencePages(tc.answer); !errors.Is(err, tc.want) {
			t.Errorf("%s (pages): err %v, want %v", name, err, tc.want)
		}
	}
}

func TestParseQueriesRepaired(t *testing.T) {
	qs, ok, err := ParseQueries("<think>maybe {x}</think>{'queries': ['East Palestine derailment', 'Norfolk Southern vinyl chloride',]}")
	if err != nil || !ok || !slices.Equal(qs, []string{"East Palestine derailment", "Norfolk Southern vinyl chloride"}) {
		t.Fatalf("%q %v %v", qs, ok, err)
	}
}
