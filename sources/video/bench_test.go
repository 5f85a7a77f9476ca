package video_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/images"
	"github.com/musecheck/muse/sources/video"
	"github.com/musecheck/muse/sources/video/videotest"
)

// BenchmarkVideoStage is the work the images stage does on a 60 s 720p
// clip with sound, beyond the model calls: probe, keyframes, the frames'
// OCR and the sound's extraction. It reports the CPU seconds spent (this
// process and ffmpeg, ffprobe and tesseract) and the peak RSS of this
// process and of the largest child. Goal: under 10 s of CPU, 300 MB.
// The largest child may be the encoder that made the clip (the kernel
// keeps one peak for all children): it is an upper bound for the stage's.
//
//	go test -run '^$' -bench VideoStage -benchtime 1x ./sources/video
func BenchmarkVideoStage(b *testing.B) {
	tools := videotest.Need(b)
	dir := b.TempDir()
	clip := filepath.Join(dir, "clip.mp4")
	var scenes []videotest.Scene
	for i := range 6 {
		src := []string{"testsrc2", "color=c=navy", "smptehdbars", "color=c=darkred", "rgbtestsrc", "color=c=darkgreen"}[i]
		scenes = append(scenes, videotest.Scene{Source: src, Text: fmt.Sprintf("Scene %d: %s", i+1, strings.Repeat("a claim ", i+1)), Seconds: 10})
	}
	videotest.Clip(b, clip, videotest.Spec{Scenes: scenes, Width: 1280, Height: 720,
		Speech: "This clip lasts a minute and its sound is read by the transcription server."})
	ctx := context.Background()
	_, ocrErr := images.OCR(ctx, &images.Image{Data: []byte("x")})
	var self0, kids0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self0)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids0)
	start := time.Now()
	b.ResetTimer()
	for range b.N {
		work, err := video.NewWorkdir(dir)
		if err != nil {
			b.Fatal(err)
		}
		info, err := video.Probe(ctx, tools, clip, video.Options{})
		if err != nil {
			b.Fatal(err)
		}
		frames, err := video.Keyframes(ctx, tools, clip, info, work, video.Options{})
		if err != nil {
			b.Fatal(err)
		}
		if len(frames) < 6 {
			var ats []string
			for _, f := range frames {
				ats = append(ats, video.Clock(f.At))
			}
			b.Fatalf("frames at %v for 6 scenes", ats)
		}
		if !errors.Is(ocrErr, images.ErrNoTesseract) {
			for _, f := range frames {
				if _, err := images.OCR(ctx, f.Image); err != nil {
					b.Fatal(err)
				}
			}
		}
		if _, err := video.Audio(ctx, tools, clip, work, video.Options{}); err != nil {
			b.Fatal(err)
		}
		os.RemoveAll(work)
	}
	b.StopTimer()
	var self1, kids1 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self1)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &kids1)
	cpu := func(r syscall.Rusage) float64 {
		return time.Duration(r.Utime.Nano() + r.Stime.Nano()).Seconds()
	}
	n := float64(b.N)
	b.ReportMetric(time.Since(start).Seconds()/n, "wall-s/op")
	b.ReportMetric((cpu(self1)-cpu(self0)+cpu(kids1)-cpu(kids0))/n, "cpu-s/op")
	b.ReportMetric(float64(self1.Maxrss)/1024, "self-peak-MB")
	b.ReportMetric(float64(kids1.Maxrss)/1024, "child-peak-MB")
}
