package pipeline

import (
	"cmp"
	"maps"
	"slices"
	"strings"
	"time"
	"unicode"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
)

// Check is one fact-check of one post: its input, everything each stage
// found, and what the person changed. It is the unit the engine runs, the
// TUI shows, the case store keeps and `muse check --json` prints.
type Check struct {
	ID        string    `json:"id"`
	CreatedAt time.Time `json:"created_at"`
	Post      Post      `json:"post"`
	Cutoff    time.Time `json:"cutoff,omitzero"` // only pages published before it count; zero: no cutoff
	// FactChecks are existing fact-checks whose claim the post repeats,
	// best first (the archive's imported ClaimReviews): shown before
	// anything else, read as sources, and given to the correction.
	FactChecks []FactCheck `json:"fact_checks,omitempty"`
	Images     []Image     `json:"images,omitempty"`
	// Video is the post's video as read (video.go): keyframes with their
	// times, the transcript, its description; nil when it has none.
	Video *Video `json:"video,omitempty"`
	// Claims are the post's checkable claims (the model's split, the
	// person's edits); none means the post is one claim, its text.
	Claims []Claim `json:"claims,omitempty"`
	// SupportJudgements are a model's judgements of the correction's
	// sentences, each kept under a hash of the sentence and the quotes
	// it cites (SupportMap reads one only while both are unchanged).
	SupportJudgements map[string]SupportJudgement `json:"support_judgements,omitempty"`
	// CheckerVerdict is the verdict the person chose for the post; ""
	// leaves it to the evidence (Verdicts). It is kept across reruns.
	CheckerVerdict Verdict `json:"checker_verdict,omitempty"`
	// CheckerNote is the note's classification and tags the person chose;
	// nil leaves them to the evidence (NoteFields). Kept across reruns.
	CheckerNote *NoteChoice `json:"checker_note,omitempty"`
	// XNote is what X's AI Note Writer API said of the post and its note
	// (`muse notes`); nil for a post that never went there.
	XNote *XNote `json:"x_note,omitempty"`
	// Verdict is Verdicts() as ForOutput derives it for `muse check
	// --json` and `muse batch`; nil on a Check the engine works on, so a
	// stored one can never go stale.
	Verdict *Verdicts `json:"verdict,omitempty"`
	Queries []Query   `json:"queries"`
	// Searches is every search provider's answer to every query (hits,
	// none, or its error); the accounting (Account) is derived from them
	// with the hits, sources and evidence.
	Searches []SearchRecord `json:"searches,omitempty"`
	Hits     []Hit          `json:"hits,omitempty"`
	Sources  []Source       `json:"sources"`
	Evidence []Evidence     `json:"evidence"`
	// QuotedOrigins is Origins(), filled by ForOutput only (the JSON
	// printed and exported), so that it is never kept apart from the
	// evidence it is derived from.
	QuotedOrigins []Origin   `json:"origins,omitempty"`
	Correction    Correction `json:"correction"`
	Usage         Usage      `json:"usage"`
	// EvidencePlan is what the evidence step expected to send, worked out
	// before its calls (its last round); Usage.ByStage["evidence"] is what
	// it did.
	EvidencePlan *EvidencePlan `json:"evidence_plan,omitempty"`
	Stages       []StageInfo   `json:"stages,omitempty"`
	Events       []Event       `json:"events,omitempty"`
	NoLLM        bool          `json:"no_llm,omitempty"` // produced by the extractive --no-llm mode: a digest, never a verdict
}

// FactCheck is a published fact-check of the claim the post makes.
type FactCheck struct {
	Claim      string    `json:"claim"`
	Claimant   string    `json:"claimant,omitempty"`
	Rating     string    `json:"rating"`
	Reviewer   string    `json:"reviewer"`
	URL        string    `json:"url,omitempty"`
	ReviewDate time.Time `json:"review_date,omitzero"`
	// Language is the fact-check's language (ISO 639-1) as its ClaimReview
	// declares it; "" when it does not say.
	Language string `json:"language,omitempty"`
	// Score is how much of the fact-check's claim the post holds, 0 to 1.
	Score float64 `json:"score"`
	// ReviewerVerified says the reviewer is who the page's domain is: the
	// ratings name that domain's publisher so, or the reviewer's name is
	// the domain's own. An unverified fact-check is shown as such and is
	// never cited: a ClaimReview may claim any reviewer.
	ReviewerVerified bool `json:"reviewer_verified"`
}

