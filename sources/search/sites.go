package search

import (
	"context"
	"errors"
	"strings"

	"github.com/musecheck/muse/sources"
)

// Credible-first search, as in the Muse paper: besides the open query, the
// engine sends each query restricted to the publishers it trusts
// (Query.Sites), so credible pages appear even when the open web is
// flooded. The paper's engine was a Programmable Search engine listing the
// ~2,400 rated publishers; new engines are capped at 50 sites and the API
// closes, so the restriction travels with each query instead: OR-joined
// site: operators in as few queries as each engine's length limit allows,
// or the provider's own domain filter where it has one (Tavily
// include_domains, Exa includeDomains).

// DefaultSiteRequests is how many requests one restricted query may cost a
// provider when Options.SiteRequests is zero.
const DefaultSiteRequests = 5

// siteLimit is how long one query may be on an engine: words, counting each
// site: operator and each OR, and characters.
type siteLimit struct{ words, chars int }

var (
	// Google ignores every word after the 32nd, operators included; the
	// Custom Search API's q shares a 2,048-character URL. Serper and SerpAPI
	// query Google, and SearXNG passes the query on to Google-like engines.
	googleLimit = siteLimit{words: 32, chars: 2048}
	// Brave documents q as at most 400 characters and 50 words.
	braveLimit = siteLimit{words: 50, chars: 400}
)

// Native domain filters: Tavily's API reference caps include_domains at 300
// domains (as we recall it; the reference was not at hand when this was
// written); Exa states no cap, so it gets Tavily's.
const (
	tavilyDomains = 300
	exaDomains    = 300
)

// normSites lower-cases the sites, drops schemes, "www." and trailing
// slashes, and removes blanks and repeats, keeping the order (the caller's
// preference: the first sites are the ones sent when not all fit).
func normSites(sites []string) []string {
	var out []string
	seen := map[string]bool{}
	for _, s := range sites {
		s = strings.ToLower(strings.TrimSpace(s))
		if i := strings.Index(s, "://"); i >= 0 {
			s = s[i+3:]
		}
		s = strings.TrimRight(strings.TrimPrefix(s, "www."), "/")
		if s == "" || strings.ContainsAny(s, " \t\"()") || seen[s] {
			continue
		}
		seen[s] = true
		out = append(out, s)
	}
	return out
}

// siteQueries turns text and sites into at most max query texts of the form
// `text (site:a OR site:b …)`, each within lim. A site that fits nowhere
// (the text alone is nearly at the limit) still gets a query of its own;
// sites beyond max requests are not sent.
func siteQueries(text string, sites []string, lim siteLimit, max int) []string {
	if max <= 0 {
		max = DefaultSiteRequests
	}
	words := len(strings.Fields(text))
	var out []string
	var group []string
	flush := func() {
		switch len(group) {
		case 0:
			return
		case 1:
			out = append(out, text+" "+group[0])
		default:
			out = append(out, text+" ("+strings.Join(group, " OR ")+")")
		}
		group = nil
	}
	fits := func(op string) bool {
		n := len(group) + 1
		w := words + n + (n - 1) // each site: and each OR between them
		c := len(text) + 3 + len(op) + 4*(n-1)
		for _, g := range group {
			c += len(g)
		}
		return w <= lim.words && c <= lim.chars
	}
	for _, s := range sites {
		op := "site:" + s
		if len(group) > 0 && !fits(op) {
			flush()
			if len(out) == max {
				return out
			}
		}
		group = append(group, op)
	}
	flush()
	return out
}

// domainGroups splits sites into at most max lists of at most n domains,
// for providers that filter by domain themselves. Their filters take
// domains only, so path entries ("al.com/birmingham") are left out.
func domainGroups(sites []string, n, max int) [][]string {
	if max <= 0 {
		max = DefaultSiteRequests
	}
	var out [][]string
	var cur []string
	for _, s := range sites {
		if strings.Contains(s, "/") {
			continue
		}
		cur = append(cur, s)
		if len(cur) == n {
			out = append(out, cur)
			cur = nil
			if len(out) == max {
				return out
			}
		}
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// bySiteOperators runs q on search, adding its Sites as site: groups sized
// to lim, one request per group.
func bySiteOperators(ctx context.Context, q Query, lim siteLimit, max int, search func(context.Context, Query) ([]Hit, error)) ([]Hit, error) {
	sites := normSites(q.Sites)
	if len(sites) == 0 {
		return search(ctx, q)
	}
	texts := siteQueries(q.Text, sites, lim, max)
	return eachGroup(ctx, q, len(texts), func(ctx context.Context, i int) ([]Hit, error) {
		sub := q
		sub.Text, sub.Sites = texts[i], nil
		return search(ctx, sub)
	})
}

// byDomainFilter runs q on search with its Sites cut into lists of at most
// n domains, one request per list; search sends q.Sites in the provider's
// own filter. The providers that filter by domain (Tavily, Exa) do not
// page: a page after the first is empty, and costs no request.
func byDomainFilter(ctx context.Context, q Query, n, max int, search func(context.Context, Query) ([]Hit, error)) ([]Hit, error) {
	if q.page() > 1 {
		return nil, nil
	}
	if len(q.Sites) == 0 {
		return search(ctx, q)
	}
	groups := domainGroups(normSites(q.Sites), n, max)
	if len(groups) == 0 {
		return nil, nil
	}
	return eachGroup(ctx, q, len(groups), func(ctx context.Context, i int) ([]Hit, error) {
		sub := q
		sub.Sites = groups[i]
		return search(ctx, sub)
	})
}

// eachGroup makes the n requests of a restricted query one after the other
// (a provider's per-second limit is shared with the other queries Run
// sends at once) and interleaves their hits: every group's first hit, then
// every second, … ranked 1, 2, … on the group's own answer order. Each hit
// records the query as the caller gave it, and Restricted. A group that
// fails is left out; only when every group fails is there an error.
func eachGroup(ctx context.Context, q Query, n int, one func(context.Context, int) ([]Hit, error)) ([]Hit, error) {
	answers := make([][]Hit, 0, n)
	var errs []error
	for i := range n {
		hits, err := one(ctx, i)
		if err != nil {
			errs = append(errs, err)
			if ctx.Err() != nil {
				break
			}
			continue
		}
		answers = append(answers, hits)
	}
	if len(answers) == 0 && len(errs) > 0 {
		return nil, errors.Join(errs...)
	}
	var out []Hit
	for k := 0; ; k++ {
		more := false
		for _, a := range answers {
			if k < len(a) {
				h := a[k]
				h.Query, h.Restricted, h.Rank = q.Text, true, n*q.skipped(0)+len(out)+1
				out = append(out, h)
				more = true
			}
		}
		if !more {
			return out, nil
		}
	}
}

// onSites reports whether the page at rawURL is on one of sites (normalized
// by normSites): the host or a subdomain of it, and below its path when the
// site has one.
func onSites(rawURL string, sites []string) bool {
	u, err := sources.ParseHTTP(rawURL)
	if err != nil {
		return false
	}
	host := sources.Host(u.Host)
	path := strings.ToLower(u.EscapedPath())
	for _, s := range sites {
		sh, sp, _ := strings.Cut(s, "/")
		if host != sh && !strings.HasSuffix(host, "."+sh) {
			continue
		}
		if sp == "" || path == "/"+sp || strings.HasPrefix(path, "/"+sp+"/") {
			return true
		}
	}
	return false
}
