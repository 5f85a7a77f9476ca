package pipeline

import (
	"encoding/json"
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
)

// SearchRecord is one search provider's answer to one query in one search
// pass: how many hits it gave (before they were merged with the other
// providers'), or the error it failed with. The search stage keeps one for
// every query and provider it asked; the accounting is derived from them.
type SearchRecord struct {
	Pass     int    `json:"pass"`
	Query    string `json:"query"`
	Provider string `json:"provider"`
	Hits     int    `json:"hits"`
	Error    string `json:"error,omitempty"`
}

// Search outcomes.
const (
	SearchHits   = "hits"
	SearchNoHits = "no_hits"
	SearchFailed = "failed"
)

// Outcome is what the search answered: hits, no hits, or failed (an error
// and no hit).
func (s SearchRecord) Outcome() string {
	switch {
	case s.Hits > 0:
		return SearchHits
	case s.Error != "":
		return SearchFailed
	}
	return SearchNoHits
}

// Fate is what became of one page a search found.
type Fate string

// Fates of pages, in the order the accounting names them.
const (
	FateRefutes        Fate = "refutes"         // judged: the model quoted it refuting the post
	FateSupports       Fate = "supports"        // judged: quoted confirming the post, refuting none of it
	FateContext        Fate = "context"         // judged: quoted for context only
	FateNothing        Fate = "nothing"         // judged: nothing on it bears on the post
	FateOffTopic       Fate = "off_topic"       // read, and not about the post (the relevance gate)
	FateNotJudged      Fate = "not_judged"      // sent to the model, its answer lost
	FateNotSent        Fate = "not_sent"        // read and eligible, not sent to the model
	FateFetchFailed    Fate = "fetch_failed"    // could not be fetched or its text extracted
	FateTooShort       Fate = "too_short"       // fetched, too little text to read
	FateNotFetched     Fate = "not_fetched"     // found but never fetched
	FateExcludedCutoff Fate = "excluded_cutoff" // published after the cutoff
	FateUndated        Fate = "undated"         // no date, so not shown to predate the cutoff
	FateExcludedRating Fate = "excluded_rating" // its publisher is not a credible reference
	FateDropped        Fate = "dropped"         // dropped by the person
	FateDuplicate      Fate = "duplicate"       // the same page or text as another
	FatePartial        Fate = "partial"         // behind a paywall or registration wall: only its opening was read, and it bears on nothing
	FateBlocked        Fate = "blocked"         // the site's bot protection refused muse
)

// Judged reports whether the model gave its answer about the page.
func (f Fate) Judged() bool { return f.Bears() || f == FateNothing }

// Bears reports whether the page bears on the post (it was quoted), in
// any stance.
func (f Fate) Bears() bool { return f == FateRefutes || f == FateSupports || f == FateContext }

// PageFate is one page's line in the accounting.
type PageFate struct {
	URL    string `json:"url"`
	Fate   Fate   `json:"fate"`
	Reason string `json:"reason,omitempty"`
}

// Conclusions of a check.
const (
	// ConclusionEvidence: a page or a published fact-check bears on the post.
	ConclusionEvidence = "evidence"
	// ConclusionNothingFound: checked, and nothing found bears on the post.
	ConclusionNothingFound = "nothing_found"
	// ConclusionNotChecked: the work that could find a source did not
	// happen (the search failed, no page could be read, the model's
	// answers were lost): muse could not check.
	ConclusionNotChecked = "could_not_check"
)

// Accounting is what became of a check's search: each provider's answer to
// each query, what became of each page found, how many of each, the
// conclusion it supports and the sentence that says it. It is derived from
// the Check's own records (its searches, hits, sources and evidence) by
// Check.Account, never stored beside them.
type Accounting struct {
	Searches   []SearchAnswer `json:"searches,omitempty"`
	Pages      []PageFate     `json:"pages,omitempty"`
	Counts     map[Fate]int   `json:"counts,omitempty"`
	FactChecks int            `json:"fact_checks,omitempty"` // published fact-checks of the claim that stand as evidence
	Conclusion string         `json:"conclusion"`
	// Summary says, in the journalist's words, what was checked and what
	// was not: "7 pages were read and none addresses the post; 2 more were
	// too short to read".
	Summary string `json:"summary"`
}

// SearchAnswer is a SearchRecord with its outcome spelled out.
type SearchAnswer struct {
	SearchRecord
	Outcome string `json:"outcome"`
}

