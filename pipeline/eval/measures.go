package eval

import (
	"context"
	"errors"
	"net/url"
	"regexp"
	"strings"
	"sync"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/export"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/ratings"
)

// xURL is the URL pattern of X's Community Notes evaluator for AI note
// writers: a link is valid when it matches it whole, scheme aside.
var xURL = regexp.MustCompile(`^[\w\-._~%]+\.[a-zA-Z]{2,}(/\S*)?$`)

// ValidByX reports whether u is a valid link by X's pattern.
func ValidByX(u string) bool {
	rest := u
	if i := strings.Index(rest, "://"); i >= 0 {
		rest = rest[i+3:]
	}
	return xURL.MatchString(rest)
}

// EvidenceWords is the fewest words of main text a cited page must have
// to count as an evidence page: the engine's default MinWords, the
// paper's 100 (a home page, a search page or a wall has fewer).
const EvidenceWords = 100

// Page is a cited URL as read now.
type Page struct {
	Reachable bool   `json:"reachable"`
	Status    int    `json:"status,omitempty"`
	Error     string `json:"error,omitempty"`
	Text      string `json:"-"`
	Words     int    `json:"words"`
	// Archived: the live page could not be read and Text is the local
	// archive's copy: evidence of what it said, not that it is reachable.
	Archived bool `json:"archived,omitempty"`
}

// Archive hands back a page the local archive holds (pipeline.ArchiveOf).
type Archive interface {
	Lookup(ctx context.Context, url string) (pipeline.ArchivedPage, bool)
}

// Reader reads cited pages through the safe fetcher, each URL once per
// run, and a page that cannot be read from the archive when it has one.
type Reader struct {
	Fetcher *fetch.Fetcher
	Archive Archive // nil: none
	mu      sync.Mutex
	pages   map[string]*pageOnce
}

type pageOnce struct {
	once sync.Once
	page Page
}

// Read fetches u (once) and extracts its main text.
func (r *Reader) Read(ctx context.Context, u string) Page {
	r.mu.Lock()
	if r.pages == nil {
		r.pages = map[string]*pageOnce{}
	}
	po := r.pages[u]
	if po == nil {
		po = &pageOnce{}
		r.pages[u] = po
	}
	r.mu.Unlock()
	po.once.Do(func() { po.page = r.read(ctx, u) })
	return po.page
}

func (r *Reader) read(ctx context.Context, u string) Page {
	pg, err := r.Fetcher.Fetch(ctx, u)
	if err != nil {
		p := Page{Error: err.Error()}
		var se *fetch.StatusError
		if errors.As(err, &se) {
			p.Status = se.Code
		}
		if r.Archive != nil {
			if a, ok := r.Archive.Lookup(ctx, u); ok && a.Text != "" {
				p.Archived, p.Text, p.Words = true, a.Text, lang.Words(a.Text)
			}
		}
		return p
	}
	p := Page{Reachable: true, Status: pg.Status}
	if a, err := extract.Extract(pg.Body, pg.FinalURL); err == nil {
		p.Text = a.Text
		p.Words = lang.Words(a.Text)
	}
	return p
}

// Link is the measures of one cited URL.
type Link struct {
	URL          string `json:"url"`
	ValidByX     bool   `json:"valid_by_x"`
	Page         *Page  `json:"page,omitempty"` // nil: not fetched (--no-fetch)
	Tier         string `json:"tier"`
	RatingOrigin string `json:"rating_origin,omitempty"`
	Publisher    string `json:"publisher,omitempty"`
	// EvidencePage: the page was read now and is an article with at least
	// EvidenceWords words, not a site's home page.
	EvidencePage bool `json:"evidence_page"`
}

// Measures are the deterministic measures of one correction.
type Measures struct {
	// NoteLength is the length as Community Notes counts it (each link 1;
	// export.NoteLength), against its limit of 280.
	NoteLength  int    `json:"note_length"`
	WithinLimit bool   `json:"within_limit"`
	Links       []Link `json:"links"`
	// Language detected in the correction and the one asked; LanguageOK is
	// nil when either is unknown or the detection is not reliable.
	Language      string `json:"language,omitempty"`
	LanguageAsked string `json:"language_asked,omitempty"`
	LanguageOK    *bool  `json:"language_ok,omitempty"`
	// Quotes are the quoted passages of the correction (in quotation
	// marks, five words or more); QuotesVerified those found on a cited
	// page's text (pipeline.VerifyQuote).
	Quotes         int `json:"quotes"`
	QuotesVerified int `json:"quotes_verified"`
	// QuotesChecked: some cited page's text was there to look in; without
	// it the quotes are counted but not judged.
	QuotesChecked bool `json:"quotes_checked"`
}

// quoteRe finds passages in straight or curly double quotes.
var quoteRe = regexp.MustCompile(`"([^"\n]+)"|“([^”\n]+)”`)

// Measure computes the deterministic measures of out. reader nil: links
// are not fetched; pages then come from out.Pages alone.
func Measure(ctx context.Context, out Output, rater *ratings.Rater, reader *Reader) (Measures, map[string]string) {
	m := Measures{NoteLength: export.NoteLength(out.Text)}
	m.WithinLimit = m.NoteLength <= export.NoteLimit
	texts := map[string]string{}
	for _, u := range out.URLs {
		l := Link{URL: u, ValidByX: ValidByX(u)}
		if rater != nil {
			r := rater.Rate(u)
			l.Tier, l.RatingOrigin, l.Publisher = string(r.Tier), r.Origin, r.Publisher
		}
		if reader != nil {
			p := reader.Read(ctx, u)
			l.Page = &p
			l.EvidencePage = (p.Reachable || p.Archived) && p.Words >= EvidenceWords && !isHome(u)
			if p.Text != "" {
				texts[u] = p.Text
			}
		}
		if t := out.Pages[u]; t != "" {
			texts[u] = t // what the system read before the cutoff comes first
		}
		m.Links = append(m.Links, l)
	}
	if d := lang.Detect(out.Text); d.Code != "" {
		m.Language = d.Code
		m.LanguageAsked = lang.Base(out.Language)
		if d.Reliable && m.LanguageAsked != "" {
			ok := lang.Base(d.Code) == m.LanguageAsked
			m.LanguageOK = &ok
		}
	}
	m.QuotesChecked = len(texts) > 0
	for _, q := range quoteRe.FindAllStringSubmatch(out.Text, -1) {
		quote := q[1] + q[2]
		if len(strings.Fields(quote)) < 5 {
			continue
		}
		m.Quotes++
		for _, t := range texts {
			if pipeline.VerifyQuote(quote, t) {
				m.QuotesVerified++
				break
			}
		}
	}
	return m, texts
}

// isHome reports whether u is a site's home page.
func isHome(u string) bool {
	p, err := url.Parse(u)
	return err != nil || strings.Trim(p.Path, "/") == "" && p.RawQuery == ""
}
