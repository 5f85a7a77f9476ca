package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"regexp"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lookalike"
)

// Flag kinds: why a page may be a poisoned source.
const (
	// FlagLookalike: the page's domain imitates a rated publisher's.
	FlagLookalike = "lookalike"
	// FlagCopy: the page's text is a near copy of a page on an unrelated
	// domain, with no news agency credited for it.
	FlagCopy = "copy"
	// FlagMachineText: the page's text holds a chatbot's reply left in it
	// ("As an AI language model, I …"), the mark of text generated and
	// published unread.
	FlagMachineText = "machine_text"
	// FlagScraped: the page's text ends in the footer WordPress adds to
	// another site's RSS feed items ("The post … appeared first on …"):
	// a page built from another site's feed by an autoblog.
	FlagScraped = "scraped"
	// FlagAffiliate: the page names no author and no date, and many of
	// its links to other sites are affiliates' (affiliateFlag).
	FlagAffiliate = "affiliate"
	// FlagNewDomain: the page's domain was registered shortly before the
	// post (or after it), or muse's archive, collecting for long before,
	// first met it then (firstSeenFlag): a site set up for the story, as
	// content farms and look-alikes of newsrooms are.
	FlagNewDomain = "new_domain"
)

// newDomainAge is how recent a registration is flagged: within 90 days
// before the post. A reasoned bound, not a tuned one (no labelled set of
// poisoned sources exists here): long enough to cover a site set up for a
// news cycle, short enough that an established outlet never falls in it.
const newDomainAge = 90 * 24 * time.Hour

// newDomainFlag flags a page whose domain was registered within
// newDomainAge before ref (the post's time, else the check's), or after it.
func newDomainFlag(s Source, ref time.Time) (SourceFlag, bool) {
	reg := s.DomainRegistered
	if reg.IsZero() || ref.IsZero() || ref.Sub(reg) > newDomainAge {
		return SourceFlag{}, false
	}
	domain := sources.RegistrableDomain(sources.HostOf(cmp.Or(s.FinalURL, s.URL)))
	when := "after the post"
	if d := ref.Sub(reg); d >= 0 {
		when = fmt.Sprintf("%d days before the post", int(d.Hours()/24))
	}
	return SourceFlag{Kind: FlagNewDomain,
		Reason: fmt.Sprintf("its domain %s was registered on %s, %s", domain, reg.Format("2006-01-02"), when)}, true
}

// The archive's first sighting of a domain is a sign of a new domain only
// where the archive's silence before it means something: the archive has
// been collecting for at least archiveSpan before the window of
// newDomainAge opens, and holds at least archiveDocs documents. A domain
// muse first read within the window (or after the post), by an earlier
// check than this one, is then flagged. A domain first read by this check
// is never flagged by its sighting: every domain is read a first time, and
// an archive is no census of the web. Reasoned bounds, not tuned ones (no
// labelled set of new domains exists here).
const (
	archiveSpan = 365 * 24 * time.Hour
	archiveDocs = 1000
)

// DomainSighting is what muse's archive said, when the page was read, of
// its domain's first sighting (see archive.Store.FirstSighting).
type DomainSighting struct {
	// First is when a page of the domain first came into the archive.
	First time.Time `json:"first"`
	// ArchiveSince is when the archive's oldest document came in, and
	// ArchiveDocs how many it held.
	ArchiveSince time.Time `json:"archive_since,omitzero"`
	ArchiveDocs  int       `json:"archive_docs"`
}

// DomainSighter is an Archiver that says when it first held a page of a
// domain (ArchiveOf's archive is one); the engine asks it for the pages
// of publishers no rating knows.
type DomainSighter interface {
	FirstSighting(ctx context.Context, domain string) (DomainSighting, error)
}

// FirstReadText says when muse first read a page of the page's domain:
// "first read by muse on 2024-01-20", "first read by muse in this check"
// when no earlier check read it; "" when the archive was not asked.
func (s Source) FirstReadText(created time.Time) string {
	if s.FirstRead == nil || s.FirstRead.First.IsZero() {
		return ""
	}
	if !created.IsZero() && !readBefore(s.FirstRead.First, created) {
		return "first read by muse in this check (" + s.FirstRead.First.Format("2006-01-02") + ")"
	}
	return "first read by muse on " + s.FirstRead.First.Format("2006-01-02")
}

// readBefore says whether a sighting came before the check created then:
// to the second, the archive's precision for documents.
func readBefore(first, created time.Time) bool {
	return first.Before(created.Truncate(time.Second))
}

