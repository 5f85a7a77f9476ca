// Package links finds every link in a text in any form a reader or a
// renderer would follow, so that a correction can keep only the links it
// may cite (Remove) and name the rest.
//
// Recognised: URLs with any scheme spelled in any case, with spaces around
// the colon, backslashes or a missing slash ("HTTPS://", "https ://",
// "https:\\host", "https:/\host", "https:host.com"); javascript:, vbscript:,
// data: and file: URLs; protocol-relative "//host/…"; bare hosts with
// "www." or a path ("www.example.org", "evil-proof.com/x", "1.2.3.4/x"),
// judged by the public-suffix list so that "e.g.", "U.S.", "3.5" and
// "Node.js" are text (a bare "example.com" without either is taken for a
// name in prose, as in "Reuters.com reported"); Markdown inline links and images "[t](u)",
// reference links "[t][1]", "[t][]", "[1]" with their "[1]: u"
// definitions; autolinks "<u>"; raw HTML "<a href>…</a>" and any tag with
// a src, href or action. Fullwidth and other compatibility forms
// ("ｅｘａｍｐｌｅ．ｃｏｍ／ｘ", "。" for the dot), zero-width characters
// inside a link, a letter or digit written percent-encoded ("%68ttps://",
// "%65vil.com") and internationalised host names are read as a browser
// reads them.
//
// FindLinked adds what X links on its own: a bare host name without a path
// under a generic top-level domain ("evil.com", "Reuters.com"), X's URL
// pattern taking the scheme as optional.
package links

import (
	"html"
	"net/url"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode/utf8"

	"golang.org/x/net/idna"
	"golang.org/x/net/publicsuffix"
	"golang.org/x/text/unicode/norm"
)

// Kind says in which form a link was written.
type Kind string

// The forms Find recognises.
const (
	KindURL        Kind = "url"               // scheme:… ("https://…", "javascript:…")
	KindBare       Kind = "bare"              // "www.example.org", "example.org/path"
	KindRelative   Kind = "protocol-relative" // "//example.org/path"
	KindMarkdown   Kind = "markdown"          // "[label](url)", "![alt](url)"
	KindReference  Kind = "reference"         // "[label][id]", "[id]" with a definition
	KindDefinition Kind = "definition"        // a "[id]: url" line
	KindAutolink   Kind = "autolink"          // "<url>"
	KindHTML       Kind = "html"              // "<a href=…>label</a>", "<img src=…>"
)

// Link is one link in a text.
type Link struct {
	// Start and End are the byte offsets of the whole link in the text,
	// markup included: text[Start:End] is what Remove takes out.
	Start, End int
	// URL is where the link goes, normalised: a scheme spelled out
	// ("https:" for bare and protocol-relative links), scheme and host in
	// lower case, the host in ASCII (IDNA), backslashes read as slashes,
	// no user name or password.
	URL  string
	Kind Kind
	// Label is the text a reader sees in place of the link (a Markdown or
	// HTML link's text), kept when the link is removed; "" otherwise.
	Label string
}

// folded is a text with every character in the form a browser reads it
// (fullwidth → ASCII, ideographic full stop → ".", zero-width removed),
// with the offsets back into the original.
type folded struct {
	s          string
	start, end []int // for each byte of s, the original rune's offsets
	orig       string
}

func fold(text string) *folded {
	f := &folded{orig: text}
	var b strings.Builder
	b.Grow(len(text))
	for i := 0; i < len(text); {
		r, n := utf8.DecodeRuneInString(text[i:])
		rep := text[i : i+n]
		if r >= utf8.RuneSelf {
			rep = foldRune(r)
		} else if c, ok := percentAlnum(text[i:]); ok {
			rep, n = c, 3
		}
		for k := 0; k < len(rep); k++ {
			f.start = append(f.start, i)
			f.end = append(f.end, i+n)
		}
		b.WriteString(rep)
		i += n
	}
	f.s = b.String()
	return f
}

// percentAlnum decodes a percent-encoded ASCII letter or digit at the
// start of s ("%68" → "h"): a browser and X's link pattern read
// "%68ttps://" and "%65vil.com" as the link they spell. Other escapes
// ("%20", "%2F") stay as written.
func percentAlnum(s string) (string, bool) {
	if len(s) < 3 || s[0] != '%' {
		return "", false
	}
	v, err := strconv.ParseUint(s[1:3], 16, 8)
	if err != nil {
		return "", false
	}
	c := byte(v)
	if 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9' {
		return string(c), true
	}
	return "", false
}