// String is the one line that announces the fact-check: "Already checked
// by PolitiFact, rated False, 2020-05-01, in English (https://…)"; one
// whose reviewer is not verified says so first: "A fact-check that claims
// to be by PolitiFact (not verified: its page is on evil.example), …".
func (f FactCheck) String() string {
	s := "Already checked by " + cmp.Or(f.Reviewer, "a fact-checker")
	if !f.ReviewerVerified {
		s = "A fact-check that claims to be by " + cmp.Or(f.Reviewer, "a fact-checker")
		if h := sources.HostOf(f.URL); h != "" {
			s += " (not verified: its page is on " + h + ")"
		} else {
			s += " (not verified)"
		}
	}
	if f.Rating != "" {
		s += ", rated " + f.Rating
	}
	if !f.ReviewDate.IsZero() {
		s += ", " + f.ReviewDate.Format(time.DateOnly)
	}
	if f.Language != "" {
		s += ", in " + lang.Name(f.Language)
	}
	if f.URL != "" {
		s += " (" + f.URL + ")"
	}
	return s
}

// Post is the social-media post under check.
type Post struct {
	Text              string    `json:"text"`
	Author            string    `json:"author,omitempty"`
	Handle            string    `json:"handle,omitempty"`
	AuthorDescription string    `json:"author_description,omitempty"`
	PostedAt          time.Time `json:"posted_at,omitzero"`
	URL               string    `json:"url,omitempty"`
	Platform          string    `json:"platform,omitempty"`
	Images            []string  `json:"images,omitempty"` // paths or URLs as given
	// AltTexts is the description the post's author gave each image (its
	// alt text), by the image's entry in Images.
	AltTexts map[string]string `json:"alt_texts,omitempty"`
	// Videos are the post's videos, paths or URLs as given (the first is
	// read).
	Videos []string `json:"videos,omitempty"`
	// VideoPosters is the poster image the platform serves for each video,
	// by its entry in Videos: a public frame that reverse image search can
	// be asked about (keyframes cut on this machine have no public URL).
	VideoPosters map[string]string `json:"video_posters,omitempty"`
	// Language is the post's language (ISO 639-1): the checker's, or
	// detected from the post's and its images' text before the queries
	// are written (sources/lang); "" while unknown.
	Language string `json:"language,omitempty"`
	// Context is what the post points at (its link card, the post it
	// quotes, the posts it replies to): never the author's own words.
	Context []ContextItem `json:"context,omitempty"`
	// Notes say what could not be read of the post and what it points at
	// (a deleted quote, a blocked parent, posts above the ones read).
	Notes []string `json:"notes,omitempty"`
}

// Image is one post image and what was learned from it.
type Image struct {
	Source      string   `json:"source"` // path or URL
	AltText     string   `json:"alt_text,omitempty"`
	Caption     string   `json:"caption,omitempty"`
	OCRText     string   `json:"ocr_text,omitempty"`
	People      []string `json:"people,omitempty"`
	Description string   `json:"description,omitempty"` // the informative description used in prompts
	Origin      string   `json:"origin,omitempty"`      // where the description came from: vision model, ocr, alt text, user (comma-separated when merged)
	TextOrigin  string   `json:"text_origin,omitempty"` // where OCRText came from: ocr
	Edited      bool     `json:"edited,omitempty"`
	Error       string   `json:"error,omitempty"`
	// Format, Width and Height are what the loaded content is (png, jpeg,
	// gif, webp); PHash is its 64-bit perceptual hash in hex, kept so that
	// a rerun from a later stage can still compare pages' images with it.
	Format string `json:"format,omitempty"`
	Width  int    `json:"width,omitempty"`
	Height int    `json:"height,omitempty"`
	PHash  string `json:"phash,omitempty"`
}

// Query origins.
const (
	OriginModel    = "model"
	OriginUser     = "user"
	OriginFallback = "fallback"
)

// Query is one web search query.
type Query struct {
	Text    string `json:"text"`
	Origin  string `json:"origin"` // model|user|fallback
	Enabled bool   `json:"enabled"`
	// Language is the language the query is known to be written in (ISO
	// 639-1): English for the English query of a post in another language,
	// the post's for queries made from its text; "" when not known.
	Language string `json:"language,omitempty"`
}

