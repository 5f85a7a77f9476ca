package ratings

import (
	"fmt"
	"sort"
	"strings"

	"github.com/musecheck/muse/sources"
)

// entry is one publisher's rating in a table.
type entry struct {
	publisher  string
	factuality string
	bias       string
	tier       Tier
}

// pathEntry is a rating that applies only below a path on its host, such
// as MBFC's "al.com/birmingham".
type pathEntry struct {
	prefix string // "/birmingham", no trailing slash
	key    string // "al.com/birmingham"
	e      entry
}

// table is one source of ratings (a ratings file or the built-in table).
type table struct {
	origin  string
	hosts   map[string]entry
	order   []string               // the keys of hosts, in the order first added
	paths   map[string][]pathEntry // by host, longest prefix first
	aliases map[string]string
}

func newTable(origin string) *table {
	return &table{origin: origin, hosts: map[string]entry{}, paths: map[string][]pathEntry{}, aliases: map[string]string{}}
}

// add stores a rating under a key such as "reuters.com" or
// "al.com/birmingham", normalized like lookups are. Later keys replace
// earlier ones.
func (t *table) add(key string, e entry) error {
	host, path, err := splitKey(key)
	if err != nil {
		return err
	}
	if path == "" {
		if _, seen := t.hosts[host]; !seen {
			t.order = append(t.order, host)
		}
		t.hosts[host] = e
		return nil
	}
	ps := t.paths[host]
	for i := range ps {
		if ps[i].prefix == path {
			ps[i].e = e
			return nil
		}
	}
	ps = append(ps, pathEntry{prefix: path, key: host + path, e: e})
	sort.SliceStable(ps, func(i, j int) bool { return len(ps[i].prefix) > len(ps[j].prefix) })
	t.paths[host] = ps
	return nil
}

func (t *table) len() int {
	n := len(t.hosts)
	for _, ps := range t.paths {
		n += len(ps)
	}
	return n
}

// splitKey turns "www.Example.com/News/" into ("example.com", "/news").
func splitKey(key string) (host, path string, err error) {
	k := strings.ToLower(strings.TrimSpace(key))
	if i := strings.Index(k, "://"); i >= 0 {
		k = k[i+3:]
	}
	host, path, _ = strings.Cut(k, "/")
	host = sources.Host(host)
	if host == "" || strings.ContainsAny(host, " \t,;\"'") {
		return "", "", fmt.Errorf("bad domain %q", key)
	}
	path = strings.TrimRight(path, "/")
	if path != "" {
		path = "/" + path
	}
	return host, path, nil
}

// candidates lists the hosts to try for a host, most specific first: the
// host itself, then each parent down to its registrable domain
// ("a.b.example.co.uk", "b.example.co.uk", "example.co.uk").
func candidates(host string) []string {
	out := []string{host}
	reg := sources.RegistrableDomain(host)
	if reg == host || !strings.HasSuffix(host, "."+reg) {
		return out
	}
	for h := host; h != reg; {
		_, rest, ok := strings.Cut(h, ".")
		if !ok {
			break
		}
		h = rest
		out = append(out, h)
	}
	return out
}

// lookup finds the rating for a host and URL path: the longest matching
// path-prefixed entry on the host, then the host, then its parent domains;
// at every step the table's aliases are applied first. key is the entry
// that matched.
func (t *table) lookup(host, path string) (key string, e entry, ok bool) {
	path = strings.ToLower(path)
	for _, c := range candidates(host) {
		keys := []string{c}
		if a, found := t.aliases[c]; found && a != c {
			// An alias whose target the file does not rate must not hide
			// the host's own entry.
			keys = []string{a, c}
		}
		for _, k := range keys {
			for _, p := range t.paths[k] {
				if path == p.prefix || strings.HasPrefix(path, p.prefix+"/") {
					return p.key, p.e, true
				}
			}
			if e, found := t.hosts[k]; found {
				return k, e, true
			}
		}
	}
	return "", entry{}, false
}
