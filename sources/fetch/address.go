package fetch

import (
	"fmt"
	"net/netip"
	"strings"

	"code.dny.dev/ssrf"
	"golang.org/x/net/idna"
)

// The address policy has two halves: which addresses are public (the IANA
// special-purpose registries, kept by code.dny.dev/ssrf, plus the IPv4
// embedded in NAT64 and 6to4 addresses), and what a host in a URL means (a
// name, an IPv6 literal, or an IPv4 address in any spelling that
// inet_aton(3) and so getaddrinfo(3) read: a proxy resolves the host with
// those, not with Go's stricter parser).

// special is code.dny.dev/ssrf's table: every IPv4 special-purpose prefix,
// and every IPv6 address outside global unicast 2000::/3 (which covers
// ::/96, ::ffff:0:0/96, 64:ff9b:1::/48, 100::/64, fc00::/7, fe80::/10 …)
// or in a special-purpose prefix inside it (2001::/23 with Teredo, 2001:db8::/32,
// 2002::/16, 3fff::/20). Ports and networks are the dialer's business.
var special = ssrf.New(ssrf.WithAnyPort(), ssrf.WithAnyNetwork())

var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	sixToFour = netip.MustParsePrefix("2002::/16")
	v4mapped  = netip.MustParsePrefix("::ffff:0:0/96")
	v4compat  = netip.MustParsePrefix("::/96")
)

