// Package fetch downloads web pages whose URLs come from untrusted places
// (search results, posts) without letting them reach into the user's
// network or exhaust memory: destinations are checked at dial time, bodies
// are capped after decompression, redirects are counted, robots.txt is
// honoured, and every page read goes to the archive (Options.Store).
// (*Fetcher).Client gives other downloads from untrusted URLs (images,
// platform APIs) the same guard, proxies, redirect and size limits.
//
// One address policy, proxy or not: a host is read as getaddrinfo would
// read it (every inet_aton spelling of IPv4 such as "127.1" or
// "0x7f000001", IPv6 literals, fullwidth digits after IDNA mapping), a
// host that looks numeric but is no address is refused, and an address is
// public unless the IANA special-purpose registries say otherwise
// (code.dny.dev/ssrf's table: private, loopback, link-local, CGNAT,
// TEST-NET, multicast, reserved, ::/96, ::ffff:0:0/96, Teredo, 2001:db8::/32
// …). (*Fetcher).Allowed applies the policy to a URL without fetching it.
//
// Proxies: a proxy from Options.Proxy (by default HTTP_PROXY, HTTPS_PROXY
// and NO_PROXY) is the user's own and is dialled even when it is on a
// private or loopback address. Because the proxy, not muse, then connects
// to the target (plain request or CONNECT), the target host is checked
// before the request instead: a non-public address in any spelling,
// "localhost", or a name with any non-public DNS answer is refused; a name
// that does not resolve locally is left to the proxy.
package fetch

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/http/cookiejar"
	"net/netip"
	"net/url"
	"runtime/debug"
	"strings"
	"sync"
	"time"

	"golang.org/x/net/publicsuffix"
)

// Options configures a Fetcher. The zero value is safe: every zero field
// takes the default given beside it.
type Options struct {
	// AllowPrivate allows loopback, private, link-local and other
	// non-public destinations (tests, self-hosted services). Set from
	// --allow-private-addresses or MUSE_ALLOW_PRIVATE_ADDRESSES=1.
	AllowPrivate bool
	// Timeout bounds one Fetch as a whole: robots.txt, every redirect and
	// the body. Default 20s.
	Timeout time.Duration
	// ConnectTimeout bounds each TCP connect and TLS handshake. Default 10s.
	ConnectTimeout time.Duration
	// MaxBytes caps the body, both as sent and after content decoding.
	// Default 8 MiB.
	MaxBytes int64
	// MaxRedirects is how many redirects one Fetch follows. Default 5; a
	// negative value follows none.
	MaxRedirects int
	// PerHost is how many requests may be in flight to one host at once.
	// Default 2.
	PerHost int
	// UserAgent is sent with every request; its first word (up to "/") is
	// the agent name matched against robots.txt groups. Default
	// DefaultUserAgent().
	UserAgent string
	// IgnoreRobots skips robots.txt.
	IgnoreRobots bool
	// RobotsTTL is how long a host's robots.txt is kept. Default 1h.
	RobotsTTL time.Duration
	// Proxy picks the proxy for a request. Default http.ProxyFromEnvironment.
	Proxy func(*http.Request) (*url.URL, error)
	// TLSConfig is the base TLS client configuration, for example extra
	// root CAs of a self-hosted service or a test proxy. Default: system
	// roots.
	TLSConfig *tls.Config
	// LookupIP resolves a host name to addresses; each answer is checked
	// before it is dialled. Default net.DefaultResolver.LookupNetIP. Tests
	// set it to give a fake name a private address.
	LookupIP func(ctx context.Context, host string) ([]netip.Addr, error)
	// Store, when set, receives every page fetched and supplies the ETag
	// and Last-Modified of pages seen before (sources/archive implements it).
	Store Store
}

// Store keeps fetched pages. It is implemented by sources/archive.
type Store interface {
	// Validators returns the ETag and Last-Modified stored for url.
	Validators(ctx context.Context, url string) (etag, lastModified string, ok bool)
	// Cached returns the stored page for url, used when the server answers
	// 304 Not Modified.
	Cached(ctx context.Context, url string) (*Page, error)
	// SavePage stores a freshly fetched page.
	SavePage(ctx context.Context, p *Page) error
}

// Page is one fetched HTML page.
type Page struct {
	URL         string // as asked for
	FinalURL    string // after redirects
	Status      int
	ContentType string // media type, e.g. "text/html"
	Charset     string // the charset the body was converted from, e.g. "windows-1252"
	Body        []byte // decoded, UTF-8
	// Raw is the body as served after content decoding (gzip, br…) and
	// before charset conversion: what the archive keeps.
	// Body and Raw may share memory when no conversion was needed.
	Raw          []byte
	FetchedAt    time.Time
	ETag         string
	LastModified string
	// Header is the response's HTTP header as received (nil for a page
	// served from Store after a 304 Not Modified).
	Header    http.Header
	FromCache bool // served from Store after a 304 Not Modified
	// Notes says what went less than right without failing the fetch,
	// e.g. robots.txt unreachable or the archive refusing the page.
	Notes []string
}

