package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/links"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/posts"
	"github.com/musecheck/muse/sources/video"
	"golang.org/x/sync/errgroup"
)

// Video is the post's video and what was learned from it: its keyframes
// (each read like a post image: OCR, vision description), what is said in
// it, and the informative description the prompts carry. A case keeps it
// whole, so a reopened case reads nothing again.
type Video struct {
	Source  string `json:"source"`             // path or URL as given
	AltText string `json:"alt_text,omitempty"` // the description its author gave it
	// Poster is the poster image the platform serves for it (a public URL,
	// asked of reverse image search like a post image), if any.
	Poster   string  `json:"poster,omitempty"`
	Duration float64 `json:"duration,omitempty"` // seconds
	Width    int     `json:"width,omitempty"`
	Height   int     `json:"height,omitempty"`
	// Frames are the keyframes that cover it, in order of time.
	Frames []VideoFrame `json:"frames,omitempty"`
	// Transcript is what is said, by segment, as the transcription server
	// heard it; Language its language (ISO 639-1) as the server detected
	// it. TranscriptNote says why there is none (no sound track, no
	// transcription server) when there is none.
	Transcript     []TranscriptSegment `json:"transcript,omitempty"`
	Language       string              `json:"language,omitempty"`
	TranscriptNote string              `json:"transcript_note,omitempty"`
	// Description is the informative description used in prompts: made
	// from the frames and the transcript, or the person's (Edited).
	Description string `json:"description,omitempty"`
	Edited      bool   `json:"edited,omitempty"`
	// Error says why the video could not be read (refused, no ffmpeg);
	// the check then goes on from the post's text.
	Error string `json:"error,omitempty"`
}

// VideoFrame is one keyframe: its time in the video (seconds), the text
// read in it, the vision model's description, and its perceptual hash
// (hex) for matching pages' images.
type VideoFrame struct {
	At      float64 `json:"at"`
	OCR     string  `json:"ocr,omitempty"`
	Caption string  `json:"caption,omitempty"`
	Origin  string  `json:"origin,omitempty"` // where Caption came from: vision model, ocr
	PHash   string  `json:"phash,omitempty"`
	Scene   bool    `json:"scene,omitempty"` // it starts a scene
}

// TranscriptSegment is one stretch of speech, in seconds from the start.
type TranscriptSegment struct {
	Start float64 `json:"start"`
	End   float64 `json:"end"`
	Text  string  `json:"text"`
}

// Transcriber turns speech into text: the model server's OpenAI-compatible
// /audio/transcriptions (*llm.Client). Optional: without one a video is
// read from its frames, saying so.
type Transcriber interface {
	Transcribe(ctx context.Context, path string, seconds float64) (*llm.Transcript, llm.Usage, error)
}

// VideoOptions bound what is read of a post's video.
type VideoOptions struct {
	// CacheDir is muse's cache directory: a video's files (the download,
	// frames, audio) are written under CacheDir/video and removed when it
	// has been read. Empty: the user's cache directory's muse.
	CacheDir string
	// Limits: size and duration caps, frames kept (sources/video's
	// defaults: 200 MB, 10 minutes, 8 frames).
	Limits video.Options
}

// VideoFetching downloads a video URL into dir, within the size and
// duration caps of lim, and returns the file's path.
type VideoFetching interface {
	FetchVideo(ctx context.Context, rawURL, dir string, lim video.Options) (string, error)
}

func (v *Video) clone() *Video {
	if v == nil {
		return nil
	}
	d := *v
	d.Frames = slices.Clone(v.Frames)
	d.Transcript = slices.Clone(v.Transcript)
	return &d
}

// hasVideo reports whether the check has a video to read or already read.
func (c *Check) hasVideo() bool { return c.Video != nil || len(c.Post.Videos) > 0 }

