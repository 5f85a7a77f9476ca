// Package ratings rates the publisher behind a URL or domain: factuality,
// bias, the priority tier that follows from them (DESIGN.md) and where the
// rating came from.
//
// Ratings come from, highest precedence first:
//  1. the newsroom's overrides file (boost, drop or rate a domain);
//  2. a ratings file: the MBFC browser extension's combined.json (installed
//     by `muse sources update`, never committed) or a CSV of
//     domain,factuality,bias;
//  3. the built-in table (builtin.tsv), the muse team's own judgement of a
//     few hundred widely cited publishers, fact-checkers, journals,
//     reference works and public agencies;
//  4. named rules: official domains (.gov, .mil, .int, .edu and national
//     equivalents such as gov.uk, gc.ca, europa.eu) are tier medium; social
//     platforms and link shorteners are user content, tier excluded.
//
// The ratings file and the built-in table combine rather than one simply
// overriding the other. When both rate a publisher, the better tier of the
// two wins, except that an exclusion in the built-in table stands. The two
// are different judgements: MBFC rates an outlet on everything it publishes
// (its 2026 file rates cdc.gov, fda.gov and hhs.gov "mixed", for their
// messaging), the built-in table rates it as a source of evidence for a
// fact-check, and where one of them vouches for a publisher the other does
// not exclude, fact-checkers cite it. The built-in exclusions (state
// messaging channels, partisan outlets) are editorial decisions the team
// keeps. A named rule is no rating: the file wins over it. Only the
// overrides file lowers a publisher either vouches for. The rule was chosen
// among six by two-fold cross-validation over AVeriTeC's claims
// (TestCombineRuleOutOfSample); docs/benchmarks.md gives its held-out figures.
//
// Hosts are matched lower-cased without "www.", through a file's aliases
// (bbc.co.uk → bbc.com), by the longest path-prefixed entry
// (al.com/birmingham), then by the host and each parent domain down to the
// registrable domain (public suffix list). A web.archive.org snapshot is
// rated as the page it archived.
package ratings

import (
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"github.com/musecheck/muse/sources"
)

// Rating is what muse knows about the publisher of one URL or domain.
type Rating struct {
	Input      string `json:"input"`      // the URL or domain as given
	Domain     string `json:"domain"`     // the entry that matched ("bbc.com", "al.com/birmingham"), else the host
	Publisher  string `json:"publisher"`  // the publisher's name, when known
	Factuality string `json:"factuality"` // very high, high, mostly factual, mixed, low, very low; "" when not rated
	Bias       string `json:"bias"`       // least biased, left-center, …; "" when not rated
	Tier       Tier   `json:"tier"`
	Origin     string `json:"origin"` // which table or rule rated it, with its date: "mbfc combined.json 2026-08-19"
	// UserContent marks social platforms and link shorteners: the page is
	// someone's post, not a publisher's, and is never cited as evidence.
	UserContent bool `json:"user_content,omitempty"`
	Boost       bool `json:"boost,omitempty"` // the overrides file vouches for the domain
	Drop        bool `json:"drop,omitempty"`  // the overrides file keeps the domain out
}

// OriginNone is the origin of a rating nobody gave.
const OriginNone = "none"

// Options says which files to read. pipeline/config fills it.
type Options struct {
	// File is a ratings file (MBFC combined.json or CSV). Empty: the file
	// `muse sources update` installed under DataDir, if there is one.
	File string
	// DataDir is muse's data folder ($XDG_DATA_HOME/muse); the installed
	// ratings file is InstalledPath(DataDir).
	DataDir string
	// OverridesFile is the newsroom's overrides (TOML). Empty or missing:
	// no overrides.
	OverridesFile string
}

// InstalledPath is where `muse sources update` keeps the ratings file.
func InstalledPath(dataDir string) string {
	return filepath.Join(dataDir, "ratings", "combined.json")
}

// Rater rates publishers. It is read-only after Load and safe for
// concurrent use.
type Rater struct {
	overrides *overrides
	file      *ratingsFile // nil when no ratings file is loaded
	builtin   *table
	rule      combineRule
}

// combineRule decides between the ratings file and the built-in knowledge
// (built-in row, else named rule) when both rate a host. muse uses the
// zero value, combineBetterKeepExcluded; the others are the alternatives it
// was chosen from, kept for the measurement that chose it.
type combineRule int