// Hit is one search result before its page is read.
type Hit struct {
	URL       string    `json:"url"`
	Title     string    `json:"title,omitempty"`
	Snippet   string    `json:"snippet,omitempty"`
	Published time.Time `json:"published,omitzero"`
	Provider  string    `json:"provider"`
	Query     string    `json:"query"`
	Rank      int       `json:"rank"`
	Pass      int       `json:"pass"` // 1 = first search, 2 = the wider second pass
	// Restricted: found by the search restricted to credible publishers'
	// sites rather than the open one.
	Restricted  bool                 `json:"restricted,omitempty"`
	ClaimReview *sources.ClaimReview `json:"claim_review,omitempty"`
}

// Tier is a publisher's priority as a reference: sources/ratings' one
// type, with the one order (Tier.Rank: high, medium, low, unrated,
// excluded), used by the engine, the prompts and the app.
type Tier = ratings.Tier

// Tiers of publishers, in priority order (DESIGN.md).
const (
	TierHigh     = ratings.TierHigh
	TierMedium   = ratings.TierMedium
	TierLow      = ratings.TierLow
	TierUnrated  = ratings.TierUnrated
	TierExcluded = ratings.TierExcluded
)

// Status says why a page was used or kept out.
type Status string

// Source statuses.
const (
	StatusUsed           Status = "used"
	StatusNotNeeded      Status = "not_needed"
	StatusDropped        Status = "dropped"
	StatusBoosted        Status = "boosted"
	StatusExcludedRating Status = "excluded_rating"
	StatusExcludedCutoff Status = "excluded_cutoff"
	StatusUndated        Status = "undated"
	StatusIrrelevant     Status = "irrelevant"
	StatusFetchFailed    Status = "fetch_failed"
	StatusDuplicate      Status = "duplicate"
	StatusTooShort       Status = "too_short"
	StatusPending        Status = "pending" // read and eligible, not yet looked at for evidence
	// StatusNotJudged: sent to the model for evidence, but no usable answer
	// came back about it, even asked on its own (a content filter, a
	// refusal, an error in place of the answer, an answer that could not be
	// read, a server that failed). Reason says which, in the server's or
	// the model's own words. Such a page neither refutes nor fails to: it
	// was not judged, and a rerun of the evidence stage asks again.
	StatusNotJudged Status = "not_judged"
	// StatusPartial: the page is behind a paywall or registration wall
	// (Wall says what showed it) and no whole copy of it was found: only
	// its opening was read. That opening is read for evidence like any
	// page, and a quote from it counts; when it yields none the page stays
	// partial, and nothing says it does not refute or support the post.
	StatusPartial Status = "partial"
	// StatusBlocked: the site's bot protection (a challenge or block page
	// of Cloudflare, Akamai, …) answered in place of the page, and the
	// local archive holds no copy of it: the page exists but muse could
	// not read it, which is not a missing page.
	StatusBlocked Status = "blocked"
)

