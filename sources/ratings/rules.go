package ratings

import (
	"strings"

	"github.com/musecheck/muse/sources"
)

// The named rules come last in precedence: they apply only to hosts that no
// overrides file, ratings file or built-in row rates.
//
// Official domains (government, military, intergovernmental, academic) get
// tier medium. They are the primary record for laws, statistics, rulings
// and health guidance, and fact-checkers cite them more than almost anything
// else, so leaving them unrated would rank them after every low-tier
// newspaper. They are not high because the same domains also carry press
// releases and political messaging; the built-in table lifts statistics
// offices, courts and health agencies to high by name.
//
// Social platforms and link shorteners get tier excluded with UserContent
// set: a post there is the word of whoever wrote it, not of a publisher, and
// fact-checkers treat posts as claims to check rather than as evidence. A
// shortened link should be followed before rating; until it is, it names no
// publisher.

// officialTLDs are top-level domains reserved to official bodies.
var officialTLDs = map[string]string{"gov": "government", "mil": "military", "int": "intergovernmental", "edu": "academic"}

// officialSecondLevels are the national equivalents under a two-letter
// country code: gov.uk, govt.nz, gob.mx, gouv.fr, go.jp, ac.uk, edu.au, …
var officialSecondLevels = map[string]string{
	"gov": "government", "govt": "government", "gob": "government", "gouv": "government", "go": "government",
	"gub": "government", "gv": "government", "nic": "government", "mil": "military",
	"edu": "academic", "ac": "academic",
}

// officialDomains are national government domains that follow no pattern.
var officialDomains = map[string]string{
	"gc.ca": "government", "canada.ca": "government", "europa.eu": "intergovernmental",
	"bund.de": "government", "admin.ch": "government", "gv.at": "government", "gov.uk": "government",
	"service.gov.uk": "government", "parliament.uk": "government", "parliament.nz": "government",
	"aph.gov.au": "government", "un.org": "intergovernmental", "coe.int": "intergovernmental",
	// Other countries' governments, parliaments and agencies outside a
	// gov/gob/gouv-style second level.
	"bundesregierung.de": "government", "bundestag.de": "government", "bundesrat.de": "government",
	"rki.de": "government", "destatis.de": "government", "pei.de": "government",
	"rijksoverheid.nl": "government", "overheid.nl": "government", "government.nl": "government",
	"tweedekamer.nl": "government", "rivm.nl": "government", "cbs.nl": "government",
	"belgium.be": "government", "fgov.be": "government", "insee.fr": "government",
	"vie-publique.fr": "government", "elysee.fr": "government", "assemblee-nationale.fr": "government",
	"senat.fr": "government", "ine.es": "government", "boe.es": "government", "congreso.es": "government",
	"istat.it": "government", "governo.it": "government", "camera.it": "government", "senato.it": "government",
	"iss.it": "government", "regeringen.se": "government", "riksdagen.se": "government",
	"regjeringen.no": "government", "stortinget.no": "government", "valtioneuvosto.fi": "government",
	"folketinget.dk": "government", "ine.pt": "government", "parlamento.pt": "government",
	"camara.leg.br": "government", "senado.leg.br": "government", "stf.jus.br": "government",
	"tse.jus.br": "government", "sansad.in": "government", "eci.gov.in": "government",
}

// officialRule reports whether host is an official domain, with the suffix
// that made it one (".gov", ".gov.uk", "gc.ca") and the kind of body.
func officialRule(host string) (suffix, kind string, ok bool) {
	labels := strings.Split(host, ".")
	n := len(labels)
	for i := 0; i < n; i++ {
		d := strings.Join(labels[i:], ".")
		if k, found := officialDomains[d]; found {
			return d, k, true
		}
	}
	if k, found := officialTLDs[labels[n-1]]; found && n >= 2 {
		return "." + labels[n-1], k, true
	}
	// The second level itself counts too: Brazil's whole federal
	// government is www.gov.br/<ministry>.
	if n >= 2 && len(labels[n-1]) == 2 {
		if k, found := officialSecondLevels[labels[n-2]]; found {
			return "." + labels[n-2] + "." + labels[n-1], k, true
		}
	}
	// US state governments: state.ny.us and its subdomains.
	if n >= 4 && labels[n-1] == "us" && labels[n-3] == "state" {
		return ".state." + labels[n-2] + ".us", "government", true
	}
	return "", "", false
}

