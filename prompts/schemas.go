package prompts

import (
	"encoding/json"
	"fmt"

	"github.com/musecheck/muse/sources/llm"
)

// Schema names on the wire; they are the task names.
const (
	SchemaQueries          = "queries"
	SchemaEvidence         = "evidence"
	SchemaImageDescription = "image_description"
)

// QueriesSchema is {"queries": [string]}; an empty list means the post is
// not informative. Its fallback asks for the paper's numbered list of n.
func QueriesSchema(n int) *llm.Schema {
	if n < 1 {
		n = QueriesText
	}
	return &llm.Schema{
		Name:        SchemaQueries,
		Description: fmt.Sprintf("Up to %d web search queries to fact-check the post; empty when the post is not informative.", n),
		JSON:        stringArrays("queries"),
		Fallback:    fallback("queries_format.tmpl", map[string]any{"N": n}),
	}
}

// EvidenceSchema is {"refutes": [string], "context": [string]}: verbatim
// paragraphs that refute the post explicitly, and ones that give refuting
// context. Its fallback asks for the paper's two-part list.
func EvidenceSchema() *llm.Schema {
	return &llm.Schema{
		Name:        SchemaEvidence,
		Description: "Paragraphs copied verbatim from the article: at most two that refute the post explicitly, at most two that give context refuting it implicitly.",
		JSON:        stringArrays("refutes", "context"),
		Fallback:    fallback("evidence_format.tmpl", nil),
	}
}

// EvidencePagesSchema is {"articles": [{"article": n, "refutes": [string],
// "context": [string]}]}: for each numbered article of an EvidencePages
// prompt, its verbatim refuting and context paragraphs. Its name is the
// task's, "evidence", like EvidenceSchema's.
func EvidencePagesSchema() *llm.Schema {
	item := map[string]any{
		"type": "object",
		"properties": map[string]any{
			"article": map[string]any{"type": "integer"},
			"refutes": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
			"context": map[string]any{"type": "array", "items": map[string]any{"type": "string"}},
		},
		"required":             []string{"article", "refutes", "context"},
		"additionalProperties": false,
	}
	b, _ := json.Marshal(map[string]any{
		"type":                 "object",
		"properties":           map[string]any{"articles": map[string]any{"type": "array", "items": item}},
		"required":             []string{"articles"},
		"additionalProperties": false,
	})
	return &llm.Schema{
		Name:        SchemaEvidence,
		Description: "For each numbered article, paragraphs copied verbatim from it: at most two that refute the post explicitly, at most two that give context refuting it implicitly.",
		JSON:        b,
		Fallback:    fallback("evidence_pages_format.tmpl", nil),
	}
}

// ImageDescriptionSchema is {"description": string}.
func ImageDescriptionSchema() *llm.Schema {
	return &llm.Schema{
		Name:        SchemaImageDescription,
		Description: "An informative description of the image.",
		JSON: json.RawMessage(`{"type":"object","properties":{"description":{"type":"string"}},` +
			`"required":["description"],"additionalProperties":false}`),
		Fallback: fallback("image_description_format.tmpl", nil),
	}
}

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
