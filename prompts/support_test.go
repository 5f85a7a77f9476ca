package prompts

import (
	"errors"
	"reflect"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/llm"
)

// The support prompt shows each sentence fenced and numbered, with the
// quotes of the pages it cites, numbered across the prompt.
func TestSupportPrompt(t *testing.T) {
	msgs, err := Support(Post{Text: "Springfield banned bicycles."}, []SupportSentence{
		{N: 2, Text: "The council voted 7-2 (https://www.reuters.com/a).", Pages: []SupportPage{{N: 1, Publisher: "Reuters", Quotes: []string{"The council voted 7-2."}}}},
		{N: 4, Text: "Work starts in 2025.", Pages: []SupportPage{{N: 1, Publisher: "Reuters", Quotes: []string{"The council voted 7-2."}}, {N: 2, Quotes: []string{"Work starts in 2025."}}}},
	})
	if err != nil {
		t.Fatal(err)
	}
	user := msgs[len(msgs)-1].Content
	for _, want := range []string{"<<<BEGIN SENTENCE 2>>>\nThe council voted 7-2 (https://www.reuters.com/a).\n<<<END SENTENCE 2>>>",
		"- page 1 (Reuters):\n  \"The council voted 7-2.\"", "- page 2:\n  \"Work starts in 2025.\"", "Springfield banned bicycles.", `"pages_not_saying_it"`} {
		if !strings.Contains(user, want) {
			t.Errorf("prompt lacks %q:\n%s", want, user)
		}
	}
}

// ParseSupport reads the answers real models write.
func TestParseSupport(t *testing.T) {
	rows := []struct {
		name, answer string
		want         []SupportJudgement
		err          error
	}{
		{"schema", `{"sentences":[{"n":1,"status":"supported","reason":"It says so.","pages_not_saying_it":[]},{"n":2,"status":"unsupported","reason":"No.","pages_not_saying_it":[3]}]}`,
			[]SupportJudgement{{N: 1, Status: SupportSupported, Reason: "It says so."}, {N: 2, Status: SupportUnsupported, Reason: "No.", NotSaying: []int{3}}}, nil},
		{"fenced after thinking and a preamble, paraphrased keys", "<think>hmm</think>Sure! Here you go:\n```json\n{\"results\": [{\"sentence\": \"Sentence 1\", \"verdict\": \"Partially supported\", \"explanation\": \"Half.\", \"miscited\": [\"page 2\"]}]}\n```",
			[]SupportJudgement{{N: 1, Status: SupportPartly, Reason: "Half.", NotSaying: []int{2}}}, nil},
		{"bare array, trailing comma", `[{"n": 3, "label": "Not supported"},]`, []SupportJudgement{{N: 3, Status: SupportUnsupported}}, nil},
		{"keyed by number", `{"1": "supported", "2": {"status": "partly"}}`, nil, nil},
		{"a status off the scale is not judged", `{"sentences":[{"n":1,"status":"unclear"},{"n":2,"status":"supported"}]}`, []SupportJudgement{{N: 2, Status: SupportSupported}}, nil},
		{"prose", "They all look fine.", nil, llm.ErrMalformed},
		{"empty", "  ", nil, llm.ErrEmpty},
	}
	for _, r := range rows {
		got, err := ParseSupport(r.answer)
		if r.err != nil {
			if !errors.Is(err, r.err) {
				t.Errorf("%s: err %v, want %v", r.name, err, r.err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s: %v", r.name, err)
			continue
		}
		if r.name == "keyed by number" {
			if len(got) != 2 {
				t.Errorf("%s: %+v", r.name, got)
			}
			continue
		}
		if !reflect.DeepEqual(got, r.want) {
			t.Errorf("%s: got %+v, want %+v", r.name, got, r.want)
		}
	}
}
