package pipeline

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"os"
	"path/filepath"
	"time"

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

// FetchVideo implements VideoFetching.
func (dl VideoDownloader) FetchVideo(ctx context.Context, rawURL, dir string, maxBytes int64) (string, error) {
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
	return downloadVideo(ctx, c, rawURL, filepath.Join(dir, "download"), maxBytes)
}

// downloadVideo GETs rawURL into path, refusing a body over maxBytes
// (declared or read) and an HTML page.
func downloadVideo(ctx context.Context, c *http.Client, rawURL, path string, maxBytes int64) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, rawURL, nil)
	if err != nil {
		return "", fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	req.Header.Set("User-Agent", fetch.DefaultUserAgent())
	req.Header.Set("Accept", "video/*,application/vnd.apple.mpegurl;q=0.9,*/*;q=0.5")
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("download video: %w", err)
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return "", fmt.Errorf("download video: %w", &fetch.StatusError{Code: resp.StatusCode, Status: resp.Status})
	}
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/xhtml+xml" {
		return "", fmt.Errorf("%w: the URL serves an HTML page (%s), not a video; give the video's own URL", video.ErrNotVideo, mt)
	}
	if resp.ContentLength > maxBytes {
		return "", fmt.Errorf("%w: declared %.1f MB, limit %.1f MB", video.ErrTooLarge, float64(resp.ContentLength)/1e6, float64(maxBytes)/1e6)
	}
	f, err := os.OpenFile(path, os.O_CREATE|os.O_EXCL|os.O_WRONLY, 0o600)
	if err != nil {
		return "", fmt.Errorf("download video: %w", err)
	}
	n, err := io.Copy(f, io.LimitReader(resp.Body, maxBytes+1))
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if n > maxBytes || errors.Is(err, fetch.ErrTooLarge) {
		return "", fmt.Errorf("%w: more than %.1f MB, limit %.1f MB", video.ErrTooLarge, float64(maxBytes)/1e6, float64(maxBytes)/1e6)
	}
	if err != nil {
		return "", fmt.Errorf("download video: %w", err)
	}
	return path, nil
}
