package testworld

import (
	"fmt"
	"html"
	"net/http"
	"strings"
)

// The walls publishers put in front of an article, around one news story
// of the world: a consent overlay, a paywall teaser, a registration wall,
// the challenge pages of the bot-protection services, a JavaScript shell
// that links its AMP version. Each is what those services and CMSs serve,
// reduced to what muse reads.

// WallArticle is a regional paper's story about the post's claim, with the
// refuting sentence (QuoteR1) in its fifth paragraph: past the two
// paragraphs a paywall teaser leaves readable.
var WallArticle = Page{
	Path:  "/news/2024/01/21/springfield-main-street-bicycles",
	Title: "No, Springfield has not banned bicycles from Main Street",
	Site:  "Springfield Ledger",
	Date:  "2024-01-21",
	Paras: []string{
		"Posts shared thousands of times over the weekend claimed that Springfield had quietly banned bicycles from Main Street, " +
			"with some saying the ban would begin on Monday and that Mayor Ellen Park had signed the order without a public vote.",
		"The claim spread first on a local community page and then on larger accounts outside the state, several of which " +
			"attached a photograph of a road sign that, on closer inspection, was taken in another city two years ago.",
		"Cyclists who use the street every day said they had heard nothing about a ban. \"I ride down Main Street to the " +
			"hospital at six every morning,\" said Dana Ortiz, a nurse. \"If they had banned us, the council would have had to tell someone.\"",
		"City records show that the council last discussed Main Street at its December meeting, where members approved a " +
			"design study for the stretch between the old railway station and Harbor Avenue, including new loading bays for shops.",
		QuoteR1,
		"The spokesperson added that the council had received dozens of calls from worried residents since Saturday and that " +
			"staff had been answering them one by one, pointing callers to the published minutes of every meeting since September.",
		"Mayor Park's office said in a statement that she had signed no executive order concerning bicycles or Main Street this " +
			"year, and that any change to who may use a city street would need a vote of the full council after a public hearing.",
		"Transport planners said the confusion may have started with a notice about a street festival in March, when one block " +
			"of Main Street will be closed to all traffic for a weekend, cars and bicycles alike, as it has been every spring since 2019.",
		"The Springfield Cycling Club said it would keep an eye on the design study, which is expected to report in the summer, " +
			"and urged its members to check the council's website before sharing posts about changes to the city's streets.",
	},
}

// WallWords is how many words the article's first n paragraphs have.
func WallWords(n int) int {
	return len(strings.Fields(strings.Join(WallArticle.Paras[:n], " ")))
}

// articleJSONLD is the article's NewsArticle JSON-LD; extra is added to
// its object as written (`"isAccessibleForFree": false, …`).
func articleJSONLD(p Page, extra string) string {
	if extra != "" {
		extra = ",\n " + extra
	}
	return fmt.Sprintf(`<script type="application/ld+json">{"@context":"https://schema.org","@type":"NewsArticle",`+
		`"headline":%q,"datePublished":"%sT08:15:00-05:00","publisher":{"@type":"NewsMediaOrganization","name":%q}%s}</script>`,
		p.Title, p.Date, p.Site, extra)
}