// Source is one candidate page: how it was rated, read and judged.
type Source struct {
	URL       string `json:"url"`
	FinalURL  string `json:"final_url,omitempty"`
	Title     string `json:"title,omitempty"`
	Publisher string `json:"publisher,omitempty"`
	// PublisherRated says Publisher is the name the ratings give the
	// domain; otherwise it is what the page (og:site_name) or the search
	// result called itself, a claim (see Label).
	PublisherRated bool      `json:"publisher_rated,omitempty"`
	Domain         string    `json:"domain"`
	Published      time.Time `json:"published,omitzero"`
	Tier           Tier      `json:"tier"`
	Factuality     string    `json:"factuality,omitempty"`
	Bias           string    `json:"bias,omitempty"`
	RatingOrigin   string    `json:"rating_origin,omitempty"`
	Relevance      float64   `json:"relevance"`
	Status         Status    `json:"status"`
	Reason         string    `json:"reason,omitempty"` // human words for Status
	Boosted        bool      `json:"boosted,omitempty"`
	Dropped        bool      `json:"dropped,omitempty"` // dropped by the person; survives reruns
	Words          int       `json:"words,omitempty"`
	// Language is the page's language (ISO 639-1): what the extractor
	// found, else detected from its text when its relevance is judged.
	Language   string   `json:"language,omitempty"`
	Paragraphs []string `json:"paragraphs,omitempty"` // extracted main text, for quoting and verification
	Snapshot   string   `json:"snapshot,omitempty"`   // archive key of the stored page
	SentChars  int      `json:"sent_chars,omitempty"` // page text sent to the model for evidence
	// Sent says how much of the page the model was shown for evidence:
	// all of it, or which passages and why; nil when it was not sent.
	Sent      *PageSent `json:"sent,omitempty"`
	FetchedAt time.Time `json:"fetched_at,omitzero"`
	// SHA256 is the SHA-256 (hex) of the page's bytes as served when muse
	// fetched it: the hash an evidence pack gives its page.html (a
	// published correction is tied to the pack by it); "" when muse kept
	// no bytes of the page (its text came from the archive).
	SHA256  string   `json:"sha256,omitempty"`
	FoundBy []string `json:"found_by,omitempty"` // "provider: query"
	// Image is the page's lead image (og:image); ImageSimilarity is the
	// best perceptual-hash similarity between it and a post image.
	Image           string  `json:"image,omitempty"`
	ImageSimilarity float64 `json:"image_similarity,omitempty"`
	// OfPost says how the page was found to be about this very post (a
	// fact-check or report of it): OfPostClaimReview or OfPostLinks; ""
	// when it is not. Such a page is ranked first (ofpost.go).
	OfPost string `json:"of_post,omitempty"`
	// ClaimReview is the page's own fact-check of the post, its rating
	// shown and given to the correction; nil when it has none.
	ClaimReview *sources.ClaimReview `json:"claim_review,omitempty"`
	// Wall is the paywall or registration wall the page shows when its
	// text is only what the wall leaves readable; nil when it was read
	// whole (or a whole copy was read instead: TextFrom says which).
	Wall *extract.Wall `json:"wall,omitempty"`
	// TextFrom says where the text read came from when it is not the live
	// page, and why: "the local archive (the live page is paywalled)",
	// "the page's AMP version https://… (the live page has 12 words of
	// text)", "pasted by the checker"; "" for the live page.
	TextFrom string `json:"text_from,omitempty"`
	// Flags are warning signs about the page (a domain imitating a rated
	// publisher's, a near copy of a page elsewhere), each with its reason;
	// set when the pages are read (flags.go). They are shown, not counted.
	Flags []SourceFlag `json:"flags,omitempty"`
	// DomainRegistered is when the page's domain was registered, as its
	// registry's RDAP server says; asked only of unrated publishers, and
	// only when RDAP is turned on (rdap = true).
	DomainRegistered time.Time `json:"domain_registered,omitzero"`
	// FirstRead is when muse's archive first held a page of the page's
	// domain, read from the archive when the page was read; asked only of
	// unrated publishers; nil when not asked or never held.
	FirstRead *DomainSighting `json:"first_read,omitempty"`
	// Affiliate counts the page's affiliate links when the page names no
	// author and no date (affiliateFlag); nil otherwise.
	Affiliate *AffiliateLinks `json:"affiliate_links,omitempty"`
	// CanonicalURL is the address the page gives as its own (link
	// rel=canonical, og:url) when it is not the one read; on another
	// publisher's site it names the story's origin (Origins).
	CanonicalURL string `json:"canonical_url,omitempty"`
	// Syndication is where the page declares its story comes from (a
	// syndication-source tag, schema.org isBasedOn or sourceOrganization,
	// an agency as author, "Originally published by …"); nil when it
	// declares nothing.
	Syndication *extract.Syndication `json:"syndication,omitempty"`
	// PublishedPartial is the year, or year and month, the page gives
	// when it states no day and nothing else dates it ("2008", "2008-03"
	// in JSON; Published is then absent). It is shown, never compared:
	// such a year is often a copyright line's or a "since 2008", so the
	// page stays undated for the cutoff, the post's time and every
	// before/after decision.
	PublishedPartial sources.PartialDate `json:"published_partial,omitzero"`
}

// Kind is what a quote does to the post (prompts.Kind, with its Rank:
// refutations before context).
type Kind = prompts.Kind

// Evidence kinds.
const (
	KindRefutes  = prompts.KindRefutes
	KindSupports = prompts.KindSupports
	KindContext  = prompts.KindContext
)

