package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"

	"github.com/musecheck/muse/sources/fetch"
)

// client is opts.Client, or else a client from sources/fetch that dials
// public addresses only (unless opts.AllowPrivate), checks proxied targets,
// follows at most 5 redirects and caps the body at opts.MaxBytes. done
// closes what the built-in client kept open.
func client(opts Options) (c *http.Client, done func()) {
	if opts.Client != nil {
		return opts.Client, func() {}
	}
	f := fetch.New(fetch.Options{AllowPrivate: opts.AllowPrivate, Proxy: opts.Proxy, Timeout: opts.Timeout,
		MaxBytes: opts.MaxBytes, UserAgent: opts.UserAgent})
	return f.Client(), f.CloseIdleConnections
}

// download GETs an image URL with the size cap. sources/fetch's Fetch is
// not used because it serves HTML pages only; its Client is.
func download(ctx context.Context, raw string, opts Options) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: not an http(s) URL", fetch.ErrBadURL)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	c, done := client(opts)
	defer done()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	req.Header.Set("User-Agent", opts.UserAgent)
	req.Header.Set("Accept", "image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.5")
	resp, err := c.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w after %s", fetch.ErrTimeout, opts.Timeout)
		}
		return nil, err
	}
	defer resp.Body.Close()
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		return nil, &fetch.StatusError{Code: resp.StatusCode, Status: resp.Status}
	}
	// A page given where an image was wanted is the common mistake; say so
	// before reading it.
	if mt, _, _ := mime.ParseMediaType(resp.Header.Get("Content-Type")); mt == "text/html" || mt == "application/xhtml+xml" {
		return nil, fmt.Errorf("%w: the URL serves an HTML page (%s), not an image; give the image's own URL", ErrNotImage, mt)
	}
	if resp.ContentLength > opts.MaxBytes {
		return nil, fmt.Errorf("%w: declared %d bytes, limit %d", ErrTooLarge, resp.ContentLength, opts.MaxBytes)
	}
	// The built-in client fails past MaxBytes; a caller's own client is
	// capped here.
	data, err := io.ReadAll(io.LimitReader(resp.Body, opts.MaxBytes+1))
	if int64(len(data)) > opts.MaxBytes || errors.Is(err, fetch.ErrTooLarge) {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, opts.MaxBytes)
	}
	if err != nil {
		if ctx.Err() == context.DeadlineExceeded {
			return nil, fmt.Errorf("%w after %s reading the body", fetch.ErrTimeout, opts.Timeout)
		}
		return nil, fmt.Errorf("read body: %w", err)
	}
	return data, nil
}
