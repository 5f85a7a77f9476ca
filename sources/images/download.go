package images

import (
	"context"
	"errors"
	"fmt"
	"io"
	"mime"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/musecheck/muse/sources/fetch"
)

// maxRedirects is how many redirects one download follows; image CDNs use
// one or two.
const maxRedirects = 5

// download GETs an image URL with the size cap and, unless opts.Client is
// set, the address guard. sources/fetch's Fetcher is not used because it
// serves HTML pages only.
func download(ctx context.Context, raw string, opts Options) ([]byte, error) {
	u, err := url.Parse(raw)
	if err != nil || u.Hostname() == "" {
		return nil, fmt.Errorf("%w: not an http(s) URL", fetch.ErrBadURL)
	}
	ctx, cancel := context.WithTimeout(ctx, opts.Timeout)
	defer cancel()
	client := opts.Client
	if client == nil {
		client = SafeClient(opts)
		defer client.CloseIdleConnections()
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	req.Header.Set("User-Agent", opts.UserAgent)
	req.Header.Set("Accept", "image/webp,image/png,image/jpeg,image/gif;q=0.9,*/*;q=0.5")
	resp, err := client.Do(req)
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
	data, err := io.ReadAll(io.LimitReader(resp.Body, opts.MaxBytes+1))
	if int64(len(data)) > opts.MaxBytes {
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

// SafeClient returns an HTTP client for URLs from untrusted places that
// dials public addresses only (unless opts.AllowPrivate), checking every
// socket just before connect(2), which covers every DNS answer and every
// redirect. Through a proxy (opts.Proxy) the proxy connects, so each target
// host is checked before the request instead, as sources/fetch does. It
// follows at most 5 redirects and bounds waiting for headers by
// opts.Timeout; bodies are the caller's to cap. sources/fetch keeps its
// guard unexported, hence this small copy for non-HTML downloads.
func SafeClient(opts Options) *http.Client {
	opts = opts.withDefaults()
	dialer := &net.Dialer{Timeout: 10 * time.Second, KeepAlive: 30 * time.Second}
	if !opts.AllowPrivate {
		dialer.Control = func(_, address string, _ syscall.RawConn) error {
			ap, err := netip.ParseAddrPort(address)
			if err != nil {
				return fmt.Errorf("refusing to connect to %s: not an IP address", address)
			}
			if k := addressKind(ap.Addr()); k != "" {
				return &fetch.AddressError{Addr: ap.Addr().Unmap(), Kind: k}
			}
			return nil
		}
	}
	proxy := func(r *http.Request) (*url.URL, error) {
		p, err := opts.Proxy(r)
		if err != nil || p == nil {
			return p, err
		}
		// The proxy is the user's own and may be on loopback; the target
		// must still be public.
		if !opts.AllowPrivate {
			if err := checkTarget(r.Context(), r.URL.Hostname()); err != nil {
				return nil, err
			}
		}
		return p, nil
	}
	return &http.Client{
		Transport: &http.Transport{
			Proxy:                 proxy,
			DialContext:           dialer.DialContext,
			TLSHandshakeTimeout:   10 * time.Second,
			ResponseHeaderTimeout: opts.Timeout,
			MaxIdleConnsPerHost:   2,
		},
		CheckRedirect: func(req *http.Request, via []*http.Request) error {
			if len(via) > maxRedirects {
				return fmt.Errorf("%w: more than %d", fetch.ErrRedirects, maxRedirects)
			}
			if req.URL.Scheme != "http" && req.URL.Scheme != "https" {
				return fmt.Errorf("redirect to %s: %w", req.URL.Redacted(), fetch.ErrBadURL)
			}
			return nil
		},
	}
}

// checkTarget refuses a proxied request to a non-public literal address,
// to localhost, or to a name with a non-public DNS answer; a name that does
// not resolve here is left to the proxy.
func checkTarget(ctx context.Context, host string) error {
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return &fetch.AddressError{Host: host, Addr: netip.IPv6Loopback(), Kind: "loopback"}
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if k := addressKind(ip); k != "" {
			return &fetch.AddressError{Addr: ip.Unmap(), Kind: k}
		}
		return nil
	}
	lctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	ips, err := net.DefaultResolver.LookupNetIP(lctx, "ip", h)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if k := addressKind(ip); k != "" {
			return &fetch.AddressError{Host: host, Addr: ip.Unmap(), Kind: k}
		}
	}
	return nil
}

var nonPublic = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.0.0/24"), "reserved"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("240.0.0.0/4"), "reserved"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
	{netip.MustParsePrefix("64:ff9b::/96"), "NAT64"},
	{netip.MustParsePrefix("2002::/16"), "6to4"},
}

// addressKind says why ip is not a public unicast address, or "" when it
// is. It mirrors sources/fetch's unexported check; NAT64 and 6to4 are
// refused whole rather than judged by the IPv4 address inside, since image
// CDNs are not reached that way.
func addressKind(ip netip.Addr) string {
	ip = ip.Unmap()
	switch {
	case !ip.IsValid():
		return "invalid"
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast(), ip.IsLinkLocalMulticast(), ip.IsInterfaceLocalMulticast():
		return "multicast"
	case ip == netip.AddrFrom4([4]byte{255, 255, 255, 255}):
		return "broadcast"
	}
	for _, r := range nonPublic {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	return ""
}
