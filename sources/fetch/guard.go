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

// nonPublic lists ranges that netip's predicates do not cover but that are
// never a web publisher: shared address space (carrier-grade NAT), "this
// network", IETF protocol assignments, benchmarking, reserved and broadcast.
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
}

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

// addressKind says why ip is not a public unicast address, or "" when it is.
// IPv4 addresses embedded in IPv6 (mapped, NAT64, 6to4) are judged by the
// IPv4 address, since that is where the packets end up.
func addressKind(ip netip.Addr) string {
	ip = ip.Unmap()
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			if k := addressKind(netip.AddrFrom4([4]byte(b[12:16]))); k != "" {
				return k + " (via NAT64)"
			}
		case sixToFour.Contains(ip):
			if k := addressKind(netip.AddrFrom4([4]byte(b[2:6]))); k != "" {
				return k + " (via 6to4)"
			}
		}
	}
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
	if k := g.kind(ap.Addr()); k != "" {
		return &AddressError{Addr: ap.Addr().Unmap(), Kind: k}
	}
	return nil
}

// resolve returns the addresses of host that may be dialled. A name with any
// public answer keeps the public answers only; a name whose answers are all
// refused is an *AddressError.
func (g *guard) resolve(ctx context.Context, host string) ([]netip.Addr, error) {
	host = strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if ip, err := netip.ParseAddr(host); err == nil {
		if k := g.kind(ip); k != "" && !g.allowPrivate {
			return nil, &AddressError{Addr: ip.Unmap(), Kind: k}
		}
		return []netip.Addr{ip.Unmap()}, nil
	}
	ips, err := g.lookup(ctx, host)
	if err != nil {
		return nil, fmt.Errorf("resolve %s: %w", host, err)
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("resolve %s: no addresses", host)
	}
	if g.allowPrivate {
		return ips, nil
	}
	var ok []netip.Addr
	var refused *AddressError
	for _, ip := range ips {
		if k := g.kind(ip); k != "" {
			if refused == nil {
				refused = &AddressError{Host: host, Addr: ip.Unmap(), Kind: k}
			}
			continue
		}
		ok = append(ok, ip.Unmap())
	}
	if len(ok) == 0 {
		return nil, refused
	}
	return ok, nil
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
// muse, connects to the target, so the dial hook never sees it. The target
// is refused when it is a non-public literal or when any DNS answer is
// non-public. When the name does not resolve here (common behind a proxy
// that does the DNS), the request is let through: the proxy is the user's
// and decides.
func (g *guard) checkTarget(ctx context.Context, host string) error {
	if g.allowPrivate {
		return nil
	}
	h := strings.ToLower(strings.TrimSuffix(strings.Trim(host, "[]"), "."))
	if h == "localhost" || strings.HasSuffix(h, ".localhost") {
		return &AddressError{Host: host, Addr: netip.IPv6Loopback(), Kind: "loopback"}
	}
	if ip, err := netip.ParseAddr(h); err == nil {
		if k := g.kind(ip); k != "" {
			return &AddressError{Addr: ip.Unmap(), Kind: k}
		}
		return nil
	}
	// Bounded so that a resolver that cannot answer (nothing resolves
	// behind some proxies) costs little; no answer means no verdict.
	lctx, cancel := context.WithTimeout(ctx, g.dialer.Timeout)
	defer cancel()
	ips, err := g.lookup(lctx, h)
	if err != nil {
		return nil
	}
	for _, ip := range ips {
		if k := g.kind(ip); k != "" {
			return &AddressError{Host: host, Addr: ip.Unmap(), Kind: k}
		}
	}
	return nil
}