// fateOf says what became of a source.
func fateOf(s Source, c *Check) Fate {
	switch {
	case s.Dropped || s.Status == StatusDropped:
		return FateDropped
	}
	switch s.Status {
	case StatusUsed:
		quoted := func(k Kind) bool {
			return slices.ContainsFunc(c.Evidence, func(e Evidence) bool {
				return e.Verified && e.Kind == k && sources.Key(e.SourceURL) == sources.Key(s.URL)
			})
		}
		switch {
		case quoted(KindRefutes):
			return FateRefutes
		case quoted(KindSupports):
			return FateSupports
		}
		return FateContext
	case StatusNotNeeded:
		if strings.HasPrefix(s.Reason, judgedReason) {
			return FateNothing
		}
		return FateNotSent
	case StatusNotJudged:
		return FateNotJudged
	case StatusIrrelevant:
		return FateOffTopic
	case StatusFetchFailed:
		return FateFetchFailed
	case StatusTooShort:
		if s.Wall != nil {
			return FatePartial
		}
		return FateTooShort
	case StatusPartial:
		return FatePartial
	case StatusBlocked:
		return FateBlocked
	case StatusExcludedCutoff:
		return FateExcludedCutoff
	case StatusUndated:
		return FateUndated
	case StatusExcludedRating:
		return FateExcludedRating
	case StatusDuplicate:
		return FateDuplicate
	case StatusPending, StatusBoosted:
		if s.FetchedAt.IsZero() {
			return FateNotFetched
		}
		return FateNotSent
	}
	return FateNotFetched
}

// Account derives the check's accounting from its records.
func (c *Check) Account() Accounting {
	var a Accounting
	for _, s := range c.Searches {
		a.Searches = append(a.Searches, SearchAnswer{s, s.Outcome()})
	}
	a.Counts = map[Fate]int{}
	seen := map[string]bool{}
	for _, s := range c.Sources {
		f := fateOf(s, c)
		seen[sources.Key(s.URL)] = true
		a.Pages = append(a.Pages, PageFate{URL: s.URL, Fate: f, Reason: s.Reason})
		a.Counts[f]++
	}
	for _, h := range c.Hits {
		if k := sources.Key(h.URL); !seen[k] {
			seen[k] = true
			a.Pages = append(a.Pages, PageFate{URL: h.URL, Fate: FateNotFetched, Reason: "found but not read"})
			a.Counts[FateNotFetched]++
		}
	}
	for _, f := range c.FactChecks {
		if f.URL != "" && f.Rating != "" && f.ReviewerVerified {
			a.FactChecks++
		}
	}
	a.FactChecks += c.postVerdicts()
	a.Conclusion = c.conclusion(a)
	a.Summary = a.summary(c)
	if len(a.Counts) == 0 {
		a.Counts = nil
	}
	return a
}

// nothingSearched reports whether the check has no search on record and
// nothing found: no provider was asked anything, so nothing was checked.
func (a Accounting) nothingSearched() bool {
	return len(a.Searches) == 0 && len(a.Pages) == 0 && a.FactChecks == 0
}

// webSearched reports whether a web search provider (not only the local
// archive) was asked.
func (a Accounting) webSearched() bool {
	return slices.ContainsFunc(a.Searches, func(s SearchAnswer) bool { return s.Provider != "archive" })
}

// searchFailed reports whether every web search provider failed every
// query of the first search: nothing it should have found was looked at.
func (a Accounting) searchFailed() bool {
	web, failed := 0, 0
	for _, s := range a.Searches {
		if s.Pass != 1 || s.Provider == "archive" {
			continue
		}
		web++
		if s.Outcome == SearchFailed {
			failed++
		}
	}
	return web > 0 && failed == web
}

func (c *Check) conclusion(a Accounting) string {
	n := a.Counts
	if n[FateRefutes]+n[FateSupports]+n[FateContext] > 0 || len(c.IncludedEvidence()) > 0 || a.FactChecks > 0 {
		return ConclusionEvidence
	}
	if t := strings.TrimSpace(c.Correction.Text); t != "" && !c.Correction.Unsourced() && !c.NoLLM {
		// A correction muse wrote rests on evidence (or a person wrote it).
		return ConclusionEvidence
	}
	assessed := n[FateNothing] + n[FateOffTopic]
	unread := n[FateFetchFailed] + n[FateTooShort] + n[FateNotFetched] + n[FatePartial] + n[FateBlocked]
	switch {
	case a.searchFailed(), a.nothingSearched(), n[FateNotJudged] > 0:
		return ConclusionNotChecked
	case assessed == 0 && unread > 0:
		return ConclusionNotChecked
	case n[FateNothing] > 0 && !slices.ContainsFunc(a.Pages, func(p PageFate) bool {
		return p.Fate == FateNothing && !strings.HasPrefix(p.Reason, judgedReason+quotesOffPage)
	}):
		// Every page judged quoted something that is not on it: the
		// model's answers could not be used.
		return ConclusionNotChecked
	}
	return ConclusionNothingFound
}

