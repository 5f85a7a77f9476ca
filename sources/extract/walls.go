package extract

import (
	"regexp"
	"strconv"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"golang.org/x/net/html"

	"github.com/musecheck/muse/sources/sanitize"
)

// Wall is a paywall or registration wall in front of a page's text: what
// was read of the page is only what the wall leaves readable, its opening.
// It is set only when the page shows it (see wallSigns), never guessed from
// the publisher.
type Wall struct {
	// Kind is "paywall" or "registration wall".
	Kind string `json:"kind"`
	// Signs say what showed the wall, in the page's own terms:
	// "isAccessibleForFree: false", "the text ends in a subscribe box
	// (“Subscribe to continue reading”)", "Piano (TinyPass) paywall markup".
	Signs []string `json:"signs"`
}

// String is the wall and its signs: "paywall (isAccessibleForFree: false;
// Piano (TinyPass) paywall markup)".
func (w *Wall) String() string {
	if w == nil {
		return ""
	}
	if len(w.Signs) == 0 {
		return w.Kind
	}
	return w.Kind + " (" + strings.Join(w.Signs, "; ") + ")"
}

// Kinds of wall.
const (
	WallPaywall      = "paywall"
	WallRegistration = "registration wall"
)

// wallSigns is what a page shows of a wall, read from the page before its
// text is extracted (pruning drops the hidden elements a wall lives in).
type wallSigns struct {
	// declared: the page's structured data says its content is not free
	// (isAccessibleForFree false, on the page or on a part of it).
	declared bool
	// sections are the paragraphs of the parts the page declares not free
	// (hasPart's cssSelector), as the page holds them: when the extracted
	// text has them, the page served its whole text and the wall is the
	// reader's browser's business, not muse's.
	sections []string
	// wordCount is the number of words the page declares for its article
	// (schema.org wordCount), 0 when it declares none.
	wordCount int
	// box is the wall's own words found in a paywall element of the page
	// ("Subscribe to continue reading"), and boxKind its kind.
	box, boxKind string
	// vendors are the paywall vendors whose markup the page carries.
	vendors []string
	// amp is the page's AMP version (link rel="amphtml"), absolute.
	amp string
}

// readWallSigns reads the signs of a wall from the page and its JSON-LD.
func readWallSigns(gq *goquery.Document, ld []node, pageURL string) wallSigns {
	var w wallSigns
	for _, n := range ld {
		if !notFree(n["isAccessibleForFree"]) {
			continue
		}
		w.declared = true
		for _, sel := range cssSelectors(n["cssSelector"]) {
			gq.Find(sel).Each(func(_ int, s *goquery.Selection) {
				w.sections = append(w.sections, sectionParagraphs(s)...)
			})
		}
	}
	gq.Find(`[itemprop="isAccessibleForFree"]`).Each(func(_ int, s *goquery.Selection) {
		if notFree(s.AttrOr("content", s.Text())) {
			w.declared = true
		}
	})
	if n := mainNode(ld); n != nil {
		w.wordCount, _ = strconv.Atoi(n.str("wordCount"))
	}
	for _, v := range paywallVendors {
		if gq.Find(v.selector).Length() > 0 {
			w.vendors = append(w.vendors, v.name)
		}
	}
	gq.Find(wallElements).EachWithBreak(func(_ int, s *goquery.Selection) bool {
		if kind, phrase := wallPhrase(spacedText(s)); kind != "" {
			w.box, w.boxKind = phrase, kind
			return false
		}
		return true
	})
	if href, ok := gq.Find(`link[rel~="amphtml"]`).First().Attr("href"); ok {
		w.amp = absURL(unescapedURL(href), cmpOr(pageURL, canonicalLink(gq, pageURL)))
	}
	return w
}

func cmpOr(a, b string) string {
	if a != "" {
		return a
	}
	return b
}

