package export

import (
	"context"
	"html"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/rivo/uniseg"
	"golang.org/x/text/unicode/norm"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/sanitize"
)

// xURL is the pattern of X's URL evaluator (twitter/communitynotes
// evaluator/url_evaluator.py): an optional scheme and "www.", name
// characters, a dot and a top-level domain of two letters or more, and an
// optional path. The scheme is optional, so "Node.js" and "report.pdf" are
// URLs to X. Python's \w is Unicode-aware; so is the class here.
var xURL = regexp.MustCompile(`(?:https?://)?(?:www\.)?[\p{L}\p{N}_\-.~%]+\.[a-zA-Z]{2,}(?:/\S*)?`)

// xTrailing is what X's evaluator strips from the end of a URL to try it
// a second way.
const xTrailing = ".,;:!?)]}\"'"

// XLink is one token X's evaluator reads as a URL, with the variants it
// tries (as written, and without trailing punctuation): the note passes
// when one variant of every token answers 200.
type XLink struct {
	Token    string   `json:"token"`
	Variants []string `json:"variants"`
	// Bare: written without http:// or https://, a word X links anyway.
	Bare bool `json:"bare,omitempty"`
}

// XLinks are the tokens of text X treats as URLs, after undoing two
// layers of HTML escaping as X does.
func XLinks(text string) []XLink {
	text = html.UnescapeString(html.UnescapeString(text))
	var out []XLink
	for _, m := range xURL.FindAllString(text, -1) {
		l := XLink{Token: m, Variants: []string{m}}
		if s := strings.TrimRight(m, xTrailing); s != m {
			l.Variants = append(l.Variants, s)
		}
		lower := strings.ToLower(m)
		l.Bare = !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://")
		out = append(out, l)
	}
	return out
}

// XLength counts text as X counts a note: each token X reads as a URL
// counts 1; the rest, normalised to NFC, in user-perceived characters.
func XLength(text string) int {
	s := norm.NFC.String(strings.TrimSpace(text))
	n, prev := 0, 0
	for _, loc := range xURL.FindAllStringIndex(s, -1) {
		n += uniseg.GraphemeClusterCount(s[prev:loc[0]]) + 1
		prev = loc[1]
	}
	return n + uniseg.GraphemeClusterCount(s[prev:])
}

// Problem is one reason X would not admit the note, and how to fix it.
type Problem struct {
	Rule string `json:"rule"`
	What string `json:"what"`
	Fix  string `json:"fix"`
}

// Preflight is the offline check of a note against X's admission rules.
type Preflight struct {
	Length   int       `json:"length"`
	Links    []XLink   `json:"links"`
	Problems []Problem `json:"problems,omitempty"`
	// Live is the answer of every link, when they were fetched.
	Live []LinkCheck `json:"live,omitempty"`
}

// OK reports whether the note passed every check made.
func (p Preflight) OK() bool { return len(p.Problems) == 0 }

var hashtag = regexp.MustCompile(`(?:^|[\s(])#[\p{L}\p{N}_]`)

// isEmoji reports whether r is a pictographic symbol or emoji presentation
// mark, which the note template forbids.
func isEmoji(r rune) bool {
	return r >= 0x1F000 && r <= 0x1FAFF || r >= 0x2600 && r <= 0x27BF || r == 0xFE0F ||
		r >= 0x2B00 && r <= 0x2BFF || r >= 0x1F1E6 && r <= 0x1F1FF
}

// filler are the phrases the template note writer's prompt forbids
// (twitter/communitynotes template-api-note-writer: "no unnecessary
// words", no "[Source]" before a URL) and that raters read as padding.
var filler = []string{"it's important to note", "it is important to note", "it's worth noting", "it is worth noting",
	"it should be noted", "please note", "[source]", "(source)", "source:"}

// refusals open what the template writer answers instead of a note.
var refusals = []string{"no note needed", "not enough evidence"}

