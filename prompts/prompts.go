// Package prompts holds muse's prompt templates (embedded *.tmpl files) and
// the typed builders and parsers around them, one pair per model task of the
// Muse method (Zhou et al., arXiv 2403.11169):
//
//	ImageDescription → ParseImageDescription  informative description of an image
//	Queries          → ParseQueries           3 (text) or 5 (with images) search queries
//	Evidence         → ParseEvidence          refuting and context paragraphs of one page
//	EvidencePages    → ParseEvidencePages     the same for several pages in one call
//	Correction                                the "This post is …" correction (guarded by the engine)
//
// The instructions follow the paper's prompts, rewritten for any platform
// (a "post", not a "tweet"). Builders return chat messages for
// sources/llm; the *Schema functions give the JSON schema to request
// structured output, whose Fallback asks for the paper's plain-text format
// when a server has no schema support. Parsers accept both forms.
//
// Text that comes from outside (post text, author fields, image notes, page
// text, quotes) is put inside labelled <<<BEGIN X>>> … <<<END X>>> blocks, and
// every "<<<" or ">>>" inside that text is neutralised first, so a page
// cannot close its block early and pose as instructions; the system message
// tells the model that block content is data.
package prompts

import (
	"bytes"
	"embed"
	"fmt"
	"strings"
	"text/template"
	"time"
	"unicode"

	"github.com/musecheck/muse/sources/llm"
	openai "github.com/sashabaranov/go-openai"
)

//go:embed templates/*.tmpl
var files embed.FS

// Read-only after package initialisation; Execute is safe for concurrent use.
// The templates are embedded, so a parse error is caught by the tests.
var tmpls = template.Must(template.New("prompts").Funcs(template.FuncMap{
	"oneLine":  oneLine,
	"handle":   handle,
	"when":     when,
	"day":      day,
	"join":     strings.Join,
	"seq":      seq,
	"inc":      func(i int) int { return i + 1 },
	"sourceID": SourceID,
	"weekday":  weekday,
	"withTime": func(p Post) postView { return postView{Post: p} },
	"dayOnly":  func(p Post) postView { return postView{Post: p, DayOnly: true} },
}).ParseFS(files, "templates/*.tmpl"))

// The paper's numbers.
const (
	QueriesText      = 3     // queries for a text-only post
	QueriesWithImage = 5     // queries when the post has images
	MaxArticleChars  = 20000 // article text sent for evidence extraction
	MaxQuotesPerKind = 2     // refuting and context paragraphs kept per page
)

// Post is the post as the prompts show it.
type Post struct {
	Text              string
	Author            string // display name
	Handle            string // with or without "@"
	AuthorDescription string // the author's profile bio
	Platform          string // "X", "Facebook", "Bluesky"…; empty means "social media"
	URL               string
	PostedAt          time.Time // zero when unknown
	// ImageDescriptions are the informative descriptions of the attached
	// images (from ImageDescription or a person).
	ImageDescriptions []string
	// Video is the informative description of the attached video: a line
	// for each keyframe with its time and what is said, with its times.
	Video string
	// Language names the post's language by name and code, "Spanish (es)"
	// (lang.Label): small local models follow that far better than "the
	// language of the post". Empty, or English, says nothing.
	Language string
	// Context is what the post points at — the article it shares, the
	// post it quotes, the posts it replies to — shown in a block of its
	// own after the post, never as the author's words.
	Context []ContextItem
	// Claims are the post's checkable claims, numbered from 1 in the
	// evidence and correction prompts; none means the post is one claim.
	Claims []string
}

// ContextItem is one thing the post points at, as the prompts show it.
type ContextItem struct {
	Label    string // whose words: "The article this post shares", "The post this replies to"…
	Who      string // its author, or the article's site
	URL      string
	PostedAt time.Time // zero when unknown
	Text     string
}

// postView is a post as the post template shows it: with its time of day
// where relative times are resolved (queries: "this morning"), by its day
// alone where only its date matters (evidence, correction).
type postView struct {
	Post
	DayOnly bool
}