// Checked reports whether the check could look for a source: it found
// one, or it looked and found nothing.
func (a Accounting) Checked() bool { return a.Conclusion != ConclusionNotChecked }

// Genuine reports whether every page found was judged or read and found
// off the subject, and none bears on the post: the one case where muse
// says that no credible source was found (NoSourceText).
func (a Accounting) Genuine() bool {
	if a.Conclusion == ConclusionEvidence || a.searchFailed() || !a.webSearched() {
		return false
	}
	for f, k := range a.Counts {
		if k > 0 && !f.Judged() && f != FateOffTopic && f != FateDuplicate {
			return false
		}
	}
	return true
}

// summary is the accounting in the journalist's words.
func (a Accounting) summary(c *Check) string {
	var parts []string
	if s := a.searchSentence(); s != "" {
		parts = append(parts, s)
	}
	n := a.Counts
	if a.Conclusion == ConclusionEvidence {
		var found []string
		if k := n[FateRefutes]; k > 0 {
			found = append(found, fmt.Sprintf("%s %s the post", pageCount(k), verb(k, "refutes", "refute"))+c.afterPost(FateRefutes, k))
		}
		if k := n[FateSupports]; k > 0 {
			found = append(found, fmt.Sprintf("%s %s the post", pageCount(k), verb(k, "confirms", "confirm"))+c.afterPost(FateSupports, k))
		}
		if k := n[FateContext]; k > 0 && c.NoLLM {
			// The extractive mode lists related paragraphs; no model
			// judged them.
			found = append(found, fmt.Sprintf("%s %s paragraphs related to the post (no model judged %s)", pageCount(k), verb(k, "has", "have"), verb(k, "it", "them")))
		} else if k > 0 {
			found = append(found, fmt.Sprintf("%s %s context", pageCount(k), verb(k, "gives", "give"))+c.afterPost(FateContext, k))
		}
		if a.FactChecks > 0 {
			found = append(found, fmt.Sprintf("%d published fact-check%s of the claim", a.FactChecks, plural(a.FactChecks)))
		}
		if len(found) > 0 {
			parts = append(parts, strings.Join(found, "; "))
		}
	}
	// Judged pages that bear on nothing; the relevance gate's pages were
	// not judged, only counted as sharing too few of the post's words.
	if k := n[FateNothing]; k > 0 {
		switch {
		case a.Conclusion == ConclusionEvidence:
			parts = append(parts, fmt.Sprintf("%d more %s read and %s not address it", k, verb(k, "was", "were"), verb(k, "does", "do")))
		case k == 1:
			parts = append(parts, "1 page was read and it does not address the post")
		default:
			parts = append(parts, fmt.Sprintf("%d pages were read and none addresses the post", k))
		}
		// Said of what the model was shown: a page longer than the cap
		// was read in part (Source.Sent).
		inPart := 0
		for _, p := range a.Pages {
			if p.Fate == FateNothing && strings.HasPrefix(p.Reason, judgedReason+partSent) {
				inPart++
			}
		}
		switch {
		case inPart == 0:
		case k == 1:
			parts[len(parts)-1] += " in the part of it sent to the model"
		default:
			parts[len(parts)-1] += fmt.Sprintf(" (%d of them in the part sent to the model)", inPart)
		}
	}
	// more names pages beside those already named ("2 more were too
	// short to read"); one and many are the predicates.
	more := func(k int, one, many string) {
		if k == 0 {
			return
		}
		lead := pageCount(k)
		if len(parts) > 0 {
			lead = fmt.Sprintf("%d more", k)
		}
		parts = append(parts, lead+" "+verb(k, one, many))
	}
	more(n[FateOffTopic], "shared too few of the post's words to be judged", "shared too few of the post's words to be judged")
	more(n[FateNotJudged], "was not judged: the model's answer about it was lost",
		"were not judged: the model's answers about them were lost")
	if k := n[FatePartial]; k > 0 {
		one, many := partialSentences(c)
		more(k, one, many)
	}
	why := a.reasonOf(FateBlocked)
	more(n[FateBlocked], "could not be read: the site's bot protection refused muse"+why, "could not be read: their sites' bot protection refused muse"+why)
	why = a.reasonOf(FateFetchFailed)
	more(n[FateFetchFailed], "could not be fetched"+why, "could not be fetched"+why)
	more(n[FateTooShort], "was too short to read", "were too short to read")
	more(n[FateNotFetched], "was found but not fetched", "were found but not fetched")
	if k := n[FateExcludedCutoff]; k > 0 {
		after := "after the cutoff you set (" + c.Cutoff.Format(time.DateOnly) + ") " + verb(k, "was", "were") + " left out"
		if c.Cutoff.Equal(c.Post.PostedAt) {
			after = "after the post " + verb(k, "was", "were") + " left out by the cutoff you set"
		}
		parts = append(parts, fmt.Sprintf("%s published %s", pageCount(k), after))
	}
	if k := n[FateUndated]; k > 0 {
		parts = append(parts, fmt.Sprintf("%s had no date to show %s the cutoff", pageCount(k), verb(k, "it predates", "they predate")))
	}
	if k := n[FateExcludedRating]; k > 0 {
		parts = append(parts, fmt.Sprintf("%s %s left out because %s publisher%s %s not rated a credible reference",
			pageCount(k), verb(k, "was", "were"), verb(k, "its", "their"), plural(k), verb(k, "is", "are")))
	}
	if k := n[FateDropped]; k > 0 {
		parts = append(parts, fmt.Sprintf("you dropped %s", pageCount(k)))
	}
	if k := n[FateNotSent]; k > 0 && a.Conclusion == ConclusionEvidence {
		parts = append(parts, fmt.Sprintf("%d more %s not needed", k, verb(k, "was", "were")))
	}
	if len(parts) == 0 {
		return "The search found no pages"
	}
	s := strings.Join(parts, "; ")
	return strings.ToUpper(s[:1]) + s[1:]
}

