package pipeline

import (
	"cmp"
	"fmt"
	"net/url"
	"regexp"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
)

// Content-farm marks other than a chatbot's words (machineTextFlag): the
// traces that tools which publish other people's text, or generated text,
// unread leave in a page. Each was written before the real pages were read
// and measured on them (docs/benchmarks.md).

// scraperFooter is the footer WordPress adds to each item of a site's RSS
// feed ("The post <title> appeared first on <site>."): in a page's own
// text, the page was built from another site's feed by an autoblog, as
// scraper sites are.
var scraperFooter = regexp.MustCompile(`(?i)^\s*the post\s+(.{3,300}?)\s+appeared first on\s+(.{2,100}?)[.!]?\s*$`)

// aiLeftovers are what an AI writing tool's reply holds around the text it
// was asked for, left in a published page or its title: the assistant's
// preamble ("Certainly! Here's a rewritten version"), a placeholder it
// left for the user ("[Insert date]"), the scaffold of an SEO brief
// ("Meta description: …").
var aiLeftovers = []*regexp.Regexp{
	regexp.MustCompile(`(?i)^\s*(?:certainly|sure|absolutely|of course)[!,.]?\s+here(?:'s| is| are)\b`),
	regexp.MustCompile(`(?i)\bhere(?:'s| is) (?:a |an |the |your )?(?:rewritten|paraphrased|revised|seo[- ](?:optimized|optimised|friendly)|plagiarism[- ]free|humanized|humanised) (?:version|article|text|blog post|content)\b`),
	regexp.MustCompile(`(?i)\[(?:insert|add|your) [^\]]{2,40}\]`),
	regexp.MustCompile(`(?i)^\s*(?:seo title|meta description|meta title|focus keyword|focus keyphrase|url slug)\s*:`),
}

// aiLeftover finds an AI writing tool's leftover in the title or a
// paragraph, outside quotation marks; "" when none.
func aiLeftover(s Source) string {
	for _, p := range append([]string{s.Title}, s.Paragraphs...) {
		for _, re := range aiLeftovers {
			for _, loc := range re.FindAllStringIndex(p, -1) {
				if !quoted(p, loc[0]) {
					return strings.TrimSpace(p[loc[0]:loc[1]])
				}
			}
		}
	}
	return ""
}

// scrapedFrom is the site an RSS feed footer in the page's text names,
// when it is another site than the page's own; "" when none.
func scrapedFrom(s Source) string {
	own := siteName(sources.HostOf(s.URL))
	for _, p := range s.Paragraphs {
		m := scraperFooter.FindStringSubmatch(p)
		if m == nil {
			continue
		}
		site, ownLetters := strings.TrimSpace(m[2]), nameLetters(own)
		if n := nameLetters(site); n != "" && (ownLetters == "" || !strings.Contains(n, ownLetters)) {
			return site
		}
	}
	return ""
}

// nameLetters is a site's name in lower-case letters and digits alone
// ("The Verge" is "verge", "the-verge.com" "thevergecom").
func nameLetters(s string) string {
	s = strings.TrimPrefix(strings.ToLower(strings.TrimSpace(s)), "the ")
	return strings.Map(func(r rune) rune {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') || r > 127 {
			return r
		}
		return -1
	}, s)
}

// affiliateHosts are the hosts of affiliate networks' and link
// shorteners' tracking links, and affiliateParams the query parameters
// that make a shop's link an affiliate's.
var (
	affiliateHosts = map[string]bool{
		"amzn.to": true, "go.skimresources.com": true, "click.linksynergy.com": true, "shareasale.com": true,
		"awin1.com": true, "anrdoezrs.net": true, "jdoqocy.com": true, "tkqlhce.com": true, "dpbolvw.net": true,
		"kqzyfj.com": true, "rstyle.me": true, "shop-links.co": true, "howl.me": true, "avantlink.com": true,
		"pntra.com": true, "prf.hn": true, "go.redirectingat.com": true, "fave.co": true, "geni.us": true,
		"hop.clickbank.net": true, "linksynergy.com": true, "clkbank.com": true,
	}
	affiliateParams = []string{"tag", "aff", "aff_id", "affid", "affiliate", "affiliate_id", "aff_sub"}
)

// affiliateLink says whether u is an affiliate's link: through an
// affiliate network, or to a shop with an affiliate's parameter (Amazon's
// tag=).
func affiliateLink(u string) bool {
	p, err := url.Parse(u)
	if err != nil || p.Host == "" {
		return false
	}
	h := sources.Host(p.Host)
	if affiliateHosts[h] || affiliateHosts[sources.RegistrableDomain(h)] {
		return true
	}
	q := p.Query()
	for _, k := range affiliateParams {
		if q.Get(k) != "" && (k != "tag" || strings.HasPrefix(sources.RegistrableDomain(h), "amazon.")) {
			return true
		}
	}
	return false
}

// affiliateShare counts a page's links to other sites, and how many of
// them are affiliates'.
func affiliateShare(links []string, pageURL string) (out, affiliate int) {
	own := sources.RegistrableDomain(sources.HostOf(pageURL))
	for _, l := range links {
		if !strings.HasPrefix(l, "http") || sources.RegistrableDomain(sources.HostOf(l)) == own {
			continue
		}
		out++
		if affiliateLink(l) {
			affiliate++
		}
	}
	return out, affiliate
}

// affiliateFlag flags a page that names no author and no date while at
// least minAffiliateLinks of its links to other sites, and at least a
// fifth of them, are affiliates': a page made to sell through links, not
// to report. Newsrooms' shopping guides carry as many, under a byline and
// a date. Bounds fixed before the real pages were measured.
func affiliateFlag(s Source) (SourceFlag, bool) {
	a := s.Affiliate
	if a == nil || a.Affiliate < minAffiliateLinks || 5*a.Affiliate < a.Out {
		return SourceFlag{}, false
	}
	return SourceFlag{Kind: FlagAffiliate, Reason: fmt.Sprintf("it names no author and no date, and %d of its %d links to other sites are affiliate links", a.Affiliate, a.Out)}, true
}

const minAffiliateLinks = 5

// AffiliateLinks counts a page's links to other sites and the affiliate
// links among them; kept only for a page that names no author and no
// date.
type AffiliateLinks struct {
	Out       int `json:"out"`
	Affiliate int `json:"affiliate"`
}

// countAffiliates sets s.Affiliate from the page's HTML when the page
// names neither an author nor a date, the only pages affiliateFlag reads.
func countAffiliates(s *Source, a *extract.Article, body []byte) {
	s.Affiliate = nil
	if a.Author != "" || !a.Published.IsZero() || body == nil {
		return
	}
	out, aff := affiliateShare(extract.Links(body, cmp.Or(s.FinalURL, s.URL)), cmp.Or(s.FinalURL, s.URL))
	if aff > 0 {
		s.Affiliate = &AffiliateLinks{Out: out, Affiliate: aff}
	}
}

// scrapedFlag flags a page whose text holds another site's RSS feed
// footer.
func scrapedFlag(s Source) (SourceFlag, bool) {
	site := scrapedFrom(s)
	if site == "" {
		return SourceFlag{}, false
	}
	return SourceFlag{Kind: FlagScraped, Reason: fmt.Sprintf("its text holds %s's RSS feed footer (\"The post … appeared first on %s\"): copied from that site's feed", site, site)}, true
}
