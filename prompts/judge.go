package prompts

import (
	"encoding/json"
	"fmt"
	"strconv"
	"strings"

	"github.com/musecheck/muse/sources/llm"
)

// Criterion is one of the paper's evaluation criteria (Methods, "Evaluation
// criteria"; the labels are those of its released expert ratings,
// Social-Futures-Lab/MUSE eval/data/Q*.csv).
type Criterion struct {
	Key      string // the JSON field
	Name     string // the paper's name
	Question string // the definition given to the judge
	// Labels, worst first, when the scale is named; nil for a 0..Max
	// number. A label in Unscored ("Cant Determine") is no score.
	Labels   []string
	Unscored []string
	Max      int
	// PerReference: rated for each cited reference, not the correction.
	PerReference bool
}

// Points is the criterion's number for a label: its place on the scale
// from 0 (worst) to Top; ok is false for an unscored or unknown label.
func (c Criterion) Points(label string) (float64, bool) {
	label = strings.TrimSpace(label)
	if c.Labels == nil {
		n, err := strconv.ParseFloat(label, 64)
		if err != nil || n < 0 || n > float64(c.Max) {
			return 0, false
		}
		return n, true
	}
	for i, l := range c.Labels {
		if strings.EqualFold(l, label) {
			return float64(i), true
		}
	}
	return 0, false
}

// Top is the best score on the criterion's scale.
func (c Criterion) Top() float64 {
	if c.Labels == nil {
		return float64(c.Max)
	}
	return float64(len(c.Labels) - 1)
}

// Overall is the paper's overall quality (Q9), 0 to 10.
const Overall = "overall"

// Criteria are the paper's 13 criteria and overall quality, in its order.
var Criteria = []Criterion{
	{Key: "explicitness", Name: "explicitness of the correction",
		Question: "Does the correction say explicitly whether the post is accurate, inaccurate or misleading?",
		Labels:   []string{"Unclear", "Implicit", "Explicit"}},
	{Key: "identification", Name: "existence of correct identifications",
		Question: "Does the correction identify the post's inaccuracies, and does it misidentify anything accurate as inaccurate?",
		Labels:   []string{"Do not exist", "Exist with misidentification", "Exist without misidentification"}},
	{Key: "comprehensiveness", Name: "comprehensiveness of identifications",
		Question: "How many of the post's inaccuracies does the correction identify?",
		Labels:   []string{"No", "Low", "Medium", "High", "Extremely High"}},
	{Key: "explanation_accuracy", Name: "accuracy of explanations",
		Question: "Are the correction's explanations of why the identified parts are inaccurate correct?",
		Labels:   []string{"Completely Incorrect", "Mostly Incorrect", "Half", "Mostly Correct", "Fully Correct"}},
	{Key: "informativeness", Name: "informativeness of explanations",
		Question: "How informative are the explanations: do they give the facts and context a reader needs? 0 not at all, 10 fully.", Max: 10},
	{Key: "relevance", Name: "relevance of the text",
		Question: "How relevant is the correction's text to the post? 0 not at all, 10 entirely.", Max: 10},
	{Key: "factuality", Name: "factuality of the text",
		Question: "Is what the correction itself states factual, accurate and verifiable?",
		Labels: []string{"Completely False, Inaccurate, or Unverifiable", "Mostly False, Inaccurate, or Unverifiable",
			"Half Factual and Accurate", "Mostly Factual and Accurate", "Completely Factual and Accurate"}},
	{Key: "fluency", Name: "fluency of the text",
		Question: "Does the correction have grammar, spelling or wording errors that hinder reading?",
		Labels:   []string{"Yes", "Yes, but minor", "No"}},
	{Key: "coherence", Name: "coherence of the text",
		Question: "Is the correction coherent and logical?",
		Labels:   []string{"Barely Coherent and Logical", "Partially Coherent and Logical", "Coherent and Logical"}},
	{Key: "toxicity", Name: "toxicity of the text",
		Question: "Is the correction toxic: rude, disrespectful, mocking or hostile?",
		Labels:   []string{"Yes", "No"}},
	{Key: "reachability", Name: "reachability of references", PerReference: true,
		Question: "Could the reference's page be read (its text is given below; a page that could not be read says so)?",
		Labels:   []string{"No", "Yes"}},
	{Key: "reference_relevance", Name: "relevance of references", PerReference: true,
		Question: "Does the reference's page support or address what the correction cites it for?",
		Labels:   []string{"No", "Yes"}, Unscored: []string{"Cant Determine"}},
	{Key: "credibility", Name: "credibility of references", PerReference: true,
		Question: "How credible is the reference's publisher as a source of evidence?",
		Labels:   []string{"Low Not Informed", "Low Informed", "Medium", "High", "Very High"}, Unscored: []string{"Cant Determine"}},
	{Key: Overall, Name: "overall quality",
		Question: "Weighing all the criteria above, how good is the correction overall? 0 worst, 10 best.", Max: 10},
}

// CriterionByKey finds a criterion.
func CriterionByKey(key string) (Criterion, bool) {
	for _, c := range Criteria {
		if c.Key == key {
			return c, true
		}
	}
	return Criterion{}, false
}

