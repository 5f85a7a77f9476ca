package ratings

import "strings"

// CredibleDomains lists the domains rated high, then those rated medium,
// as Rate rates them (ratings file and built-in table combined, overrides
// applied): first the built-in table's in its order (widely cited
// publishers, fact-checkers and agencies the team listed), then the ratings
// file's and the overrides file's in theirs. It is the site list for a
// credible-first search (search.Query.Sites); a search sends as many of
// them as fit its request budget, so the order matters. Path entries
// ("al.com/birmingham"), user-content platforms and a subdomain whose
// parent is listed are left out: a site: operator or domain filter on the
// parent covers it.
func (r *Rater) CredibleDomains() []string {
	var hosts []string
	hosts = append(hosts, r.builtin.order...)
	if r.file != nil {
		hosts = append(hosts, r.file.t.order...)
	}
	if r.overrides != nil {
		hosts = append(hosts, r.overrides.t.order...)
	}
	tier := map[string]Tier{}
	var high, medium []string
	for _, h := range hosts {
		if _, seen := tier[h]; seen {
			continue
		}
		rt := r.Rate(h)
		tier[h] = rt.Tier
		if rt.UserContent {
			continue
		}
		switch rt.Tier {
		case TierHigh:
			high = append(high, h)
		case TierMedium:
			medium = append(medium, h)
		}
	}
	listed := map[string]bool{}
	for _, h := range append(high, medium...) {
		listed[h] = true
	}
	var out []string
	for _, h := range append(high, medium...) {
		if !underListed(h, listed) {
			out = append(out, h)
		}
	}
	return out
}

// underListed reports whether a parent domain of host is listed.
func underListed(host string, listed map[string]bool) bool {
	for h := host; ; {
		_, rest, ok := strings.Cut(h, ".")
		if !ok || !strings.Contains(rest, ".") {
			return false
		}
		if listed[rest] {
			return true
		}
		h = rest
	}
}
