// Package videotest makes real video files for tests with ffmpeg's lavfi
// sources (testsrc, color) and drawtext for burned-in text, a spoken track
// with espeak-ng, and hostile files (a huge declared duration, frames
// declaring a decompression bomb's size). It is imported only by tests;
// each helper skips the test, saying why, when its tool is missing.
package videotest

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/video"
)

// Need returns ffmpeg and ffprobe, or skips the test when they are absent.
func Need(t testing.TB) video.Tools {
	t.Helper()
	tools, err := video.Find()
	if err != nil {
		t.Skipf("%v: apt-get install ffmpeg (.ci/run installs it)", err)
	}
	return tools
}

// Scene is one stretch of a clip: a lavfi source ("testsrc", "color=c=navy",
// "testsrc2"…), the text burned into it (none: ""), and its length.
type Scene struct {
	Source  string
	Text    string
	Seconds float64
}

// Spec is a clip: its scenes in order, its size (default 640×360) and what
// its sound track says (espeak-ng; none: silent, no audio stream).
type Spec struct {
	Scenes        []Scene
	Width, Height int
	Speech        string
	// Preset is x264's (default "ultrafast").
	Preset string
}

// Clip writes an H.264/AAC MP4 made to spec at path.
func Clip(t testing.TB, path string, spec Spec) {
	t.Helper()
	tools := Need(t)
	w, h := spec.Width, spec.Height
	if w == 0 {
		w, h = 640, 360
	}
	var args []string
	var chain strings.Builder
	for i, s := range spec.Scenes {
		src := s.Source
		if src == "" {
			src = "testsrc"
		}
		sep := "="
		if strings.Contains(src, "=") {
			sep = ":"
		}
		args = append(args, "-f", "lavfi", "-i", fmt.Sprintf("%s%ss=%dx%d:d=%g:r=25", src, sep, w, h, s.Seconds))
		filter := "null"
		if s.Text != "" {
			filter = fmt.Sprintf("drawtext=text='%s':fontcolor=white:borderw=2:bordercolor=black:fontsize=%d:x=(w-text_w)/2:y=(h-text_h)/2",
				escapeText(s.Text), max(min(h/10, 6*w/(5*max(len(s.Text), 1))), 12))
		}
		fmt.Fprintf(&chain, "[%d:v]%s,format=yuv420p,setsar=1[s%d];", i, filter, i)
	}
	for i := range spec.Scenes {
		fmt.Fprintf(&chain, "[s%d]", i)
	}
	fmt.Fprintf(&chain, "concat=n=%d:v=1:a=0[v]", len(spec.Scenes))
	maps := []string{"-map", "[v]"}
	if spec.Speech != "" {
		wav := Speech(t, filepath.Join(filepath.Dir(path), filepath.Base(path)+".speech.wav"), spec.Speech)
		args = append(args, "-i", wav)
		maps = append(maps, "-map", fmt.Sprintf("%d:a", len(spec.Scenes)), "-c:a", "aac", "-b:a", "64k")
	}
	preset := spec.Preset
	if preset == "" {
		preset = "ultrafast"
	}
	args = append(args, "-filter_complex", chain.String())
	args = append(args, maps...)
	args = append(args, "-c:v", "libx264", "-preset", preset, "-pix_fmt", "yuv420p", "-movflags", "+faststart", "-y", path)
	run(t, tools.FFmpeg, append([]string{"-hide_banner", "-nostdin", "-loglevel", "error"}, args...)...)
}

func escapeText(s string) string {
	r := strings.NewReplacer(`\`, `\\\\`, `'`, `'\\\''`, `:`, `\:`, `%`, `\%`)
	return r.Replace(s)
}

// Speech writes text spoken by espeak-ng as WAV at path, or skips the test
// when espeak-ng is absent.
func Speech(t testing.TB, path, text string) string {
	t.Helper()
	bin, err := exec.LookPath("espeak-ng")
	if err != nil {
		t.Skip("espeak-ng not found on PATH: apt-get install espeak-ng (.ci/run installs it)")
	}
	run(t, bin, "-s", "150", "-w", path, text)
	return path
}

func run(t testing.TB, bin string, args ...string) {
	t.Helper()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v: %s", filepath.Base(bin), strings.Join(args, " "), err, stderr.String())
	}
}

// LongDeclared copies the MP4 at src to dst with its movie header (mvhd)
// declaring a duration of 2^32-1 ticks of its timescale, weeks at MP4's
// usual 1000 a second, while the frames last what they did.
func LongDeclared(t testing.TB, src, dst string) {
	t.Helper()
	data, err := os.ReadFile(src)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("mvhd"))
	if i < 0 || data[i+4] != 0 {
		t.Fatalf("%s: no version-0 mvhd box", src)
	}
	// version(1) flags(3) created(4) modified(4) timescale(4) duration(4)
	binary.BigEndian.PutUint32(data[i+4+16:], 0xFFFFFFFF)
	if err := os.WriteFile(dst, data, 0o600); err != nil {
		t.Fatal(err)
	}
}

// Bomb writes at path a MOV of one PNG frame whose headers (the sample
// entry and the PNG's IHDR) declare side×side pixels: a 1 KB file that a
// decoder would allocate side²×3 bytes for (768 MB at 16000).
func Bomb(t testing.TB, path string, side int) {
	t.Helper()
	tools := Need(t)
	small := path + ".small.mov"
	run(t, tools.FFmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-f", "lavfi", "-i", "color=c=red:s=64x64:d=0.2:r=5",
		"-c:v", "png", "-y", small)
	data, err := os.ReadFile(small)
	if err != nil {
		t.Fatal(err)
	}
	i := bytes.Index(data, []byte("IHDR"))
	j := bytes.Index(data, []byte("png "))
	if i < 0 || j < 0 {
		t.Fatalf("%s: no PNG sample entry or IHDR", small)
	}
	binary.BigEndian.PutUint32(data[i+4:], uint32(side))
	binary.BigEndian.PutUint32(data[i+8:], uint32(side))
	binary.BigEndian.PutUint32(data[i+17:], crc32.ChecksumIEEE(data[i:i+17]))
	// sample entry: type(4) reserved(6) data ref(2) predefined(2)
	// reserved(2) predefined(12) width(2) height(2)
	w := j + 4 + 6 + 2 + 2 + 2 + 12
	binary.BigEndian.PutUint16(data[w:], uint16(side))
	binary.BigEndian.PutUint16(data[w+2:], uint16(side))
	if err := os.WriteFile(path, data, 0o600); err != nil {
		t.Fatal(err)
	}
}