// Evidence is one quote taken from a source page.
type Evidence struct {
	SourceURL string `json:"url"`
	// Quote is the page's own wording, located in the page; ModelQuote is
	// what the model wrote, kept when it differs (case, punctuation, an
	// ellipsis, a lead-in) or when the quote could not be verified.
	Quote      string `json:"quote"`
	ModelQuote string `json:"model_quote,omitempty"`
	Kind       Kind   `json:"kind"` // refutes|supports|context: its stance
	// Claim is the post's claim the quote bears on, from 1; 0 is claim 1.
	Claim    int  `json:"claim,omitempty"`
	Verified bool `json:"verified"` // the page's text up to form (LocateQuote)
	Included bool `json:"included"` // used for the correction; the person may untick it
	// Reason says why a quote was not verified (and the closest passage of
	// the page), so the checker sees why it was left out.
	Reason string `json:"reason,omitempty"`
}

// Correction is the note written for the post.
type Correction struct {
	Text     string   `json:"text"`
	URLs     []string `json:"urls"`
	Warnings []string `json:"warnings"`
	Edited   bool     `json:"edited,omitempty"` // changed by a person after the model wrote it
	Model    string   `json:"model,omitempty"`
}

// Usage counts model calls, tokens, cost and time for the check, in all
// and by stage. CachedCalls are the calls among LLMCalls answered by the
// response cache: their tokens count, their cost is 0.
type Usage struct {
	llm.Usage
	Seconds float64               `json:"seconds"`
	ByStage map[string]StageUsage `json:"by_stage,omitempty"`
}

// StageUsage is Usage for one stage: the same record as a call's.
type StageUsage = llm.Usage

// Clone returns a deep copy of c, so that a caller can read it while the
// engine keeps working on the original (events carry clones of items for
// the same reason).
func (c *Check) Clone() *Check {
	if c == nil {
		return nil
	}
	d := *c
	d.Post.Images = slices.Clone(c.Post.Images)
	d.Post.AltTexts = maps.Clone(c.Post.AltTexts)
	d.Post.Videos = slices.Clone(c.Post.Videos)
	d.Post.VideoPosters = maps.Clone(c.Post.VideoPosters)
	d.Video = c.Video.clone()
	d.SupportJudgements = maps.Clone(c.SupportJudgements)
	d.Post.Context = slices.Clone(c.Post.Context)
	d.Post.Notes = slices.Clone(c.Post.Notes)
	d.QuotedOrigins = slices.Clone(c.QuotedOrigins)
	d.Images = make([]Image, len(c.Images))
	for i, im := range c.Images {
		im.People = slices.Clone(im.People)
		d.Images[i] = im
	}
	if c.Images == nil {
		d.Images = nil
	}
	d.FactChecks = slices.Clone(c.FactChecks)
	d.Queries = slices.Clone(c.Queries)
	d.Claims = slices.Clone(c.Claims)
	if c.CheckerNote != nil {
		n := *c.CheckerNote
		n.Tags = slices.Clone(n.Tags)
		d.CheckerNote = &n
	}
	d.XNote = c.XNote.clone()
	if c.Verdict != nil {
		v := *c.Verdict
		v.Claims = slices.Clone(v.Claims)
		d.Verdict = &v
	}
	d.Searches = slices.Clone(c.Searches)
	d.Hits = make([]Hit, len(c.Hits))
	for i, h := range c.Hits {
		d.Hits[i] = h.clone()
	}
	if c.Hits == nil {
		d.Hits = nil
	}
	d.Sources = make([]Source, len(c.Sources))
	for i, s := range c.Sources {
		d.Sources[i] = s.clone()
	}
	if c.Sources == nil {
		d.Sources = nil
	}
	d.Evidence = slices.Clone(c.Evidence)
	if c.EvidencePlan != nil {
		p := *c.EvidencePlan
		d.EvidencePlan = &p
	}
	d.Correction.URLs = slices.Clone(c.Correction.URLs)
	d.Correction.Warnings = slices.Clone(c.Correction.Warnings)
	d.Usage.ByStage = maps.Clone(c.Usage.ByStage)
	d.Stages = slices.Clone(c.Stages)
	d.Events = slices.Clone(c.Events)
	for i := range d.Events {
		d.Events[i].Item = cloneItem(d.Events[i].Item)
	}
	return &d
}