// foldRune is how a URL parser reads one non-ASCII character.
func foldRune(r rune) string {
	switch r {
	case '\u200b', '\u200c', '\u200d', '\u2060', '\ufeff', '\u00ad':
		return ""
	case '\u3002', '\uff61', '\u2024', '\ufe52':
		return "."
	case '\u2044', '\u2215', '\u29f8':
		return "/"
	case '\u2216', '\u29f9':
		return "\\"
	}
	s := string(r)
	if n := norm.NFKC.String(s); n != s && isASCII(n) {
		return n
	}
	return s
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= utf8.RuneSelf {
			return false
		}
	}
	return true
}

// span returns the original offsets of folded bytes [s, e).
func (f *folded) span(s, e int) (int, int) {
	if s >= e {
		return f.start[s], f.start[s]
	}
	return f.start[s], f.end[e-1]
}

const urlChars = `[^\s<>"'\x60{}|^\[\]]`

var (
	// A web URL: scheme, colon, up to three slashes or backslashes, all
	// with optional blanks between (a browser skips them all).
	reWeb = regexp.MustCompile(`(?i)\b(https?|ftps?|wss?)[ \t]*:[ \t]*((?:[/\\][ \t]*){0,3})(` + urlChars + `+)`)
	// Any other scheme followed by "//".
	reOther = regexp.MustCompile(`(?i)\b([a-z][a-z0-9+.\-]{0,20})[ \t]*:[ \t]*[/\\]{2}(` + urlChars + `+)`)
	// Schemes that run code or carry a document of their own.
	reScript = regexp.MustCompile(`(?i)\b(javascript|vbscript|livescript|data|file)[ \t]*:[ \t]*(\S+)`)
	reData   = regexp.MustCompile(`(?i)^(?:[a-z]+/[a-z0-9.+\-]+|,|;base64)`)
	// "//host/…" after a blank, a bracket, a quote or "=".
	reRelative = regexp.MustCompile(`(?:^|[\s(\[<"'=])(//([^\s/<>"'\x60{}|^\[\]\\]+)` + urlChars + `*)`)
	// A host name (or IPv4 address) with an optional port and path.
	reBare = regexp.MustCompile(`(?i)(?:^|[^\p{L}\p{N}._/\\\-])((?:[\p{L}\p{N}](?:[\p{L}\p{N}\-]*[\p{L}\p{N}])?\.)+[\p{L}\p{N}\-]*[\p{L}\p{N}])((?::\d{1,5})?(?:[/?#]` + urlChars + `*)?)`)
	reIPv4 = regexp.MustCompile(`^\d{1,3}(?:\.\d{1,3}){3}$`)

	// Markdown: an inline link or image, its destination possibly in <…>
	// and with a title; a destination may hold balanced parentheses.
	reMarkdown   = regexp.MustCompile(`(!?)\[([^\]\n]*)\]\([ \t]*(<[^>\n]*>|(?:[^\s()]|\([^\s()]*\))*)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*\)`)
	reDefinition = regexp.MustCompile(`(?m)^[ \t]{0,3}\[([^\]\n]+)\]:[ \t]*(<[^>\n]*>|\S+)(?:[ \t]+(?:"[^"\n]*"|'[^'\n]*'|\([^)\n]*\)))?[ \t]*(?:\n|$)`)
	reFullRef    = regexp.MustCompile(`\[([^\]\n]+)\][ \t]?\[([^\]\n]*)\]`)
	reShortRef   = regexp.MustCompile(`\[([^\]\n]+)\]`)
	reAutolink   = regexp.MustCompile(`<([a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^\s<>]*)>`)
	reAnchor     = regexp.MustCompile(`(?is)<a\b[^>]*?\bhref\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)[^>]*>(.*?)</a\s*>`)
	reTag        = regexp.MustCompile(`(?is)<[a-z][a-z0-9]*\b[^>]*?\b(?:href|src|srcset|action|formaction|data|poster|background)\s*=\s*("[^"]*"|'[^']*'|[^\s>]+)[^>]*>`)
	reTags       = regexp.MustCompile(`(?s)<[^>]*>`)
)

