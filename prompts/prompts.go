// Package prompts holds muse's prompt templates (embedded *.tmpl files) and
// the typed builders and parsers around them, one pair per model task of the
// Muse method (Zhou et al., arXiv 2403.11169):
//
//	ImageDescription → ParseImageDescription  informative description of an image
//	Queries          → ParseQueries           3 (text) or 5 (with images) search queries
//	Evidence         → ParseEvidence          refuting and context paragraphs of one page
//	EvidencePages    → ParseEvidencePages     the same for several pages in one call
//	Correction       → CheckCorrection        the "This post is …" correction
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
	"slices"
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
	"oneLine": oneLine,
	"handle":  handle,
	"when":    when,
	"day":     day,
	"join":    strings.Join,
	"seq":     seq,
	"inc":     func(i int) int { return i + 1 },
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
}

// Page is one web page offered for evidence extraction.
type Page struct {
	URL       string
	Title     string
	Publisher string
	Published time.Time // zero when unknown
	// Paragraphs of the extracted main text, in order.
	Paragraphs []string
}

// Evidence kinds, as in the pipeline's Check record.
const (
	KindRefutes = "refutes"
	KindContext = "context"
)

// EvidenceItem is what the correction prompt shows of one source: its quotes
// of one kind.
type EvidenceItem struct {
	URL       string
	Publisher string
	Tier      string // high|medium|low|unrated
	Published time.Time
	Relevance float64
	Kind      string // KindRefutes or KindContext
	Quotes    []string
}

// ImageInput is what is known about one image of the post.
type ImageInput struct {
	// URL is a data: URL (llm.ImageDataURL) or an https URL of the image, sent
	// to a vision model; empty means describe from the notes below only.
	URL     string
	Caption string   // a short caption from a captioning model
	People  []string // names of people recognised in the image
	OCRText string   // text read from the image
	AltText string   // the platform's alt text
}

// HasImage reports whether the image itself is sent.
func (i ImageInput) HasImage() bool { return i.URL != "" }

// NumQueries is the paper's number of queries: 3, or 5 when the post has images.
func NumQueries(p Post) int {
	if len(p.ImageDescriptions) > 0 {
		return QueriesWithImage
	}
	return QueriesText
}

// Queries builds the query-generation prompt asking for n queries (n < 1
// means NumQueries(p)). Send it with QueriesSchema(n).
func Queries(p Post, n int) ([]llm.Message, error) {
	if n < 1 {
		n = NumQueries(p)
	}
	return messages("queries", map[string]any{"Post": cleanPost(p), "N": n})
}

// Evidence builds the evidence-extraction prompt for one page, its text cut
// to MaxArticleChars. Send it with EvidenceSchema().
func Evidence(p Post, page Page) ([]llm.Message, error) {
	return EvidenceWithLimit(p, page, MaxArticleChars)
}

// EvidenceWithLimit is Evidence with the article cut to maxChars; use a
// smaller limit to retry after llm.ErrContextLength. The paper's cap still
// holds: a limit above MaxArticleChars (or below 1) means MaxArticleChars.
func EvidenceWithLimit(p Post, page Page, maxChars int) ([]llm.Message, error) {
	if maxChars <= 0 || maxChars > MaxArticleChars {
		maxChars = MaxArticleChars
	}
	cp := cleanPage(page.Truncate(maxChars))
	if len(cp.Paragraphs) == 0 {
		return nil, fmt.Errorf("prompts: evidence prompt for %s: the page has no text", page.URL)
	}
	return messages("evidence", map[string]any{"Post": cleanPost(p), "Page": cp})
}

// MaxPagesPerCall bounds the articles of one EvidencePages prompt, so that
// the answer (up to four paragraphs per article) stays within what a model
// writes in one go.
const MaxPagesPerCall = 10

// EvidencePages builds one evidence-extraction prompt for several pages:
// the post, the instructions and the system message are sent once instead
// of once per page. The articles are fenced and numbered 1…len(pages) in
// the given order, each cut to maxChars (the rules of EvidenceWithLimit);
// the answer is keyed by that number. Send it with EvidencePagesSchema()
// and read it with ParseEvidencePages.
func EvidencePages(p Post, pages []Page, maxChars int) ([]llm.Message, error) {
	if len(pages) == 0 || len(pages) > MaxPagesPerCall {
		return nil, fmt.Errorf("prompts: evidence prompt for %d pages: want 1 to %d", len(pages), MaxPagesPerCall)
	}
	if maxChars <= 0 || maxChars > MaxArticleChars {
		maxChars = MaxArticleChars
	}
	var cps []Page
	for _, page := range pages {
		cp := cleanPage(page.Truncate(maxChars))
		if len(cp.Paragraphs) == 0 {
			return nil, fmt.Errorf("prompts: evidence prompt for %s: the page has no text", page.URL)
		}
		cps = append(cps, cp)
	}
	return messages("evidence_pages", map[string]any{"Post": cleanPost(p), "Pages": cps})
}