// kindNames names the special-purpose ranges that netip's predicates do not,
// for the error message; a refused address in none of them is "reserved".
var kindNames = []struct {
	prefix netip.Prefix
	kind   string
}{
	{netip.MustParsePrefix("0.0.0.0/8"), "unspecified"},
	{netip.MustParsePrefix("100.64.0.0/10"), "shared (carrier-grade NAT)"},
	{netip.MustParsePrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{netip.MustParsePrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{netip.MustParsePrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{netip.MustParsePrefix("198.18.0.0/15"), "benchmarking"},
	{netip.MustParsePrefix("255.255.255.255/32"), "broadcast"},
	{netip.MustParsePrefix("2001::/32"), "Teredo"},
	{netip.MustParsePrefix("2001:db8::/32"), "documentation"},
	{netip.MustParsePrefix("3fff::/20"), "documentation"},
	{netip.MustParsePrefix("100::/64"), "discard-only"},
	{netip.MustParsePrefix("64:ff9b:1::/48"), "local-use NAT64"},
	{netip.MustParsePrefix("fec0::/10"), "site-local"},
}

// addressKind says why ip is not a public unicast address, or "" when it
// is. The IPv4 inside a NAT64 or 6to4 address is judged, since that is
// where the packets end up. An IPv4-mapped or IPv4-compatible address is
// refused whatever it embeds (it is never how a publisher is written, and a
// proxy may read it either way), named after the embedded address when
// that is not public. Callers judging a socket or a DNS answer Unmap first.
func addressKind(ip netip.Addr) string {
	ip = ip.WithZone("") // a zone makes netip.Prefix.Contains false
	if !ip.IsValid() {
		return "invalid"
	}
	if ip.Is6() {
		b := ip.As16()
		switch {
		case nat64.Contains(ip):
			if k := addressKind(netip.AddrFrom4([4]byte(b[12:16]))); k != "" {
				return k + " (via NAT64)"
			}
			return ""
		case sixToFour.Contains(ip):
			if k := addressKind(netip.AddrFrom4([4]byte(b[2:6]))); k != "" {
				return k + " (via 6to4)"
			}
			return ""
		}
	}
	if special.SafeAddr(ip) == nil {
		return ""
	}
	return kindName(ip)
}

// kindName names a refused address.
func kindName(ip netip.Addr) string {
	switch {
	case ip.IsUnspecified():
		return "unspecified"
	case ip.IsLoopback():
		return "loopback"
	case ip.IsPrivate():
		return "private"
	case ip.IsLinkLocalUnicast():
		return "link-local"
	case ip.IsMulticast():
		return "multicast"
	case v4mapped.Contains(ip), v4compat.Contains(ip):
		how := "IPv4-mapped"
		if v4compat.Contains(ip) {
			how = "IPv4-compatible"
		}
		b := ip.As16()
		if k := addressKind(netip.AddrFrom4([4]byte(b[12:16]))); k != "" {
			return k + " (" + how + ")"
		}
		return how
	}
	for _, r := range kindNames {
		if r.prefix.Contains(ip) {
			return r.kind
		}
	}
	return "reserved"
}

// hostAddr reads the host of a URL (or of a host:port being dialled) the
// way a resolver on the far side of a proxy would. It returns the address
// when the host is an address literal in any spelling, ok false for a
// name, and an error for a host that looks numeric but is no address (a
// browser refuses those; a resolver may read them as something else) or
// that holds characters no host name has. name is the host as it goes on
// the wire: lower case, IDNA-mapped (Go maps a fullwidth "１２７．０．０．１"
// to "127.0.0.1" before it writes a CONNECT line), without the trailing dot.
func hostAddr(host string) (ip netip.Addr, name string, ok bool, err error) {
	h := strings.TrimSuffix(strings.Trim(host, "[]"), ".")
	if a, err := netip.ParseAddr(h); err == nil {
		return a.WithZone(""), h, true, nil
	}
	if h == "" {
		return netip.Addr{}, "", false, fmt.Errorf("%w: empty host", ErrBadURL)
	}
	for _, r := range h {
		if r < 0x80 && !isHostByte(byte(r)) {
			return netip.Addr{}, "", false, fmt.Errorf("%w: host %q has the character %q", ErrBadURL, host, r)
		}
	}
	h = strings.ToLower(h)
	if !isASCII(h) {
		a, err := idna.Lookup.ToASCII(h)
		if err != nil {
			return netip.Addr{}, "", false, fmt.Errorf("%w: host %q: %v", ErrBadURL, host, err)
		}
		if a != h {
			return hostAddr(a)
		}
	}
	if !endsInNumber(h) {
		return netip.Addr{}, h, false, nil
	}
	a, ok := parseInetAton(h)
	if !ok {
		return netip.Addr{}, "", false, fmt.Errorf("%w: host %q looks numeric but is not an IPv4 address", ErrBadURL, host)
	}
	return a, h, true, nil
}

func isHostByte(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' || c == '-' || c == '.' || c == '_'
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// endsInNumber is the WHATWG URL standard's test for a host that is to be
// read as IPv4: its last label is decimal digits or 0x followed by hex.
func endsInNumber(h string) bool {
	last := h[strings.LastIndexByte(h, '.')+1:]
	if last == "" {
		return false
	}
	if allIn(last, "0123456789") {
		return true
	}
	return (strings.HasPrefix(last, "0x") || strings.HasPrefix(last, "0X")) && allIn(last[2:], "0123456789abcdefABCDEF")
}

func allIn(s, set string) bool {
	for i := 0; i < len(s); i++ {
		if strings.IndexByte(set, s[i]) < 0 {
			return false
		}
	}
	return true
}

// parseInetAton reads an IPv4 address as inet_aton(3) does: one to four
// parts separated by dots, each decimal, octal (leading 0) or hex (0x);
// the last part fills the bytes the others leave, so "127.1" is 127.0.0.1
// and "2130706433" is too.
func parseInetAton(s string) (netip.Addr, bool) {
	parts := strings.Split(s, ".")
	if len(parts) > 4 {
		return netip.Addr{}, false
	}
	var vals [4]uint64
	for i, p := range parts {
		v, ok := atonPart(p)
		if !ok {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	n := len(parts)
	for i := 0; i < n-1; i++ {
		if vals[i] > 0xff {
			return netip.Addr{}, false
		}
	}
	if vals[n-1] >= 1<<(8*(5-n)) {
		return netip.Addr{}, false
	}
	var v uint32
	for i := 0; i < n-1; i++ {
		v |= uint32(vals[i]) << (24 - 8*i)
	}
	v |= uint32(vals[n-1])
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}), true
}

// atonPart reads one part; values past 32 bits fail rather than wrap.
func atonPart(p string) (uint64, bool) {
	if p == "" {
		return 0, false
	}
	base := uint64(10)
	switch {
	case len(p) >= 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'):
		base, p = 16, p[2:] // "0x" alone is 0, as inet_aton reads it
	case len(p) >= 2 && p[0] == '0':
		base, p = 8, p[1:]
	}
	var v uint64
	for i := 0; i < len(p); i++ {
		d := uint64(16)
		switch c := p[i]; {
		case '0' <= c && c <= '9':
			d = uint64(c - '0')
		case 'a' <= c && c <= 'f':
			d = uint64(c-'a') + 10
		case 'A' <= c && c <= 'F':
			d = uint64(c-'A') + 10
		}
		if d >= base {
			return 0, false
		}
		v = v*base + d
		if v > 0xffffffff {
			return 0, false
		}
	}
	return v, true
}
