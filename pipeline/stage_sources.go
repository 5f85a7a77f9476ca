package pipeline

import (
	"cmp"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"golang.org/x/sync/errgroup"
)

// sources reads every hit's page: rate the publisher, fetch, extract, date,
// then judge relevance and rank. What the person decided about a page
// (dropped, boosted) and pages already read survive a rerun.
func (r *run) sources(ctx context.Context) (int, error) {
	prev := map[string]Source{}
	for _, s := range r.c.Sources {
		prev[sources.Key(s.URL)] = s
	}
	// Evidence stays until the evidence stage rebuilds it, so the quotes the
	// person unticked stay unticked.
	r.c.Sources = nil
	if err := r.readHits(ctx, StageSources, r.c.Hits, prev); err != nil {
		return r.eligibleCount(), err
	}
	return r.eligibleCount(), nil
}

// readHits adds a Source for each hit not already a source, reading pages
// concurrently, and then marks duplicates, scores relevance and re-ranks.
func (r *run) readHits(ctx context.Context, st Stage, hits []Hit, prev map[string]Source) error {
	c := r.c
	have := map[string]bool{}
	for _, s := range c.Sources {
		have[sources.Key(s.URL)] = true
	}
	var todo []Source
	for _, h := range hits {
		key := sources.Key(h.URL)
		if have[key] {
			continue
		}
		have[key] = true
		if len(todo) == r.e.opts.MaxPages {
			r.warn(st, "read the first %d pages found; %d more were left unread", r.e.opts.MaxPages, len(hits)-len(todo))
			break
		}
		s := Source{URL: h.URL, Title: h.Title, Published: h.Published, Status: StatusPending,
			FoundBy: []string{h.Provider + ": " + h.Query}}
		if p, ok := prev[key]; ok {
			s = p
			s.FoundBy = []string{h.Provider + ": " + h.Query}
		}
		todo = append(todo, s)
	}
	first := len(c.Sources)
	c.Sources = append(c.Sources, todo...)
	var g errgroup.Group
	g.SetLimit(r.e.opts.FetchParallel)
	for i := first; i < len(c.Sources); i++ {
		if ctx.Err() != nil {
			break
		}
		g.Go(func() error {
			r.mu.Lock()
			s := c.Sources[i].clone()
			r.mu.Unlock()
			r.readOne(ctx, &s)
			r.mu.Lock()
			c.Sources[i] = s
			r.mu.Unlock()
			r.item(st, s, "source read")
			return nil
		})
	}
	_ = g.Wait() // a page that fails is a source saying so, not an error
	if err := ctx.Err(); err != nil {
		// Keep what was read; pages never reached stay pending and say so.
		for i := first; i < len(c.Sources); i++ {
			if c.Sources[i].FetchedAt.IsZero() && c.Sources[i].Status == StatusPending {
				c.Sources[i].Reason = "not read: the check was cancelled"
			}
		}
		return fmt.Errorf("read pages: %w", err)
	}
	r.markDuplicates()
	r.flagSources()
	r.relevance(ctx, st, first)
	r.visualRelevance(ctx, st, first)
	r.rank()
	return nil
}

// readOne rates, fetches and extracts one page and says whether it may be
// used. It only writes s.
func (r *run) readOne(ctx context.Context, s *Source) {
	r.applyRating(s, s.URL)
	if s.Dropped {
		s.Status, s.Reason = StatusDropped, "dropped by you"
		return
	}
	if s.Status == StatusExcludedRating && !s.Boosted {
		return
	}
	if s.FetchedAt.IsZero() && r.datedLate(s) {
		return
	}
	if len(s.Paragraphs) == 0 || s.FetchedAt.IsZero() {
		if !r.fetchAndExtract(ctx, s) {
			return
		}
	}
	if s.TextFrom == TextPasted && s.Published.IsZero() {
		r.datePasted(s)
	}
	if s.FinalURL != "" && sources.Key(s.FinalURL) != sources.Key(s.URL) {
		// A redirect to another publisher is rated as that publisher.
		r.applyRating(s, s.FinalURL)
		if s.Status == StatusExcludedRating && !s.Boosted {
			return
		}
	}
	r.judgeDate(s)
	r.domainRegistered(ctx, s)
	r.firstSighting(ctx, s)
}

