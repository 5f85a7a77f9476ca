package fetch

import (
	"fmt"
	"io"
	"net/http"
	"sync"
)

// Client returns an http.Client for requests other than HTML pages to URLs
// from untrusted places (platform APIs, images in posts). It goes through
// the same guard as Fetch: public destinations only unless AllowPrivate,
// checked at every dial or, through a proxy, before every request (the
// first and each redirect); the same proxies and connection pool; the same
// per-host limit, a slot being held until the body is closed or read to
// its end. It follows at most MaxRedirects redirects, to http(s) URLs only
// (errors matching ErrRedirects, ErrRedirectLoop, ErrBadURL), ends a
// request after Timeout, and fails reading a body past MaxBytes with an
// error matching ErrTooLarge. Unlike Fetch it does not read robots.txt,
// check the content type, decode Content-Encoding (it asks for none) or
// archive anything: the caller reads the response.
func (f *Fetcher) Client() *http.Client {
	return &http.Client{
		Transport:     guardedTransport{f},
		Timeout:       f.opts.Timeout,
		CheckRedirect: f.checkRedirect,
	}
}

// guardedTransport picks f's direct or proxy transport for each request.
type guardedTransport struct{ f *Fetcher }

func (g guardedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	f := g.f
	fail := func(err error) (*http.Response, error) {
		if req.Body != nil {
			req.Body.Close()
		}
		return nil, err
	}
	if _, err := parseHTTP(req.URL.String()); err != nil {
		return fail(err)
	}
	t, proxied, err := f.transportFor(req.URL)
	if err != nil {
		return fail(err)
	}
	if proxied {
		if err := f.guard.checkTarget(req.Context(), req.URL.Hostname()); err != nil {
			return fail(err)
		}
	}
	release, err := f.hosts.acquire(req.Context(), hostKey(req.URL))
	if err != nil {
		return fail(err)
	}
	if req.Header.Get("User-Agent") == "" {
		req = req.Clone(req.Context())
		req.Header.Set("User-Agent", f.opts.UserAgent)
	}
	resp, err := t.RoundTrip(req)
	if err != nil {
		release()
		return nil, err
	}
	resp.Body = &cappedBody{rc: resp.Body, left: f.opts.MaxBytes, limit: f.opts.MaxBytes, declared: resp.ContentLength, release: release}
	return resp, nil
}

// checkRedirect bounds a Client's redirects as follow bounds Fetch's: a URL
// may come back once, a third visit is a loop.
func (f *Fetcher) checkRedirect(req *http.Request, via []*http.Request) error {
	if _, err := parseHTTP(req.URL.String()); err != nil {
		return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), err)
	}
	seen := 0
	for _, v := range via {
		if v.URL.String() == req.URL.String() {
			seen++
		}
	}
	if seen >= 2 {
		return fmt.Errorf("%w: %s is visited again after %d redirects", ErrRedirectLoop, req.URL.Redacted(), len(via))
	}
	if len(via) > f.opts.MaxRedirects {
		return fmt.Errorf("%w: more than %d (last to %s)", ErrRedirects, f.opts.MaxRedirects, req.URL.Redacted())
	}
	return nil
}

// cappedBody fails a read past limit bytes (or of a body declared longer)
// and frees the host slot at the end of the body or on Close, whichever
// comes first.
type cappedBody struct {
	rc          io.ReadCloser
	left, limit int64
	declared    int64
	release     func()
	once        sync.Once
}

func (b *cappedBody) Read(p []byte) (int, error) {
	if b.declared > b.limit {
		return 0, fmt.Errorf("%w: declared %d bytes, limit %d", ErrTooLarge, b.declared, b.limit)
	}
	if b.left < 0 {
		return 0, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.limit)
	}
	// Ask for one byte more than is left, to tell a body of exactly limit
	// bytes from a longer one.
	if int64(len(p)) > b.left+1 {
		p = p[:b.left+1]
	}
	n, err := b.rc.Read(p)
	b.left -= int64(n)
	if b.left < 0 {
		return n + int(b.left), fmt.Errorf("%w: more than %d bytes", ErrTooLarge, b.limit)
	}
	if err != nil {
		b.once.Do(b.release)
	}
	return n, err
}

func (b *cappedBody) Close() error {
	b.once.Do(b.release)
	return b.rc.Close()
}
