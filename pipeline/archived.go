package pipeline

import (
	"cmp"
	"context"
	"errors"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/lang"
)

// ArchiveReader is an Archiver that can also hand back a page it holds. The
// engine reads a page from it when the page cannot be fetched, so pages
// muse has read before, or that a newsroom imported with `muse archive
// add`, still serve as evidence offline.
type ArchiveReader interface {
	Archiver
	Lookup(ctx context.Context, url string) (ArchivedPage, bool)
}

// readArchived fills s from the archive's copy of its page after fetchErr,
// and says whether it could. The reason keeps the fetch error so the person
// sees that the text is the archived one.
func (r *run) readArchived(ctx context.Context, s *Source, fetchErr error) bool {
	// A URL the address policy refuses (an internal host, however it is
	// spelled) is refused again: what the archive may hold of it from
	// before is never read.
	if errors.Is(fetchErr, fetch.ErrPrivateAddress) || errors.Is(fetchErr, fetch.ErrBadURL) {
		return false
	}
	ar, ok := r.e.deps.Archive.(ArchiveReader)
	if !ok {
		return false
	}
	p, ok := ar.Lookup(ctx, s.URL)
	if !ok || !r.fillArchived(s, p) {
		return false
	}
	why := cmp.Or(blockedReason(fetchErr), fetchErr.Error())
	s.TextFrom = "the local archive (" + why + ")"
	s.Reason = "read from the local archive (" + why + ")"
	return true
}

// fillArchived reads the archive's copy p of s's page into s, and says
// whether it holds any text.
func (r *run) fillArchived(s *Source, p ArchivedPage) bool {
	paras, words := splitText(p.Text)
	if len(paras) == 0 {
		return false
	}
	s.FinalURL = cmp.Or(p.URL, s.URL)
	s.FetchedAt = r.e.opts.Now()
	s.Title = cmp.Or(p.Title, s.Title)
	s.Publisher = cmp.Or(s.Publisher, p.Publisher)
	if !p.Published.IsZero() {
		s.Published = p.Published
	}
	s.Paragraphs, s.Words = paras, words
	s.Language = cmp.Or(s.Language, p.Language)
	return true
}

// splitText splits a page's text into paragraphs, and counts its words.
// Pages muse read keep a blank line between paragraphs; an imported
// record or a pasted text may use single line breaks instead.
func splitText(text string) (paras []string, words int) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	sep := "\n\n"
	if !strings.Contains(text, sep) {
		sep = "\n"
	}
	for _, para := range strings.Split(text, sep) {
		if para = strings.TrimSpace(para); para != "" {
			paras = append(paras, para)
			words += lang.Words(para)
		}
	}
	return paras, words
}

// ArchiveOf is the engine's Archiver and ArchiveReader over the page archive.
func ArchiveOf(s *archive.Store) ArchiveReader { return archiveAdapter{s} }

type archiveAdapter struct{ s *archive.Store }

// Save keeps a page the engine read.
func (a archiveAdapter) Save(ctx context.Context, p ArchivedPage) error {
	return a.s.Add(ctx, archive.Doc{URL: p.URL, Title: p.Title, Text: p.Text, Publisher: p.Publisher, Published: p.Published,
		Language: p.Language})
}

// FirstSighting says when the archive first held a page of the domain.
func (a archiveAdapter) FirstSighting(ctx context.Context, domain string) (DomainSighting, error) {
	f, err := a.s.FirstSighting(ctx, domain)
	return DomainSighting{First: f.First, ArchiveSince: f.Since, ArchiveDocs: f.Docs}, err
}

// Lookup returns the archived page for url, if the archive holds its text.
func (a archiveAdapter) Lookup(ctx context.Context, url string) (ArchivedPage, bool) {
	d, err := a.s.Get(ctx, url)
	if err != nil || strings.TrimSpace(d.Text) == "" {
		return ArchivedPage{}, false
	}
	return ArchivedPage{URL: d.URL, Title: d.Title, Text: d.Text, Publisher: d.Publisher, Published: d.Published,
		Language: d.Language}, true
}

// maxFactChecks is how many matching fact-checks a check shows.
const maxFactChecks = 3

// MatchFactChecks returns the archived ClaimReviews the text repeats the
// claim of (archive.MatchingFactChecks).
func (a archiveAdapter) MatchFactChecks(ctx context.Context, text, lang string, posted time.Time) ([]FactCheck, error) {
	ms, err := a.s.MatchingFactChecks(ctx, text, lang, maxFactChecks, posted)
	if err != nil {
		return nil, err
	}
	out := make([]FactCheck, len(ms))
	for i, m := range ms {
		out[i] = FactCheck{Claim: m.Claim, Claimant: m.Claimant, Rating: m.Rating, Reviewer: m.Reviewer,
			URL: m.ReviewURL, ReviewDate: m.ReviewDate, Language: m.Language, Score: m.Score}
	}
	return out, nil
}
