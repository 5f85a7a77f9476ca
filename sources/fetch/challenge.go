package fetch

import (
	"bytes"
	"errors"
	"net/http"
	"strings"
)

// ErrChallenge: the site's bot protection answered in place of the page,
// with a challenge a browser would run or a block page. The concrete error
// is a *StatusError whose Challenge names the service.
var ErrChallenge = errors.New("refused by the site's bot protection")

// challengeBytes is how much of a refusal's body is read to tell a
// challenge from a missing page: challenge pages are a few KiB.
const challengeBytes = 64 << 10

// challengeOf names the bot-protection service whose challenge or block
// page a response is, from the markers each service really sends, or ""
// when it is none. A page served with 2xx is named only by the markers
// that never appear on an article: Cloudflare's cf-mitigated header, and a
// short page that is nothing but a challenge's frame or script.
func challengeOf(code int, h http.Header, body []byte) string {
	// The services refuse with 403 (and Cloudflare with 503 or 429 too);
	// a 404 from a site behind them carries their headers as well.
	refused := code == http.StatusForbidden || code == http.StatusServiceUnavailable || code == http.StatusTooManyRequests
	has := func(s ...string) bool {
		for _, m := range s {
			if bytes.Contains(body, []byte(m)) {
				return true
			}
		}
		return false
	}
	server := strings.ToLower(h.Get("Server"))
	switch {
	case strings.EqualFold(h.Get("cf-mitigated"), "challenge"):
		return "Cloudflare"
	case refused && (server == "cloudflare" || h.Get("CF-RAY") != "") &&
		has("/cdn-cgi/challenge-platform/", "window._cf_chl_opt", "<title>Just a moment...</title>", "Attention Required! | Cloudflare"):
		return "Cloudflare"
	case refused && strings.HasPrefix(server, "akamaighost") && has("Access Denied"),
		refused && has("errors.edgesuite.net", "errors&#46;edgesuite&#46;net"):
		return "Akamai"
	case refused && (h.Get("X-DataDome") != "" || h.Get("X-DD-B") != "" || has("captcha-delivery.com")),
		len(body) < 16<<10 && has("geo.captcha-delivery.com", "ct.captcha-delivery.com"):
		return "DataDome"
	case refused && has("_pxAppId", "px-captcha", "captcha.px-cdn.net", "perimeterx.net"):
		return "PerimeterX (HUMAN)"
	case refused && (h.Get("X-Iinfo") != "" || strings.Contains(strings.ToLower(h.Get("X-CDN")), "imperva") ||
		strings.Contains(strings.ToLower(h.Get("X-CDN")), "incapsula")),
		len(body) < 16<<10 && has("/_Incapsula_Resource", "Incapsula incident ID"):
		return "Imperva (Incapsula)"
	}
	return ""
}
