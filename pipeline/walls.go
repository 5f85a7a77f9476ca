package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"html"
	"net/url"
	"strings"
	"time"

	"golang.org/x/net/publicsuffix"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/sanitize"
)

// Pages muse could not read whole: behind a paywall or registration wall
// (partial), refused by the site's bot protection (blocked), or a script
// shell with next to no text. A whole copy is looked for before such a
// page is kept as it is: the local archive's copy of the same page (by its
// URL, final URL or canonical URL), then its AMP version or canonical URL
// on the same site, one extra fetch through the same fetcher (so the same
// address rules). A page read partly is never said not to refute or not to
// support the post: its Status is partial, and the accounting counts it
// apart from pages read whole.

// partialReason is a partial page's reason: "paywalled: only the first 79
// words were readable".
func partialReason(s Source) string {
	what := walled(s.Wall)
	if s.Words == 0 {
		return what + ": no word of its text was readable"
	}
	return fmt.Sprintf("%s: only the first %d %s readable", what, s.Words, verb(s.Words, "word was", "words were"))
}

// walled is what a wall makes a page: "paywalled", "behind a
// registration wall".
func walled(w *extract.Wall) string {
	if w != nil && w.Kind == extract.WallRegistration {
		return "behind a registration wall"
	}
	return "paywalled"
}

// withPartial adds the wall to a reason when the page was read partly.
func (s Source) withPartial(reason string) string {
	if s.Wall == nil {
		return reason
	}
	return reason + "; " + partialReason(s)
}

// withTextFrom adds where the text came from to a reason, when it is not
// the live page.
func (s Source) withTextFrom(reason string) string {
	if s.TextFrom == "" {
		return reason
	}
	from := "text from " + s.TextFrom
	if s.TextFrom == TextPasted {
		from = "text " + TextPasted
	}
	if reason == "" {
		return from
	}
	return reason + "; " + from
}

// blockedReason says a bot protection refused muse: "the site's bot
// protection refused muse (Cloudflare, HTTP 403)"; "" when err is no
// challenge.
func blockedReason(err error) string {
	var se *fetch.StatusError
	if !errors.Is(err, fetch.ErrChallenge) || !errors.As(err, &se) {
		return ""
	}
	return fmt.Sprintf("the site's bot protection refused muse (%s, HTTP %d)", se.Challenge, se.Code)
}

// liveShortfall says why the live page's text is not enough ("the live
// page is paywalled (…)", "the live page has 12 words of text"), "" when
// it is.
func (r *run) liveShortfall(a *extract.Article) string {
	switch {
	case a.Wall != nil:
		return "the live page is " + walled(a.Wall) + ": " + strings.Join(a.Wall.Signs, "; ")
	case a.Words < r.e.opts.MinWords:
		return fmt.Sprintf("the live page has %d %s of text", a.Words, verb(a.Words, "word", "words"))
	}
	return ""
}

// betterCopy looks for a whole copy of a page whose live text (a, read
// from final) is partial or next to nothing, and reads it into s instead,
// saying where it came from (TextFrom). It reports whether it found one.
func (r *run) betterCopy(ctx context.Context, s *Source, a *extract.Article, final string) bool {
	why := r.liveShortfall(a)
	if why == "" {
		return false
	}
	enough := max(a.Words+1, r.e.opts.MinWords)
	if ar, ok := r.e.deps.Archive.(ArchiveReader); ok {
		for _, u := range sameSite(final, s.URL, final, a.CanonicalURL) {
			p, ok := ar.Lookup(ctx, u)
			if ok && lang.Words(p.Text) >= enough && r.fillArchived(s, p) {
				s.Wall, s.TextFrom = nil, "the local archive ("+why+")"
				return true
			}
		}
	}
	alt, what := a.AMPURL, "AMP version"
	if alt == "" || sources.Key(alt) == sources.Key(final) {
		alt, what = a.CanonicalURL, "canonical address"
	}
	if alt == "" || sources.Key(alt) == sources.Key(final) || sources.Key(alt) == sources.Key(s.URL) || len(sameSite(final, alt)) == 0 || siteRoot(alt) {
		return false
	}
	body, got, err := r.e.deps.Fetcher.Fetch(ctx, alt)
	if err != nil {
		return false
	}
	b, err := r.e.deps.Extract(body, got)
	if err != nil || b.Wall != nil || b.Words < enough || !sameStory(a.Title, b.Title) {
		return false
	}
	s.Title = cmp.Or(s.Title, b.Title)
	if s.Published.IsZero() {
		s.Published = b.Published
	}
	s.PublishedPartial = undatedPartial(s.Published, cmp.Or(s.PublishedPartial, b.PublishedPartial))
	s.Paragraphs, s.Words = b.Paragraphs, lang.Words(b.Text)
	s.Language = cmp.Or(s.Language, b.Language)
	s.Wall, s.TextFrom = nil, fmt.Sprintf("the page's %s %s (%s)", what, got, why)
	return true
}