// firstSeenFlag flags a page whose domain the archive first held within
// newDomainAge before ref, or after it, by a check before this one
// (created), when the archive has been collecting long enough for that to
// mean something (archiveSpan, archiveDocs).
func firstSeenFlag(s Source, ref, created time.Time) (SourceFlag, bool) {
	f := s.FirstRead
	if f == nil || f.First.IsZero() || ref.IsZero() || created.IsZero() || !readBefore(f.First, created) {
		return SourceFlag{}, false
	}
	opens := ref.Add(-newDomainAge)
	if f.First.Before(opens) || f.ArchiveSince.IsZero() || f.ArchiveSince.After(opens.Add(-archiveSpan)) || f.ArchiveDocs < archiveDocs {
		return SourceFlag{}, false
	}
	domain := sources.RegistrableDomain(sources.HostOf(cmp.Or(s.FinalURL, s.URL)))
	when := "after the post"
	if d := ref.Sub(f.First); d >= 0 {
		when = fmt.Sprintf("%d days before the post", int(d.Hours()/24))
	}
	return SourceFlag{Kind: FlagNewDomain, Reason: fmt.Sprintf("muse first read a page of %s on %s, %s, though its archive has been collecting since %s (%d pages)",
		domain, f.First.Format("2006-01-02"), when, f.ArchiveSince.Format("2006-01-02"), f.ArchiveDocs)}, true
}

// firstSighting asks the archive when it first held a page of the page's
// domain, for a publisher no rating knows; a failure leaves it unknown.
func (r *run) firstSighting(ctx context.Context, s *Source) {
	ask, ok := r.e.deps.Archive.(DomainSighter)
	if !ok || s.Tier != TierUnrated || len(s.Paragraphs) == 0 {
		return
	}
	domain := sources.RegistrableDomain(sources.HostOf(cmp.Or(s.FinalURL, s.URL)))
	if domain == "" {
		return
	}
	r.sightMu.Lock()
	if r.sightings == nil {
		r.sightings = map[string]*sighting{}
	}
	sg := r.sightings[domain]
	if sg == nil {
		sg = &sighting{}
		r.sightings[domain] = sg
	}
	r.sightMu.Unlock()
	sg.once.Do(func() {
		f, err := ask.FirstSighting(ctx, domain)
		sg.known, sg.f = err == nil && !f.First.IsZero(), f
	})
	if sg.known {
		f := sg.f
		s.FirstRead = &f
	}
}

// sighting is one domain's first sighting, asked once in a check however
// many of its pages are read.
type sighting struct {
	once  sync.Once
	f     DomainSighting
	known bool
}

// domainRegistered asks when the page's domain was registered, for a
// publisher no rating knows (a rated one has a record older than any
// bound that matters); a failure leaves it unknown.
func (r *run) domainRegistered(ctx context.Context, s *Source) {
	ask := r.e.deps.DomainRegistered
	if ask == nil || !s.DomainRegistered.IsZero() || s.Tier != TierUnrated || len(s.Paragraphs) == 0 {
		return
	}
	domain := sources.RegistrableDomain(sources.HostOf(cmp.Or(s.FinalURL, s.URL)))
	if domain == "" {
		return
	}
	if at, err := ask(ctx, domain); err == nil {
		s.DomainRegistered = at
	}
}

// machineMarks are what a chatbot writes about itself and an editor never
// leaves in a published page: a refusal, its self-description, its
// knowledge cutoff, the interface's own words. Each is matched in the
// page's text, outside quotation marks (a story about such text quotes
// it).
var machineMarks = regexp.MustCompile(`(?i)\b(?:as an ai (?:language )?model|as a large language model|i (?:cannot|can't|can ?not) (?:fulfill|fulfil|comply with) (?:this|that|your) request|as of my (?:last )?(?:knowledge|training) (?:update|cutoff|cut-off)|my knowledge cutoff|regenerate response|i'm sorry, but i (?:cannot|can't) (?:assist|help) with)\b`)

// machineTextFlag flags a page whose text holds a chatbot's reply, or
// whose title or text holds an AI writing tool's leftovers (aiLeftover).
func machineTextFlag(s Source) (SourceFlag, bool) {
	for _, p := range s.Paragraphs {
		for _, loc := range machineMarks.FindAllStringIndex(p, -1) {
			if quoted(p, loc[0]) {
				continue
			}
			return SourceFlag{Kind: FlagMachineText,
				Reason: fmt.Sprintf("its text holds %q, a chatbot's words left in the page", p[loc[0]:loc[1]])}, true
		}
	}
	if m := aiLeftover(s); m != "" {
		return SourceFlag{Kind: FlagMachineText,
			Reason: fmt.Sprintf("it holds %q, an AI writing tool's words left in the page", m)}, true
	}
	return SourceFlag{}, false
}

// quoted says whether the text at i opens a quotation: a quotation mark
// just before it.
func quoted(p string, i int) bool {
	before := strings.TrimRight(p[:i], " ")
	r, _ := utf8.DecodeLastRuneInString(before)
	return strings.ContainsRune("\"'“‘«„‚", r)
}