// Fetcher fetches pages; it is safe for concurrent use.
type Fetcher struct {
	opts   Options
	guard  *guard
	direct *http.Transport
	agent  string // robots.txt agent name

	mu      sync.Mutex
	proxied map[string]*http.Transport // by proxy URL

	hosts  *hostLimiter
	robots *robotsCache
}

// DefaultUserAgent names muse, its version and where to read about it.
func DefaultUserAgent() string {
	v := "dev"
	if bi, ok := debug.ReadBuildInfo(); ok && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
		v = strings.TrimPrefix(bi.Main.Version, "v")
	}
	return "muse/" + v + " (+https://github.com/musecheck/muse; fact-checking assistant)"
}

// New returns a Fetcher with opts, defaults filled in.
func New(opts Options) *Fetcher {
	if opts.Timeout <= 0 {
		opts.Timeout = 20 * time.Second
	}
	if opts.ConnectTimeout <= 0 {
		opts.ConnectTimeout = 10 * time.Second
	}
	if opts.MaxBytes <= 0 {
		opts.MaxBytes = 8 << 20
	}
	if opts.MaxRedirects == 0 {
		opts.MaxRedirects = 5
	} else if opts.MaxRedirects < 0 {
		opts.MaxRedirects = 0
	}
	if opts.PerHost <= 0 {
		opts.PerHost = 2
	}
	if strings.TrimSpace(opts.UserAgent) == "" {
		opts.UserAgent = DefaultUserAgent()
	}
	if opts.RobotsTTL <= 0 {
		opts.RobotsTTL = time.Hour
	}
	if opts.Proxy == nil {
		opts.Proxy = http.ProxyFromEnvironment
	}
	f := &Fetcher{
		opts:    opts,
		guard:   newGuard(opts.AllowPrivate, opts.ConnectTimeout, opts.LookupIP),
		agent:   agentName(opts.UserAgent),
		proxied: map[string]*http.Transport{},
		hosts:   newHostLimiter(opts.PerHost),
		robots:  newRobotsCache(),
	}
	f.direct = f.newTransport(nil)
	return f
}

func agentName(ua string) string {
	name, _, _ := strings.Cut(strings.TrimSpace(ua), "/")
	name, _, _ = strings.Cut(name, " ")
	return strings.ToLower(name)
}

// newTransport returns the transport for direct requests (proxy nil) or
// for requests through one proxy, whose dialer only ever dials that proxy
// and so is not checked (see the package comment).
func (f *Fetcher) newTransport(proxy *url.URL) *http.Transport {
	t := &http.Transport{
		DialContext:           f.guard.dialContext,
		TLSHandshakeTimeout:   f.opts.ConnectTimeout,
		DisableCompression:    true,
		ForceAttemptHTTP2:     true,
		MaxIdleConnsPerHost:   f.opts.PerHost,
		IdleConnTimeout:       90 * time.Second,
		ExpectContinueTimeout: time.Second,
	}
	if f.opts.TLSConfig != nil {
		t.TLSClientConfig = f.opts.TLSConfig.Clone()
	}
	if proxy != nil {
		d := &net.Dialer{Timeout: f.opts.ConnectTimeout, KeepAlive: 30 * time.Second}
		t.DialContext = d.DialContext
		t.Proxy = http.ProxyURL(proxy)
	}
	return t
}

// transportFor picks the transport for a request to u, and says whether it
// goes through a proxy.
func (f *Fetcher) transportFor(u *url.URL) (*http.Transport, bool, error) {
	p, err := f.opts.Proxy(&http.Request{Method: http.MethodGet, URL: u, Host: u.Host, Header: http.Header{}})
	if err != nil {
		return nil, false, fmt.Errorf("choose proxy: %w", err)
	}
	if p == nil {
		return f.direct, false, nil
	}
	key := p.String()
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.proxied[key]
	if t == nil {
		t = f.newTransport(p)
		f.proxied[key] = t
	}
	return t, true, nil
}

// CloseIdleConnections closes kept-alive connections (tests, shutdown).
func (f *Fetcher) CloseIdleConnections() {
	f.direct.CloseIdleConnections()
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, t := range f.proxied {
		t.CloseIdleConnections()
	}
}

// errTimeout marks the Fetch's own deadline, so it can be told from the
// caller's.
var errTimeout = errors.New("fetch timeout")

