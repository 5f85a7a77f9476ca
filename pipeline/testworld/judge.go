package testworld

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/sources/llm/llmtest"
)

var judgeReference = regexp.MustCompile(`(?s)<<<BEGIN REFERENCE (\d+)>>>(.*?)<<<END REFERENCE \d+>>>`)

// Judge is a loopback LLM judge for muse eval (prompts.Judge) whose scores
// depend on what it is shown: a correction scores 8 overall when the text
// of a page it cites (the reference blocks of the prompt) carries fact,
// and 3 otherwise; a reference is reachable when its block has text, and
// relevant when that text carries fact ("Cant Determine" when not). A
// request that is not the judge's, or whose prompt lacks the post, the
// correction or the criteria, is an error.
func Judge(t testing.TB, fact string) *llmtest.Server {
	return llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		if llmtest.SchemaName(req) != "judgement" {
			return "", fmt.Errorf("not a judge request: %q", llmtest.SchemaName(req))
		}
		prompt := llmtest.AllText(req)
		for _, want := range []string{"<<<BEGIN POST>>>", "<<<BEGIN CORRECTION>>>", "overall (overall quality", "credibility (credibility of references"} {
			if !strings.Contains(prompt, want) {
				return "", fmt.Errorf("judge prompt lacks %q", want)
			}
		}
		overall, informative, accuracy := 3, 2, "Half"
		var refs []string
		for _, m := range judgeReference.FindAllStringSubmatch(prompt, -1) {
			rel, reach := "Cant Determine", "No"
			if !strings.Contains(m[2], "could not be read") {
				reach = "Yes"
			}
			if strings.Contains(m[2], fact) {
				rel = "Yes"
				overall, informative, accuracy = 8, 9, "Fully Correct"
			}
			refs = append(refs, fmt.Sprintf(`{"n":%s,"reachability":%q,"reference_relevance":%q,"credibility":"High"}`, m[1], reach, rel))
		}
		return fmt.Sprintf(`{"explicitness":"Explicit","identification":"Exist without misidentification","comprehensiveness":"High",
"explanation_accuracy":%q,"informativeness":%d,"relevance":9,"factuality":"Mostly Factual and Accurate","fluency":"No",
"coherence":"Coherent and Logical","toxicity":"No","overall":%d,"references":[%s]}`, accuracy, informative, overall, strings.Join(refs, ",")), nil
	})
}