// JudgeReference is one cited page as the judge sees it: its text as read
// now, or why it could not be read.
type JudgeReference struct {
	URL    string
	Text   string
	Unread string
	// Archived, when set, says why the live page could not be read: Text
	// is then the local archive's copy of it.
	Archived string
}

// JudgeInput is what the judge is shown.
type JudgeInput struct {
	Post       Post
	Correction string
	References []JudgeReference
}

// MaxJudgePageChars caps each reference's text in the judge's prompt.
const MaxJudgePageChars = 6000

// Judge builds the judge's prompt: the paper's criteria with their
// definitions and scales, the post, the correction and each cited page's
// text (cut at MaxJudgePageChars).
func Judge(in JudgeInput) ([]llm.Message, error) {
	refs := make([]JudgeReference, len(in.References))
	for i, r := range in.References {
		refs[i] = JudgeReference{URL: oneLine(clean(r.URL)), Text: cutChars(strings.TrimSpace(clean(r.Text)), MaxJudgePageChars), Unread: oneLine(clean(r.Unread)), Archived: oneLine(clean(r.Archived))}
		if refs[i].Text == "" && refs[i].Unread == "" {
			refs[i].Unread = "no text"
		}
	}
	return messages("judge", struct {
		Criteria   []Criterion
		Post       Post
		Correction string
		References []JudgeReference
		OverallMax int
	}{Criteria, cleanPost(in.Post), strings.TrimSpace(clean(in.Correction)), refs, 10})
}

func cutChars(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + " …"
}

// JudgeSchema is the judge's answer as a JSON schema (OpenAI strict).
func JudgeSchema() *llm.Schema {
	props := map[string]any{}
	required := []string{}
	refProps := map[string]any{"n": map[string]any{"type": "integer"}}
	refRequired := []string{"n"}
	for _, c := range Criteria {
		var p map[string]any
		if c.Labels == nil {
			p = map[string]any{"type": "integer"}
		} else {
			p = map[string]any{"type": "string", "enum": append(append([]string{}, c.Labels...), c.Unscored...)}
		}
		if c.PerReference {
			refProps[c.Key] = p
			refRequired = append(refRequired, c.Key)
			continue
		}
		props[c.Key] = p
		required = append(required, c.Key)
	}
	props["references"] = map[string]any{"type": "array", "items": map[string]any{
		"type": "object", "properties": refProps, "required": refRequired, "additionalProperties": false}}
	required = append(required, "references")
	b, _ := json.Marshal(map[string]any{"type": "object", "properties": props, "required": required, "additionalProperties": false})
	return &llm.Schema{Name: "judgement", Description: "ratings of a correction on the Muse paper's criteria", JSON: b}
}

// Judgement is the judge's answer: a score per criterion (its place on the
// criterion's scale) and, per reference, a score per per-reference
// criterion. A criterion the judge left out or answered off its scale is
// absent.
type Judgement struct {
	Scores     map[string]float64   `json:"scores"`
	Labels     map[string]string    `json:"labels,omitempty"`
	References []map[string]float64 `json:"references,omitempty"`
}

// ParseJudge reads the judge's answer for a correction citing refs
// references; an answer that rates nothing is an error.
func ParseJudge(answer string, refs int) (Judgement, error) {
	body, err := prepare("judge", answer)
	if err != nil {
		return Judgement{}, err
	}
	raw, ok := jsonObject(body)
	if !ok {
		return Judgement{}, malformed("judge", body, "no JSON object")
	}
	j := Judgement{Scores: map[string]float64{}, Labels: map[string]string{}}
	var refsRaw []map[string]json.RawMessage
	if r, ok := raw["references"]; ok {
		_ = json.Unmarshal(r, &refsRaw)
	}
	j.References = make([]map[string]float64, refs)
	for i := range j.References {
		j.References[i] = map[string]float64{}
	}
	for i, r := range refsRaw {
		n := i + 1
		if nr, ok := r["n"]; ok {
			_ = json.Unmarshal(nr, &n)
		}
		if n < 1 || n > refs {
			continue
		}
		for _, c := range Criteria {
			if !c.PerReference {
				continue
			}
			if v, ok := scoreOf(c, r[c.Key]); ok {
				j.References[n-1][c.Key] = v
			}
		}
	}
	rated := 0
	for _, c := range Criteria {
		if c.PerReference {
			continue
		}
		if v, ok := scoreOf(c, raw[c.Key]); ok {
			j.Scores[c.Key] = v
			rated++
			var s string
			if json.Unmarshal(raw[c.Key], &s) == nil {
				j.Labels[c.Key] = s
			}
		}
	}
	if rated == 0 {
		return Judgement{}, fmt.Errorf("judge answer rates none of the criteria")
	}
	return j, nil
}

func scoreOf(c Criterion, v json.RawMessage) (float64, bool) {
	if len(v) == 0 {
		return 0, false
	}
	var s string
	if json.Unmarshal(v, &s) != nil {
		var f float64
		if json.Unmarshal(v, &f) != nil {
			return 0, false
		}
		s = strconv.FormatFloat(f, 'f', -1, 64)
	}
	return c.Points(s)
}