// video reads the post's video once: its keyframes go through the image
// describer, its sound to the transcription server. A video already read
// (a rerun, a reopened case) is not read again; only its description is
// made again from what was kept, unless the person wrote it.
func (r *run) video(ctx context.Context, d *describer) {
	c := r.c
	if c.Video == nil {
		if len(c.Post.Videos) == 0 {
			return
		}
		if len(c.Post.Videos) > 1 {
			r.warn(StageImages, "the post has %d videos; muse reads the first", len(c.Post.Videos))
		}
		r.mu.Lock()
		c.Video = &Video{Source: c.Post.Videos[0], AltText: clipText(strings.TrimSpace(c.Post.AltTexts[c.Post.Videos[0]]), MaxAltText-len("…")),
			Poster: c.Post.VideoPosters[c.Post.Videos[0]]}
		r.mu.Unlock()
	}
	v := *c.Video
	v.Frames = append([]VideoFrame(nil), v.Frames...)
	if len(v.Frames) == 0 {
		v.Error = ""
		if err := r.readVideo(ctx, d, &v); err != nil {
			if ctx.Err() != nil {
				return
			}
			v.Error = err.Error()
			r.warn(StageImages, "video %s: %v; the check goes on from the post's text", v.Source, err)
		}
	}
	if !v.Edited || strings.TrimSpace(v.Description) == "" {
		v.Edited = false
		v.Description = videoDescription(v)
	}
	r.mu.Lock()
	c.Video = &v
	r.mu.Unlock()
	r.item(StageImages, v, "video read")
}

func (e *Engine) videoCacheDir() string {
	if e.opts.Video.CacheDir != "" {
		return e.opts.Video.CacheDir
	}
	if d, err := os.UserCacheDir(); err == nil {
		return filepath.Join(d, "muse")
	}
	return filepath.Join(os.TempDir(), "muse-cache")
}

// readVideo fetches (a URL), probes, extracts and reads the keyframes and
// transcribes the sound, all in a work directory removed at the end.
func (r *run) readVideo(ctx context.Context, d *describer, v *Video) error {
	tools, err := video.Find()
	if err != nil {
		return err
	}
	lim := r.e.opts.Video.Limits.WithDefaults()
	dir, err := video.NewWorkdir(r.e.videoCacheDir())
	if err != nil {
		return err
	}
	defer os.RemoveAll(dir)
	path := v.Source
	if _, err := sources.ParseHTTP(v.Source); err == nil {
		r.emit(Event{Kind: EventProgress, Stage: StageImages, Message: "downloading the video " + v.Source})
		if path, err = r.e.videoFetcher().FetchVideo(ctx, v.Source, dir, lim); err != nil {
			return err
		}
	} else if strings.Contains(v.Source, "://") {
		return fmt.Errorf("%w: not a file or an http(s) URL", video.ErrNotVideo)
	}
	info, err := video.Probe(ctx, tools, path, lim)
	if err != nil {
		return err
	}
	v.Duration, v.Width, v.Height = info.Duration.Seconds(), info.Width, info.Height
	r.emit(Event{Kind: EventProgress, Stage: StageImages, Message: fmt.Sprintf("the video lasts %s (%d×%d); choosing keyframes",
		video.Clock(info.Duration), info.Width, info.Height)})
	var g errgroup.Group
	g.Go(func() error { r.transcribe(ctx, tools, path, dir, info, v); return nil })
	frames, err := video.Keyframes(ctx, tools, path, info, dir, lim)
	if err != nil {
		_ = g.Wait()
		return err
	}
	v.Frames = make([]VideoFrame, len(frames))
	var fg errgroup.Group
	fg.SetLimit(r.e.opts.ImageParallel)
	for i, f := range frames {
		fg.Go(func() error {
			im := Image{Source: "the video's frame at " + video.Clock(f.At)}
			im.Format, im.Width, im.Height = f.Image.Format, f.Image.Width, f.Image.Height
			im.PHash = strconv.FormatUint(f.Image.Hash, 16)
			d.readText(ctx, &im, f.Image)
			fr := VideoFrame{At: f.At.Seconds(), OCR: im.OCRText, PHash: im.PHash, Scene: f.Scene}
			if d.look(ctx, &im, f.Image) {
				fr.Caption, fr.Origin = im.Description, ImageOriginVision
			} else if im.OCRText != "" {
				fr.Origin = ImageOriginOCR // without a vision model the frame's text is all there is
			}
			v.Frames[i] = fr
			return nil
		})
	}
	_ = fg.Wait()
	_ = g.Wait()
	return ctx.Err()
}