func cleanPage(page Page) Page {
	cp := Page{URL: clean(page.URL), Title: clean(page.Title), Publisher: clean(page.Publisher), Published: page.Published}
	for _, para := range page.Paragraphs {
		if s := strings.TrimSpace(clean(para)); s != "" {
			cp.Paragraphs = append(cp.Paragraphs, s)
		}
	}
	return cp
}

// Truncate keeps whole paragraphs up to maxChars characters (runes) in all;
// a first paragraph longer than that is cut at a word boundary.
func (pg Page) Truncate(maxChars int) Page {
	if maxChars <= 0 {
		return pg
	}
	out := pg
	out.Paragraphs = nil
	used := 0
	for _, para := range pg.Paragraphs {
		n := len([]rune(para))
		if used+n > maxChars {
			if len(out.Paragraphs) == 0 {
				out.Paragraphs = append(out.Paragraphs, cutWords(para, maxChars))
			}
			break
		}
		out.Paragraphs = append(out.Paragraphs, para)
		used += n
	}
	return out
}

// Chars is the number of characters (runes) of the page's paragraphs.
func (pg Page) Chars() int {
	n := 0
	for _, para := range pg.Paragraphs {
		n += len([]rune(para))
	}
	return n
}

// Correction builds the correction prompt. Evidence is shown ordered by
// tier (high, medium, low, unrated), then relevance, refuting before context;
// items without quotes are left out. With no evidence the prompt asks for a
// cautious answer without URLs. Stream it with no schema.
func Correction(p Post, ev []EvidenceItem) ([]llm.Message, error) {
	return messages("correction", map[string]any{"Post": cleanPost(p), "Evidence": orderEvidence(ev)})
}

// ImageDescription builds the prompt for an informative description of one
// image of the post: with img.URL set it carries the image for a vision
// model, otherwise the model works from the caption, people, OCR and alt text
// (the paper's method). Send it with ImageDescriptionSchema().
func ImageDescription(p Post, img ImageInput) ([]llm.Message, error) {
	if img.URL == "" && img.Caption == "" && img.OCRText == "" && img.AltText == "" && len(img.People) == 0 {
		return nil, fmt.Errorf("prompts: image description: nothing is known about the image (no image, caption, text or people)")
	}
	cp := cleanPost(p)
	cp.ImageDescriptions = nil // the image being described is not yet described
	ci := ImageInput{URL: img.URL, Caption: clean(img.Caption), OCRText: clean(img.OCRText), AltText: clean(img.AltText)}
	for _, name := range img.People {
		if s := oneLine(clean(name)); s != "" {
			ci.People = append(ci.People, s)
		}
	}
	msgs, err := messages("image_description", map[string]any{"Post": cp, "Image": ci})
	if err != nil || img.URL == "" {
		return msgs, err
	}
	last := &msgs[len(msgs)-1]
	last.MultiContent = []openai.ChatMessagePart{llm.TextPart(last.Content), llm.ImagePart(img.URL, "")}
	last.Content = ""
	return msgs, nil
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

func orderEvidence(ev []EvidenceItem) []EvidenceItem {
	out := make([]EvidenceItem, 0, len(ev))
	for _, e := range ev {
		var quotes []string
		for _, q := range e.Quotes {
			if s := strings.TrimSpace(clean(q)); s != "" {
				quotes = append(quotes, s)
			}
		}
		if len(quotes) == 0 || strings.TrimSpace(e.URL) == "" {
			continue
		}
		e.Quotes = quotes
		e.URL = oneLine(clean(e.URL))
		e.Publisher = clean(e.Publisher)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b EvidenceItem) int {
		if d := tierRank(a.Tier) - tierRank(b.Tier); d != 0 {
			return d
		}
		if a.Relevance != b.Relevance {
			if a.Relevance > b.Relevance {
				return -1
			}
			return 1
		}
		return kindRank(a.Kind) - kindRank(b.Kind)
	})
	return out
}

func tierRank(t string) int {
	switch strings.ToLower(t) {
	case "high":
		return 0
	case "medium":
		return 1
	case "low":
		return 2
	case "unrated", "":
		return 3
	}
	return 4
}

func kindRank(k string) int {
	if k == KindContext {
		return 1
	}
	return 0
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
	}
	for _, d := range p.ImageDescriptions {
		if s := strings.TrimSpace(clean(d)); s != "" {
			c.ImageDescriptions = append(c.ImageDescriptions, s)
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

func when(t time.Time) string {
	if t.IsZero() {
		return "unknown"
	}
	t = t.UTC()
	return t.Format("2006-01-02 15:04 UTC") + " (" + t.Weekday().String() + ")"
}

func day(t time.Time) string {
	if t.IsZero() {
		return "unknown date"
	}
	return t.UTC().Format("2006-01-02")
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
