// Package lookalike tells whether a host imitates a rated publisher's
// domain: a host that names the publisher's domain inside another one
// (reuters.com.example.net), a name spelled with confusable characters
// (Cyrillic "а", "rn" for "m", "0" for "o": Unicode's confusables
// skeleton, after IDNA decoding), a name one typing slip away (a letter
// changed, added, dropped or two swapped) on the same public suffix, and
// the publisher's name with extra words (reuters-news.com,
// bbcnews-live.com).
package lookalike

import (
	"slices"
	"strings"
	"unicode"

	"github.com/agnivade/levenshtein"
	"github.com/mtibben/confusables"
	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/runes"
	"golang.org/x/text/transform"
	"golang.org/x/text/unicode/norm"

	"github.com/musecheck/muse/sources"
)

// Kinds of look-alike.
const (
	KindInHost    = "inside another domain" // reuters.com.example.net
	KindHomoglyph = "confusable characters" // reսters.com, rnsnbc.com
	KindTypo      = "one slip away"         // reuetrs.com, reutres.com
	KindExtra     = "extra words"           // reuters-news.com
)

// MinTypoName is the shortest name (the registrable domain without its
// public suffix) compared for typing slips: among short names one letter
// apart is the rule, not an imitation (cnn, cbn, nbc).
const MinTypoName = 6

// MinSubstName is the shortest name in which a changed letter counts as
// a slip (a letter added, dropped or swapped counts from MinTypoName):
// short names a letter apart are call signs and initials (gbnews,
// gvnews).
const MinSubstName = 8

// MinExtraName is the shortest publisher name looked for with extra
// words around it.
const MinExtraName = 4

// extraWords are the words look-alike sites add to a publisher's name.
// "The" and "daily" are left out: newspapers' own names carry them (The
// Nation, the Daily Caller).
var extraWords = []string{"news", "live", "today", "breaking", "online", "official", "world",
	"report", "media", "tv", "now", "us", "uk", "24", "alert", "update", "updates", "info", "press"}

// Match is a host found to imitate a rated domain.
type Match struct {
	Of   string `json:"of"`   // the rated domain imitated
	Kind string `json:"kind"` // one of the Kind constants
}

// Reason is the match in words: "looks like reuters.com (extra words)".
func (m Match) Reason() string { return "looks like " + m.Of + " (" + m.Kind + ")" }

type domain struct {
	full   string // registrable domain: "reuters.com"
	name   string // without its public suffix: "reuters"
	suffix string // "com"
}

// Index holds the rated domains to compare hosts with. Read-only after
// New, safe for concurrent use.
type Index struct {
	rated    map[string]bool     // registrable domains
	skeleton map[string][]domain // confusables skeleton of the name → domains
	deletes  map[string][]domain // name with one letter deleted (and whole) → domains, names of MinTypoName+
	byName   map[string][]domain // name → domains, names of MinExtraName+
	// within lists, for a name of byName, up to 3 rated domains whose
	// names hold it with extra words: a name real publishers already
	// share ("gazette", "insider") imitates no one.
	within map[string][]string
}

// New indexes rated domains ("reuters.com", "bbc.co.uk"; hosts are
// reduced to their registrable domain).
func New(rated []string) *Index {
	x := &Index{rated: map[string]bool{}, skeleton: map[string][]domain{}, deletes: map[string][]domain{}, byName: map[string][]domain{}, within: map[string][]string{}}
	for _, h := range rated {
		d, ok := split(h)
		if !ok || x.rated[d.full] {
			continue
		}
		x.rated[d.full] = true
		sk := skeleton(d.name)
		x.skeleton[sk] = append(x.skeleton[sk], d)
		if len(d.name) >= MinTypoName {
			for _, v := range deletions(d.name) {
				x.deletes[v] = append(x.deletes[v], d)
			}
		}
		if len(d.name) >= MinExtraName {
			x.byName[d.name] = append(x.byName[d.name], d)
		}
	}
	for r := range x.rated {
		d, _ := split(r)
		for _, n := range x.containedNames(d.name) {
			if n != d.name && len(x.within[n]) < 3 {
				x.within[n] = append(x.within[n], d.full)
			}
		}
	}
	return x
}

// Len is the number of rated domains indexed.
func (x *Index) Len() int { return len(x.rated) }

// Check compares host (a host or URL) with the rated domains. A host
// under a rated registrable domain is that publisher, never a look-alike.
func (x *Index) Check(host string) (Match, bool) {
	return x.check(host, "")
}

// CheckExcept is Check as if self were not rated: how the rated domains
// are measured against one another.
func (x *Index) CheckExcept(host, self string) (Match, bool) {
	return x.check(host, self)
}