// transcribe sends the sound track to the transcription server, or says
// why there is no transcript.
func (r *run) transcribe(ctx context.Context, tools video.Tools, path, dir string, info *video.Info, v *Video) {
	note := func(format string, args ...any) {
		v.TranscriptNote = fmt.Sprintf(format, args...)
		r.warn(StageImages, "video %s: %s", v.Source, v.TranscriptNote)
	}
	switch {
	case !info.HasAudio:
		v.TranscriptNote = NoSoundTrack
		return
	case r.e.opts.NoLLM:
		note("its sound is not transcribed: no model is used (--no-llm); the check goes on from its frames")
		return
	case r.e.deps.Transcriber == nil:
		note("its sound is not transcribed: no transcription server is configured; the check goes on from its frames")
		return
	}
	wav, err := video.Audio(ctx, tools, path, dir, r.e.opts.Video.Limits)
	if err != nil {
		if ctx.Err() == nil {
			note("its sound could not be extracted (%v); the check goes on from its frames", err)
		}
		return
	}
	t, u, err := r.e.deps.Transcriber.Transcribe(ctx, wav, info.Duration.Seconds())
	r.addUsage(StageImages, u)
	if err != nil {
		if ctx.Err() != nil {
			return
		}
		var ae *llm.APIError
		if errors.As(err, &ae) && ae.Status == 404 {
			note("its sound is not transcribed: the model server has no /audio/transcriptions (%v); the check goes on from its frames", err)
			return
		}
		note("its sound could not be transcribed (%v); the check goes on from its frames", err)
		return
	}
	for _, s := range t.Segments {
		v.Transcript = append(v.Transcript, TranscriptSegment{Start: s.Start, End: s.End, Text: s.Text})
	}
	v.Language = lang.Normalise(t.Language)
	if len(v.Transcript) == 0 {
		v.TranscriptNote = "the transcription server heard no speech"
	}
}

// NoSoundTrack is Video.TranscriptNote for a video without sound.
const NoSoundTrack = "the video has no sound track"

// MaxVideoDescription is the most of a video's description, in bytes, that
// the prompts carry: the frames' notes first, then the transcript, cut.
const MaxVideoDescription = 6000

// videoDescription is the informative description of a video, from what
// was read of it: a line for each keyframe ("at 0:12: …") with its caption
// and the text on screen, then what is said with its times. Nothing is
// claimed that was not read: a frame with neither says nothing.
func videoDescription(v Video) string {
	if len(v.Frames) == 0 && len(v.Transcript) == 0 {
		if v.AltText != "" {
			return fmt.Sprintf("A video not read (%s); its alt text says %q.", strings.TrimRight(cmp.Or(v.Error, "no frame could be read"), "."), v.AltText)
		}
		return ""
	}
	var b strings.Builder
	fmt.Fprintf(&b, "A video of %s.", video.Clock(secs(v.Duration)))
	if v.AltText != "" {
		fmt.Fprintf(&b, " Its alt text says %q.", v.AltText)
	}
	for _, f := range v.Frames {
		var parts []string
		if f.Caption != "" {
			parts = append(parts, strings.TrimRight(oneLineText(f.Caption), "."))
		}
		if ocr := oneLineText(f.OCR); ocr != "" && !strings.Contains(normaliseForMatch(f.Caption), normaliseForMatch(ocr)) {
			parts = append(parts, fmt.Sprintf("text on screen: %q", clipText(ocr, 600)))
		}
		if len(parts) > 0 {
			fmt.Fprintf(&b, "\nAt %s: %s.", video.Clock(secs(f.At)), strings.Join(parts, "; "))
		}
	}
	if len(v.Transcript) > 0 {
		b.WriteString("\nSpoken")
		if v.Language != "" {
			b.WriteString(" (in " + lang.Name(v.Language) + ")")
		}
		b.WriteString(":")
		for _, s := range v.Transcript {
			fmt.Fprintf(&b, " [%s] %s", video.Clock(secs(s.Start)), oneLineText(s.Text))
		}
	} else if v.TranscriptNote == NoSoundTrack {
		b.WriteString("\nIt has no sound track.")
	} else if v.TranscriptNote != "" {
		b.WriteString("\nIts sound was not transcribed: " + v.TranscriptNote + ".")
	}
	return clipText(b.String(), MaxVideoDescription)
}

