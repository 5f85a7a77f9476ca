package pipeline

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/images/imagetest"
	"github.com/musecheck/muse/sources/search"
	"github.com/musecheck/muse/sources/video"
)

// A check whose video was read before (a reopened case: its file is gone)
// reads nothing again, and a page whose lead image shows a keyframe's
// picture is kept for it, as for a post image.
func TestKeyframeMatchKeepsSource(t *testing.T) {
	w := newWorld()
	const weather = "https://weather.example/i"
	frame, err := images.Decode("frame", imagetest.PNG(t, imagetest.Scene(0, 320, 240)), images.Options{})
	if err != nil {
		t.Fatal(err)
	}
	imgs := map[string][]byte{"https://weather.example/lead.png": imagetest.PNG(t, imagetest.Scene(0, 640, 480))}
	ex := func(body []byte, u string) (*extract.Article, error) {
		a, err := w.extract(body, u)
		if a != nil && u == weather {
			a.Image = "https://weather.example/lead.png"
		}
		return a, err
	}
	e, err := New(Deps{Model: &fakeModel{evidence: quoting}, Searchers: []search.Searcher{w}, Fetcher: w, Extract: ex, Rater: w,
		Images: mapImages(imgs), Videos: failingVideos{t}}, Options{Video: VideoOptions{CacheDir: t.TempDir()}})
	if err != nil {
		t.Fatal(err)
	}
	src := "https://cdn.example/gone.mp4"
	c := e.NewCheck(Post{Text: post, Videos: []string{src}}, day("2024-02-01"))
	c.Video = &Video{Source: src, Duration: 12, Frames: []VideoFrame{
		{At: 0, PHash: strconv.FormatUint(frame.Hash, 16)},
		{At: 3.2, OCR: "BICYCLES BANNED", PHash: "ffff0000ffff0000", Scene: true}},
		Transcript: []TranscriptSegment{{Start: 1, End: 4, Text: "The council banned bicycles."}}, Language: "en"}
	if _, err := runCheck(t, e, c); err != nil {
		t.Fatal(err)
	}
	v := c.Video
	if v.Error != "" || len(v.Frames) != 2 || !strings.Contains(v.Description, "At 0:03: text on screen: \"BICYCLES BANNED\".") ||
		!strings.Contains(v.Description, "Spoken (in English): [0:01] The council banned bicycles.") {
		t.Fatalf("video %+v", v)
	}
	s := c.SourceByURL(weather)
	if s == nil || s.Status == StatusIrrelevant || s.ImageSimilarity < images.MatchThreshold || !strings.Contains(s.Reason+eventReason(c, weather), "image") {
		t.Fatalf("weather page with a keyframe's picture: %+v", s)
	}
	if s.Relevance >= e.opts.LexicalThreshold {
		t.Errorf("weather page text relevance %.2f: the test needs it low", s.Relevance)
	}
	// The person's description replaces the one made from the frames,
	// and the queries go stale; clearing it brings the made one back.
	if err := c.DescribeVideo("A man reads a council notice aloud."); err != nil {
		t.Fatal(err)
	}
	if c.Stage(StageQueries).State != StateStale || !c.Video.Edited {
		t.Errorf("after the edit: queries %s, video %+v", c.Stage(StageQueries).State, c.Video)
	}
	if err := e.Run(context.Background(), c, StageImages, nil); err != nil {
		t.Fatal(err)
	}
	if c.Video.Description != "A man reads a council notice aloud." {
		t.Errorf("the rerun lost the person's description: %q", c.Video.Description)
	}
	if err := c.DescribeVideo(""); err != nil || c.Video.Edited || !strings.HasPrefix(c.Video.Description, "A video of 0:12.") {
		t.Errorf("cleared: %v %+v", err, c.Video)
	}
}

// failingVideos fails the test if a video is downloaded.
type failingVideos struct{ t *testing.T }

func (f failingVideos) FetchVideo(ctx context.Context, u, dir string, _ video.Options) (string, error) {
	f.t.Errorf("the video %s was downloaded again", u)
	return "", context.Canceled
}