func (r *run) fetchAndExtract(ctx context.Context, s *Source) bool {
	s.SHA256, s.CanonicalURL, s.Syndication = "", "", nil
	body, final, err := r.e.deps.Fetcher.Fetch(ctx, s.URL)
	if err != nil {
		if ctx.Err() == nil && r.readArchived(ctx, s, err) {
			return true
		}
		s.Status, s.Reason = StatusFetchFailed, err.Error()
		if why := blockedReason(err); why != "" {
			s.Status, s.Reason = StatusBlocked, why
		}
		return false
	}
	a, err := r.e.deps.Extract(body, final)
	if err != nil {
		s.Status, s.Reason = StatusFetchFailed, err.Error()
		return false
	}
	s.FinalURL = final
	s.FetchedAt = r.e.opts.Now()
	s.SHA256 = r.servedHash(s.URL, final)
	if a.Title != "" {
		s.Title = a.Title
	}
	if s.Publisher == "" {
		s.Publisher = cmp.Or(a.Publisher, a.SiteName)
	}
	if !a.Published.IsZero() {
		s.Published = a.Published // the page's own date beats the search engine's
	}
	s.PublishedPartial = undatedPartial(s.Published, a.PublishedPartial)
	s.Paragraphs = a.Paragraphs
	s.Words = lang.Words(a.Text)
	s.Language = lang.Normalise(a.Language)
	s.Image = a.Image
	if k := sources.Key(a.CanonicalURL); k != "" && k != sources.Key(s.URL) && k != sources.Key(final) {
		s.CanonicalURL = a.CanonicalURL
	}
	s.Syndication = a.Syndication
	r.markOfPost(s, a, body)
	countAffiliates(s, a, body)
	s.Wall, s.TextFrom = a.Wall, ""
	if r.betterCopy(ctx, s, a, final) {
		return true
	}
	// A partial page is not archived: its teaser would stand for the
	// page, or replace the whole copy the archive holds.
	if r.e.deps.Archive != nil && (a.Title != "" || a.Text != "") && a.Wall == nil {
		err := r.e.deps.Archive.Save(ctx, ArchivedPage{URL: cmp.Or(final, s.URL), Title: a.Title, Text: a.Text,
			Publisher: s.Publisher, Published: a.Published, Language: s.Language})
		if err != nil && ctx.Err() == nil {
			r.warn(StageSources, "%v", err) // Archiver's errors name the page (see Archiver)
		}
	}
	return true
}

func (r *run) applyRating(s *Source, u string) {
	rt := r.e.deps.Rater.Rate(u)
	s.Domain = rt.Domain
	if rt.Publisher != "" {
		s.Publisher, s.PublisherRated = rt.Publisher, true
	}
	s.Factuality, s.Bias, s.RatingOrigin = rt.Factuality, rt.Bias, rt.Origin
	s.Tier = cmp.Or(rt.Tier, TierUnrated)
	if rt.Drop {
		s.Dropped = true
	}
	if rt.Boost {
		s.Boosted = true
	}
	switch {
	case rt.UserContent:
		s.Tier = TierExcluded
		s.Status, s.Reason = StatusExcludedRating, "user-posted content, not a publisher"
	case s.Tier == TierExcluded:
		s.Status = StatusExcludedRating
		s.Reason = "publisher rated " + describeRating(rt.Factuality, rt.Bias) + ": not a credible reference"
	case s.Status == StatusExcludedRating:
		s.Status, s.Reason = StatusPending, "" // a redirect led to a credible publisher
	}
}

func describeRating(fact, bias string) string {
	var parts []string
	if fact != "" {
		parts = append(parts, "factuality "+fact)
	}
	if bias != "" {
		parts = append(parts, "bias "+bias)
	}
	if len(parts) == 0 {
		return "as excluded"
	}
	return strings.Join(parts, ", ")
}

// datedLate keeps out, unread, a page the search engine dates at or after
// the cutoff, saying so: every exclusion is shown.
func (r *run) datedLate(s *Source) bool {
	cutoff := r.c.Cutoff
	if cutoff.IsZero() || s.Published.IsZero() || s.Published.Before(cutoff) {
		return false
	}
	engine := "the search engine"
	if len(s.FoundBy) > 0 {
		engine, _, _ = strings.Cut(s.FoundBy[0], ": ")
	}
	s.Status = StatusExcludedCutoff
	s.Reason = fmt.Sprintf("%s dates it %s, after the cutoff %s: not fetched", engine,
		s.Published.Format(time.DateOnly), cutoff.Format(time.DateOnly))
	return true
}

