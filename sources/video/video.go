// Package video reads a post's video with ffmpeg and ffprobe (Debian's
// ffmpeg package, found on PATH): it probes the file and refuses what is
// too large, too long or not a video, picks the keyframes that cover it
// (scene changes plus a floor of one every few seconds, near-duplicates
// removed by perceptual hash, at most a few), and extracts the audio track
// for transcription.
//
// Every file it writes goes in the work directory the caller gives
// (NewWorkdir, under muse's cache), which the caller removes.
package video

import (
	"bytes"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/images"
)

// Errors, wrapped with the detail, so a caller can tell why a video was
// refused with errors.Is and print err as a one-line reason.
var (
	// ErrNoFFmpeg: ffmpeg or ffprobe is not on PATH.
	ErrNoFFmpeg = errors.New("ffmpeg not found on PATH (install ffmpeg)")
	// ErrNotVideo: the content is not a video in a container muse reads.
	ErrNotVideo = errors.New("not a supported video")
	// ErrTooLarge: the file is over Options.MaxBytes or its frames over
	// Options.MaxSide or Options.MaxPixels (a decompression bomb).
	ErrTooLarge = errors.New("video too large")
	// ErrTooLong: the video lasts, or says it lasts, over MaxDuration.
	ErrTooLong = errors.New("video too long")
)

// Defaults of Options.
const (
	DefaultMaxBytes    = 200 << 20
	DefaultMaxDuration = 10 * time.Minute
	DefaultMaxFrames   = 8
	DefaultFloorEvery  = 5 * time.Second
	// DefaultSceneThreshold is ffmpeg's scene score (0 to 1) above which a
	// frame starts a new scene; 0.3 is the value ffmpeg's documentation
	// and most scene-cut tools use.
	DefaultSceneThreshold = 0.3
	// DefaultDupDistance: two frames whose perceptual hashes differ in at
	// most this many of 64 bits show the same picture (JPEG re-encoding
	// and resizing stay within 2 bits in sources/images' tests, while a
	// caption changed on a plain background moves the hash by about 18).
	DefaultDupDistance = 5
	DefaultFrameSide   = 1280
	DefaultMaxSide     = 7680
	DefaultMaxPixels   = 7680 * 4320
)

// Options bounds what is read; the zero value takes every default.
type Options struct {
	// MaxBytes caps the file (default 200 MB); MaxDuration the length
	// declared or read (default 10 minutes).
	MaxBytes    int64
	MaxDuration time.Duration
	// MaxFrames is the most keyframes kept (default 8); FloorEvery the
	// longest stretch without one (default 5 s), before near-duplicates
	// are removed and the MaxFrames covering the video chosen.
	MaxFrames      int
	FloorEvery     time.Duration
	SceneThreshold float64
	DupDistance    int
	// FrameSide is the longest side of the frames extracted (default 1280:
	// enough for OCR of on-screen text, small enough for a vision model).
	FrameSide int
	// MaxSide and MaxPixels cap the frame size the video declares (default
	// 7680 a side, 8K's pixels): decoding a bigger one is refused.
	MaxSide   int
	MaxPixels int64
	// Timeout bounds one ffmpeg run (default 2 minutes).
	Timeout time.Duration
}

// WithDefaults fills every zero field.
func (o Options) WithDefaults() Options {
	o.MaxBytes = cmp.Or(o.MaxBytes, DefaultMaxBytes)
	o.MaxDuration = cmp.Or(o.MaxDuration, DefaultMaxDuration)
	o.MaxFrames = cmp.Or(o.MaxFrames, DefaultMaxFrames)
	o.FloorEvery = cmp.Or(o.FloorEvery, DefaultFloorEvery)
	o.SceneThreshold = cmp.Or(o.SceneThreshold, DefaultSceneThreshold)
	o.DupDistance = cmp.Or(o.DupDistance, DefaultDupDistance)
	o.FrameSide = cmp.Or(o.FrameSide, DefaultFrameSide)
	o.MaxSide = cmp.Or(o.MaxSide, DefaultMaxSide)
	o.MaxPixels = cmp.Or(o.MaxPixels, DefaultMaxPixels)
	o.Timeout = cmp.Or(o.Timeout, 2*time.Minute)
	return o
}

// Tools are the ffmpeg and ffprobe commands found on PATH.
type Tools struct{ FFmpeg, FFprobe string }