func messages(task string, data any) ([]llm.Message, error) {
	sys, err := render("system.tmpl", nil)
	if err != nil {
		return nil, err
	}
	user, err := render(task+".tmpl", data)
	if err != nil {
		return nil, err
	}
	return []llm.Message{
		{Role: openai.ChatMessageRoleSystem, Content: sys},
		{Role: openai.ChatMessageRoleUser, Content: user},
	}, nil
}

func render(name string, data any) (string, error) {
	var b bytes.Buffer
	if err := tmpls.ExecuteTemplate(&b, name, data); err != nil {
		return "", fmt.Errorf("prompts: render %s: %w", name, err)
	}
	return strings.TrimSpace(b.String()), nil
}

func cleanPost(p Post) Post {
	c := Post{
		Text:              strings.TrimSpace(clean(p.Text)),
		Author:            oneLine(clean(p.Author)),
		Handle:            oneLine(clean(p.Handle)),
		AuthorDescription: clean(p.AuthorDescription),
		Platform:          oneLine(clean(p.Platform)),
		URL:               oneLine(clean(p.URL)),
		PostedAt:          p.PostedAt,
		Language:          oneLine(clean(p.Language)),
		Video:             strings.TrimSpace(clean(p.Video)),
	}
	for _, d := range p.ImageDescriptions {
		if s := strings.TrimSpace(clean(d)); s != "" {
			c.ImageDescriptions = append(c.ImageDescriptions, s)
		}
	}
	for _, it := range p.Context {
		if t := strings.TrimSpace(clean(it.Text)); t != "" {
			c.Context = append(c.Context, ContextItem{Label: oneLine(clean(it.Label)), Who: oneLine(clean(it.Who)),
				URL: oneLine(clean(it.URL)), PostedAt: it.PostedAt, Text: t})
		}
	}
	for _, cl := range p.Claims {
		if s := oneLine(clean(cl)); s != "" {
			c.Claims = append(c.Claims, s)
		}
	}
	return c
}

// clean makes outside text safe to put inside a fenced block: no "<<<" or
// ">>>" (so no marker can be forged), no control characters but newline and
// tab, and Windows/Mac line ends made "\n".
func clean(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\r':
			return '\n'
		case r == '\n' || r == '\t':
			return r
		case unicode.IsControl(r):
			return -1
		case r == '\u2028' || r == '\u2029':
			return '\n'
		}
		return r
	}, s)
	for strings.Contains(s, "<<<") || strings.Contains(s, ">>>") {
		s = strings.ReplaceAll(s, "<<<", "‹‹‹")
		s = strings.ReplaceAll(s, ">>>", "›››")
	}
	return s
}

// oneLine folds all whitespace, newlines included, into single spaces, so a
// metadata field cannot start a line of its own inside a block.
func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func handle(h string) string {
	h = strings.TrimSpace(h)
	if h == "" || strings.HasPrefix(h, "@") {
		return h
	}
	return "@" + h
}

// when is a post's time with its weekday, so a model can resolve
// "yesterday" or "on Monday": "Thursday 1 Feb 2024 12:00 UTC" (a day, month
// and year tokenise into fewer tokens than 2024-02-01).
func when(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	return t.UTC().Format("Monday 2 Jan 2006 15:04 UTC")
}

// weekday is a post's day with its weekday: "Thursday 1 Feb 2024".
func weekday(t time.Time) string { return t.UTC().Format("Monday 2 Jan 2006") }

// day is a page's date: "20 Jan 2024".
func day(t time.Time) string {
	if t.IsZero() {
		return "unknown date"
	}
	return t.UTC().Format("2 Jan 2006")
}

func seq(n int) []int {
	out := make([]int, n)
	for i := range out {
		out[i] = i + 1
	}
	return out
}

func cutWords(s string, max int) string {
	r := []rune(s)
	if len(r) <= max {
		return s
	}
	cut := string(r[:max])
	if i := strings.LastIndexFunc(cut, unicode.IsSpace); i > max/2 {
		cut = cut[:i]
	}
	return strings.TrimSpace(cut)
}

// Schema names on the wire; they are the task names.
const (
	SchemaQueries          = "queries"
	SchemaEvidence         = "evidence"
	SchemaImageDescription = "image_description"
)