// apply sets a's wall and AMP link, and drops the subscribe box that ends
// its paragraphs: it is the wall, not the story. It runs after the
// paragraphs are extracted and cleaned, before Text is made of them.
func (w wallSigns) apply(a *Article) {
	a.AMPURL = sanitize.String(w.amp)
	var signs []string
	kind := ""
	paras, boxKind, phrase := trailingBox(a.Paragraphs)
	a.Paragraphs = paras
	if w.declared {
		// The parts the page declares not free are its story even where
		// the extractor drops them for their "premium" or "paywall" class.
		a.Paragraphs = w.withSections(a.Paragraphs)
		if !w.sectionsRead(a.Paragraphs) && !w.countRead(a.Paragraphs) {
			kind = WallPaywall
			signs = append(signs, "isAccessibleForFree: false")
		}
	}
	switch {
	case boxKind != "":
		kind = cmpOr(kind, boxKind)
		signs = append(signs, "the text ends in a "+boxWord(boxKind)+" (“"+phrase+"”)")
	case w.box != "":
		kind = cmpOr(kind, w.boxKind)
		signs = append(signs, "a "+boxWord(w.boxKind)+" stands where the text stops (“"+w.box+"”)")
	}
	if kind == "" {
		return // a vendor's script alone is no wall: metered sites load it on every page
	}
	for _, v := range w.vendors {
		signs = append(signs, v+" paywall markup")
	}
	for i := range signs {
		signs[i] = sanitize.String(signs[i]) // the page's own words, as every text field of an Article
	}
	a.Wall = &Wall{Kind: kind, Signs: signs}
}

func boxWord(kind string) string {
	if kind == WallRegistration {
		return "sign-in box"
	}
	return "subscribe box"
}

// sectionsRead reports whether the extracted paragraphs hold the parts the
// page declares not free: at least half of their paragraphs of some length,
// and one at least.
func (w wallSigns) sectionsRead(paras []string) bool {
	text := fold(strings.Join(paras, "\n"))
	long, found := 0, 0
	for _, p := range w.sections {
		f := fold(p)
		if len(strings.Fields(f)) < minSectionWords {
			continue
		}
		long++
		if strings.Contains(text, f) {
			found++
		}
	}
	return long > 0 && found*2 >= long
}

// withSections adds to the paragraphs those of the declared sections they
// lack, in the page's order, after them.
func (w wallSigns) withSections(paras []string) []string {
	text := fold(strings.Join(paras, "\n"))
	for _, p := range w.sections {
		if f := fold(p); f != "" && !strings.Contains(text, f) {
			paras = append(paras, p)
		}
	}
	return paras
}

// minSectionWords: shorter paragraphs of a declared section (a heading, a
// caption, a button) are not counted when telling whether it was read.
const minSectionWords = 12

// countRead reports whether the extracted text has as many words as the
// page declares its article has.
func (w wallSigns) countRead(paras []string) bool {
	if w.wordCount <= 0 {
		return false
	}
	n := 0
	for _, p := range paras {
		n += len(strings.Fields(p))
	}
	return n >= w.wordCount
}

// notFree reports whether an isAccessibleForFree value says "not free":
// false, or the strings "false" and "no" in any case (schema.org's Boolean,
// and the "False" Google's examples write).
func notFree(v any) bool {
	switch x := v.(type) {
	case bool:
		return !x
	case string:
		s := strings.ToLower(strings.TrimSpace(x))
		s = strings.TrimPrefix(strings.TrimPrefix(s, "http://schema.org/"), "https://schema.org/")
		return s == "false" || s == "no"
	case []any:
		for _, e := range x {
			if notFree(e) {
				return true
			}
		}
	}
	return false
}

// cssSelectors are the selectors of a cssSelector value (a string or a
// list), those goquery can compile.
func cssSelectors(v any) []string {
	var out []string
	var add func(any)
	add = func(v any) {
		switch x := v.(type) {
		case string:
			if s := strings.TrimSpace(x); s != "" {
				out = append(out, s)
			}
		case []any:
			for _, e := range x {
				add(e)
			}
		}
	}
	add(v)
	return out
}

// sectionParagraphs are the paragraphs of an element: its <p>s, or its
// text when it has none.
func sectionParagraphs(s *goquery.Selection) []string {
	var out []string
	s.Find("p").Each(func(_ int, p *goquery.Selection) {
		out = append(out, strings.TrimSpace(p.Text()))
	})
	if len(out) == 0 {
		out = append(out, strings.TrimSpace(s.Text()))
	}
	return out
}

// spacedText is an element's text with its text nodes apart, so that a
// heading does not run into the paragraph after it.
func spacedText(s *goquery.Selection) string {
	var b strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			b.WriteString(n.Data)
			b.WriteByte(' ')
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	for _, n := range s.Nodes {
		walk(n)
	}
	return b.String()
}