// Find looks ffmpeg and ffprobe up on PATH.
func Find() (Tools, error) {
	ff, err := exec.LookPath("ffmpeg")
	if err != nil {
		return Tools{}, ErrNoFFmpeg
	}
	fp, err := exec.LookPath("ffprobe")
	if err != nil {
		return Tools{}, fmt.Errorf("%w: ffprobe is missing", ErrNoFFmpeg)
	}
	return Tools{FFmpeg: ff, FFprobe: fp}, nil
}

// Version reports the installed ffmpeg's version, e.g. "5.1.6-0+deb12u1",
// and whether ffmpeg and ffprobe were found, for `muse doctor`.
func Version() (string, bool) {
	t, err := Find()
	if err != nil {
		return "", false
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	out, err := exec.CommandContext(ctx, t.FFmpeg, "-hide_banner", "-version").Output()
	if err != nil {
		return "", false
	}
	first, _, _ := strings.Cut(string(out), "\n")
	f := strings.Fields(first) // "ffmpeg version 5.1.6-0+deb12u1 Copyright …"
	if len(f) >= 3 && f[1] == "version" {
		return f[2], true
	}
	return "unknown", true
}

// NewWorkdir makes a fresh directory for one video's files under
// cacheDir/video; the caller removes it (os.RemoveAll) when done.
func NewWorkdir(cacheDir string) (string, error) {
	if strings.TrimSpace(cacheDir) == "" {
		return "", errors.New("video: no cache directory to work in")
	}
	root := filepath.Join(cacheDir, "video")
	if err := os.MkdirAll(root, 0o700); err != nil {
		return "", fmt.Errorf("video: %w", err)
	}
	return os.MkdirTemp(root, "v-")
}

// Info is what ffprobe says of a file.
type Info struct {
	Format   string        `json:"format"` // ffprobe's format_name, "mov,mp4,m4a,3gp,3g2,mj2"
	Duration time.Duration `json:"duration"`
	Width    int           `json:"width"`
	Height   int           `json:"height"`
	Codec    string        `json:"codec"`
	HasAudio bool          `json:"has_audio"`
	Bytes    int64         `json:"bytes"`
}

// containers are the demuxers read: those a post's video comes in. Others
// (playlists, concat lists, image sequences) could make ffmpeg open other
// files or addresses, so they are refused.
var containers = []string{"mov", "mp4", "matroska", "webm", "mpegts", "avi", "flv", "gif", "ogg", "3gp"}

// maxAlloc caps any one block ffmpeg and ffprobe allocate (256 MiB; an 8K
// frame takes 50 MB): ffprobe decodes a frame to learn a stream's size, so
// a 1 KB file declaring 16000×16000 PNG frames would otherwise take 800 MB
// before Probe could refuse it.
const maxAlloc = "268435456"

// probeJSON is the part of `ffprobe -print_format json -show_format
// -show_streams` read.
type probeJSON struct {
	Streams []struct {
		CodecType string `json:"codec_type"`
		CodecName string `json:"codec_name"`
		Width     int    `json:"width"`
		Height    int    `json:"height"`
		Duration  string `json:"duration"`
	} `json:"streams"`
	Format struct {
		FormatName string `json:"format_name"`
		Duration   string `json:"duration"`
	} `json:"format"`
}

// Probe reads what the video at path is with ffprobe and refuses one over
// the caps: a file over MaxBytes, a declared duration over MaxDuration, a
// frame over MaxSide or MaxPixels, a container not in the list read.
func Probe(ctx context.Context, t Tools, path string, opts Options) (*Info, error) {
	opts = opts.WithDefaults()
	st, err := os.Stat(path)
	if err != nil {
		return nil, fmt.Errorf("read video: %w", err)
	}
	if st.IsDir() {
		return nil, fmt.Errorf("%w: %s is a directory", ErrNotVideo, path)
	}
	if st.Size() > opts.MaxBytes {
		return nil, fmt.Errorf("%w: %s, limit %s", ErrTooLarge, mb(st.Size()), mb(opts.MaxBytes))
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, t.FFprobe, "-v", "error", "-max_alloc", maxAlloc, "-protocol_whitelist", "file",
		"-print_format", "json", "-show_format", "-show_streams", "file:"+path)
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("probe video: ffprobe stopped: %w", ctx.Err())
		}
		return nil, fmt.Errorf("%w: ffprobe cannot read it (%s)", ErrNotVideo, lastLine(stderr.String()))
	}
	var p probeJSON
	if err := json.Unmarshal(stdout.Bytes(), &p); err != nil {
		return nil, fmt.Errorf("probe video: ffprobe's answer: %w", err)
	}
	info := &Info{Format: p.Format.FormatName, Bytes: st.Size()}
	if !slices.ContainsFunc(strings.Split(info.Format, ","), func(f string) bool { return slices.Contains(containers, f) }) {
		return nil, fmt.Errorf("%w: the file is %q, not a video container muse reads (MP4, MOV, WebM, Matroska, MPEG-TS, AVI, FLV, GIF, Ogg)",
			ErrNotVideo, info.Format)
	}
	durations := []string{p.Format.Duration}
	for _, s := range p.Streams {
		durations = append(durations, s.Duration)
		switch s.CodecType {
		case "video":
			if info.Codec == "" {
				info.Codec, info.Width, info.Height = s.CodecName, s.Width, s.Height
			}
			if s.Width > opts.MaxSide || s.Height > opts.MaxSide || int64(s.Width)*int64(s.Height) > opts.MaxPixels {
				return nil, fmt.Errorf("%w: frames of %d×%d pixels, limit %d a side and %d in all", ErrTooLarge,
					s.Width, s.Height, opts.MaxSide, opts.MaxPixels)
			}
		case "audio":
			info.HasAudio = true
		}
	}
	if info.Codec == "" {
		return nil, fmt.Errorf("%w: the file has no video stream", ErrNotVideo)
	}
	if info.Width <= 0 || info.Height <= 0 {
		return nil, fmt.Errorf("%w: the video stream declares %d×%d pixels", ErrNotVideo, info.Width, info.Height)
	}
	for _, d := range durations {
		f, err := strconv.ParseFloat(d, 64)
		if err != nil || math.IsNaN(f) || f <= 0 {
			continue
		}
		if f > opts.MaxDuration.Seconds() {
			return nil, fmt.Errorf("%w: it declares %s, limit %s", ErrTooLong, Clock(seconds(f)), Clock(opts.MaxDuration))
		}
		info.Duration = max(info.Duration, seconds(f))
	}
	return info, nil
}