// Find returns every link in text, in order, none overlapping another.
func Find(text string) []Link { return find(text, false) }

// FindLinked is Find and every bare host name X would link without a
// path: X's URL pattern ([\w\-._~%]+\.[a-zA-Z]{2,}(/\S*)?) takes the scheme
// as optional, and like X it takes a name under a generic top-level domain
// ("evil.com", "Reuters.com", "news.org") or .co/.tv as a link, but not
// one under another country code without a path ("file.py", "index.md"),
// nor a suffix that is no top-level domain ("Node.js", "ASP.NET" is one:
// .net), nor initials ("U.S.", "e.g."). Use it where the text is to be
// published on X, so what X would link is judged as a link.
func FindLinked(text string) []Link { return find(text, true) }

func find(text string, x bool) []Link {
	f := fold(text)
	var c collector
	c.f, c.x = f, x
	// Markup first: a Markdown or HTML link holds a URL that is part of it.
	defs := c.definitions()
	c.markdown()
	c.references(defs)
	c.html()
	c.autolinks()
	c.schemes()
	c.relative()
	c.bare()
	sort.Slice(c.links, func(i, j int) bool { return c.links[i].Start < c.links[j].Start })
	return c.links
}

type collector struct {
	f     *folded
	x     bool // also bare host names without a path (FindLinked)
	links []Link
	taken []bool // folded bytes already part of a link
}

// add records the link at folded offsets [s, e) unless it overlaps one.
func (c *collector) add(s, e int, u string, k Kind, label string) {
	if s >= e {
		return
	}
	if c.taken == nil {
		c.taken = make([]bool, len(c.f.s))
	}
	for i := s; i < e; i++ {
		if c.taken[i] {
			return
		}
	}
	for i := s; i < e; i++ {
		c.taken[i] = true
	}
	os, oe := c.f.span(s, e)
	c.links = append(c.links, Link{Start: os, End: oe, URL: u, Kind: k, Label: label})
}

// origText is the original text behind folded offsets [s, e).
func (c *collector) origText(s, e int) string {
	if s >= e {
		return ""
	}
	os, oe := c.f.span(s, e)
	return c.f.orig[os:oe]
}

func refKey(label string) string { return strings.ToLower(strings.Join(strings.Fields(label), " ")) }

func (c *collector) definitions() map[string]string {
	defs := map[string]string{}
	for _, m := range reDefinition.FindAllStringSubmatchIndex(c.f.s, -1) {
		dest := strings.Trim(c.f.s[m[4]:m[5]], "<>")
		u := Normalise(dest)
		key := refKey(c.f.s[m[2]:m[3]])
		if _, dup := defs[key]; !dup {
			defs[key] = u
		}
		c.add(m[0], m[1], u, KindDefinition, "")
	}
	return defs
}

func (c *collector) markdown() {
	for _, m := range reMarkdown.FindAllStringSubmatchIndex(c.f.s, -1) {
		dest := strings.Trim(c.f.s[m[6]:m[7]], "<>")
		label := c.origText(m[4], m[5])
		if m[3] > m[2] { // an image: its alt text is no link text
			label = ""
		}
		c.add(m[0], m[1], Normalise(dest), KindMarkdown, label)
	}
}

func (c *collector) references(defs map[string]string) {
	if len(defs) == 0 {
		return
	}
	for _, m := range reFullRef.FindAllStringSubmatchIndex(c.f.s, -1) {
		id := c.f.s[m[4]:m[5]]
		if id == "" {
			id = c.f.s[m[2]:m[3]]
		}
		if u, ok := defs[refKey(id)]; ok {
			c.add(m[0], m[1], u, KindReference, c.origText(m[2], m[3]))
		}
	}
	for _, m := range reShortRef.FindAllStringSubmatchIndex(c.f.s, -1) {
		if u, ok := defs[refKey(c.f.s[m[2]:m[3]])]; ok {
			label := c.origText(m[2], m[3])
			if isMarker(label) {
				label = "" // "[2]" or "[^2]" is a footnote mark, not words
			}
			c.add(m[0], m[1], u, KindReference, label)
		}
	}
}

