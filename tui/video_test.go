package tui

import (
	"context"
	"strings"
	"testing"

	tea "github.com/charmbracelet/bubbletea"

	"github.com/musecheck/muse/pipeline"
)

// A reopened case with a video shows it in the images pane — its
// keyframes with their times, the text on them and their captions, the
// transcript with its times — and e rewrites its description, the stages
// after it going stale.
func TestVideoInImagesPane(t *testing.T) {
	m, _ := finished(t, 100, 40)
	c := cloneCheck(m.check)
	c.Video = &pipeline.Video{Source: "https://cdn.example/clip.mp4", Duration: 42, Language: "en",
		Frames: []pipeline.VideoFrame{{At: 0, Caption: "A man at a lectern", Origin: pipeline.ImageOriginVision},
			{At: 12.4, OCR: "BICYCLES BANNED FROM MONDAY", Origin: pipeline.ImageOriginOCR}},
		Transcript:  []pipeline.TranscriptSegment{{Start: 61, End: 64, Text: "The council banned bicycles."}},
		Description: "A video of 0:42.\nAt 0:12: text on screen: \"BICYCLES BANNED FROM MONDAY\"."}
	opts := testOptions(newRunner(t))
	opts.Case = c
	m2 := New(context.Background(), opts)
	m2.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	press(t, m2, "1")
	v := m2.View()
	for _, want := range []string{"video https://cdn.example/clip.mp4 (0:42)", "description (made from its frames and sound)",
		"at 0:00: A man at a lectern", "at 0:12: on screen: “BICYCLES BANNED FROM MONDAY”", "[1:01] The council banned bicycles."} {
		if !strings.Contains(v, want) {
			t.Errorf("images pane lacks %q:\n%s", want, v)
		}
	}
	// The stage list names the pane for what it holds: a video post's
	// images stage is its Video pane; with images too, "media".
	if !strings.Contains(v, "▸– video ") || !strings.Contains(v, "│ Video ") {
		t.Errorf("a video post's pane is not its Video pane:\n%s", v)
	}
	both := cloneCheck(c)
	both.Post.Images = []string{"https://cdn.example/photo.jpg"}
	opts.Case = both
	m3 := New(context.Background(), opts)
	m3.Update(tea.WindowSizeMsg{Width: 100, Height: 40})
	press(t, m3, "1")
	if v3 := m3.View(); !strings.Contains(v3, " media ") || !strings.Contains(v3, "│ Images and video ") {
		t.Errorf("a post with images and a video: the stage list and title do not say so:\n%s", v3)
	}
	press(t, m2, "e")
	if m2.overlay != overlayPrompt || !strings.HasPrefix(m2.prompt.input.Value(), "A video of 0:42.") {
		t.Fatalf("e did not open the video's description: overlay %v, %q", m2.overlay, m2.prompt.input.Value())
	}
	m2.prompt.input.SetValue("A man reads a council notice aloud")
	press(t, m2, "enter")
	if !m2.check.Video.Edited || m2.check.Video.Description != "A man reads a council notice aloud" ||
		m2.stage(pipeline.StageQueries).State != pipeline.StateStale {
		t.Fatalf("after the edit: %+v, queries %s", m2.check.Video, m2.stage(pipeline.StageQueries).State)
	}
	if !strings.Contains(m2.View(), "description (written by you)") {
		t.Errorf("the edit is not shown as the person's:\n%s", m2.View())
	}
}
