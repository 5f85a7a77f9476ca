package pipeline_test

import (
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// cites reports whether the correction cites one of urls.
func cites(c *pipeline.Check, urls []string) bool {
	return slices.ContainsFunc(c.Correction.URLs, func(u string) bool { return slices.Contains(urls, u) })
}

// A video post whose claim is only burned into its picture reaches a
// sourced correction: the keyframe's text, read by tesseract, is in the
// description the queries are written from.
func TestVideoPostClaimOnScreen(t *testing.T) {
	if _, ok := images.TesseractVersion(); !ok {
		t.Skip("tesseract not installed (apt-get install tesseract-ocr); .ci/run installs it")
	}
	env := testworld.NewVideo(t)
	c, err := env.Check(t, pipeline.Options{}, env.ScreenVideo)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Video
	if v == nil || v.Error != "" || len(v.Frames) != 2 {
		t.Fatalf("video %+v", v)
	}
	// The claim is read in the frame after the cut at 0:02, not before.
	if f := v.Frames[1]; f.At < 1.6 || f.At > 2.4 || !strings.Contains(strings.ToUpper(f.OCR), "LOUVRE") || !f.Scene {
		t.Errorf("second frame %+v, want the caption at 0:02", f)
	}
	if strings.Contains(strings.ToUpper(v.Frames[0].OCR), "LOUVRE") {
		t.Errorf("first frame read %q", v.Frames[0].OCR)
	}
	if !strings.Contains(v.Description, "\nAt 0:02: "+testworld.VideoFrameCaption+"; text on screen: \"LOUVRE TO CLOSE") ||
		!strings.Contains(v.Description, "It has no sound track.") || v.TranscriptNote != pipeline.NoSoundTrack {
		t.Errorf("description %q, note %q", v.Description, v.TranscriptNote)
	}
	if len(env.Transcriber.Requests()) != 0 {
		t.Errorf("a silent video was sent for transcription")
	}
	if !cites(c, testworld.VideoURLs["louvre"]) || !strings.Contains(c.Correction.Text, "false") {
		t.Fatalf("correction %+v, queries %+v", c.Correction, c.Queries)
	}
	// Nothing is left in the cache.
	assertEmptyVideoCache(t, env.Cfg.CacheDir)
}

// A video post whose claim is only spoken reaches a sourced correction
// through the transcription server; the transcript keeps its times.
func TestVideoPostClaimSpoken(t *testing.T) {
	env := testworld.NewVideo(t)
	c, err := env.Check(t, pipeline.Options{}, env.SpokenVideo)
	if err != nil {
		t.Fatal(err)
	}
	v := c.Video
	if v == nil || v.Error != "" || len(v.Transcript) != 1 || v.Language != "en" {
		t.Fatalf("video %+v", v)
	}
	reqs := env.Transcriber.Requests()
	if len(reqs) != 1 || reqs[0].Model != "whisper-1" || reqs[0].ResponseFormat != "verbose_json" {
		t.Fatalf("transcription requests %+v", reqs)
	}
	if s := v.Transcript[0]; s.Text != testworld.VideoSpokenClaim || s.Start > 1 || s.End <= s.Start || s.End > v.Duration+0.1 {
		t.Errorf("segment %+v of a %.1fs video", s, v.Duration)
	}
	if !strings.Contains(v.Description, "Spoken (in English): [0:00] "+testworld.VideoSpokenClaim) {
		t.Errorf("description %q", v.Description)
	}
	if !cites(c, testworld.VideoURLs["venice"]) || cites(c, testworld.VideoURLs["louvre"]) {
		t.Fatalf("correction %+v, queries %+v", c.Correction, c.Queries)
	}
	if n := len(c.Queries); n == 0 || !strings.Contains(strings.ToLower(c.Queries[0].Text), "venice") {
		t.Errorf("queries %+v", c.Queries)
	}
	assertEmptyVideoCache(t, env.Cfg.CacheDir)
}

// Without a transcription server the check goes on from the frames and
// says so; the spoken claim is then not found, and muse does not pretend
// it was.
func TestVideoPostNoTranscriptionServer(t *testing.T) {
	env := testworld.NewVideo(t)
	env.LLM = llmtest.NewReplyServer(t, testworld.VideoModel) // no /audio/transcriptions
	env.Cfg.OpenAIBaseURL = env.LLM.BaseURL
	c, err := env.Check(t, pipeline.Options{}, env.SpokenVideo)
	if err != nil && !errors.Is(err, pipeline.ErrNoEvidence) {
		t.Fatal(err)
	}
	v := c.Video
	if v == nil || len(v.Frames) == 0 || len(v.Transcript) != 0 ||
		!strings.Contains(v.TranscriptNote, "no /audio/transcriptions") || !strings.Contains(v.TranscriptNote, "goes on from its frames") {
		t.Fatalf("video %+v", v)
	}
	if !strings.Contains(v.Description, "Its sound was not transcribed") {
		t.Errorf("description %q", v.Description)
	}
	if cites(c, testworld.VideoURLs["venice"]) {
		t.Errorf("the spoken claim was corrected without a transcript: %+v", c.Correction)
	}
}

func assertEmptyVideoCache(t *testing.T, cacheDir string) {
	t.Helper()
	entries, err := os.ReadDir(filepath.Join(cacheDir, "video"))
	if err != nil && !os.IsNotExist(err) {
		t.Fatal(err)
	}
	if len(entries) != 0 {
		t.Errorf("left in the cache: %v", entries)
	}
}