func (x *Index) check(host, self string) (Match, bool) {
	if x == nil {
		return Match{}, false
	}
	h := sources.HostOf(host)
	if a, err := idna.Lookup.ToASCII(h); err == nil {
		h = a
	}
	d, ok := split(h)
	if !ok || (x.rated[d.full] && d.full != self) {
		return Match{}, false
	}
	other := func(r domain) bool { return r.full != d.full && r.full != self }
	// A rated domain as labels of the host, left of its own domain.
	labels := strings.Split(strings.TrimSuffix(h, d.full), ".")
	for i := range labels {
		cand := strings.Trim(strings.Join(labels[i:], "."), ".")
		if r, ok := split(cand); ok && r.full == cand && x.rated[cand] && other(r) {
			return Match{Of: cand, Kind: KindInHost}, true
		}
	}
	uname := d.name
	if u, err := idna.ToUnicode(d.name); err == nil {
		uname = u
	}
	if rs := x.skeleton[skeleton(uname)]; len(rs) > 0 {
		for _, r := range rs {
			if other(r) && r.name != d.name {
				return Match{Of: r.full, Kind: KindHomoglyph}, true
			}
		}
	}
	if len(d.name) >= MinTypoName-1 {
		var best []domain
		for _, v := range deletions(d.name) {
			for _, r := range x.deletes[v] {
				if other(r) && r.suffix == d.suffix && r.name != d.name && oneSlip(d.name, r.name) {
					best = append(best, r)
				}
			}
		}
		if len(best) > 0 {
			return Match{Of: firstByName(best).full, Kind: KindTypo}, true
		}
	}
	if r, ok := x.extra(d.name, d.full, self, other); ok {
		return Match{Of: r.full, Kind: KindExtra}, true
	}
	return Match{}, false
}

// extra finds a rated name inside name with extra words (see
// containedNames), unless other rated publishers' names hold it too.
func (x *Index) extra(name, probe, self string, other func(domain) bool) (domain, bool) {
	for _, n := range x.containedNames(name) {
		if n == name || x.shared(n, probe, self) {
			continue
		}
		for _, r := range x.byName[n] {
			if other(r) {
				return r, true
			}
		}
	}
	return domain{}, false
}

// shared says whether a rated domain other than probe and self holds the
// name n with extra words.
func (x *Index) shared(n, probe, self string) bool {
	for _, w := range x.within[n] {
		if w != probe && w != self {
			return true
		}
	}
	return false
}

// containedNames are the indexed names inside name: a hyphenated part,
// or the name with one of extraWords before or after it (hyphens
// dropped: "bbc-news" hides "bbcnews" no more than "bbcnews" does).
func (x *Index) containedNames(name string) []string {
	var out []string
	parts := strings.Split(name, "-")
	if len(parts) > 1 {
		for _, p := range parts {
			if len(x.byName[p]) > 0 {
				out = append(out, p)
			}
		}
		name = strings.Join(parts, "")
	}
	for _, w := range extraWords {
		if n, ok := strings.CutSuffix(name, w); ok && len(x.byName[n]) > 0 {
			out = append(out, n)
		}
		if n, ok := strings.CutPrefix(name, w); ok && len(x.byName[n]) > 0 {
			out = append(out, n)
		}
	}
	return out
}

func firstByName(ds []domain) domain {
	return slices.MinFunc(ds, func(a, b domain) int { return strings.Compare(a.full, b.full) })
}

// split reduces a host to its registrable domain, name and suffix.
func split(host string) (domain, bool) {
	h := strings.TrimSuffix(strings.ToLower(strings.TrimSpace(host)), ".")
	full := sources.RegistrableDomain(h)
	if full == "" || !strings.Contains(full, ".") {
		return domain{}, false
	}
	suffix, _ := publicsuffix.PublicSuffix(full)
	name := strings.TrimSuffix(full, "."+suffix)
	if name == "" || name == full {
		return domain{}, false
	}
	return domain{full: full, name: name, suffix: suffix}, true
}

// skeleton is Unicode's confusables skeleton of a name without accents,
// lower-cased (it maps "0" to "O").
func skeleton(name string) string {
	if bare, _, err := transform.String(stripMarks(), name); err == nil {
		name = bare
	}
	return strings.ToLower(confusables.Skeleton(name))
}

// stripMarks drops accents ("í" → "i"), which the confusables skeleton
// keeps. A chain holds state while it runs, so each call gets its own:
// engines build their indexes at the same time.
func stripMarks() transform.Transformer {
	return transform.Chain(norm.NFD, runes.Remove(runes.In(unicode.Mn)), norm.NFC)
}

// deletions is s and s with each one letter deleted.
func deletions(s string) []string {
	out := []string{s}
	for i := range len(s) {
		out = append(out, s[:i]+s[i+1:])
	}
	return out
}

// oneSlip: a letter changed (in a name of MinSubstName+), added or
// dropped, or two neighbours swapped; not a change of the first letter, of a digit or of a hyphen
// alone, which tell real publishers apart (qctimes, sctimes; local10,
// local12; news-press, newspress).
func oneSlip(a, b string) bool {
	if a == "" || b == "" || a[0] != b[0] {
		return false
	}
	if strings.ReplaceAll(a, "-", "") == strings.ReplaceAll(b, "-", "") {
		return false
	}
	if levenshtein.ComputeDistance(a, b) <= 1 {
		if len(a) == len(b) && len(a) < MinSubstName {
			return false
		}
		return !digitSlip(a, b)
	}
	if len(a) != len(b) {
		return false
	}
	var diff []int
	for i := range len(a) {
		if a[i] != b[i] {
			diff = append(diff, i)
		}
	}
	return len(diff) == 2 && diff[1] == diff[0]+1 && a[diff[0]] == b[diff[1]] && a[diff[1]] == b[diff[0]]
}

// digitSlip: a and b, one edit apart, differ by a digit.
func digitSlip(a, b string) bool {
	i := 0
	for i < len(a) && i < len(b) && a[i] == b[i] {
		i++
	}
	isDigit := func(s string) bool { return i < len(s) && s[i] >= '0' && s[i] <= '9' }
	return isDigit(a) || isDigit(b)
}