// Fetch downloads one HTML page and, when a Store is set, archives it. Every
// failure is an error that names the URL and why, matching one of the Err…
// values or *StatusError.
func (f *Fetcher) Fetch(ctx context.Context, rawURL string) (*Page, error) {
	u, err := parseHTTP(rawURL)
	if err != nil {
		return nil, fmt.Errorf("fetch %q: %w", rawURL, err)
	}
	ctx, cancel := context.WithTimeoutCause(ctx, f.opts.Timeout, errTimeout)
	defer cancel()
	p, err := f.fetch(ctx, u, strings.TrimSpace(rawURL))
	if err != nil {
		if context.Cause(ctx) == errTimeout {
			return nil, fmt.Errorf("fetch %s: %w after %s", u, ErrTimeout, f.opts.Timeout)
		}
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	if f.opts.Store != nil && !p.FromCache {
		if err := f.opts.Store.SavePage(ctx, p); err != nil {
			p.Notes = append(p.Notes, "archive: "+err.Error())
		}
	}
	return p, nil
}

func parseHTTP(raw string) (*url.URL, error) {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		if u.Scheme == "" {
			return nil, fmt.Errorf("%w: no scheme", ErrBadURL)
		}
		return nil, fmt.Errorf("%w: scheme %q", ErrBadURL, u.Scheme)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("%w: no host", ErrBadURL)
	}
	u.Fragment, u.RawFragment = "", ""
	return u, nil
}

func (f *Fetcher) fetch(ctx context.Context, u *url.URL, asked string) (*Page, error) {
	var etag, lastMod string
	if f.opts.Store != nil {
		etag, lastMod, _ = f.opts.Store.Validators(ctx, asked)
	}
	for {
		resp, final, release, notes, err := f.follow(ctx, u, f.opts.MaxRedirects, !f.opts.IgnoreRobots, etag, lastMod)
		if err != nil {
			return nil, err
		}
		if resp.StatusCode == http.StatusNotModified && (etag != "" || lastMod != "") {
			drain(resp)
			release()
			cached, err := f.opts.Store.Cached(ctx, asked)
			if err == nil && cached != nil {
				c := *cached
				c.FromCache = true
				c.Notes = append(append([]string(nil), c.Notes...), notes...)
				return &c, nil
			}
			// The archive lost the page it had validators for: ask again
			// for the whole page.
			etag, lastMod = "", ""
			continue
		}
		p, err := f.readPage(resp, asked, final)
		release()
		if err != nil {
			return nil, err
		}
		p.Notes = notes
		return p, nil
	}
}

func (f *Fetcher) readPage(resp *http.Response, asked string, final *url.URL) (*Page, error) {
	defer resp.Body.Close()
	at := ""
	if final.String() != asked {
		at = " (at " + final.String() + ")"
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		head, _ := readBody(resp, challengeBytes) // nil past the bound: no challenge page is that long
		return nil, fmt.Errorf("%w%s", &StatusError{Code: resp.StatusCode, Status: resp.Status,
			Challenge: challengeOf(resp.StatusCode, resp.Header, head)}, at)
	}
	ct := resp.Header.Get("Content-Type")
	if err := checkDeclaredType(ct); err != nil {
		return nil, fmt.Errorf("%w%s", err, at)
	}
	raw, err := readBody(resp, f.opts.MaxBytes)
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, at)
	}
	if len(strings.TrimSpace(string(raw))) == 0 {
		return nil, fmt.Errorf("%w (HTTP %d)%s", ErrEmpty, resp.StatusCode, at)
	}
	if v := challengeOf(resp.StatusCode, resp.Header, raw); v != "" {
		return nil, fmt.Errorf("%w%s", &StatusError{Code: resp.StatusCode, Status: resp.Status, Challenge: v}, at)
	}
	mt, err := checkContent(ct, raw)
	if err != nil {
		return nil, fmt.Errorf("%w%s", err, at)
	}
	body, cs := raw, ""
	if mt != pdfType {
		if body, cs, err = ToUTF8(raw, ct); err != nil {
			return nil, fmt.Errorf("%w%s", err, at)
		}
	}
	return &Page{
		URL:          asked,
		FinalURL:     final.String(),
		Status:       resp.StatusCode,
		ContentType:  mt,
		Charset:      cs,
		Body:         body,
		Raw:          raw,
		FetchedAt:    time.Now().UTC(),
		ETag:         resp.Header.Get("ETag"),
		LastModified: resp.Header.Get("Last-Modified"),
		Header:       resp.Header.Clone(),
	}, nil
}

