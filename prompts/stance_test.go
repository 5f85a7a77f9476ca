package prompts

import (
	"slices"
	"strings"
	"testing"
)

// TestParseEvidenceStances reads what models send for the schema with
// stances: fenced JSON, paraphrased stance words, a missing stance, claim
// numbers as strings, the older refutes/context lists beside supports, and
// the paper's format with a Support section.
func TestParseEvidenceStances(t *testing.T) {
	type want struct {
		refutes, supports, context []string
		claims                     map[string]int
	}
	for _, tc := range []struct {
		name string
		in   string
		want want
	}{
		{"schema", `{"articles":[{"article":1,"quotes":[{"quote":"A confirms.","stance":"supports","claim":1},{"quote":"B denies.","stance":"refutes","claim":2}]}]}`,
			want{[]string{"B denies."}, []string{"A confirms."}, nil, map[string]int{"A confirms.": 1, "B denies.": 2}}},
		{"fenced, paraphrased stances", "```json\n{\"articles\":[{\"article\":\"1\",\"quotes\":[{\"quote\":\"\\\"A confirms.\\\"\",\"stance\":\"Supporting\",\"claim\":\"Claim 2\"},{\"quote\":\"B.\",\"stance\":\"contradicts the claim\",\"claim\":1},{\"quote\":\"C.\",\"stance\":\"missing context\",\"claim\":1}]}]}\n```",
			want{[]string{"B."}, []string{"A confirms."}, []string{"C."}, map[string]int{"A confirms.": 2, "B.": 1, "C.": 1}}},
		{"no stance is context", `{"articles":[{"article":1,"quotes":[{"quote":"A."},"B."]}]}`,
			want{nil, nil, []string{"A.", "B."}, nil}},
		{"older lists with supports", `{"articles":[{"article":1,"refutes":["R."],"supports":["S."],"context":[]}]}`,
			want{[]string{"R."}, []string{"S."}, nil, nil}},
		{"paper format with support", "Article 1:\n1. Explicit refutation:\n- NONE\n2. Implicit refutation:\n- NONE\n3. Support:\n- (claim 2) \"S one.\"\n- S two.",
			want{nil, []string{"S one.", "S two."}, nil, map[string]int{"S one.": 2}}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := ParseEvidencePages(tc.in)
			if err != nil || len(got) != 1 {
				t.Fatalf("got %+v, %v", got, err)
			}
			g := got[0]
			if !slices.Equal(g.Refutes, tc.want.refutes) || !slices.Equal(g.Supports, tc.want.supports) || !slices.Equal(g.Context, tc.want.context) {
				t.Errorf("got refutes %q supports %q context %q", g.Refutes, g.Supports, g.Context)
			}
			for q, n := range tc.want.claims {
				if g.Claims[q] != n {
					t.Errorf("claim of %q: %d, want %d (%v)", q, g.Claims[q], n, g.Claims)
				}
			}
		})
	}
}

func TestParseStance(t *testing.T) {
	for in, want := range map[string]Kind{
		"supports": KindSupports, "Confirms": KindSupports, "agrees": KindSupports, "true": KindSupports,
		"refutes": KindRefutes, "REFUTING": KindRefutes, "does not support": KindRefutes, "contradicts": KindRefutes, "untrue": KindRefutes,
		"context": KindContext, "missing context": KindContext, "partly true": KindContext, "misleading": KindContext,
		"": "", "unverified": "", "banana": "",
	} {
		got, ok := ParseStance(in)
		if got != want || ok != (want != "") {
			t.Errorf("%q: %q %v, want %q", in, got, ok, want)
		}
	}
}

func TestParseClaims(t *testing.T) {
	got := ParseClaims("```json\n{\"queries\":[\"a\"],\"claims\":[\"The council voted.\",\"\\\"The mayor resigned.\\\"\",\"the council voted.\",\"NONE\"]}\n```")
	if !slices.Equal(got, []string{"The council voted.", "The mayor resigned."}) {
		t.Errorf("claims %q", got)
	}
	if got := ParseClaims("1. a query\n2. another"); got != nil {
		t.Errorf("a plain list has no claims: %q", got)
	}
	msgs, err := EvidencePages(Post{Text: "p", Claims: []string{"one", "two"}}, []Page{{URL: "u", Paragraphs: []string{"x"}}}, 0)
	if err != nil || !strings.Contains(msgs[1].Content, "The post's checkable claims, numbered:\n1. one\n2. two") {
		t.Errorf("claims not in the prompt: %v", err)
	}
}