// trailingBox finds a subscribe or sign-in box among the last paragraphs
// (within maxBoxParas of the end: the box's call in a paragraph of at most
// maxBoxWords/2 words, what follows it short), and returns the paragraphs
// before it, the wall's kind and the phrase that showed it; kind "" when
// the text does not end in one.
func trailingBox(paras []string) ([]string, string, string) {
	for i := max(len(paras)-maxBoxParas, 1); i < len(paras); i++ {
		kind, phrase := wallPhrase(paras[i])
		if kind == "" || len(strings.Fields(paras[i])) > maxBoxWords/2 {
			continue
		}
		for _, p := range paras[i+1:] {
			if len(strings.Fields(p)) > maxBoxWords {
				return paras, "", "" // story follows: the phrase is reported, not a wall
			}
		}
		return paras[:i], kind, phrase
	}
	return paras, "", ""
}

// A subscribe box is a few short paragraphs: a call to subscribe, a price,
// a sign-in link.
const (
	maxBoxParas = 4
	maxBoxWords = 60
)

// wallPhrase finds the words of a wall in a box's text: the kind of wall
// and the phrase as the page writes it, or "" when there is none.
func wallPhrase(text string) (kind, phrase string) {
	text = strings.Join(strings.Fields(text), " ")
	if len(strings.Fields(text)) > 3*maxBoxWords {
		return "", "" // a long text is a story, even one about paywalls
	}
	for _, p := range wallPhrases {
		if m := p.re.FindString(text); m != "" {
			return p.kind, m
		}
	}
	return "", ""
}

// wallPhrases are what walls say, in the languages muse reads most: each
// says that the rest of the text needs a subscription or an account, which
// a story about subscriptions does not say of itself.
var wallPhrases = []struct {
	kind string
	re   *regexp.Regexp
}{
	{WallRegistration, regexp.MustCompile(`(?i)\b(register|sign up|create an? (free )?account|log ?in|sign in)( for free| now)?( or (register|subscribe|sign up))? to (continue|keep) reading\b|\bregister (for free )?to read (the|this) (full |rest of the )?(article|story)\b`)},
	{WallPaywall, regexp.MustCompile(`(?i)\b(subscribe|become a subscriber|start your subscription)( now| today)? to (continue|keep) reading\b|\bsubscribe to read (the|this) (full |rest of the )?(article|story)\b|\bto (continue|keep) reading,? (please )?subscribe\b|\b(this|the) (article|story|content) is (only )?(available |reserved )?(exclusively )?(for|to) (paying |our )?(subscribers|members)\b|\bfor subscribers only\b|\byou('ve| have) reached (your|the) (limit of free articles|free article limit|monthly limit)\b|\bunlock (this|the full) (article|story)\b`)},
	{WallPaywall, regexp.MustCompile(`(?i)\b(dieser artikel ist|nur) für (abonnenten|abonnentinnen|abonnent\*innen)\b|\bréservé aux abonnés\b|\b(contenido )?exclusivo para (suscriptores|assinantes)\b|\briservato agli abbonati\b`)},
}

// wallElements are elements whose class or id names a wall: where a
// subscribe box stands when extraction does not keep it.
const wallElements = `[class*="paywall" i], [id*="paywall" i], [class*="regwall" i], [id*="regwall" i], ` +
	`[class*="piano" i], [id*="piano" i], [class*="tp-modal"], [class*="tp-container"], [id*="poool" i], ` +
	`[class*="zephr" i], [id*="zephr" i], [class*="laterpay" i]`

// paywallVendors are the paywall services whose markup names them: their
// script's address, or their containers.
var paywallVendors = []struct{ name, selector string }{
	{"Piano (TinyPass)", `script[src*="tinypass.com"], script[src*="piano.io"], [id^="piano-"], [class*="tp-modal"], [class*="tp-container"]`},
	{"Poool", `script[src*="poool.fr"], [id^="poool-"], [data-poool]`},
	{"Zephr", `script[src*="zephr"], [id^="zephr-"], [class*="zephr-"]`},
	{"Laterpay", `script[src*="laterpay.net"], [class*="laterpay"], [data-laterpay-connector]`},
}