// PreflightNote checks a note's text and fields offline as X's admission
// would: the verdict allows a note (not "not enough evidence", a refuting
// or context page quoted), at least one URL, 1 to NoteLimit characters by
// X's count, no hashtag, emoji, "Community Note:" prefix or filler, not a
// refusal written as the note, written in the post's language (postLang,
// when known; the note's own language only when it reads reliably), and
// every bare word X will read as a link named, since it must answer 200
// too.
func PreflightNote(text string, f pipeline.NoteFields, postLang string) Preflight {
	p := Preflight{Length: XLength(text), Links: XLinks(text)}
	add := func(rule, what, fix string) { p.Problems = append(p.Problems, Problem{rule, what, fix}) }
	if f.Abstain != "" {
		add("abstain", f.Abstain, "write no note; find a page that refutes the post or adds context, or keep the check as it is")
	}
	if f.Classification == pipeline.ClassMisleading && len(f.Tags) == 0 {
		add("tags", "a misleading note has no misleading tag", "choose at least one tag")
	}
	switch {
	case p.Length == 0:
		add("length", "the note is empty", "write the note")
	case p.Length > NoteLimit:
		add("length", "the note is "+strconv.Itoa(p.Length)+" characters by X's count, "+strconv.Itoa(p.Length-NoteLimit)+" over "+strconv.Itoa(NoteLimit), "shorten it (each link counts 1)")
	}
	if len(p.Links) == 0 {
		add("url", "the note cites no URL, and X rejects a note without one", "add the address of the page that refutes the post or adds context")
	}
	for _, l := range p.Links {
		if l.Bare {
			add("bare_link", "X reads “"+l.Token+"” as a link, and it must answer 200 like any source", "write it another way (“"+strings.Replace(l.Token, ".", " ", 1)+"”) or give its full https:// address")
		}
	}
	if hashtag.MatchString(text) {
		add("hashtag", "the note holds a hashtag", "remove the #")
	}
	if strings.ContainsFunc(text, isEmoji) {
		add("emoji", "the note holds an emoji or pictograph", "remove it")
	}
	head := strings.ToLower(strings.TrimLeftFunc(text, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsPunct(r) }))
	if strings.HasPrefix(head, "community note") {
		add("prefix", "the note opens with “Community Note”", "start with what the post gets wrong")
	}
	for _, r := range refusals {
		if strings.HasPrefix(head, r) {
			add("refusal", "the note is a refusal (“"+strings.ToUpper(r)+"”), not a note", "write no note for this post")
		}
	}
	low := strings.ToLower(strings.ReplaceAll(text, "’", "'"))
	for _, ph := range filler {
		if strings.Contains(low, ph) {
			add("filler", "the note holds “"+ph+"”, words raters read as padding", "remove them and say the fact")
		}
	}
	if want := lang.Base(postLang); want != "" {
		if d := lang.Detect(text); d.Reliable && d.Code != "" && lang.Base(d.Code) != want {
			add("language", "the note reads as "+lang.Name(d.Code)+" and the post is in "+lang.Name(want)+"; X shows a note to the post's readers",
				"write it in "+lang.Name(want)+" (muse check --correction-language "+want+", or edit the correction)")
		}
	}
	return p
}

// LinkCheck is what one link answered when fetched.
type LinkCheck struct {
	Token  string `json:"token"`
	URL    string `json:"url"`    // the address fetched last
	Status int    `json:"status"` // 0: no answer
	Error  string `json:"error,omitempty"`
	OK     bool   `json:"ok"`
}

// liveRetryWaits are the waits before each retry of a link whose answer
// may be passing (none, 408, 425, 429 or 5xx): X's evaluator "retries for
// a short time" when a link does not answer 200. A 404 or 403 is final.
var liveRetryWaits = []time.Duration{time.Second, 2 * time.Second}

