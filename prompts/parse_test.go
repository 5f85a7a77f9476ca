package prompts

import (
	"errors"
	"slices"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/musecheck/muse/sources/llm"
)

func TestParseQueries(t *testing.T) {
	for _, tc := range []struct {
		name        string
		in          string
		want        []string
		informative bool
		err         error
	}{
		{"schema JSON", `{"queries":["WHO 5G virus claim","5G coronavirus fact check"]}`, []string{"WHO 5G virus claim", "5G coronavirus fact check"}, true, nil},
		{"fenced JSON", "```json\n{\"queries\": [\"a b\", \"a b\", \"  \"]}\n```", []string{"a b"}, true, nil},
		{"JSON with chatter", "Sure! {\"queries\": [\"x\"]} Hope this helps.", []string{"x"}, true, nil},
		{"empty JSON list", `{"queries": []}`, nil, false, nil},
		{"bare array", `["one", "two"]`, []string{"one", "two"}, true, nil},
		{"paper list", "1. WHO 5G coronavirus\n2. 5G towers spread virus\n3. \"5G COVID-19 link\"", []string{"WHO 5G coronavirus", "5G towers spread virus", "5G COVID-19 link"}, true, nil},
		{"list with intro and labels", "Here you go:\n\n1) Query 1: Biden student loan forgiveness\n2) **Supreme Court ruling loans**\n- Q3: loan forgiveness June 2023", []string{"Biden student loan forgiveness", "Supreme Court ruling loans", "loan forgiveness June 2023"}, true, nil},
		{"NONE", "NONE", nil, false, nil},
		{"quoted NONE", `"NONE".`, nil, false, nil},
		{"list of NONE", "1. NONE\n2. NONE\n3. NONE", nil, false, nil},
		{"prose not informative", "The post is not informative enough to generate a query.", nil, false, nil},
		{"refusal", "I'm sorry, but I can't help with that.", nil, false, llm.ErrRefusal},
		{"empty", "  \n ", nil, false, llm.ErrEmpty},
		{"prose", "The claim seems false to me.", nil, false, llm.ErrMalformed},
		{"JSON wrong key", `{"searches": ["a"]}`, nil, false, llm.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, informative, err := ParseQueries(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(got, tc.want) || informative != tc.informative {
				t.Fatalf("got %q informative %v err %v; want %q %v", got, informative, err, tc.want, tc.informative)
			}
		})
	}
}

const paperEvidence = `1. Explicit refutation:
- "The World Health Organization says viruses cannot travel on radio waves or mobile networks."
- NONE

2. Implicit refutation:
- COVID-19 is spread through respiratory droplets when an infected person coughs,
sneezes or speaks.
- QUOTE_2: “Many countries without 5G have outbreaks.”`

func TestParseEvidence(t *testing.T) {
	for _, tc := range []struct {
		name             string
		in               string
		refutes, context []string
		err              error
	}{
		{"schema JSON", `{"refutes":["A said no."],"context":["B explains."]}`, []string{"A said no."}, []string{"B explains."}, nil},
		{"JSON empty", `{"refutes":[],"context":[]}`, nil, nil, nil},
		{"JSON caps and dedupes", `{"refutes":["a","b","c"],"context":["a","d"]}`, []string{"a", "b"}, []string{"d"}, nil},
		{"JSON objects", `{"refutes":[{"quote":"q1"}],"context":"q2"}`, []string{"q1"}, []string{"q2"}, nil},
		{"paper format", paperEvidence,
			[]string{"The World Health Organization says viruses cannot travel on radio waves or mobile networks."},
			[]string{"COVID-19 is spread through respiratory droplets when an infected person coughs, sneezes or speaks.", "Many countries without 5G have outbreaks."}, nil},
		{"inline NONE headers", "1. Explicit refutation: NONE\n2. Implicit refutation: The ban was lifted in 2021.", nil, []string{"The ban was lifted in 2021."}, nil},
		{"markdown headers", "**Explicit refutation:**\n* The claim is false.\n\n### Implicit refutation:\n* Context here.", []string{"The claim is false."}, []string{"Context here."}, nil},
		{"quote mentioning explicit", "Explicit refutation:\n- The minister explicitly denied it: no such law exists.\nImplicit refutation:\n- NONE", []string{"The minister explicitly denied it: no such law exists."}, nil, nil},
		{"NONE", "NONE", nil, nil, nil},
		{"refusal", "I cannot help with that request.", nil, nil, llm.ErrRefusal},
		{"empty", "", nil, nil, llm.ErrEmpty},
		{"no sections", "- a quote\n- another", nil, nil, llm.ErrMalformed},
		{"JSON wrong keys", `{"quotes":["a"]}`, nil, nil, llm.ErrMalformed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			r, c, err := ParseEvidence(tc.in)
			if tc.err != nil {
				if !errors.Is(err, tc.err) {
					t.Fatalf("err = %v, want %v", err, tc.err)
				}
				return
			}
			if err != nil || !slices.Equal(r, tc.refutes) || !slices.Equal(c, tc.context) {
				t.Fatalf("got %q / %q err %v; want %q / %q", r, c, err, tc.refutes, tc.context)
			}
		})
	}
}

