package pipeline

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/grafov/m3u8"

	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/video"
)

// VideoDownloader downloads a video URL through sources/fetch's guarded
// client: public addresses only unless AllowPrivate, every redirect
// checked, the body capped; it is streamed to a file in the work
// directory, never held in memory.
type VideoDownloader struct {
	AllowPrivate bool
	Proxy        func(*http.Request) (*url.URL, error)
	// Client, when set, is used instead (the caller guards it).
	Client *http.Client
	// Timeout bounds the whole download (default 5 minutes).
	Timeout time.Duration
}

func (e *Engine) videoFetcher() VideoFetching {
	if e.deps.Videos != nil {
		return e.deps.Videos
	}
	return VideoDownloader{AllowPrivate: e.opts.Posts.AllowPrivate}
}

// FetchVideo implements VideoFetching. An HLS playlist (Bluesky's videos
// are served so) is read with an m3u8 parser: of a master playlist the
// variant of at most 720 lines with the most bandwidth (else the
// smallest), then its segments are downloaded in order into one file,
// within the size and duration caps; every URL it names goes through the
// same guard, so a playlist pointing at a loopback or private address is
// refused.
func (dl VideoDownloader) FetchVideo(ctx context.Context, rawURL, dir string, lim video.Options) (string, error) {
	lim = lim.WithDefaults()
	maxBytes := lim.MaxBytes
	timeout := dl.Timeout
	if timeout <= 0 {
		timeout = 5 * time.Minute
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	c := dl.Client
	if c == nil {
		f := fetch.New(fetch.Options{AllowPrivate: dl.AllowPrivate, Proxy: dl.Proxy, Timeout: timeout, MaxBytes: maxBytes})
		defer f.CloseIdleConnections()
		c = f.Client()
	}
	h := &hlsReader{c: c, lim: lim}
	return h.download(ctx, rawURL, filepath.Join(dir, "download"))
}

// hlsReader downloads a video, following an HLS playlist.
type hlsReader struct {
	c       *http.Client
	lim     video.Options
	written int64
}

// maxPlaylistBytes caps a playlist: ten minutes in 1-second segments with
// long signed URLs stay well under it.
const maxPlaylistBytes = 1 << 20

// maxSegments caps the segments read of a media playlist.
const maxSegments = 3000

func (h *hlsReader) get(ctx context.Context, rawURL string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	req.Header.Set("User-Agent", fetch.DefaultUserAgent())
	req.Header.Set("Accept", "video/*,application/vnd.apple.mpegurl;q=0.9,*/*;q=0.5")
	resp, err := h.c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, err
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		resp.Body.Close()
		return nil, &fetch.StatusError{Code: resp.StatusCode, Status: resp.Status}
	}
	return resp, nil
}

// download GETs rawURL into path: the video itself, or what the HLS
// playlist it serves lists. An HTML page and a body over the cap are
// refused.
func (h *hlsReader) download(ctx context.Context, rawURL, path string) (string, error) {
	resp, err := h.get(ctx, rawURL)
	if err != nil {
		return "", fmt.Errorf("download video: %w", err)
	}
	defer resp.Body.Close()
	mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type"))
	if mt == "text/html" || mt == "application/xhtml+xml" {
		return "", fmt.Errorf("%w: the URL serves an HTML page (%s), not a video; give the video's own URL", video.ErrNotVideo, mt)
	}
	br := bufio.NewReader(resp.Body)
	head, _ := br.Peek(7)
	if string(head) == "#EXTM3U" || strings.Contains(mt, "mpegurl") {
		return h.playlist(ctx, rawURL, br, path, 0)
	}
	if resp.ContentLength > h.lim.MaxBytes {
		return "", fmt.Errorf("%w: declared %s, limit %s", video.ErrTooLarge, megabytes(resp.ContentLength), megabytes(h.lim.MaxBytes))
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("download video: %w", err)
	}
	defer f.Close()
	if err := h.copy(f, br); err != nil {
		return "", err
	}
	return path, f.Close()
}

// copy appends r to f within the size cap.
func (h *hlsReader) copy(f *os.File, r io.Reader) error {
	n, err := io.Copy(f, io.LimitReader(r, h.lim.MaxBytes-h.written+1))
	h.written += n
	if h.written > h.lim.MaxBytes || errors.Is(err, fetch.ErrTooLarge) {
		return fmt.Errorf("%w: more than %s", video.ErrTooLarge, megabytes(h.lim.MaxBytes))
	}
	if err != nil {
		return fmt.Errorf("download video: %w", err)
	}
	return nil
}

func megabytes(n int64) string { return fmt.Sprintf("%.1f MB", float64(n)/1e6) }