func transient(lc LinkCheck) bool {
	s := lc.Status
	return s == 0 || s == http.StatusRequestTimeout || s == http.StatusTooEarly || s == http.StatusTooManyRequests || s >= 500
}

// LivePreflight fetches every link of p's note through client (the safe
// fetcher's), each variant by HEAD and, unless that answers 200, by GET,
// following redirects, and again after liveRetryWaits while the answer
// may be passing; a token with no variant answering 200 is a problem, as
// it is for X's evaluator. A bare token is fetched as https.
func LivePreflight(ctx context.Context, client *http.Client, p *Preflight) {
	for _, l := range p.Links {
		var last LinkCheck
	tries:
		for try := 0; ; try++ {
			for _, v := range l.Variants {
				u := v
				if l.Bare {
					u = "https://" + v
				}
				last = fetchStatus(ctx, client, l.Token, u)
				if last.OK {
					break tries
				}
			}
			if try == len(liveRetryWaits) || !transient(last) || ctx.Err() != nil {
				break
			}
			select {
			case <-ctx.Done():
			case <-time.After(liveRetryWaits[try]):
			}
		}
		p.Live = append(p.Live, last)
		if !last.OK {
			what := "“" + l.Token + "” does not answer 200"
			if last.Status != 0 {
				what += " (it answers " + strconv.Itoa(last.Status) + ")"
			} else if last.Error != "" {
				what += " (" + last.Error + ")"
			}
			p.Problems = append(p.Problems, Problem{"live_url", what, "cite a page that answers, or remove the token"})
		}
	}
}

func fetchStatus(ctx context.Context, client *http.Client, token, u string) LinkCheck {
	lc := LinkCheck{Token: token, URL: u}
	for _, method := range []string{http.MethodHead, http.MethodGet} {
		req, err := http.NewRequestWithContext(ctx, method, u, nil)
		if err != nil {
			lc.Error = err.Error()
			return lc
		}
		resp, err := client.Do(req)
		if err != nil {
			lc.Status, lc.Error = 0, err.Error()
			continue
		}
		resp.Body.Close()
		lc.Status, lc.Error, lc.URL = resp.StatusCode, "", resp.Request.URL.String()
		if resp.StatusCode == http.StatusOK {
			lc.OK = true
			return lc
		}
	}
	return lc
}

// NoteDoc is a note as X's API takes it, with muse's pre-flight: the
// JSON form of the note export.
type NoteDoc struct {
	Text           string            `json:"text"`
	Classification string            `json:"classification,omitempty"`
	MisleadingTags []string          `json:"misleading_tags,omitempty"`
	Reasons        map[string]string `json:"tag_reasons,omitempty"`
	By             string            `json:"by,omitempty"` // evidence|checker
	Preflight      Preflight         `json:"preflight"`
}

// NoteFor is the check's note (Note), its fields (Check.NoteFields) and
// its pre-flight, live when client is not nil (LivePreflight). When Note
// refuses, Text is empty, its reason is the first problem, and the other
// rules are checked on the correction's plain text.
func NoteFor(ctx context.Context, c *pipeline.Check, client *http.Client) NoteDoc {
	f := c.NoteFields()
	d := NoteDoc{Classification: f.Classification, MisleadingTags: f.TagNames(), By: f.By}
	for _, t := range f.Tags {
		if d.Reasons == nil {
			d.Reasons = map[string]string{}
		}
		d.Reasons[t.Tag] = t.Reason
	}
	text, err := Note(c)
	d.Text = text
	if err != nil {
		// X's other rules are said of the correction as it would read.
		text = plainText(sanitize.String(c.Correction.Text))
	}
	d.Preflight = PreflightNote(text, f, c.Post.Language)
	if err != nil {
		d.Preflight.Problems = append([]Problem{{Rule: "note", What: err.Error(), Fix: "edit the correction"}}, d.Preflight.Problems...)
	}
	if client != nil && err == nil {
		LivePreflight(ctx, client, &d.Preflight)
	}
	return d
}