// partialSentences are the summary's predicates for pages read partly
// (fateOf FatePartial), for one page and for several: "was paywalled:
// only its first 79 words could be read", "were behind paywalls or
// registration walls: only their openings could be read".
func partialSentences(c *Check) (one, many string) {
	kinds := map[string]bool{}
	var words int
	for _, s := range c.Sources {
		if fateOf(s, c) == FatePartial && s.Wall != nil {
			kinds[s.Wall.Kind] = true
			words = s.Words
		}
	}
	wall, walls := "behind a paywall", "behind paywalls"
	switch {
	case len(kinds) > 1:
		wall, walls = "behind a paywall or registration wall", "behind paywalls or registration walls"
	case kinds[extract.WallRegistration]:
		wall, walls = "behind a registration wall", "behind registration walls"
	}
	one = wall + ": only its opening could be read"
	if words > 0 {
		one = fmt.Sprintf("%s: only its first %d %s could be read", wall, words, verb(words, "word", "words"))
	}
	return "was " + one, "were " + walls + ": only their openings could be read"
}

// searchSentence says what went wrong with the search, if anything: every
// provider failed, or the search found no pages.
func (a Accounting) searchSentence() string {
	if a.nothingSearched() {
		return "no search was made (no query was made of the post, or no search provider is set up and the local archive has no pages); nothing was checked"
	}
	if len(a.Searches) == 0 {
		return ""
	}
	if !a.webSearched() {
		if len(a.Pages) == 0 {
			return "the local archive was searched and holds no page about the post; no web search provider is set up: the web was not checked"
		}
		return "only the local archive was searched: no web search provider is set up"
	}
	if a.searchFailed() {
		who := a.failedProviders()
		tail := "nothing was checked"
		if len(a.Pages) > 0 {
			tail = "only the local archive answered"
		}
		return fmt.Sprintf("search failed (%s); %s", strings.Join(who, "; "), tail)
	}
	if len(a.Pages) == 0 {
		failed := a.failedProviders()
		if len(failed) > 0 {
			return "the search found no pages (" + strings.Join(failed, "; ") + ")"
		}
		return "the search found no pages"
	}
	return ""
}

// failedProviders says, for each provider that failed first-pass queries,
// how many and why: "searxng failed 12 queries: HTTP 429 Too Many Requests".
func (a Accounting) failedProviders() []string {
	type tally struct {
		n   int
		err string
	}
	var order []string
	by := map[string]*tally{}
	for _, s := range a.Searches {
		if s.Pass != 1 || s.Outcome != SearchFailed {
			continue
		}
		t := by[s.Provider]
		if t == nil {
			t = &tally{err: s.Error}
			by[s.Provider] = t
			order = append(order, s.Provider)
		}
		t.n++
	}
	var out []string
	for _, p := range order {
		t := by[p]
		out = append(out, fmt.Sprintf("%s failed %d %s: %s", p, t.n, verb(t.n, "query", "queries"), errorCause(t.err)))
	}
	return out
}

