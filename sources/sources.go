// Package sources holds what every part of muse's web layer shares: the
// ClaimReview value that fact-checkers publish and the URL normal forms used
// to de-duplicate pages and look publishers up. Its subpackages search the
// web (search), fetch pages safely (fetch), extract articles (extract), rate
// publishers (ratings) and keep every page read (archive).
package sources

import (
	"fmt"
	"net/url"
	"sort"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"
)

// ClaimReview is a fact-check of one claim, as published in schema.org
// ClaimReview markup or returned by the Google Fact Check Tools API.
type ClaimReview struct {
	Claim      string    `json:"claim"`
	Claimant   string    `json:"claimant,omitempty"`
	ClaimDate  time.Time `json:"claim_date,omitzero"`
	Rating     string    `json:"rating"` // the reviewer's textual rating, e.g. "False", "Pants on Fire"
	Reviewer   string    `json:"reviewer,omitempty"`
	ReviewURL  string    `json:"review_url,omitempty"`
	ReviewDate time.Time `json:"review_date,omitzero"`
	// Language is the review's language (ISO 639-1) as its publisher
	// declares it (schema.org inLanguage, Fact Check Tools' languageCode);
	// "" when not declared.
	Language string `json:"language,omitempty"`
	// Appearances are the addresses where the reviewed claim appeared
	// (schema.org itemReviewed's appearance and firstAppearance): the post
	// a fact-check is about, when it names it.
	Appearances []string `json:"appearances,omitempty"`
}

// trackingParams are query parameters that identify a click, not a page.
var trackingParams = map[string]bool{
	"fbclid": true, "gclid": true, "dclid": true, "msclkid": true, "mc_cid": true, "mc_eid": true,
	"igshid": true, "ref_src": true, "cmpid": true, "ocid": true, "smid": true, "__twitter_impression": true,
}

// Canonical returns the form of an http(s) URL used to tell whether two URLs
// name the same page: scheme and host lower-cased, "www." dropped, default
// port, fragment and tracking parameters (utm_*, fbclid, …) removed, the
// remaining query sorted and a trailing slash on the path dropped. It is a
// key for comparison, not a URL to fetch.
func Canonical(raw string) (string, error) {
	u, err := ParseHTTP(raw)
	if err != nil {
		return "", err
	}
	host := Host(u.Host)
	if p := u.Port(); p != "" && !(u.Scheme == "http" && p == "80") && !(u.Scheme == "https" && p == "443") {
		host += ":" + p
	}
	q := u.Query()
	for k := range q {
		if strings.HasPrefix(strings.ToLower(k), "utm_") || trackingParams[strings.ToLower(k)] {
			q.Del(k)
		}
	}
	keys := make([]string, 0, len(q))
	for k := range q {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var qs []string
	for _, k := range keys {
		for _, v := range q[k] {
			qs = append(qs, url.QueryEscape(k)+"="+url.QueryEscape(v))
		}
	}
	path := strings.TrimRight(u.EscapedPath(), "/")
	out := "https://" + host + path // http and https name the same page for de-duplication
	if len(qs) > 0 {
		out += "?" + strings.Join(qs, "&")
	}
	return out, nil
}

// ParseHTTP parses an absolute http or https URL and refuses anything else
// (file:, javascript:, relative paths), with an error that says why.
func ParseHTTP(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("parse URL %q: %w", raw, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" {
		return nil, fmt.Errorf("URL %q: only http and https URLs are supported", raw)
	}
	if u.Hostname() == "" {
		return nil, fmt.Errorf("URL %q has no host", raw)
	}
	return u, nil
}

// Host lower-cases a host name (or host:port), drops the port, a trailing
// dot and a leading "www." so that publishers can be looked up by it.
func Host(hostport string) string {
	h := strings.ToLower(strings.TrimSpace(hostport))
	if u, err := url.Parse("http://" + h); err == nil && u.Hostname() != "" {
		h = u.Hostname()
	}
	h = strings.TrimSuffix(h, ".")
	return strings.TrimPrefix(h, "www.")
}

// HostOf returns Host of a URL's host, or of the input itself when it is a
// bare domain such as "bbc.co.uk" or "www.reuters.com/world".
func HostOf(urlOrDomain string) string {
	s := strings.TrimSpace(urlOrDomain)
	if !strings.Contains(s, "://") {
		s = "http://" + s
	}
	u, err := url.Parse(s)
	if err != nil {
		return ""
	}
	return Host(u.Host)
}

// RegistrableDomain returns the domain one level below the public suffix
// ("news.bbc.co.uk" → "bbc.co.uk"), or the host itself when it has none.
func RegistrableDomain(host string) string {
	host = Host(host)
	d, err := publicsuffix.EffectiveTLDPlusOne(host)
	if err != nil {
		return host
	}
	return d
}

// Key is the key pages are matched by: Canonical(raw), or raw without
// surrounding space when it does not parse as an http(s) URL.
func Key(raw string) string {
	if k, err := Canonical(raw); err == nil {
		return k
	}
	return strings.TrimSpace(raw)
}
