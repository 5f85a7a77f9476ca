package export

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
)

// The report and the JSON carry the video's frames with their times, the
// text on them, and the transcript's excerpts with theirs.
func TestExportVideo(t *testing.T) {
	c := sample()
	c.Video = &pipeline.Video{Source: "https://cdn.example/clip.mp4", Duration: 75, Language: "en",
		Frames:     []pipeline.VideoFrame{{At: 0, Caption: "A man at a lectern"}, {At: 12.4, OCR: "BICYCLES *BANNED*", PHash: "a1b2"}, {At: 30}},
		Transcript: []pipeline.TranscriptSegment{{Start: 61, End: 64.5, Text: "The council banned bicycles."}}}
	md := Report(c)
	for _, want := range []string{"Video hxxps://cdn\\[.\\]example/clip.mp4 (1:15):", "- at 0:00: A man at a lectern",
		"- at 0:12: text on screen: “BICYCLES \\*BANNED\\*”", "- at 0:30: nothing read", "- said at 1:01–1:05: “The council banned bicycles.”"} {
		if !strings.Contains(md, want) {
			t.Errorf("report lacks %q:\n%s", want, md)
		}
	}
	b, err := JSON(c)
	if err != nil {
		t.Fatal(err)
	}
	var out struct {
		Video struct {
			Frames []struct {
				At      float64 `json:"at"`
				OCR     string  `json:"ocr"`
				Caption string  `json:"caption"`
			} `json:"frames"`
			Transcript []struct {
				Start, End float64
				Text       string
			} `json:"transcript"`
			Language string `json:"language"`
		} `json:"video"`
	}
	if err := json.Unmarshal(b, &out); err != nil {
		t.Fatal(err)
	}
	v := out.Video
	if len(v.Frames) != 3 || v.Frames[1].At != 12.4 || v.Frames[1].OCR != "BICYCLES *BANNED*" || v.Frames[0].Caption != "A man at a lectern" ||
		len(v.Transcript) != 1 || v.Transcript[0].Start != 61 || v.Transcript[0].Text != "The council banned bicycles." || v.Language != "en" {
		t.Errorf("json video %+v", v)
	}
	// Without a video, no video section.
	c.Video = nil
	if strings.Contains(Report(c), "\nVideo ") {
		t.Error("a report without a video has a video section")
	}
}