func (h Hit) clone() Hit {
	if h.ClaimReview != nil {
		cr := *h.ClaimReview
		h.ClaimReview = &cr
	}
	return h
}

func (s Source) clone() Source {
	s.Paragraphs = slices.Clone(s.Paragraphs)
	s.FoundBy = slices.Clone(s.FoundBy)
	s.Flags = slices.Clone(s.Flags)
	if s.ClaimReview != nil {
		cr := *s.ClaimReview
		cr.Appearances = slices.Clone(cr.Appearances)
		s.ClaimReview = &cr
	}
	if s.Wall != nil {
		w := *s.Wall
		w.Signs = slices.Clone(w.Signs)
		s.Wall = &w
	}
	if s.Sent != nil {
		p := *s.Sent
		p.Passages = slices.Clone(p.Passages)
		s.Sent = &p
	}
	return s
}

// cloneItem copies an event item so the receiver never shares memory with
// the Check the engine is still writing.
func cloneItem(it any) any {
	switch v := it.(type) {
	case Source:
		return v.clone()
	case Hit:
		return v.clone()
	case Image:
		v.People = slices.Clone(v.People)
		return v
	case Video:
		return *v.clone()
	case Correction:
		v.URLs = slices.Clone(v.URLs)
		v.Warnings = slices.Clone(v.Warnings)
		return v
	case Usage:
		v.ByStage = maps.Clone(v.ByStage)
		return v
	default: // Query, Evidence and nil are plain values
		return it
	}
}

// EnabledQueries returns the text of every query that will be searched.
func (c *Check) EnabledQueries() []string {
	var out []string
	for _, q := range c.Queries {
		if q.Enabled && strings.TrimSpace(q.Text) != "" {
			out = append(out, strings.TrimSpace(q.Text))
		}
	}
	return out
}

// SourceByURL returns the source with the given URL (as found or after
// redirects), or nil.
func (c *Check) SourceByURL(u string) *Source {
	key := sources.Key(u)
	for i := range c.Sources {
		s := &c.Sources[i]
		if sources.Key(s.URL) == key || (s.FinalURL != "" && sources.Key(s.FinalURL) == key) {
			return s
		}
	}
	return nil
}

// IncludedEvidence returns the verified quotes the person has not unticked:
// the only material a correction may rest on.
func (c *Check) IncludedEvidence() []Evidence {
	var out []Evidence
	for _, e := range c.Evidence {
		if e.Included && e.Verified {
			out = append(out, e)
		}
	}
	return out
}

// ForOutput is the Check as `muse check --json` and `muse batch` print it:
// a copy without the pages' extracted text, which is kept for quoting and
// verification but is not part of the contract, and with its verdicts
// derived now (Verdict).
func (c *Check) ForOutput() *Check {
	d := c.Clone()
	d.QuotedOrigins = c.Origins()
	for i := range d.Sources {
		d.Sources[i].Paragraphs = nil
	}
	d.Verdict = nil
	if v := c.Verdicts(); v.Post != "" {
		d.Verdict = &v
	}
	return d
}

// maxClaimedName is how many characters of a name a page gives itself are
// shown.
const maxClaimedName = 60

// Label is the name muse gives the source, on one line: the publisher as
// the ratings name it; otherwise its domain, followed by the name the page
// or the search result gives itself as that page's claim ("evil.example
// (calls itself “Reuters”)"), so that a page cannot take a rated
// publisher's name. Brackets, quotes and markers are taken out of the
// claimed name, so it can forge nothing where it is shown.
func (s Source) Label() string {
	if s.PublisherRated && strings.TrimSpace(s.Publisher) != "" {
		return strings.Join(strings.Fields(s.Publisher), " ")
	}
	domain := cmp.Or(s.Domain, sources.HostOf(cmp.Or(s.FinalURL, s.URL)), s.URL)
	name := strings.Join(strings.Fields(strings.Map(func(r rune) rune {
		if strings.ContainsRune(`[]<>"“”«»{}|`+"`", r) || unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s.Publisher)), " ")
	if r := []rune(name); len(r) > maxClaimedName {
		name = string(r[:maxClaimedName-1]) + "…"
	}
	if name == "" || strings.EqualFold(name, domain) {
		return domain
	}
	return domain + " (calls itself “" + name + "”)"
}
