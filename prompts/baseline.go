package prompts

import "github.com/musecheck/muse/sources/llm"

// Baseline is the prompt of the paper's model-alone baseline (its "GPT-4"
// system: the same model asked for a correction with no retrieval; the
// paper's prompt_correction_generation_without_retrieval), worded for any
// platform. The answer is plain text.
func Baseline(p Post) ([]llm.Message, error) {
	return messages("baseline", struct{ Post Post }{cleanPost(p)})
}