// judgeDate applies the paper's length and date rules.
func (r *run) judgeDate(s *Source) {
	cutoff := r.c.Cutoff
	switch {
	case s.Wall != nil && s.Words == 0:
		s.Status, s.Reason = StatusTooShort, partialReason(*s)
	case s.Words < r.e.opts.MinWords && s.Wall == nil:
		// A walled page's opening is read however short: the page is an
		// article, and its opening is all the wall leaves.
		s.Status, s.Reason = StatusTooShort, fmt.Sprintf("%d words of main text; at least %d needed", s.Words, r.e.opts.MinWords)
	case !cutoff.IsZero() && s.Published.IsZero():
		s.Status, s.Reason = StatusUndated, "no publication date, so it cannot be shown to predate the cutoff"
		if !s.PublishedPartial.IsZero() {
			s.Reason = fmt.Sprintf("no publication day: the page gives only %s, so it cannot be shown to predate the cutoff", s.PublishedPartial)
		}
	case !cutoff.IsZero() && !s.Published.Before(cutoff):
		s.Status = StatusExcludedCutoff
		s.Reason = fmt.Sprintf("published %s, after the cutoff %s", s.Published.Format(time.DateOnly), cutoff.Format(time.DateOnly))
	default:
		s.Status, s.Reason = StatusPending, s.withTextFrom("")
		if s.Wall != nil {
			s.Status, s.Reason = StatusPartial, partialReason(*s)
		}
		if s.Boosted {
			s.Status, s.Reason = StatusBoosted, s.withTextFrom(s.withPartial("boosted by you"))
		}
	}
}

// markDuplicates keeps the first of pages that redirect to the same place
// or carry the same text.
func (r *run) markDuplicates() {
	seenURL := map[string]string{}
	seenText := map[[32]byte]string{}
	for i := range r.c.Sources {
		s := &r.c.Sources[i]
		if !s.Eligible() {
			continue
		}
		key := sources.Key(cmp.Or(s.FinalURL, s.URL))
		sum := sha256.Sum256([]byte(normaliseForMatch(strings.Join(s.Paragraphs, "\n"))))
		if first, ok := seenURL[key]; ok {
			s.Status, s.Reason = StatusDuplicate, "same page as "+first
			continue
		}
		if first, ok := seenText[sum]; ok {
			s.Status, s.Reason = StatusDuplicate, "same text as "+first
			continue
		}
		seenURL[key] = s.URL
		seenText[sum] = s.URL
	}
}

// Eligible reports whether the page may be quoted: read, dated before the
// cutoff, credible enough and on the subject, and not dropped by the
// person. Every other page is kept out, and its Status says why.
func (s Source) Eligible() bool {
	return !s.Dropped && eligibleStatus(s.Status)
}

func (r *run) eligibleCount() int {
	n := 0
	for _, s := range r.c.Sources {
		if s.Eligible() {
			n++
		}
	}
	return n
}

// rank orders sources: usable ones first (boosted, then pages about the
// post itself, then tier high > medium > low > unrated, then relevance),
// then the rest in the order found.
func (r *run) rank() {
	slices.SortStableFunc(r.c.Sources, func(a, b Source) int {
		ea, eb := a.Eligible(), b.Eligible()
		if ea != eb {
			if ea {
				return -1
			}
			return 1
		}
		if !ea {
			return 0
		}
		if a.Boosted != b.Boosted {
			if a.Boosted {
				return -1
			}
			return 1
		}
		if c := cmp.Compare(ofPostRank(a), ofPostRank(b)); c != 0 {
			return c // a fact-check of the post itself before the rest
		}
		if c := cmp.Compare(a.Tier.Rank(), b.Tier.Rank()); c != 0 {
			return c
		}
		return cmp.Compare(b.Relevance, a.Relevance)
	})
}

// servedHash is the SHA-256 (hex) of the page's bytes as served, looked up
// as a case's snapshot looks them up (the URL asked for, else the final
// one); "" when the fetcher keeps no bytes.
func (r *run) servedHash(u, final string) string {
	raw, ok := r.e.RawPage(u)
	if !ok {
		raw, ok = r.e.RawPage(final)
	}
	if !ok || len(raw) == 0 {
		return ""
	}
	sum := sha256.Sum256(raw)
	return hex.EncodeToString(sum[:])
}

// undatedPartial is the year or month a page gives (p) while no day (day)
// dates it, else zero: a partial date is kept only for showing.
func undatedPartial(day time.Time, p sources.PartialDate) sources.PartialDate {
	if !day.IsZero() {
		return sources.PartialDate{}
	}
	return p
}
