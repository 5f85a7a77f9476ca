package batch

import (
	"encoding/json"
	"testing"
)

// A post queued with --as-of-post is a different check from the same post
// queued without it, and the switch travels with the job.
func TestAsOfPostIsAQueuedOption(t *testing.T) {
	with, without := CheckOptions{AsOfPost: true}, CheckOptions{}
	if with.key("test-model") == without.key("test-model") {
		t.Errorf("the same job key with and without --as-of-post: %q", with.key("test-model"))
	}
	b, err := json.Marshal(with)
	if err != nil {
		t.Fatal(err)
	}
	var back CheckOptions
	if err := json.Unmarshal(b, &back); err != nil || !back.AsOfPost {
		t.Errorf("queued options %s read back as %+v (%v)", b, back, err)
	}
	if without.key("test-model") != "model=test-model hits=0 no-llm=false" {
		t.Errorf("a job queued without the switch changed key: %q", without.key("test-model"))
	}
}
