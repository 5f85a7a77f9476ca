package video_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/video"
	"github.com/musecheck/muse/sources/video/videotest"
)

func TestProbeAndKeyframes(t *testing.T) {
	tools := videotest.Need(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	videotest.Clip(t, clip, videotest.Spec{Scenes: []videotest.Scene{
		{Source: "color=c=navy", Text: "FLOODS CLOSE THE LOUVRE", Seconds: 3},
		{Source: "smptebars", Seconds: 3},
		{Source: "color=c=darkgreen", Text: "SECOND CAPTION HERE", Seconds: 6},
	}})
	ctx := context.Background()
	info, err := video.Probe(ctx, tools, clip, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if info.Width != 640 || info.Height != 360 || info.Codec != "h264" || info.HasAudio {
		t.Errorf("probe: %+v", info)
	}
	if d := info.Duration; d < 11500*time.Millisecond || d > 12500*time.Millisecond {
		t.Errorf("duration %s, want 12s", d)
	}
	work := filepath.Join(dir, "work")
	os.Mkdir(work, 0o700)
	frames, err := video.Keyframes(ctx, tools, clip, info, work, video.Options{FloorEvery: 2 * time.Second})
	if err != nil {
		t.Fatal(err)
	}
	// Three scenes: each change is found, the still scenes are not repeated
	// (floor frames of the same picture are near-duplicates).
	var ats []string
	for _, f := range frames {
		ats = append(ats, video.Clock(f.At))
	}
	if len(frames) != 3 {
		t.Fatalf("frames at %v, want one per scene (0:00, 0:03, 0:06)", ats)
	}
	for i, want := range []time.Duration{0, 3 * time.Second, 6 * time.Second} {
		if d := (frames[i].At - want).Abs(); d > 400*time.Millisecond {
			t.Errorf("frame %d at %s, want %s", i, frames[i].At, want)
		}
		if frames[i].Image.Width != 640 || frames[i].Image.Hash == 0 {
			t.Errorf("frame %d: %+v", i, frames[i].Image)
		}
	}
	if !frames[1].Scene || frames[0].Scene {
		t.Errorf("scene flags %v %v, want the cut at 0:03 marked", frames[0].Scene, frames[1].Scene)
	}
	if _, err := images.OCR(ctx, frames[0].Image); errors.Is(err, images.ErrNoTesseract) {
		t.Log("tesseract absent: the burned-in text is not read back")
	} else if text, _ := images.OCR(ctx, frames[0].Image); !strings.Contains(strings.ToUpper(text), "LOUVRE") {
		t.Errorf("OCR of the first frame: %q, want the burned-in caption", text)
	}
}

func TestKeyframesAtMostK(t *testing.T) {
	tools := videotest.Need(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	var scenes []videotest.Scene
	colors := []string{"navy", "darkred", "darkgreen", "purple", "olive", "teal", "maroon", "gray", "orange", "black", "brown", "pink"}
	for i, c := range colors {
		scenes = append(scenes, videotest.Scene{Source: "color=c=" + c, Text: strings.Repeat("WORD ", i%3+1) + c, Seconds: 1})
	}
	videotest.Clip(t, clip, videotest.Spec{Scenes: scenes})
	info, err := video.Probe(context.Background(), tools, clip, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	frames, err := video.Keyframes(context.Background(), tools, clip, info, dir, video.Options{MaxFrames: 4})
	if err != nil {
		t.Fatal(err)
	}
	if len(frames) != 4 {
		t.Fatalf("%d frames, want 4", len(frames))
	}
	// They cover the video: the first frame and one near the end, none
	// closer than two seconds to another.
	if frames[0].At != 0 || frames[3].At < 9*time.Second {
		t.Errorf("frames at %s … %s, want 0:00 … past 0:09", frames[0].At, frames[3].At)
	}
	for i := 1; i < len(frames); i++ {
		if frames[i].At-frames[i-1].At < 2*time.Second {
			t.Errorf("frames %d and %d %s apart", i-1, i, frames[i].At-frames[i-1].At)
		}
	}
}

func TestAudio(t *testing.T) {
	tools := videotest.Need(t)
	dir := t.TempDir()
	clip := filepath.Join(dir, "talk.mp4")
	videotest.Clip(t, clip, videotest.Spec{Scenes: []videotest.Scene{{Source: "testsrc", Seconds: 4}},
		Speech: "The bridge was closed on Monday."})
	info, err := video.Probe(context.Background(), tools, clip, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if !info.HasAudio {
		t.Fatal("no audio stream found")
	}
	wav, err := video.Audio(context.Background(), tools, clip, dir, video.Options{})
	if err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(wav)
	if err != nil {
		t.Fatal(err)
	}
	// RIFF/WAVE, PCM, one channel at 16 kHz, and about as long as the clip.
	if string(data[:4]) != "RIFF" || string(data[8:12]) != "WAVE" || data[22] != 1 ||
		int(data[24])|int(data[25])<<8 != 16000 {
		t.Fatalf("not 16 kHz mono WAV: % x", data[:32])
	}
	if n := len(data); n < 16000*2*1 || n > 16000*2*5 {
		t.Errorf("%d bytes of audio for a 4 s clip", n)
	}
}

func TestHostileVideosRefused(t *testing.T) {
	tools := videotest.Need(t)
	dir := t.TempDir()
	ctx := context.Background()
	clip := filepath.Join(dir, "clip.mp4")
	videotest.Clip(t, clip, videotest.Spec{Scenes: []videotest.Scene{{Source: "testsrc", Seconds: 1}}})

	long := filepath.Join(dir, "long.mp4")
	videotest.LongDeclared(t, clip, long)
	_, err := video.Probe(ctx, tools, long, video.Options{})
	if !errors.Is(err, video.ErrTooLong) || !strings.Contains(err.Error(), "limit 10:00") {
		t.Errorf("huge declared duration: %v, want ErrTooLong naming the 10:00 limit", err)
	}

	bomb := filepath.Join(dir, "bomb.mov")
	videotest.Bomb(t, bomb, 16000)
	_, err = video.Probe(ctx, tools, bomb, video.Options{})
	if !errors.Is(err, video.ErrTooLarge) || !strings.Contains(err.Error(), "16000×16000") {
		t.Errorf("decompression bomb: %v, want ErrTooLarge naming 16000×16000", err)
	}

	_, err = video.Probe(ctx, tools, clip, video.Options{MaxBytes: 100})
	if !errors.Is(err, video.ErrTooLarge) {
		t.Errorf("over the size cap: %v", err)
	}

	// A playlist or concat list could make ffmpeg open other files: refused.
	concat := filepath.Join(dir, "list.txt")
	os.WriteFile(concat, []byte("ffconcat version 1.0\nfile '"+clip+"'\n"), 0o600)
	hls := filepath.Join(dir, "list.m3u8")
	os.WriteFile(hls, []byte("#EXTM3U\n#EXT-X-TARGETDURATION:1\n#EXTINF:1,\nhttp://127.0.0.1:1/seg.ts\n#EXT-X-ENDLIST\n"), 0o600)
	page := filepath.Join(dir, "page.mp4")
	os.WriteFile(page, []byte("<!doctype html><title>Not found</title>"), 0o600)
	for _, p := range []string{concat, hls, page} {
		if _, err := video.Probe(ctx, tools, p, video.Options{}); !errors.Is(err, video.ErrNotVideo) {
			t.Errorf("%s: %v, want ErrNotVideo", filepath.Base(p), err)
		}
	}
}

func TestClock(t *testing.T) {
	for d, want := range map[time.Duration]string{0: "0:00", 12400 * time.Millisecond: "0:12", 62 * time.Second: "1:02",
		3723 * time.Second: "1:02:03"} {
		if got := video.Clock(d); got != want {
			t.Errorf("Clock(%s) = %q, want %q", d, got, want)
		}
	}
}