func isMarker(label string) bool {
	l := strings.TrimPrefix(strings.TrimSpace(label), "^")
	if l == "" || len(l) > 4 {
		return l == ""
	}
	for _, r := range l {
		if !('0' <= r && r <= '9' || 'a' <= r && r <= 'z' || 'A' <= r && r <= 'Z') {
			return false
		}
	}
	return len(l) <= 2 || strings.Trim(l, "0123456789") == ""
}

func (c *collector) html() {
	for _, m := range reAnchor.FindAllStringSubmatchIndex(c.f.s, -1) {
		dest := html.UnescapeString(strings.Trim(c.f.s[m[2]:m[3]], `"'`))
		label := strings.TrimSpace(html.UnescapeString(reTags.ReplaceAllString(c.origText(m[4], m[5]), "")))
		c.add(m[0], m[1], Normalise(dest), KindHTML, label)
	}
	for _, m := range reTag.FindAllStringSubmatchIndex(c.f.s, -1) {
		dest := html.UnescapeString(strings.Trim(c.f.s[m[2]:m[3]], `"'`))
		c.add(m[0], m[1], Normalise(dest), KindHTML, "")
	}
}

func (c *collector) autolinks() {
	for _, m := range reAutolink.FindAllStringSubmatchIndex(c.f.s, -1) {
		c.add(m[0], m[1], Normalise(c.f.s[m[2]:m[3]]), KindAutolink, "")
	}
}