// playlist reads an HLS playlist fetched from base: a master playlist's
// chosen variant is read in turn (once), a media playlist's segments are
// written to path.
func (h *hlsReader) playlist(ctx context.Context, base string, r io.Reader, path string, depth int) (string, error) {
	data, err := io.ReadAll(io.LimitReader(r, maxPlaylistBytes+1))
	if err != nil {
		return "", fmt.Errorf("read the video's playlist: %w", err)
	}
	if len(data) > maxPlaylistBytes {
		return "", fmt.Errorf("%w: the playlist is over %d bytes", video.ErrTooLarge, maxPlaylistBytes)
	}
	pl, kind, err := m3u8.DecodeFrom(bytes.NewReader(data), false)
	if err != nil {
		return "", fmt.Errorf("%w: the HLS playlist cannot be read: %v", video.ErrNotVideo, err)
	}
	if kind == m3u8.MASTER {
		if depth > 0 {
			return "", fmt.Errorf("%w: a master playlist names another master playlist", video.ErrNotVideo)
		}
		v := chooseVariant(pl.(*m3u8.MasterPlaylist).Variants)
		if v == nil {
			return "", fmt.Errorf("%w: the master playlist names no variant", video.ErrNotVideo)
		}
		u, err := h.resolve(base, v.URI)
		if err != nil {
			return "", err
		}
		resp, err := h.get(ctx, u)
		if err != nil {
			return "", fmt.Errorf("the playlist's variant %s: %w", u, err)
		}
		defer resp.Body.Close()
		return h.playlist(ctx, u, resp.Body, path, depth+1)
	}
	media := pl.(*m3u8.MediaPlaylist)
	var segs []*m3u8.MediaSegment
	var total float64
	for _, s := range media.Segments {
		if s == nil {
			continue
		}
		if k := cmpKey(s.Key, media.Key); k != nil && k.Method != "" && !strings.EqualFold(k.Method, "NONE") {
			return "", fmt.Errorf("%w: the video is encrypted (HLS %s)", video.ErrNotVideo, k.Method)
		}
		segs = append(segs, s)
		total += s.Duration
	}
	switch {
	case len(segs) == 0:
		return "", fmt.Errorf("%w: the playlist lists no segment", video.ErrNotVideo)
	case len(segs) > maxSegments:
		return "", fmt.Errorf("%w: the playlist lists %d segments, limit %d", video.ErrTooLong, len(segs), maxSegments)
	case total > h.lim.MaxDuration.Seconds():
		return "", fmt.Errorf("%w: its playlist declares %s, limit %s", video.ErrTooLong,
			video.Clock(time.Duration(total*float64(time.Second))), video.Clock(h.lim.MaxDuration))
	}
	// Every address is checked before anything is downloaded.
	var urls []string
	if m := media.Map; m != nil && m.URI != "" {
		urls = append(urls, m.URI) // fMP4's initialisation segment
	}
	for _, s := range segs {
		urls = append(urls, s.URI)
	}
	for i, ref := range urls {
		u, err := h.resolve(base, ref)
		if err != nil {
			return "", err
		}
		urls[i] = u
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("download video: %w", err)
	}
	defer f.Close()
	for _, u := range urls {
		resp, err := h.get(ctx, u)
		if err != nil {
			var ae *fetch.AddressError
			if errors.As(err, &ae) {
				return "", fmt.Errorf("the video's playlist points at %s, which muse does not fetch: %w", u, err)
			}
			return "", fmt.Errorf("the video's segment %s: %w", u, err)
		}
		err = h.copy(f, resp.Body)
		resp.Body.Close()
		if err != nil {
			return "", err
		}
	}
	return path, f.Close()
}

func cmpKey(seg, list *m3u8.Key) *m3u8.Key {
	if seg != nil {
		return seg
	}
	return list
}

// resolve makes a playlist's reference absolute; only http(s) is followed
// (a file: or data: URI in a playlist is refused).
func (h *hlsReader) resolve(base, ref string) (string, error) {
	b, err := url.Parse(base)
	if err != nil {
		return "", fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	r, err := url.Parse(strings.TrimSpace(ref))
	if err != nil {
		return "", fmt.Errorf("%w: the playlist names %q", video.ErrNotVideo, ref)
	}
	u := b.ResolveReference(r)
	if u.Scheme != "http" && u.Scheme != "https" || u.Host == "" {
		return "", fmt.Errorf("%w: the playlist names %q, not an http(s) URL", video.ErrNotVideo, ref)
	}
	return u.String(), nil
}

// chooseVariant is the variant to read: not an I-frame list; of those at
// most 720 lines high, the one of most bandwidth; else the least.
func chooseVariant(vs []*m3u8.Variant) *m3u8.Variant {
	var best, least *m3u8.Variant
	for _, v := range vs {
		if v == nil || v.Iframe || v.URI == "" {
			continue
		}
		if least == nil || v.Bandwidth < least.Bandwidth {
			least = v
		}
		var w, ht int
		if _, err := fmt.Sscanf(v.Resolution, "%dx%d", &w, &ht); err == nil && ht <= 720 && (best == nil || v.Bandwidth > best.Bandwidth) {
			best = v
		}
	}
	if best != nil {
		return best
	}
	return least
}
