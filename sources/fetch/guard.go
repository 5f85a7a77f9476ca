package fetch

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// guard resolves names and dials only public addresses (unless allowPrivate).
// Resolution is done here rather than by net.Dialer so every DNS answer is
// seen and the address dialled is the one that was checked; the dialer's
// Control hook checks once more at the socket, which also covers any path
// that reaches the dialer with a name.
type guard struct {
	allowPrivate bool
	kind         func(netip.Addr) string // addressKind; tests exempt one loopback address
	lookup       func(ctx context.Context, host string) ([]netip.Addr, error)
	dialer       *net.Dialer
}

func newGuard(allowPrivate bool, connectTimeout time.Duration, lookup func(context.Context, string) ([]netip.Addr, error)) *guard {
	g := &guard{allowPrivate: allowPrivate, lookup: lookup, kind: addressKind}
	if g.lookup == nil {
		g.lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	g.dialer = &net.Dialer{Timeout: connectTimeout, KeepAlive: 30 * time.Second, Control: g.control}
	return g
}

// control runs on every socket just before connect(2).
func (g *guard) control(network, address string, _ syscall.RawConn) error {
	if g.allowPrivate {
		return nil
	}
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("refusing to connect to %s: not an IP address", address)
	}
	if k := g.kind(ap.Addr().Unmap()); k != "" {
		return &AddressError{Addr: ap.Addr().Unmap(), Kind: k}
	}
	return nil
}

// resolve returns the addresses of host that may be dialled. The host is
// read as hostAddr reads it, so "127.1" is the loopback address it is to
// getaddrinfo; a DNS answer is judged by where its packets go (Go may hand
// an IPv4 answer back IPv4-mapped). A name with any public answer keeps the
// public answers only; a name whose answers are all refused is an
// *AddressError.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	ip, name, literal, err := hostAddr(host)
	if err != nil {
		return nil, err
	}
	if literal {
		if k := g.kind(ip); k != "" && !g.allowPrivate {
			return nil, &AddressError{Host: literalHost(host, ip), Addr: ip, Kind: k}
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	ips, err := g.lookup(ctx, name)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", name, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", name)
	}
	if g.allowPrivate {
		return ips, nil
	}
	var ok []netip.Addr
	var refused *AddressError
	for _, ip := range ips {
		ip = ip.Unmap()
		if k := g.kind(ip); k != "" {
			if refused == nil {
				refused = &AddressError{Host: name, Addr: ip, Kind: k}
			}
			continue
		}
		ok = append(ok, ip)
	}
	if len(ok) == 0 {
		return nil, refused
	}
	return ok, nil
}

// literalHost is the host to name in an error about the literal ip: the
// spelling asked for when it is not the usual one ("0x7f.1").
func literalHost(host string, ip netip.Addr) string {
	h := strings.Trim(host, "[]")
	if h == ip.String() {
		return ""
	}
	return h
}

// dialContext is the DialContext of the direct transport.
func (g *guard) dialContext(ctx context.Context, network, addr string) (net.Conn, error) {
	host, portStr, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, fmt.Errorf("dial %s: %w", addr, err)
	}
	port, err := strconv.ParseUint(portStr, 10, 16)
	if err != nil {
		return nil, fmt.Errorf("dial %s: bad port", addr)
	}
	ips, err := g.resolve(ctx, host)
	if err != nil {
		return nil, err
	}
	var errs []error
	for _, ip := range ips {
		conn, err := g.dialer.DialContext(ctx, network, netip.AddrPortFrom(ip, uint16(port)).String())
		if err == nil {
			return conn, nil
		}
		errs = append(errs, err)
		if ctx.Err() != nil {
			break
		}
	}
	return nil, errors.Join(errs...)
}

// checkTarget is used when a request goes through a proxy: the proxy, not
// muse, connects to the target (for a plain request and for a CONNECT
// tunnel alike), so the dial hook never sees it, and the proxy reads the
// host with getaddrinfo. The target is refused when it is an address in any
// spelling (see hostAddr) that is not public, a host that looks numeric but
// is not an address, "localhost", or a name with any non-public DNS answer.
// When a name does not resolve here (common behind a proxy that does the
// DNS), the request is let through: the proxy is the user's and decides.
func (g *guard) checkTarget(ctx context.Context, host string) error {
	ip, name, literal, err := hostAddr(host)
	if err != nil {
		return err // a bad URL whatever AllowPrivate says, as at dial time
	}
	if g.allowPrivate {
		return nil
	}
	if literal {
		if k := g.kind(ip); k != "" {
			return &AddressError{Host: literalHost(host, ip), Addr: ip, Kind: k}
		}
		return nil
	}
	if name == "localhost" || strings.HasSuffix(name, ".localhost") {
		return &AddressError{Host: host, Addr: netip.IPv6Loopback(), Kind: "loopback"}
	}
	// Bounded so that a resolver that cannot answer (nothing resolves
	// behind some proxies) costs little; no answer means no verdict.
	lctx, cancel := context.WithTimeout(ctx, g.dialer.Timeout)
	defer cancel()
	ips, err := g.lookup(lctx, name)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		ip = ip.Unmap()
		if k := g.kind(ip); k != "" {
			return &AddressError{Host: host, Addr: ip, Kind: k}
		}
	}
	return nil
}

// Allowed reports whether f would send a request to rawURL at all: nil, or
// the error Fetch would fail with before sending anything (ErrBadURL, or
// an *AddressError matching ErrPrivateAddress for a non-public target in
// any spelling, or a name whose DNS answers are not public). It applies
// the same policy, proxy or not, so a caller holding a URL from an older
// run (the archive) can refuse it again without fetching it.
func (f *Fetcher) Allowed(ctx context.Context, rawURL string) error {
	u, err := parseHTTP(rawURL)
	if err != nil {
		return fmt.Errorf("fetch %q: %w", rawURL, err)
	}
	if err := f.guard.checkTarget(ctx, u.Hostname()); err != nil {
		return fmt.Errorf("fetch %s: %w", u.Redacted(), err)
	}
	return nil
}