// SourceFlag is a warning sign about a page, with the reason in words.
// A flag is shown; the page keeps its status and its quotes, but it never
// counts toward a claim's verdict or the stop rule (claimQuotes).
type SourceFlag struct {
	Kind   string `json:"kind"`   // FlagLookalike, FlagCopy, FlagMachineText, …
	Reason string `json:"reason"` // "its domain looks like reuters.com (extra words)"
	Of     string `json:"of,omitempty"`
}

// FlagsText is the page's flags in words, "" when it has none.
func (s Source) FlagsText() string {
	var out []string
	for _, f := range s.Flags {
		out = append(out, f.Reason)
	}
	return strings.Join(out, "; ")
}

// lookalikeIndex is the rated domains a page's domain is compared with:
// the credible ones the rater lists; nil when the rater lists none.
func (e *Engine) lookalikeIndex() *lookalike.Index {
	e.lookalikeOnce.Do(func() {
		if cs, ok := e.deps.Rater.(CredibleSites); ok {
			e.lookalikes = lookalike.New(cs.CredibleDomains())
		}
	})
	return e.lookalikes
}

// flagSources sets each read page's flags from its domain and from the
// other pages' texts.
func (r *run) flagSources() {
	x := r.e.lookalikeIndex()
	var read []int
	for i := range r.c.Sources {
		s := &r.c.Sources[i]
		s.Flags = nil
		if f, ok := lookalikeFlag(x, *s); ok {
			s.Flags = append(s.Flags, f)
		}
		if f, ok := machineTextFlag(*s); ok {
			s.Flags = append(s.Flags, f)
		}
		if f, ok := scrapedFlag(*s); ok {
			s.Flags = append(s.Flags, f)
		}
		if f, ok := affiliateFlag(*s); ok {
			s.Flags = append(s.Flags, f)
		}
		ref := cmp.Or(r.c.Post.PostedAt, r.c.CreatedAt)
		if f, ok := newDomainFlag(*s, ref); ok {
			s.Flags = append(s.Flags, f)
		} else if f, ok := firstSeenFlag(*s, ref, r.c.CreatedAt); ok {
			s.Flags = append(s.Flags, f)
		}
		if len(s.Paragraphs) > 0 {
			read = append(read, i)
		}
	}
	sets := make([]shingleSet, len(read))
	for k, i := range read {
		sets[k] = shingles(strings.Join(r.c.Sources[i].Paragraphs, "\n"))
	}
	for a := range read {
		for b := a + 1; b < len(read); b++ {
			sa, sb := &r.c.Sources[read[a]], &r.c.Sources[read[b]]
			if !nearCopy(sets[a], sets[b]) {
				continue
			}
			fa, fb := copyFlags(*sa, *sb)
			if fa != nil {
				sa.Flags = append(sa.Flags, *fa)
			}
			if fb != nil {
				sb.Flags = append(sb.Flags, *fb)
			}
		}
	}
}

// lookalikeFlag flags a page whose domain, or the domain it redirected
// to, imitates a rated publisher's.
func lookalikeFlag(x *lookalike.Index, s Source) (SourceFlag, bool) {
	if x == nil {
		return SourceFlag{}, false
	}
	for _, u := range []string{s.FinalURL, s.URL} {
		if u == "" {
			continue
		}
		if m, ok := x.Check(u); ok {
			return SourceFlag{Kind: FlagLookalike, Of: m.Of, Reason: "its domain " + m.Reason()}, true
		}
	}
	return SourceFlag{}, false
}

// copyFlags flags near copies on unrelated domains, a's flag first:
// pages on one registrable domain, or crediting a news agency
// (syndication, which Origins counts as one origin), are not flagged. Of
// two copies, a page the ratings vouch for (tier high or medium), or the
// one published first, is not flagged; the other is.
func copyFlags(a, b Source) (fa, fb *SourceFlag) {
	da := sources.RegistrableDomain(sources.HostOf(cmp.Or(a.FinalURL, a.URL)))
	db := sources.RegistrableDomain(sources.HostOf(cmp.Or(b.FinalURL, b.URL)))
	if da == db || WireCredit(a) != "" || WireCredit(b) != "" {
		return nil, nil
	}
	later := func(s, of Source) bool { // the other is dated earlier: s is the copy
		return !s.Published.IsZero() && !of.Published.IsZero() && s.Published.After(of.Published)
	}
	flag := func(s, of Source, ofDomain string) *SourceFlag {
		if s.Tier == TierHigh || s.Tier == TierMedium || later(of, s) {
			return nil
		}
		return &SourceFlag{Kind: FlagCopy, Of: of.URL,
			Reason: fmt.Sprintf("its text is largely the same as %s's page, with no news agency credited", ofDomain)}
	}
	return flag(a, b, db), flag(b, a, da)
}