var (
	httpStatus = regexp.MustCompile(`HTTP (\d{3})( [A-Z][A-Za-z ]*[a-z])?`)
	anyURL     = regexp.MustCompile(`"?https?://[^\s"]+"?`)
)

// errorCause is a provider's or a page's error in a few words a journalist can act
// on, without the addresses it names (a correction may name no page that
// is not its evidence): "rate limit (HTTP 429)", "HTTP 503 Service
// Unavailable", "connection refused".
func errorCause(err string) string {
	m := httpStatus.FindStringSubmatch(err)
	switch {
	case m != nil && m[1] == "429", strings.Contains(strings.ToLower(err), "rate limit"):
		return "rate limit (HTTP 429)"
	case m != nil:
		return strings.TrimSpace(m[0])
	case strings.Contains(err, "connection refused"):
		return "connection refused"
	case strings.Contains(err, "HTML instead of JSON"):
		return "it answered HTML instead of JSON"
	case strings.Contains(err, "deadline exceeded"), strings.Contains(strings.ToLower(err), "timeout"), strings.Contains(err, "timed out"):
		return "timed out"
	}
	return clip(strings.Join(strings.Fields(anyURL.ReplaceAllString(err, "its address")), " "), 120)
}

// reasonOf is " (reason)" when every page of the fate failed for the same
// reason, else "".
func (a Accounting) reasonOf(f Fate) string {
	reason := ""
	for _, p := range a.Pages {
		if p.Fate != f {
			continue
		}
		if reason != "" && p.Reason != reason {
			return ""
		}
		reason = p.Reason
	}
	if reason == "" {
		return ""
	}
	return " (" + errorCause(reason) + ")"
}

func verb(n int, one, many string) string {
	if n == 1 {
		return one
	}
	return many
}

func plural(n int) string { return verb(n, "", "s") }

// NoEvidenceText is the whole correction when no evidence survived,
// derived from the accounting: NotJudgedText when the model's answers
// about pages were lost, NoSourceText when every page found was judged and
// none bears on the post, and otherwise what happened ("Search failed
// (searxng failed 12 queries: …); nothing was checked") and that muse
// cannot write a sourced correction.
func NoEvidenceText(c *Check) string {
	if t := NotJudgedText(c); t != "" {
		return t
	}
	if t := untickedText(c); t != "" {
		return t
	}
	d := *c
	d.Correction = Correction{} // the text being written is no evidence
	a := d.Account()
	if a.Genuine() {
		return NoSourceText
	}
	return a.Summary + ", so muse cannot write a sourced correction. " + noVerdict
}

// untickedLead opens untickedText.
const untickedLead = "You unticked every quote found"

// untickedText is the whole correction when the person unticked every
// verified quote on the pages they kept: the evidence is there, their
// choice left none for the correction ("" when that is not so).
func untickedText(c *Check) string {
	quotes, pages := 0, map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Verified {
			continue
		}
		s := c.SourceByURL(e.SourceURL)
		if s == nil || !s.Eligible() {
			continue
		}
		if e.Included {
			return ""
		}
		quotes++
		pages[sources.Key(s.URL)] = true
	}
	if quotes == 0 {
		return ""
	}
	return fmt.Sprintf(untickedLead+" (%d %s from %s), so muse wrote no correction from them: tick the quotes to use and write again. %s",
		quotes, verb(quotes, "quote", "quotes"), pageCount(len(pages)), noVerdict)
}

// noVerdict closes every text saying no sourced correction was written.
const noVerdict = "Nothing here says whether the post is true or false."

// checkJSON is Check's JSON with its accounting: the same fields, and
// "accounting" and the support map ("support") derived as it is written.
type checkJSON Check

// MarshalJSON writes the Check with its accounting (Account) and each
// source's time relative to the post (sourcesJSON), so that `muse check
// --json`, batch results and stored cases carry them; they are never read
// back, only derived again.
func (c Check) MarshalJSON() ([]byte, error) {
	cj := checkJSON(c)
	cj.Correction.Warnings = c.CorrectionWarnings() // as of the text written
	return json.Marshal(struct {
		checkJSON
		Sources    []sourceJSON      `json:"sources"`
		Accounting Accounting        `json:"accounting"`
		Support    []SentenceSupport `json:"support,omitempty"`
	}{cj, c.sourcesJSON(), c.Account(), c.SupportMap()})
}