// userContentHosts are social platforms, video and blog-post hosts where
// anyone posts, and link shorteners, with the name shown as publisher.
var userContentHosts = map[string]string{
	"twitter.com": "X (Twitter)", "x.com": "X (Twitter)", "t.co": "X (Twitter) link shortener",
	"facebook.com": "Facebook", "fb.com": "Facebook", "fb.watch": "Facebook", "fb.me": "Facebook",
	"instagram.com": "Instagram", "threads.net": "Threads", "threads.com": "Threads",
	"tiktok.com": "TikTok", "youtube.com": "YouTube", "youtu.be": "YouTube",
	"reddit.com": "Reddit", "redd.it": "Reddit", "linkedin.com": "LinkedIn", "lnkd.in": "LinkedIn",
	"pinterest.com": "Pinterest", "quora.com": "Quora", "snapchat.com": "Snapchat",
	"t.me": "Telegram", "telegram.me": "Telegram", "telegram.org": "Telegram",
	"whatsapp.com": "WhatsApp", "wa.me": "WhatsApp", "vk.com": "VK", "ok.ru": "Odnoklassniki",
	"weibo.com": "Weibo", "weibo.cn": "Weibo", "douyin.com": "Douyin", "bilibili.com": "Bilibili",
	"bsky.app": "Bluesky", "truthsocial.com": "Truth Social", "gab.com": "Gab", "parler.com": "Parler",
	"gettr.com": "GETTR", "rumble.com": "Rumble", "bitchute.com": "BitChute", "odysee.com": "Odysee",
	"vimeo.com": "Vimeo", "dailymotion.com": "Dailymotion", "twitch.tv": "Twitch",
	"mastodon.social": "Mastodon", "discord.com": "Discord", "discord.gg": "Discord",
	"tumblr.com": "Tumblr", "4chan.org": "4chan", "8kun.top": "8kun", "minds.com": "Minds",
	"bit.ly": "Bitly link shortener", "bitly.com": "Bitly link shortener", "tinyurl.com": "TinyURL link shortener",
	"goo.gl": "Google link shortener", "ow.ly": "Hootsuite link shortener", "buff.ly": "Buffer link shortener",
	"is.gd": "is.gd link shortener", "dlvr.it": "dlvr.it link shortener", "ift.tt": "IFTTT link shortener",
	"shorturl.at": "link shortener", "rebrand.ly": "Rebrandly link shortener", "cutt.ly": "Cuttly link shortener",
	"tiny.cc": "tiny.cc link shortener", "trib.al": "link shortener", "amzn.to": "Amazon link shortener",
	"lnk.to": "link shortener", "linktr.ee": "Linktree",
}

// userContentRule reports whether host is on a social platform or link
// shortener (the host or any parent domain is listed), with its name.
func userContentRule(host string) (name string, ok bool) {
	for h := host; h != ""; {
		if name, found := userContentHosts[h]; found {
			return name, true
		}
		_, rest, more := strings.Cut(h, ".")
		if !more {
			break
		}
		h = rest
	}
	return "", false
}

// ruleRating applies the named rules to a host.
func ruleRating(host string) (Rating, bool) {
	if name, ok := userContentRule(host); ok {
		return Rating{Domain: host, Publisher: name, Tier: TierExcluded, Origin: "rule: user content", UserContent: true}, true
	}
	if suffix, kind, ok := officialRule(host); ok {
		reg := sources.RegistrableDomain(host)
		return Rating{Domain: host, Publisher: reg + " (" + kind + ")", Tier: TierMedium, Origin: "rule: official " + suffix}, true
	}
	return Rating{}, false
}