// wallHead is a news page's head with its JSON-LD and any further tags.
func wallHead(p Page, jsonld string, tags ...string) string {
	var b strings.Builder
	b.WriteString("<!doctype html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">\n")
	fmt.Fprintf(&b, "<title>%s | %s</title>\n", html.EscapeString(p.Title), html.EscapeString(p.Site))
	fmt.Fprintf(&b, "<meta property=\"og:site_name\" content=\"%s\">\n", html.EscapeString(p.Site))
	fmt.Fprintf(&b, "<meta property=\"article:published_time\" content=\"%sT13:15:00Z\">\n", p.Date)
	for _, t := range tags {
		b.WriteString(t + "\n")
	}
	b.WriteString(jsonld + "\n</head>\n")
	return b.String()
}

func paras(ps []string) string {
	var b strings.Builder
	for _, p := range ps {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
	}
	return b.String()
}

const wallNav = `<header class="site-header"><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sports">Sports</a> ` +
	`<a href="/opinion">Opinion</a> <a href="/subscribe" class="btn-subscribe">Subscribe</a> <a href="/login">Sign in</a></nav></header>`

const wallFooter = `<footer><p>© 2024 Springfield Ledger</p><p><a href="/terms">Terms of use</a> <a href="/privacy">Privacy</a></p></footer>`

// ConsentHTML is the whole article under a cookie-consent overlay of the
// kind consent platforms inject (OneTrust's markup).
func ConsentHTML(p Page) string {
	return wallHead(p, articleJSONLD(p, "")) + "<body>\n" + wallNav +
		`<main><article><h1>` + html.EscapeString(p.Title) + "</h1>\n" + paras(p.Paras) + "</article></main>\n" + wallFooter +
		`<div id="onetrust-consent-sdk"><div class="onetrust-pc-dark-filter"></div><div id="onetrust-banner-sdk" role="dialog" aria-label="Privacy">` +
		`<div id="onetrust-policy"><h2 id="onetrust-policy-title">We value your privacy</h2><p id="onetrust-policy-text">We and our ` +
		`partners store and access information on your device, such as cookies, and process personal data, such as unique identifiers ` +
		`and standard information sent by a device, for personalised advertising and content, advertising and content measurement, ` +
		`audience research and services development. You may click to consent to our and our partners' processing as described above.</p></div>` +
		`<div id="onetrust-button-group"><button id="onetrust-accept-btn-handler">Accept all</button><button id="onetrust-reject-all-handler">Reject all</button>` +
		`<button id="onetrust-pc-btn-handler">Manage preferences</button></div></div></div>` +
		"</body></html>\n"
}

// PaywallTeaserHTML is what a paywalled publisher serves a reader without
// a subscription: the first n paragraphs, a subscribe box in Piano's
// container, and the JSON-LD that declares the article not free, with the
// part behind the wall named by its cssSelector (Google's markup for
// paywalled content).
// canonical, when not "", is the page's canonical URL.
func PaywallTeaserHTML(p Page, n int, canonical string) string {
	ld := articleJSONLD(p, `"isAccessibleForFree": "False", "hasPart": {"@type": "WebPageElement", "isAccessibleForFree": "False", "cssSelector": ".article-body__premium"}`)
	tags := []string{`<script async src="https://cdn.tinypass.com/api/tinypass.min.js"></script>`}
	if canonical != "" {
		tags = append(tags, `<link rel="canonical" href="`+html.EscapeString(canonical)+`">`)
	}
	return wallHead(p, ld, tags...) + "<body>\n" + wallNav +
		`<main><article><h1>` + html.EscapeString(p.Title) + "</h1>\n<div class=\"article-body\">\n" + paras(p.Paras[:n]) + "</div>\n" +
		`<div class="article-body__premium"></div>` +
		`<div id="piano-inline-offer" class="tp-container-inner paywall-offer"><h3>Subscribe to continue reading</h3>` +
		`<p>Get unlimited digital access to the Springfield Ledger for $1 a week for your first year. Cancel anytime.</p>` +
		`<p><a href="/subscribe">See subscription options</a></p><p>Already a subscriber? <a href="/login">Sign in</a></p></div>` +
		"</article></main>\n" + wallFooter + "</body></html>\n"
}

// PaywallFullHTML is the same page as a subscriber gets it: every
// paragraph, the premium part inside the element the JSON-LD names. The
// page still declares itself not free.
func PaywallFullHTML(p Page, n int) string {
	ld := articleJSONLD(p, `"isAccessibleForFree": false, "hasPart": [{"@type": "WebPageElement", "isAccessibleForFree": false, "cssSelector": ".article-body__premium"}]`)
	return wallHead(p, ld, `<script async src="https://cdn.tinypass.com/api/tinypass.min.js"></script>`) + "<body>\n" + wallNav +
		`<main><article><h1>` + html.EscapeString(p.Title) + "</h1>\n<div class=\"article-body\">\n" + paras(p.Paras[:n]) + "</div>\n" +
		`<div class="article-body__premium">` + paras(p.Paras[n:]) + `</div>` +
		"</article></main>\n" + wallFooter + "</body></html>\n"
}

// RegistrationWallHTML is a registration wall with no structured data:
// the first n paragraphs and a box asking for a free account.
func RegistrationWallHTML(p Page, n int) string {
	return wallHead(p, articleJSONLD(p, "")) + "<body>\n" + wallNav +
		`<main><article><h1>` + html.EscapeString(p.Title) + "</h1>\n" + paras(p.Paras[:n]) +
		`<div class="regwall"><p>Create a free account to continue reading.</p>` +
		`<p>It takes less than a minute, and you can read 10 stories a month at no cost.</p>` +
		`<p><a href="/register">Register</a> or <a href="/login">log in</a></p></div>` +
		"</article></main>\n" + wallFooter + "</body></html>\n"
}

// ShellHTML is a JavaScript application's page before its script runs:
// no article text, links to the page's AMP version and its canonical URL
// (each left out when "").
func ShellHTML(p Page, amp, canonical string) string {
	var tags []string
	if canonical != "" {
		tags = append(tags, `<link rel="canonical" href="`+html.EscapeString(canonical)+`">`)
	}
	if amp != "" {
		tags = append(tags, `<link rel="amphtml" href="`+html.EscapeString(amp)+`">`)
	}
	return wallHead(p, articleJSONLD(p, ""), tags...) +
		`<body><div id="root"></div><noscript>You need to enable JavaScript to run this app.</noscript>` +
		`<script src="/static/js/main.4f2a9c1e.js"></script></body></html>` + "\n"
}

// AMPHTML is the article as an AMP page.
func AMPHTML(p Page) string {
	return `<!doctype html><html ⚡ lang="en"><head><meta charset="utf-8"><title>` + html.EscapeString(p.Title) + `</title>` +
		`<link rel="canonical" href="` + html.EscapeString(p.Path) + `"><meta name="viewport" content="width=device-width">` +
		`<script async src="https://cdn.ampproject.org/v0.js"></script>` + articleJSONLD(p, "") +
		`<style amp-boilerplate>body{visibility:hidden}</style></head><body><header><a href="/">Springfield Ledger</a></header>` +
		`<article><h1>` + html.EscapeString(p.Title) + `</h1><time datetime="` + p.Date + `">` + p.Date + `</time>` + paras(p.Paras) +
		`</article></body></html>` + "\n"
}

// A Challenge is a bot-protection service's answer to a client it will not
// let through: its status, headers and page.
type Challenge struct {
	Vendor  string
	Status  int
	Headers map[string]string
	Body    string
}

// ServeHTTP answers as the service does.
func (c Challenge) ServeHTTP(w http.ResponseWriter, _ *http.Request) {
	for k, v := range c.Headers {
		w.Header().Set(k, v)
	}
	w.Header().Set("Content-Type", "text/html; charset=UTF-8")
	w.WriteHeader(c.Status)
	fmt.Fprint(w, c.Body)
}

// Challenges are the challenge and block pages of the common CDNs and
// bot-protection services, with the markers each really sends.
var Challenges = []Challenge{
	{Vendor: "Cloudflare", Status: http.StatusForbidden,
		Headers: map[string]string{"Server": "cloudflare", "cf-mitigated": "challenge", "CF-RAY": "8f1c2a3b4d5e6f70-IAD",
			"Cache-Control": "private, max-age=0, no-store, no-cache, must-revalidate"},
		Body: `<!DOCTYPE html><html lang="en-US"><head><title>Just a moment...</title><meta http-equiv="Content-Type" content="text/html; charset=UTF-8">` +
			`<meta name="robots" content="noindex,nofollow"><meta name="viewport" content="width=device-width,initial-scale=1"></head>` +
			`<body><div class="main-wrapper" role="main"><div class="main-content"><noscript><div class="h2"><span id="challenge-error-text">` +
			`Enable JavaScript and cookies to continue</span></div></noscript></div></div><script>(function(){window._cf_chl_opt={cvId: '3',` +
			`cZone: "www.example.com",cType: 'managed',cRay: '8f1c2a3b4d5e6f70'};var cpo = document.createElement('script');` +
			`cpo.src = '/cdn-cgi/challenge-platform/h/g/orchestrate/chl_page/v1?ray=8f1c2a3b4d5e6f70';document.getElementsByTagName('head')[0].appendChild(cpo);}());</script></body></html>`},
	{Vendor: "Akamai", Status: http.StatusForbidden,
		Headers: map[string]string{"Server": "AkamaiGHost", "Mime-Version": "1.0"},
		Body: "<HTML><HEAD>\n<TITLE>Access Denied</TITLE>\n</HEAD><BODY>\n<H1>Access Denied</H1>\n \nYou don't have permission to access " +
			"\"http&#58;&#47;&#47;www&#46;example&#46;com&#47;news&#47;\" on this server.<P>\nReference&#32;&#35;18&#46;6f2c1002&#46;1705912345&#46;1a2b3c4d\n" +
			"<P>https&#58;&#47;&#47;errors&#46;edgesuite&#46;net&#47;18&#46;6f2c1002&#46;1705912345&#46;1a2b3c4d</P>\n</BODY>\n</HTML>\n"},
	{Vendor: "DataDome", Status: http.StatusForbidden,
		Headers: map[string]string{"X-DataDome": "protected", "X-DD-B": "1", "Set-Cookie": "datadome=AbC123~xyz; Max-Age=31536000; Path=/; Secure; SameSite=Lax"},
		Body: `<html lang="en"><head><title>example.com</title><style>#cmsg{animation: A 1.5s;}@keyframes A{0%{opacity:0;}99%{opacity:0;}100%{opacity:1;}}</style></head>` +
			`<body style="margin:0"><p id="cmsg">Please enable JS and disable any ad blocker</p><script data-cfasync="false">var dd={'rt':'c','cid':'AHrlqAAAAAMA','hsh':'2211F522B61E269B869FA6EAFFB5E1','t':'fe','s':44077,'e':'abc','host':'geo.captcha-delivery.com'}</script>` +
			`<script data-cfasync="false" src="https://ct.captcha-delivery.com/c.js"></script></body></html>`},
	{Vendor: "PerimeterX (HUMAN)", Status: http.StatusForbidden,
		Headers: map[string]string{"Server": "nginx"},
		Body: `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>Access to this page has been denied</title></head><body>` +
			`<div class="px-captcha-container"><div class="px-captcha-header">Before we continue...</div><div class="px-captcha-message">Press &amp; Hold to confirm you are<br>a human (and not a bot).</div>` +
			`<div id="px-captcha"></div></div><script>window._pxAppId = 'PXu6b0qd2S';window._pxJsClientSrc = '/u6b0qd2S/init.js';window._pxHostUrl = '/u6b0qd2S/xhr';</script>` +
			`<script src="https://captcha.px-cdn.net/PXu6b0qd2S/captcha.js?a=c&u=1b2c&v=&m=0"></script></body></html>`},
	{Vendor: "Imperva (Incapsula)", Status: http.StatusForbidden,
		Headers: map[string]string{"X-CDN": "Imperva", "X-Iinfo": "12-34567890-0 0NNN RT(1705912345678 0) q(0 -1 -1 -1) r(0 -1)",
			"Set-Cookie": "incap_ses_1234_567890=AbCdEf; path=/; Domain=.example.com"},
		Body: `<html style="height:100%"><head><META NAME="ROBOTS" CONTENT="NOINDEX, NOFOLLOW"><meta name="format-detection" content="telephone=no">` +
			`<meta name="viewport" content="initial-scale=1.0"><meta http-equiv="X-UA-Compatible" content="IE=edge,chrome=1"></head>` +
			`<body style="margin:0px;height:100%"><iframe id="main-iframe" src="/_Incapsula_Resource?CWUDNSAI=24&xinfo=12-34567890-0&incident_id=1234000000123456789-123456789012345678&edet=15&cinfo=04000000&rpinfo=0&mth=GET" ` +
			`frameborder=0 width="100%" height="100%" marginheight="0px" marginwidth="0px">Request unsuccessful. Incapsula incident ID: 1234000000123456789-123456789012345678</iframe></body></html>`},
}