// sameStory reports whether two pages' titles name the same story (one
// holds the other, as "Headline" and "Headline | Site" do), or either has
// none: a canonical link to the home page or a section is not the story.
func sameStory(a, b string) bool {
	a, b = normaliseForMatch(a), normaliseForMatch(b)
	return a == "" || b == "" || strings.Contains(a, b) || strings.Contains(b, a)
}

// siteRoot reports whether u is a site's home page.
func siteRoot(u string) bool {
	p, err := url.Parse(u)
	return err == nil && strings.Trim(p.Path, "/") == ""
}

// sameSite keeps the URLs of us on the site (registrable domain) of page,
// without repeats: a page may point muse at its own other copies, never at
// another site's text to be read as its own.
func sameSite(page string, us ...string) []string {
	site := siteOf(page)
	var out []string
	seen := map[string]bool{}
	for _, u := range us {
		k := sources.Key(u)
		if u == "" || seen[k] || site == "" || siteOf(u) != site {
			continue
		}
		seen[k] = true
		out = append(out, u)
	}
	return out
}

func siteOf(u string) string {
	p, err := url.Parse(u)
	if err != nil || p.Hostname() == "" {
		return ""
	}
	h := strings.ToLower(p.Hostname())
	if d, err := publicsuffix.EffectiveTLDPlusOne(h); err == nil {
		return d
	}
	return h
}

// TextPasted is a source's TextFrom once the checker pasted its text.
const TextPasted = "pasted by the checker"

// ErrNoText is wrapped by PasteSourceText's error for a text with no
// words.
var ErrNoText = errors.New("no text")

// PasteSourceText makes text, which the checker copied from the page in
// their browser (past a paywall or a bot challenge muse could not pass),
// the text of source i: what its evidence is quoted from and verified
// against, its TextFrom saying so. The page is read again from its text by
// the sources stage, which the Stage returned names and marks stale with
// the stages after it: the pasted text is judged by the same rules as a
// page muse read (its length, its date, its relevance), never fetched over.
func (c *Check) PasteSourceText(i int, text string, now time.Time) (Stage, error) {
	s, err := c.source(i)
	if err != nil {
		return "", err
	}
	paras, words := splitText(sanitize.String(text))
	if words == 0 {
		return "", fmt.Errorf("paste into %s: %w", cmp.Or(s.Domain, sources.HostOf(s.URL)), ErrNoText)
	}
	s.Paragraphs, s.Words = paras, words
	s.Wall, s.TextFrom = nil, TextPasted
	s.FetchedAt = now
	switch s.Status {
	case StatusFetchFailed, StatusBlocked, StatusTooShort, StatusPartial, StatusDuplicate:
		s.Status, s.Reason = StatusPending, s.withTextFrom("")
	}
	c.markStale(StageSources)
	return StageSources, nil
}

// datePasted dates a pasted text as a page is dated: the extractor reads
// it as a page at the source's address (a dateline in the text, a date in
// the address).
func (r *run) datePasted(s *Source) {
	var b strings.Builder
	b.WriteString("<!doctype html><html><head><title>" + html.EscapeString(s.Title) + "</title></head><body><article>\n")
	for _, p := range s.Paragraphs {
		b.WriteString("<p>" + html.EscapeString(p) + "</p>\n")
	}
	b.WriteString("</article></body></html>\n")
	if a, err := r.e.deps.Extract([]byte(b.String()), s.URL); err == nil {
		s.Published, s.PublishedPartial = a.Published, a.PublishedPartial
	}
}