const (
	combineBetterKeepExcluded combineRule = iota // the better of the file's and the built-in row's tier, but a built-in exclusion stands
	combineFileFirst                             // the file always wins (muse before issue 15)
	combineOfficialRow                           // official bodies with a built-in row keep its tier when better; elsewhere the file wins
	combineOfficial                              // official bodies keep the better built-in tier (row or rule); elsewhere the file wins
	combineBetter                                // the better of the two
	combineTableFirst                            // a built-in row always wins
)

// combineRules are the candidates, in the order the measurement prefers
// them on a tie: the narrowest departure from the file first.
var combineRules = []combineRule{combineFileFirst, combineOfficialRow, combineOfficial, combineBetterKeepExcluded, combineBetter, combineTableFirst}

func (c combineRule) String() string {
	return [...]string{"better of the two, built-in exclusions stand", "ratings file first",
		"official bodies with a built-in row keep it", "official bodies keep their built-in tier",
		"better of the two", "built-in table first"}[c]
}

// Load reads the built-in table, the ratings file and the overrides file.
// A named ratings file that is missing or malformed, or a malformed
// overrides file, is an error; an absent installed file or overrides file
// is not.
func Load(opts Options) (*Rater, error) {
	b, err := parseBuiltin(builtinTSV)
	if err != nil {
		return nil, fmt.Errorf("load publisher ratings: %w", err)
	}
	r := &Rater{builtin: b}
	path := opts.File
	if path == "" && opts.DataDir != "" {
		if p := InstalledPath(opts.DataDir); fileExists(p) {
			path = p
		}
	}
	if path != "" {
		if r.file, err = loadRatingsFile(path); err != nil {
			return nil, fmt.Errorf("load publisher ratings: %w", err)
		}
	}
	if opts.OverridesFile != "" {
		if r.overrides, err = loadOverrides(opts.OverridesFile); err != nil {
			return nil, fmt.Errorf("load publisher ratings: %w", err)
		}
	}
	return r, nil
}

func fileExists(p string) bool {
	fi, err := os.Stat(p)
	return err == nil && fi.Mode().IsRegular()
}

// Info describes what was loaded, for `muse doctor`: the number of
// publishers and the date of the ratings file (of the built-in table when
// no file is loaded), and every file read.
func (r *Rater) Info() (count int, date string, files []string) {
	if r.file != nil {
		count, date = r.file.t.len(), r.file.date
		files = append(files, r.file.path)
	} else {
		count, date = r.builtin.len(), strings.TrimPrefix(r.builtin.origin, "muse built-in table ")
	}
	if r.overrides != nil && fileExists(r.overrides.path) {
		files = append(files, r.overrides.path)
	}
	return count, date, files
}

// Rate rates the publisher of a URL ("https://www.bbc.co.uk/news/x") or a
// domain, optionally with a path ("al.com/birmingham"). Input it cannot
// read is unrated, with the reason as origin.
func (r *Rater) Rate(urlOrDomain string) Rating {
	host, path := splitInput(urlOrDomain)
	if inner, ok := archivedURL(host, path); ok {
		out := r.Rate(inner)
		out.Input = urlOrDomain
		return out
	}
	if host == "" {
		return Rating{Input: urlOrDomain, Tier: TierUnrated, Origin: "no host in input"}
	}
	out := r.base(host, path)
	out.Input = urlOrDomain
	if _, ok := userContentRule(host); ok {
		out.UserContent = true
	}
	if key, o, ok := r.overrides.lookup(host, path); ok {
		applyOverride(&out, key, o)
	}
	return out
}

// base is the rating before overrides: the ratings file and the built-in
// knowledge (built-in table, then rules), combined by r.rule.
func (r *Rater) base(host, path string) Rating {
	known, ok := r.builtinRating(host, path)
	if r.file == nil {
		if ok {
			return known
		}
		return Rating{Domain: host, Tier: TierUnrated, Origin: OriginNone}
	}
	key, e, inFile := r.file.t.lookup(host, path)
	if !inFile {
		if ok {
			return known
		}
		return Rating{Domain: host, Tier: TierUnrated, Origin: OriginNone}
	}
	fromFile := Rating{Domain: key, Publisher: e.publisher, Factuality: e.factuality, Bias: e.bias, Tier: e.tier, Origin: r.file.t.origin}
	if ok && r.keepBuiltin(host, known, fromFile) {
		known.Origin += fmt.Sprintf(" (over %s: %s)", r.file.t.origin, describe(fromFile))
		return known
	}
	return fromFile
}