func TestParseImageDescription(t *testing.T) {
	for in, want := range map[string]string{
		`{"description":"A photo of Jim Caviezel and Michael Emerson in suits."}`:                          "A photo of Jim Caviezel and Michael Emerson in suits.",
		"{A quote from Fran Lebowitz, \"In real life, I assure you, there is no such thing as algebra.\"}": "A quote from Fran Lebowitz, \"In real life, I assure you, there is no such thing as algebra.\"",
		"Image description: A map of Europe.":                                                              "A map of Europe.",
	} {
		got, err := ParseImageDescription(in)
		if err != nil || got != want {
			t.Errorf("ParseImageDescription(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, kind := range map[string]error{"": llm.ErrEmpty, `{"description":" "}`: llm.ErrEmpty, "{}": llm.ErrMalformed, "I'm sorry, I can't describe people.": llm.ErrRefusal} {
		if _, err := ParseImageDescription(in); !errors.Is(err, kind) {
			t.Errorf("ParseImageDescription(%q) err = %v, want %v", in, err, kind)
		}
	}
}

func FuzzParseQueries(f *testing.F) {
	for _, s := range []string{
		`{"queries":["a","b","c"]}`, "1. a\n2. b\n3. c", "NONE", `"NONE"`, "```json\n{\"queries\":[]}\n```",
		"I'm sorry", "", "{", "[", `{"queries":[1,{"query":"x"},null]}`, "1.\n2. \n- ", "**1.** \"q\"", "\xff\xfe1. q",
		"{\"queries\": \"one\"}", "1) Query 1: x\n- Q2: y", "}{", "``````",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		qs, informative, err := ParseQueries(s)
		if err != nil {
			if qs != nil || informative {
				t.Fatalf("error with results: %q %v %v", qs, informative, err)
			}
			if !errors.Is(err, llm.ErrMalformed) && !errors.Is(err, llm.ErrEmpty) && !errors.Is(err, llm.ErrRefusal) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if informative != (len(qs) > 0) {
			t.Fatalf("informative %v with %d queries", informative, len(qs))
		}
		for _, q := range qs {
			if strings.TrimSpace(q) == "" || strings.Contains(q, "\n") || !utf8.ValidString(q) {
				t.Fatalf("bad query %q", q)
			}
		}
	})
}

func FuzzParseEvidence(f *testing.F) {
	for _, s := range []string{
		`{"refutes":["a"],"context":["b"]}`, paperEvidence, "NONE", "1. Explicit refutation: NONE\n2. Implicit refutation: x",
		"Explicit refutation:\n\ncontinued\n- a\nmore", "{\"refutes\":null}", "- a\n- b", "Context:", "", "```\nNONE\n```",
		"1. Explicit:\n- \"\"\n- ''", "{\"context\":[[\"nested\"]]}", "\x00Explicit refutation:\n-\t\xff",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		r, c, err := ParseEvidence(s)
		if err != nil {
			if r != nil || c != nil {
				t.Fatalf("error with results: %q %q %v", r, c, err)
			}
			if !errors.Is(err, llm.ErrMalformed) && !errors.Is(err, llm.ErrEmpty) && !errors.Is(err, llm.ErrRefusal) {
				t.Fatalf("untyped error %v", err)
			}
			return
		}
		if len(r) > MaxQuotesPerKind || len(c) > MaxQuotesPerKind {
			t.Fatalf("too many quotes: %d %d", len(r), len(c))
		}
		for _, q := range append(slices.Clone(r), c...) {
			if strings.TrimSpace(q) == "" || isNone(q) {
				t.Fatalf("empty or NONE quote %q", q)
			}
		}
		for _, q := range r {
			if slices.Contains(c, q) {
				t.Fatalf("quote %q in both lists", q)
			}
		}
	})
}

func FuzzParseImageDescription(f *testing.F) {
	for _, s := range []string{`{"description":"A photo."}`, "{A photo of a moose}", "Description:", "{}", "\"\"", "NONE"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		d, err := ParseImageDescription(s)
		if err == nil && strings.TrimSpace(d) == "" {
			t.Fatalf("empty description without error for %q", s)
		}
	})
}