func seconds(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

func mb(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// Clock writes a time in the video as "0:12" or "1:02:03".
func Clock(d time.Duration) string {
	s := int(d.Round(time.Second) / time.Second)
	if s >= 3600 {
		return fmt.Sprintf("%d:%02d:%02d", s/3600, s/60%60, s%60)
	}
	return fmt.Sprintf("%d:%02d", s/60, s%60)
}

// Frame is one keyframe: when it is shown, whether it starts a scene, and
// the image, checked and hashed by sources/images.
type Frame struct {
	At    time.Duration
	Scene bool
	Image *images.Image
}

var ptsTime = regexp.MustCompile(`\bn:\s*(\d+)\s.*?\bpts_time:\s*([-0-9.e+]+)`)

// Keyframes extracts the frames that cover the video: every scene change
// and at least one frame every FloorEvery, in one ffmpeg pass over at most
// MaxDuration; near-duplicates (perceptual hashes within DupDistance bits)
// are dropped, and of the rest the MaxFrames farthest apart in time kept,
// the first frame always. The frames are written in dir, in order of time.
func Keyframes(ctx context.Context, t Tools, path string, info *Info, dir string, opts Options) ([]Frame, error) {
	opts = opts.WithDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	side := opts.FrameSide
	vf := fmt.Sprintf("fps=5,scale=w='if(gte(iw,ih),min(%d,iw),-2)':h='if(gte(iw,ih),-2,min(%d,ih))',"+
		"select='isnan(prev_selected_t)+gt(scene,%g)+gte(t-prev_selected_t,%g)',showinfo",
		side, side, opts.SceneThreshold, opts.FloorEvery.Seconds())
	pattern := filepath.Join(dir, "frame-%05d.jpg")
	args := []string{"-hide_banner", "-nostdin", "-loglevel", "info", "-max_alloc", maxAlloc, "-protocol_whitelist", "file",
		"-t", strconv.FormatFloat(opts.MaxDuration.Seconds(), 'f', 0, 64), "-i", "file:" + path,
		"-an", "-sn", "-dn", "-vf", vf, "-fps_mode", "vfr", "-q:v", "2", "-frames:v", "10000", pattern}
	cmd := exec.CommandContext(ctx, t.FFmpeg, args...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, fmt.Errorf("keyframes: ffmpeg stopped: %w", ctx.Err())
		}
		return nil, fmt.Errorf("keyframes: ffmpeg: %v (%s)", err, lastLine(stderr.String()))
	}
	type cand struct {
		at    time.Duration
		file  string
		scene bool
	}
	var cands []cand
	var last time.Duration
	for _, m := range ptsTime.FindAllStringSubmatch(stderr.String(), -1) {
		n, _ := strconv.Atoi(m[1])
		f, err := strconv.ParseFloat(m[2], 64)
		if err != nil {
			continue
		}
		at := seconds(max(f, 0))
		// A frame that comes sooner than the floor after the previous one
		// was chosen for its scene score.
		scene := len(cands) > 0 && at-last < opts.FloorEvery-100*time.Millisecond
		cands = append(cands, cand{at: at, file: filepath.Join(dir, fmt.Sprintf("frame-%05d.jpg", n+1)), scene: scene})
		last = at
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("%w: ffmpeg found no frame to decode", ErrNotVideo)
	}
	var frames []Frame
	for _, c := range cands {
		data, err := os.ReadFile(c.file)
		if err != nil {
			return nil, fmt.Errorf("keyframes: %w", err)
		}
		img, err := images.Decode(fmt.Sprintf("frame at %s", Clock(c.at)), data, images.Options{})
		if err != nil {
			return nil, fmt.Errorf("keyframes: %w", err)
		}
		if slices.ContainsFunc(frames, func(f Frame) bool { return images.Distance(f.Image.Hash, img.Hash) <= opts.DupDistance }) {
			continue
		}
		frames = append(frames, Frame{At: c.at, Scene: c.scene, Image: img})
	}
	return cover(frames, opts.MaxFrames), nil
}

// cover keeps at most k frames spread over the video: the first, then
// each time the one farthest in time from those kept (a scene change
// before a floor frame at the same distance), returned in order of time.
func cover(frames []Frame, k int) []Frame {
	if len(frames) <= k {
		return frames
	}
	kept := []int{0}
	for len(kept) < k {
		best, bestD := -1, time.Duration(-1)
		for i, f := range frames {
			if slices.Contains(kept, i) {
				continue
			}
			d := time.Duration(math.MaxInt64)
			for _, j := range kept {
				d = min(d, (f.At - frames[j].At).Abs())
			}
			if d > bestD || d == bestD && f.Scene && !frames[best].Scene {
				best, bestD = i, d
			}
		}
		kept = append(kept, best)
	}
	slices.Sort(kept)
	out := make([]Frame, len(kept))
	for i, j := range kept {
		out[i] = frames[j]
	}
	return out
}

// Audio writes the first MaxDuration of the video's sound as 16 kHz mono
// WAV in dir (what speech recognisers are trained on; 10 minutes take
// 19 MB, under OpenAI's 25 MB upload limit) and returns its path.
func Audio(ctx context.Context, t Tools, path, dir string, opts Options) (string, error) {
	opts = opts.WithDefaults()
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	out := filepath.Join(dir, "audio.wav")
	cmd := exec.CommandContext(ctx, t.FFmpeg, "-hide_banner", "-nostdin", "-loglevel", "error", "-max_alloc", maxAlloc, "-protocol_whitelist", "file",
		"-t", strconv.FormatFloat(opts.MaxDuration.Seconds(), 'f', 0, 64), "-i", "file:"+path,
		"-vn", "-sn", "-dn", "-ac", "1", "-ar", "16000", "-c:a", "pcm_s16le", "-y", out)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return "", fmt.Errorf("audio: ffmpeg stopped: %w", ctx.Err())
		}
		return "", fmt.Errorf("audio: ffmpeg: %v (%s)", err, lastLine(stderr.String()))
	}
	return out, nil
}

// lastLine is the most telling line of ffmpeg's diagnostics.
func lastLine(s string) string {
	var keep []string
	for _, l := range strings.Split(s, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			keep = append(keep, l)
		}
	}
	if len(keep) == 0 {
		return "no message"
	}
	return keep[len(keep)-1]
}