func (c *collector) schemes() {
	for _, m := range reWeb.FindAllStringSubmatchIndex(c.f.s, -1) {
		rest := c.f.s[m[6]:m[7]]
		end := m[6] + len(trimEnd(rest))
		if end == m[6] {
			continue
		}
		if m[5] == m[4] && !strings.Contains(c.f.s[m[6]:end], ".") {
			continue // "http:foo" without slashes and without a dot is prose
		}
		c.add(m[0], end, Normalise(c.f.s[m[0]:end]), KindURL, "")
	}
	for _, m := range reOther.FindAllStringSubmatchIndex(c.f.s, -1) {
		end := m[4] + len(trimEnd(c.f.s[m[4]:m[5]]))
		if end > m[4] {
			c.add(m[0], end, Normalise(c.f.s[m[0]:end]), KindURL, "")
		}
	}
	for _, m := range reScript.FindAllStringSubmatchIndex(c.f.s, -1) {
		scheme := strings.ToLower(c.f.s[m[2]:m[3]])
		rest := c.f.s[m[4]:m[5]]
		spaced := m[4] > 0 && (c.f.s[m[4]-1] == ' ' || c.f.s[m[4]-1] == '\t')
		switch {
		case scheme == "data" && !reData.MatchString(rest):
			continue
		case scheme == "file" && !strings.ContainsAny(rest[:1], `/\`):
			continue
		case spaced && !strings.ContainsAny(rest, "(%=;"):
			continue // "written in JavaScript: it runs" is prose; "javascript: alert(1)" is not
		}
		end := m[4] + len(trimEnd(rest))
		c.add(m[0], end, Normalise(c.f.s[m[0]:end]), KindURL, "")
	}
}

func (c *collector) relative() {
	for _, m := range reRelative.FindAllStringSubmatchIndex(c.f.s, -1) {
		host := c.f.s[m[4]:m[5]]
		if h, _, err := splitPort(host); err == nil {
			host = h
		}
		if !isHost(host) {
			continue
		}
		end := m[2] + len(trimEnd(c.f.s[m[2]:m[3]]))
		c.add(m[2], end, Normalise("https:"+c.f.s[m[2]:end]), KindRelative, "")
	}
}

func (c *collector) bare() {
	for _, m := range reBare.FindAllStringSubmatchIndex(c.f.s, -1) {
		host, rest := c.f.s[m[2]:m[3]], c.f.s[m[4]:m[5]]
		www := len(host) > 4 && strings.EqualFold(host[:4], "www.")
		if rest == "" && !www && !(c.x && xLinksBare(host)) {
			continue // "example.com" alone is a name in prose; see the package comment
		}
		if m[2] > 0 && c.f.s[m[2]-1] == '@' && (rest == "" || rest[0] != '/') {
			continue // an e-mail address; "user@host/path" is a link to host
		}
		if !isHost(host) {
			continue
		}
		end := m[4] + len(trimEnd(rest))
		c.add(m[2], end, Normalise("https://"+c.f.s[m[2]:end]), KindBare, "")
	}
}

// xLinksBare says whether X links host written alone, without a scheme or
// a path: its top-level domain is a generic one (three letters or more) or
// .co or .tv; a country code otherwise needs a path.
func xLinksBare(host string) bool {
	tld := strings.ToLower(host[strings.LastIndexByte(host, '.')+1:])
	return len(tld) > 2 || tld == "co" || tld == "tv"
}

// isHost reports whether h is a host a link could name: an IPv4 address,
// or a name under a suffix on the public-suffix list with a label of its
// own ("node.js": no such suffix; "co.uk": no label of its own).
func isHost(h string) bool {
	h = strings.TrimSuffix(strings.ToLower(h), ".")
	if reIPv4.MatchString(h) || h == "localhost" {
		return true
	}
	a, err := idna.Lookup.ToASCII(h)
	if err != nil || !strings.Contains(a, ".") {
		return false
	}
	suffix, icann := publicsuffix.PublicSuffix(a)
	if !icann && !strings.Contains(suffix, ".") {
		return false // not on the list: the default rule
	}
	_, err = publicsuffix.EffectiveTLDPlusOne(a)
	return err == nil
}

func splitPort(hostport string) (string, string, error) {
	if i := strings.LastIndexByte(hostport, ':'); i >= 0 && !strings.Contains(hostport[i:], "]") {
		return hostport[:i], hostport[i+1:], nil
	}
	return hostport, "", nil
}

// trimEnd drops what ends the sentence rather than the URL: punctuation,
// and a closing bracket without its opening one.
func trimEnd(u string) string {
	for {
		n := len(u)
		u = strings.TrimRight(u, ".,;:!?*_'\"")
		if strings.HasSuffix(u, ")") && strings.Count(u, "(") < strings.Count(u, ")") {
			u = u[:len(u)-1]
		}
		if len(u) == n {
			return u
		}
	}
}

// reSep is a scheme's separator as written: blanks around the colon and
// any run of slashes and backslashes.
var reSep = regexp.MustCompile(`^(?i)([a-z][a-z0-9+.\-]*)[ \t]*:[ \t]*((?:[/\\][ \t]*)*)`)

var webSchemes = map[string]bool{"http": true, "https": true, "ftp": true, "ftps": true, "ws": true, "wss": true}

// Normalise spells a link destination the way Link.URL holds it (see
// there). A destination without a scheme is taken as a host name when it
// starts with one ("example.org/x" → "https://example.org/x") and is
// returned as it is otherwise (a relative reference such as "/x").
func Normalise(dest string) string {
	f := fold(strings.TrimSpace(dest))
	d := f.s
	m := reSep.FindStringSubmatch(d)
	if m == nil {
		if strings.HasPrefix(d, "//") || strings.HasPrefix(d, `\\`) {
			return Normalise("https:" + d)
		}
		if host, _, _ := strings.Cut(d, "/"); isHost(strings.SplitN(host, ":", 2)[0]) {
			return Normalise("https://" + d)
		}
		return d
	}
	scheme, rest := strings.ToLower(m[1]), d[len(m[0]):]
	if !webSchemes[scheme] && !strings.Contains(m[2], "/") && !strings.Contains(m[2], `\`) {
		return scheme + ":" + rest // javascript:…, data:…, mailto:…
	}
	if !webSchemes[scheme] && scheme != "file" {
		return scheme + "://" + rest
	}
	// A browser reads backslashes in a web URL's authority and path as
	// slashes; the query and fragment keep theirs.
	pathEnd := strings.IndexAny(rest, "?#")
	if pathEnd < 0 {
		pathEnd = len(rest)
	}
	rest = strings.ReplaceAll(rest[:pathEnd], `\`, "/") + rest[pathEnd:]
	if scheme == "file" {
		return "file:///" + strings.TrimLeft(rest, "/")
	}
	u, err := url.Parse(scheme + "://" + strings.TrimLeft(rest, "/"))
	if err != nil || u.Host == "" {
		return scheme + "://" + strings.ToLower(rest)
	}
	u.User = nil
	host := strings.ToLower(u.Hostname())
	if a, err := idna.Lookup.ToASCII(host); err == nil {
		host = a
	}
	if p := u.Port(); p != "" {
		host += ":" + p
	}
	u.Host = host
	return u.String()
}