// follow GETs u and follows up to maxRedirects redirects, checking robots
// (when asked) and the destination at every hop. It returns the first
// response that is not a redirect, its URL, and the function that frees
// its host slot, to be called once the body is read.
func (f *Fetcher) follow(ctx context.Context, u *url.URL, maxRedirects int, robots bool, etag, lastMod string) (*http.Response, *url.URL, func(), []string, error) {
	jar, _ := cookiejar.New(&cookiejar.Options{PublicSuffixList: publicsuffix.List})
	seen := map[string]int{}
	var notes []string
	for hop := 0; ; hop++ {
		if robots {
			note, err := f.robotsAllow(ctx, u)
			if err != nil {
				if hop > 0 {
					err = &redirectError{to: u, err: err}
				}
				return nil, nil, nil, notes, err
			}
			if note != "" {
				notes = append(notes, note)
			}
		}
		resp, release, err := f.get(ctx, u, jar, etag, lastMod)
		if err != nil {
			if hop > 0 {
				err = &redirectError{to: u, err: err}
			}
			return nil, nil, nil, notes, err
		}
		if !isRedirect(resp.StatusCode) {
			return resp, u, release, notes, nil
		}
		loc := resp.Header.Get("Location")
		drain(resp)
		release()
		if loc == "" {
			return nil, nil, nil, notes, fmt.Errorf("%w: HTTP %d from %s has no Location", ErrRedirects, resp.StatusCode, u)
		}
		next, err := u.Parse(loc)
		if err != nil {
			return nil, nil, nil, notes, fmt.Errorf("redirect from %s: %w: %v", u, ErrBadURL, err)
		}
		if next, err = parseHTTP(next.String()); err != nil {
			return nil, nil, nil, notes, fmt.Errorf("redirect from %s to %q: %w", u, loc, err)
		}
		// A URL may come back once (sites that set a cookie and send the
		// reader back); a third visit is a loop.
		seen[u.String()]++
		if seen[next.String()] >= 2 {
			return nil, nil, nil, notes, fmt.Errorf("%w: %s is visited again after %d redirects", ErrRedirectLoop, next, hop+1)
		}
		if hop >= maxRedirects {
			if seen[next.String()] > 0 {
				return nil, nil, nil, notes, fmt.Errorf("%w: %s is visited again after %d redirects", ErrRedirectLoop, next, hop+1)
			}
			return nil, nil, nil, notes, fmt.Errorf("%w: more than %d (last to %s)", ErrRedirects, maxRedirects, next)
		}
		u = next
	}
}

// redirectError is a failure at a redirect's destination rather than at
// the URL asked for.
type redirectError struct {
	to  *url.URL
	err error
}

func (e *redirectError) Error() string {
	return "redirected to " + e.to.String() + ": " + e.err.Error()
}
func (e *redirectError) Unwrap() error { return e.err }

func isRedirect(code int) bool {
	switch code {
	case http.StatusMovedPermanently, http.StatusFound, http.StatusSeeOther,
		http.StatusTemporaryRedirect, http.StatusPermanentRedirect:
		return true
	}
	return false
}

// get sends one GET to u holding a slot on u's host; on success the caller
// must call release after reading the body.
func (f *Fetcher) get(ctx context.Context, u *url.URL, jar http.CookieJar, etag, lastMod string) (*http.Response, func(), error) {
	t, proxied, err := f.transportFor(u)
	if err != nil {
		return nil, nil, err
	}
	if proxied {
		if err := f.guard.checkTarget(ctx, u.Hostname()); err != nil {
			return nil, nil, err
		}
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, nil, fmt.Errorf("%w: %v", ErrBadURL, err)
	}
	req.Header.Set("User-Agent", f.opts.UserAgent)
	req.Header.Set("Accept", "text/html,application/xhtml+xml;q=0.9,application/pdf;q=0.8,*/*;q=0.5")
	req.Header.Set("Accept-Encoding", acceptEncoding)
	if etag != "" {
		req.Header.Set("If-None-Match", etag)
	}
	if lastMod != "" {
		req.Header.Set("If-Modified-Since", lastMod)
	}
	release, err := f.hosts.acquire(ctx, hostKey(u))
	if err != nil {
		return nil, nil, err
	}
	client := &http.Client{
		Transport:     t,
		Jar:           jar,
		CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse },
	}
	resp, err := client.Do(req)
	if err != nil {
		release()
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return nil, nil, err
	}
	return resp, release, nil
}

// hostKey is the name the per-host limit is kept under: the host name
// alone, since http and https on one host are one server to be polite to.
func hostKey(u *url.URL) string {
	return strings.TrimSuffix(strings.ToLower(u.Hostname()), ".")
}

// drain reads a little of an unwanted body so the connection can be reused,
// then closes it.
func drain(resp *http.Response) {
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, 64<<10))
	resp.Body.Close()
}
