package eval

import (
	"net/url"
	"strings"

	"golang.org/x/net/publicsuffix"
)

// Gold says whether a system's pages include AVeriTeC's gold evidence.
type Gold struct {
	URLHit    bool `json:"url_hit"`
	DomainHit bool `json:"domain_hit"`
	// Verdict is the one the judge reads in the correction (with a judge),
	// LabelCorrect whether it is the gold label.
	Verdict      string `json:"verdict,omitempty"`
	LabelCorrect *bool  `json:"label_correct,omitempty"`
}

// MatchGold compares the pages a system cited or read with the gold
// evidence URLs: the same page (scheme, "www.", trailing slash and fragment
// aside; a web.archive.org snapshot read as the page it archived), or the
// same registrable domain.
func MatchGold(pages, gold []string) Gold {
	var g Gold
	gu, gd := map[string]bool{}, map[string]bool{}
	for _, u := range gold {
		k, d := pageKey(u)
		if k != "" {
			gu[k], gd[d] = true, true
		}
	}
	for _, u := range pages {
		k, d := pageKey(u)
		g.URLHit = g.URLHit || gu[k]
		g.DomainHit = g.DomainHit || (d != "" && gd[d])
	}
	return g
}

func pageKey(raw string) (key, domain string) {
	raw = strings.TrimSpace(raw)
	if i := strings.Index(raw, "web.archive.org/web/"); i >= 0 {
		rest := raw[i+len("web.archive.org/web/"):]
		if j := strings.Index(rest, "/"); j >= 0 {
			raw = rest[j+1:]
		}
	}
	if !strings.Contains(raw, "://") {
		raw = "http://" + raw
	}
	u, err := url.Parse(raw)
	if err != nil || u.Host == "" {
		return "", ""
	}
	host := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
	domain, err = publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		domain = host
	}
	key = host + strings.TrimRight(u.EscapedPath(), "/")
	if u.RawQuery != "" {
		key += "?" + u.RawQuery
	}
	return key, domain
}