// builtinRating is what muse knows without a ratings file: the built-in
// table's row, else a named rule.
func (r *Rater) builtinRating(host, path string) (Rating, bool) {
	if key, e, ok := r.builtin.lookup(host, path); ok {
		return Rating{Domain: key, Publisher: e.publisher, Factuality: e.factuality, Bias: e.bias, Tier: e.tier, Origin: r.builtin.origin}, true
	}
	return ruleRating(host)
}

// keepBuiltin applies r.rule to a host both the file and the built-in
// knowledge rate.
func (r *Rater) keepBuiltin(host string, known, fromFile Rating) bool {
	better := known.Tier.Rank() < fromFile.Tier.Rank()
	fromTable := !strings.HasPrefix(known.Origin, "rule:")
	switch r.rule {
	case combineOfficial, combineOfficialRow:
		_, _, official := officialRule(host)
		return official && better && (fromTable || r.rule == combineOfficial)
	case combineBetter:
		return fromTable && better
	case combineBetterKeepExcluded:
		return fromTable && (better || known.Tier == TierExcluded)
	case combineTableFirst:
		return fromTable
	}
	return false
}

// describe is a rating's factuality and bias, for an origin note.
func describe(rt Rating) string {
	parts := []string{}
	for _, s := range []string{rt.Factuality, rt.Bias} {
		if s != "" {
			parts = append(parts, s)
		}
	}
	if len(parts) == 0 {
		return string(rt.Tier)
	}
	return strings.Join(parts, ", ")
}

func applyOverride(out *Rating, key string, o Override) {
	out.Domain = key
	out.Origin = "overrides file"
	if o.Publisher != "" {
		out.Publisher = o.Publisher
	}
	if o.Factuality != "" || o.Bias != "" {
		if o.Factuality != "" {
			out.Factuality = o.Factuality
		}
		if o.Bias != "" {
			out.Bias = o.Bias
		}
		out.Tier = TierFor(out.Factuality, out.Bias)
		out.UserContent = false
	}
	switch {
	case o.Boost:
		out.Tier, out.Boost, out.UserContent = TierHigh, true, false
		out.Origin = "overrides file: boost"
	case o.Drop:
		out.Tier, out.Drop = TierExcluded, true
		out.Origin = "overrides file: drop"
	}
}

// splitInput returns the normalized host and the lower-cased path of a URL
// or bare domain.
func splitInput(s string) (host, path string) {
	s = strings.TrimSpace(s)
	if s == "" {
		return "", ""
	}
	raw := s
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil {
		return "", ""
	}
	host = sources.Host(u.Host)
	if host == "" || strings.ContainsAny(host, " \t") {
		return "", ""
	}
	return host, strings.ToLower(u.EscapedPath())
}

// archivedURL returns the page a Wayback Machine snapshot URL archived:
// web.archive.org/web/20201031000000/https://example.com/x → example.com/x.
func archivedURL(host, path string) (string, bool) {
	if host != "web.archive.org" && host != "wayback.archive.org" {
		return "", false
	}
	rest, ok := strings.CutPrefix(path, "/web/")
	if !ok {
		return "", false
	}
	_, inner, ok := strings.Cut(rest, "/") // drop the timestamp ("20201031000000" or "2020id_")
	if !ok || inner == "" {
		return "", false
	}
	inner, _ = url.PathUnescape(inner)
	// The Wayback Machine sometimes collapses "https://" into "https:/".
	for _, scheme := range []string{"https:/", "http:/"} {
		if strings.HasPrefix(inner, scheme) && !strings.HasPrefix(inner, scheme+"/") {
			inner = scheme + "/" + strings.TrimPrefix(inner, scheme)
		}
	}
	if h, _ := splitInput(inner); h == "" {
		return "", false
	}
	return inner, true
}

// RateAll rates each input, in order.
func (r *Rater) RateAll(inputs []string) []Rating {
	out := make([]Rating, len(inputs))
	for i, in := range inputs {
		out[i] = r.Rate(in)
	}
	return out
}