func secs(f float64) time.Duration { return time.Duration(f * float64(time.Second)) }

// videoText is the text read and heard in the video, for language
// detection and the extractive mode.
func (v *Video) text() string {
	if v == nil {
		return ""
	}
	var parts []string
	for _, f := range v.Frames {
		parts = append(parts, f.OCR)
	}
	for _, s := range v.Transcript {
		parts = append(parts, s.Text)
	}
	return strings.Join(parts, "\n")
}

// videoHashes are the perceptual hashes of the video's keyframes.
func videoHashes(v *Video) []uint64 {
	if v == nil {
		return nil
	}
	var out []uint64
	for _, f := range v.Frames {
		if h, err := strconv.ParseUint(f.PHash, 16, 64); err == nil && f.PHash != "" {
			out = append(out, h)
		}
	}
	return out
}

// promptVideo is what the prompts say of the video: its description.
func promptVideo(v *Video) string {
	if v == nil {
		return ""
	}
	return strings.TrimSpace(v.Description)
}

// addVideos adds a post's videos as read from its platform. With ffmpeg
// installed each is read, so its poster image and the note that only the
// poster is read are dropped; without, the poster stands in for it and a
// note says why.
func addVideos(p *Post, refs []posts.VideoRef) {
	if len(refs) == 0 {
		return
	}
	if _, err := video.Find(); err != nil {
		p.Notes = append(p.Notes, "the post's video is not read: "+err.Error()+"; only its poster image is")
		return
	}
	for _, v := range refs {
		if v.URL == "" || slices.Contains(p.Videos, v.URL) {
			continue
		}
		p.Videos = append(p.Videos, v.URL)
		if v.Poster != "" {
			p.Images = slices.DeleteFunc(p.Images, func(s string) bool { return s == v.Poster })
			delete(p.AltTexts, v.Poster)
			if p.VideoPosters == nil {
				p.VideoPosters = map[string]string{}
			}
			p.VideoPosters[v.URL] = v.Poster
		}
		if v.Note != "" {
			p.Notes = slices.DeleteFunc(p.Notes, func(n string) bool { return n == v.Note })
		}
		if v.Alt != "" {
			if p.AltTexts == nil {
				p.AltTexts = map[string]string{}
			}
			p.AltTexts[v.URL] = v.Alt
		}
	}
}

// videoExtensions are the file types a link in a post's text is read as a
// video by.
var videoExtensions = []string{".mp4", ".m4v", ".mov", ".webm", ".mkv", ".m3u8", ".ts"}

// pastedVideos are the links in text to a video file (by the extension of
// its path), in order.
func pastedVideos(text string) []string {
	var out []string
	for _, l := range links.Find(text) {
		u, err := url.Parse(l.URL)
		if err != nil || (u.Scheme != "http" && u.Scheme != "https") {
			continue
		}
		if slices.Contains(videoExtensions, strings.ToLower(path.Ext(u.Path))) && !slices.Contains(out, l.URL) {
			out = append(out, l.URL)
		}
	}
	return out
}
