package cli

import (
	"encoding/json"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline/testworld"
)

// TestCheckVideoThroughTheBinary: `muse check --video FILE` reads the
// video (its sound transcribed by the model server), reaches a sourced
// correction, prints the video object in the JSON, and leaves nothing in
// the cache.
func TestCheckVideoThroughTheBinary(t *testing.T) {
	isolate(t)
	w := testworld.NewVideo(t)
	env := []string{"OPENAI_BASE_URL=" + w.Cfg.OpenAIBaseURL, "OPENAI_API_KEY=sk-test-key", "MUSE_MODEL=test-model",
		"SEARXNG_URL=" + w.Cfg.SearXNGURL, "MUSE_RATINGS=" + w.Cfg.RatingsFile, "MUSE_IGNORE_ROBOTS=1",
		"MUSE_ALLOW_PRIVATE_ADDRESSES=1", "HTTP_PROXY=" + w.Proxy.String()}
	out, errOut, code := muse(t, "", env, "check", "--json", "--no-save", "--video", w.SpokenVideo, testworld.VideoPostText)
	if code != 0 {
		t.Fatalf("exit %d:\n%s", code, errOut)
	}
	var c struct {
		Video struct {
			Transcript []struct {
				Start, End float64
				Text       string
			} `json:"transcript"`
			Frames []struct {
				At float64 `json:"at"`
			} `json:"frames"`
			Language string `json:"language"`
		} `json:"video"`
		Correction struct {
			URLs []string `json:"urls"`
		} `json:"correction"`
	}
	if err := json.Unmarshal([]byte(out), &c); err != nil {
		t.Fatalf("%v:\n%s", err, out)
	}
	if len(c.Video.Transcript) != 1 || c.Video.Transcript[0].Text != testworld.VideoSpokenClaim || c.Video.Language != "en" || len(c.Video.Frames) == 0 {
		t.Errorf("video %+v", c.Video)
	}
	if !slices.ContainsFunc(c.Correction.URLs, func(u string) bool { return slices.Contains(testworld.VideoURLs["venice"], u) }) {
		t.Errorf("correction cites %v", c.Correction.URLs)
	}
	if !strings.Contains(errOut, "the video lasts") {
		t.Errorf("progress does not say the video was read:\n%s", errOut)
	}
	if left, _ := os.ReadDir(filepath.Join(os.Getenv("XDG_CACHE_HOME"), "muse", "video")); len(left) != 0 {
		t.Errorf("left in the cache: %v", left)
	}
}
