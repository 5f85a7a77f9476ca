package fetch

import (
	"errors"
	"fmt"
	"net/http"
	"net/netip"
)

// Errors a Fetch can return, wrapped with the URL and the detail, so callers
// can tell why a page is missing with errors.Is and still print err as a
// one-line reason.
var (
	// ErrBadURL: the URL is not an absolute http or https URL (also for a
	// redirect to such a URL).
	ErrBadURL = errors.New("not an http(s) URL")
	// ErrPrivateAddress: the destination is loopback, private, link-local,
	// multicast, unspecified or otherwise not on the public internet, and
	// Options.AllowPrivate is off. The concrete error is an *AddressError.
	ErrPrivateAddress = errors.New("private address refused")
	// ErrTooLarge: the body (declared, as sent, or after content decoding)
	// is over Options.MaxBytes; this is also how a compression bomb ends.
	ErrTooLarge = errors.New("body too large")
	// ErrNotHTML: the page is not HTML or XHTML (PDF, image, JSON, binary…).
	ErrNotHTML = errors.New("not an HTML page")
	// ErrEmpty: the page has no content.
	ErrEmpty = errors.New("empty body")
	// ErrRobots: robots.txt disallows the URL for muse.
	ErrRobots = errors.New("disallowed by robots.txt")
	// ErrRedirects: the redirect chain is longer than Options.MaxRedirects,
	// or broken (no Location).
	ErrRedirects = errors.New("too many redirects")
	// ErrRedirectLoop: the redirect chain goes round in a circle. It also
	// matches ErrRedirects.
	ErrRedirectLoop = fmt.Errorf("redirect loop (%w)", ErrRedirects)
	// ErrDecode: the Content-Encoding is unknown or the compressed body is
	// corrupt.
	ErrDecode = errors.New("cannot decode body")
	// ErrCharset: the text cannot be read in its declared or detected
	// character set (most of it would be replacement characters).
	ErrCharset = errors.New("broken character encoding")
	// ErrTimeout: Options.Timeout passed before the page was read whole.
	ErrTimeout = errors.New("timed out")
)

// StatusError is a final response whose status is not 2xx (nor a redirect
// that was followed, nor a 304 answered from the Store).
type StatusError struct {
	Code   int
	Status string // e.g. "404 Not Found"
	// Challenge names the bot-protection service whose challenge or
	// block page came in place of the page ("Cloudflare"), "" for a plain
	// refusal; such an error matches ErrChallenge.
	Challenge string
}

func (e *StatusError) Error() string {
	s := fmt.Sprintf("HTTP %d %s", e.Code, http.StatusText(e.Code))
	if e.Status != "" {
		s = "HTTP " + e.Status
	}
	if e.Challenge != "" {
		s += ": " + e.Challenge + " bot protection challenge"
	}
	return s
}

// Is makes errors.Is(err, ErrChallenge) true for a challenge.
func (e *StatusError) Is(target error) bool { return target == ErrChallenge && e.Challenge != "" }

// AddressError is a connection muse refused to make because its destination
// is not a public address. It matches ErrPrivateAddress.
type AddressError struct {
	Host string     // the name or literal that was asked for
	Addr netip.Addr // the address it is (or resolved to)
	Kind string     // "loopback", "private", "link-local", …
}

func (e *AddressError) Error() string {
	what := e.Addr.String()
	if e.Host != "" && e.Host != what {
		what = e.Host + " (" + what + ")"
	}
	return fmt.Sprintf("refusing to connect to %s: %s address (allow with --allow-private-addresses or MUSE_ALLOW_PRIVATE_ADDRESSES=1)", what, e.Kind)
}

// Is makes errors.Is(err, ErrPrivateAddress) true.
func (e *AddressError) Is(target error) bool { return target == ErrPrivateAddress }
