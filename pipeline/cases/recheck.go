package cases

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"sync"
	"time"
	"unicode"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
)

// Keeping checks true: a recheck reads every page a saved case cites again
// and compares it with the snapshot muse kept when the case was made. A
// page that is gone (404, 410), now leads elsewhere, no longer holds a
// passage the case quotes, gained a correction or update notice, or
// changed its title or date makes the case's evidence changed: the case
// list shows it first, and a revision draft saying which citation broke is
// kept among the case's drafts for the checker to accept.
//
// The pages are fetched through the safe fetcher, whose Store (the
// archive) supplies the ETag and Last-Modified of the page it kept, so an
// unchanged page costs a 304; each distinct URL is read once a recheck
// however many cases cite it, a bounded number at once and, by the
// fetcher's own limit, at most two per host.

// PageRecheck is what a recheck found of one cited page.
type PageRecheck struct {
	URL         string    `json:"url"`
	FinalURL    string    `json:"final_url,omitempty"`
	Status      int       `json:"status,omitempty"` // the HTTP status answered; 0 when none was
	NotModified bool      `json:"not_modified,omitempty"`
	CheckedAt   time.Time `json:"checked_at"`
	// Reasons says what changed since the page was cited, each in words
	// ("gone: HTTP 404 Not Found", "the quoted passage “…” is no longer on
	// the page"); none: the page still says what the case quotes.
	Reasons []string `json:"reasons,omitempty"`
	// Error says why the page could not be read this time (a timeout, a
	// server error, a block): not a change of the evidence, and not
	// counted as one.
	Error string `json:"error,omitempty"`
	// Acknowledged: the checker accepted the revision draft for these
	// reasons (AcceptRevision).
	Acknowledged bool `json:"acknowledged,omitempty"`
}

// CaseRecheck is the last recheck of a case's cited pages.
type CaseRecheck struct {
	ID    string        `json:"id"`
	Pages []PageRecheck `json:"pages"`
	// Draft says a revision draft was kept by this recheck (its reasons
	// were new); DraftError why it could not be.
	Draft      bool   `json:"draft,omitempty"`
	DraftError string `json:"draft_error,omitempty"`
}

// Changed reports whether any cited page changed and the change has not
// been acknowledged.
func (r CaseRecheck) Changed() bool { return r.ChangedPages() > 0 }

// ChangedPages counts the cited pages whose change is not acknowledged.
func (r CaseRecheck) ChangedPages() int {
	n := 0
	for _, p := range r.Pages {
		if len(p.Reasons) > 0 && !p.Acknowledged {
			n++
		}
	}
	return n
}

// UnreadPages counts the cited pages the recheck could not read.
func (r CaseRecheck) UnreadPages() int {
	n := 0
	for _, p := range r.Pages {
		if p.Error != "" {
			n++
		}
	}
	return n
}

// CheckedAt is when the recheck ran: its latest page's reading.
func (r CaseRecheck) CheckedAt() time.Time {
	var t time.Time
	for _, p := range r.Pages {
		if p.CheckedAt.After(t) {
			t = p.CheckedAt
		}
	}
	return t
}

// RecheckStats counts a recheck's requests.
type RecheckStats struct {
	Cases       int // cases rechecked
	Pages       int // distinct pages requested
	NotModified int // of them answered 304 Not Modified
	Failed      int // could not be read (Error)
	Changed     int // cases whose evidence changed
}

// RecheckOptions configures Recheck.
type RecheckOptions struct {
	// Fetcher reads the pages. Give it the archive as its Store so that
	// requests are conditional (fetch.Options.Store); its PerHost (2 by
	// default) bounds the requests to one host.
	Fetcher *fetch.Fetcher
	// Parallel is how many pages are read at once over all hosts; 0 means
	// 64.
	Parallel int
	// Progress, when set, is told the number of pages read so far.
	Progress func(done int)
}

// cited is one page a case cites, with what the case knew of it.
type cited struct {
	url    string
	quotes []string
	snap   *Snapshot
	src    *pipeline.Source
}

// citedPages lists the pages a case cites: those of the evidence used for
// the correction and the correction's own links, each with the verified
// quotes taken from it.
func citedPages(c *pipeline.Check) []*cited {
	var out []*cited
	byURL := map[string]*cited{}
	add := func(u string) *cited {
		if u == "" {
			return nil
		}
		key := canonicalOr(u)
		if p := byURL[key]; p != nil {
			return p
		}
		p := &cited{url: u}
		for i := range c.Sources {
			s := &c.Sources[i]
			if canonicalOr(s.URL) == key || (s.FinalURL != "" && canonicalOr(s.FinalURL) == key) {
				p.src = s
				break
			}
		}
		byURL[key] = p
		out = append(out, p)
		return p
	}
	for _, ev := range c.Evidence {
		if !ev.Included || !ev.Verified {
			continue
		}
		if p := add(ev.SourceURL); p != nil && strings.TrimSpace(ev.Quote) != "" {
			p.quotes = append(p.quotes, ev.Quote)
		}
	}
	for _, u := range c.Correction.URLs {
		add(u)
	}
	return out
}

func canonicalOr(u string) string {
	if k, err := sources.Canonical(u); err == nil {
		return k
	}
	return u
}

// fetched is one page as read again.
type fetched struct {
	page *fetch.Page
	err  error
}

// Recheck reads again the pages the cases ids cite, compares each with
// what the case kept, stores what it found (Rechecks reads it back) and,
// for a case with newly changed evidence, keeps a revision draft. A case
// that cannot be read fails the recheck; a page that cannot be read is
// noted in its PageRecheck. The cases are taken recheckChunk at a time,
// so that memory holds only their cited pages, whatever their number.
func (s *Store) Recheck(ctx context.Context, ids []string, o RecheckOptions) ([]CaseRecheck, RecheckStats, error) {
	if o.Fetcher == nil {
		return nil, RecheckStats{}, errors.New("recheck: no fetcher")
	}
	var out []CaseRecheck
	var st RecheckStats
	total := 0
	for start := 0; start < len(ids); start += recheckChunk {
		chunk := ids[start:min(len(ids), start+recheckChunk)]
		rs, err := s.recheckChunk(ctx, chunk, o, &st, &total)
		out = append(out, rs...)
		if err != nil {
			return out, st, err
		}
	}
	return out, st, nil
}

// recheckChunk is how many cases a recheck reads at a time.
const recheckChunk = 64

func (s *Store) recheckChunk(ctx context.Context, ids []string, o RecheckOptions, st *RecheckStats, done *int) ([]CaseRecheck, error) {
	type caseWork struct {
		id         string
		correction string
		pages      []*cited
	}
	var work []caseWork
	var urls []string
	seen := map[string]bool{}
	for _, id := range ids {
		c, err := s.Get(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("recheck: %w", err)
		}
		pages := citedPages(c)
		for _, p := range pages {
			sn, err := s.Snapshot(ctx, id, p.url)
			if err != nil && !errors.Is(err, ErrNotFound) {
				return nil, fmt.Errorf("recheck: %w", err)
			}
			p.snap = sn
			if !seen[p.url] {
				seen[p.url] = true
				urls = append(urls, p.url)
			}
		}
		work = append(work, caseWork{id: id, correction: c.Correction.Text, pages: pages})
	}
	got := s.fetchAll(ctx, urls, o, done)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("recheck: %w", err)
	}
	st.Cases += len(work)
	st.Pages += len(urls)
	for _, f := range got {
		switch {
		case f.err != nil && !gone(f.err):
			st.Failed++
		case f.page != nil && f.page.FromCache:
			st.NotModified++
		}
	}
	before, err := s.rechecksOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	now := s.now()
	var out []CaseRecheck
	for _, w := range work {
		r := CaseRecheck{ID: w.id}
		prev := map[string]PageRecheck{}
		for _, p := range before[w.id] {
			prev[p.URL] = p
		}
		fresh := false // some page's reasons are new
		for _, p := range w.pages {
			pr := comparePage(p, got[p.url])
			pr.CheckedAt = now
			old, had := prev[p.url]
			if pr.Error != "" && had {
				// Not read now: what the last reading found stands.
				pr.Reasons, pr.Acknowledged = old.Reasons, old.Acknowledged
			} else if had && slices.Equal(old.Reasons, pr.Reasons) {
				pr.Acknowledged = old.Acknowledged
			} else if len(pr.Reasons) > 0 {
				fresh = true
			}
			r.Pages = append(r.Pages, pr)
		}
		if fresh {
			if err := s.SaveDraft(ctx, w.id, RevisionDraft(w.correction, r.Pages, now), false); err != nil {
				r.DraftError = err.Error()
			} else {
				r.Draft = true
			}
		}
		if r.Changed() {
			st.Changed++
		}
		out = append(out, r)
	}
	if err := s.saveRechecks(ctx, out); err != nil {
		return nil, err
	}
	return out, nil
}

// fetchAll reads each URL once, o.Parallel at a time.
func (s *Store) fetchAll(ctx context.Context, urls []string, o RecheckOptions, done *int) map[string]fetched {
	n := o.Parallel
	if n <= 0 {
		n = 64
	}
	out := make(map[string]fetched, len(urls))
	var mu sync.Mutex
	var wg sync.WaitGroup
	next := make(chan string)
	for range min(n, max(len(urls), 1)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for u := range next {
				p, err := o.Fetcher.Fetch(ctx, u)
				mu.Lock()
				out[u] = fetched{page: p, err: err}
				*done++
				if o.Progress != nil {
					o.Progress(*done)
				}
				mu.Unlock()
			}
		}()
	}
feed:
	for _, u := range urls {
		select {
		case next <- u:
		case <-ctx.Done():
			break feed
		}
	}
	close(next)
	wg.Wait()
	return out
}

// gone reports whether a fetch failed because the page is no more: 404,
// 410 Gone or 451 Unavailable For Legal Reasons.
func gone(err error) bool {
	var se *fetch.StatusError
	if errors.As(err, &se) && se.Challenge == "" {
		switch se.Code {
		case http.StatusNotFound, http.StatusGone, http.StatusUnavailableForLegalReasons:
			return true
		}
	}
	return false
}

// comparePage says what changed on a cited page.
func comparePage(p *cited, f fetched) PageRecheck {
	pr := PageRecheck{URL: p.url}
	if f.err != nil {
		var se *fetch.StatusError
		if errors.As(f.err, &se) {
			pr.Status = se.Code
		}
		if gone(f.err) {
			pr.Reasons = []string{reasonGone + se.Error()}
		} else {
			pr.Error = f.err.Error()
		}
		return pr
	}
	if f.page == nil {
		pr.Error = "not read (the recheck was stopped)"
		return pr
	}
	pg := f.page
	pr.Status, pr.FinalURL, pr.NotModified = pg.Status, pg.FinalURL, pg.FromCache
	if pg.FromCache {
		pr.Status = http.StatusNotModified
	}
	wasAt := p.url
	switch {
	case p.snap != nil && p.snap.FinalURL != "":
		wasAt = p.snap.FinalURL
	case p.src != nil && p.src.FinalURL != "":
		wasAt = p.src.FinalURL
	}
	if pg.FinalURL != "" && canonicalOr(pg.FinalURL) != canonicalOr(wasAt) && canonicalOr(pg.FinalURL) != canonicalOr(p.url) {
		pr.Reasons = append(pr.Reasons, reasonMoved+pg.FinalURL)
	}
	if p.snap != nil && len(p.snap.RawHTML) > 0 && bytes.Equal(pg.Raw, p.snap.RawHTML) {
		return pr // the very bytes the case kept
	}
	now, err := extract.Options{}.ExtractContent(pg.Raw, pg.ContentType, pg.FinalURL)
	if err != nil {
		pr.Error = "the page read again could not be extracted: " + err.Error()
		return pr
	}
	oldText, oldTitle, oldDate := "", "", time.Time{}
	if p.src != nil {
		oldText, oldTitle, oldDate = strings.Join(p.src.Paragraphs, "\n\n"), p.src.Title, p.src.Published
	}
	if p.snap != nil {
		if p.snap.Text != "" {
			oldText = p.snap.Text
		}
		if len(p.snap.RawHTML) > 0 {
			if was, err := (extract.Options{}).ExtractContent(p.snap.RawHTML, "", p.snap.FinalURL); err == nil {
				oldTitle, oldDate = was.Title, was.Published
				if oldText == "" {
					oldText = was.Text
				}
			}
		}
	}
	for _, q := range p.quotes {
		if pipeline.LocateQuote(q, now.Text).Verified {
			continue
		}
		if oldText != "" && !pipeline.LocateQuote(q, oldText).Verified {
			continue // not the page's text before either: nothing to compare
		}
		pr.Reasons = append(pr.Reasons, reasonQuoteLost+"“"+clip(q, 120)+"” is no longer on the page")
	}
	// A notice is added only against a text it was not in: a page the case
	// kept no text of (a link the checker added, not read by the check) may
	// have had it all along.
	for _, par := range now.Paragraphs {
		if oldText != "" && isNotice(par) && !pipeline.LocateQuote(par, oldText).Verified {
			pr.Reasons = append(pr.Reasons, reasonNotice+"“"+clip(par, 160)+"”")
		}
	}
	if oldTitle != "" && now.Title != "" && !sameForm(oldTitle, now.Title) {
		pr.Reasons = append(pr.Reasons, reasonTitle+"“"+clip(oldTitle, 100)+"” → “"+clip(now.Title, 100)+"”")
	}
	if !oldDate.IsZero() && !now.Published.IsZero() && oldDate.Format(time.DateOnly) != now.Published.Format(time.DateOnly) {
		pr.Reasons = append(pr.Reasons, reasonDate+oldDate.Format(time.DateOnly)+" → "+now.Published.Format(time.DateOnly))
	}
	return pr
}

// How each reason a recheck gives begins: Findings reads the kind back
// from the stored reason, so no label is stored beside it.
const (
	reasonGone      = "gone: "
	reasonMoved     = "now leads elsewhere: "
	reasonQuoteLost = "the quoted passage "
	reasonNotice    = "a notice was added: "
	reasonTitle     = "the title changed: "
	reasonDate      = "the date changed: "
)

// The kinds of change a recheck finds on a cited page.
const (
	FindingGone      = "gone"          // 404, 410 or 451
	FindingMoved     = "redirected"    // now leads to another page
	FindingQuoteLost = "quote lost"    // a quoted passage is no longer on the page
	FindingNotice    = "notice added"  // a correction or update notice was added
	FindingTitle     = "title changed" // the page's title changed
	FindingDate      = "date changed"  // the page's date changed
	FindingOther     = "changed"       // a reason of another form
)

// Finding is one change a recheck found on a page: its kind and the
// recheck's words for it.
type Finding struct {
	Kind string
	Text string
}

// Label is the finding in a few words: "gone (410)", "quote lost".
func (f Finding) Label(status int) string {
	if f.Kind == FindingGone && status != 0 {
		return fmt.Sprintf("%s (%d)", f.Kind, status)
	}
	return f.Kind
}

// Findings are the page's changes, each with its kind, read from its
// Reasons as the recheck wrote them.
func (p PageRecheck) Findings() []Finding {
	kinds := []struct{ prefix, kind string }{
		{reasonGone, FindingGone}, {reasonMoved, FindingMoved}, {reasonQuoteLost, FindingQuoteLost},
		{reasonNotice, FindingNotice}, {reasonTitle, FindingTitle}, {reasonDate, FindingDate},
	}
	out := make([]Finding, 0, len(p.Reasons))
	for _, r := range p.Reasons {
		f := Finding{Kind: FindingOther, Text: r}
		for _, k := range kinds {
			if strings.HasPrefix(r, k.prefix) {
				f.Kind = k.kind
				break
			}
		}
		out = append(out, f)
	}
	return out
}

// noticeRe finds a paragraph that is a correction or update notice:
// "Correction: …", "CORRECTION (March 3): …", "Update, 5 p.m.: …",
// "Editor's note: …", "Clarification — …".
var noticeRe = regexp.MustCompile(`(?i)^[\s*_\[(]*(corrections?|clarifications?|updates?|editor['’]?s['’]? notes?)\b[^:—–\n]{0,40}[:—–]\s*\S`)

// isNotice reports whether a paragraph is a correction or update notice:
// it opens as one (noticeRe) and says something, at least four words
// that are not a date or a time ("Updated: April 15, 2024 at 10:02
// a.m. ET" is a time stamp, which changes with every edit).
func isNotice(par string) bool {
	loc := noticeRe.FindStringIndex(par)
	if loc == nil {
		return false
	}
	words := 0
	for _, w := range strings.FieldsFunc(par[loc[1]-1:], func(r rune) bool { return !unicode.IsLetter(r) }) {
		if len([]rune(w)) >= 3 && !stampWords[strings.ToLower(w)] {
			words++
		}
	}
	return words >= 4
}

// stampWords are the words of a date or a time stamp.
var stampWords = func() map[string]bool {
	m := map[string]bool{}
	for _, w := range strings.Fields(`january february march april may june july august september october november december
		jan feb mar apr jun jul aug sep sept oct nov dec monday tuesday wednesday thursday friday saturday sunday
		mon tue tues wed thu thur thurs fri sat sun est edt cst cdt mst mdt pst pdt gmt utc bst cet cest ist aest
		published updated update posted last modified`) {
		m[w] = true
	}
	return m
}()

// sameForm reports whether two texts are the same up to form (case, quote
// and dash styles, white space), as LocateQuote reads a quotation.
func sameForm(a, b string) bool {
	return pipeline.LocateQuote(a, b).Verified && pipeline.LocateQuote(b, a).Verified
}

func clip(s string, n int) string { return excerpt(s, n) }

// RevisionDraft is the draft a recheck keeps when cited pages changed: the
// correction as it stands, followed by which citation broke and how, for
// the checker to revise and accept.
func RevisionDraft(correction string, pages []PageRecheck, at time.Time) string {
	var b strings.Builder
	b.WriteString(strings.TrimRight(correction, "\n "))
	if b.Len() > 0 {
		b.WriteString("\n\n")
	}
	fmt.Fprintf(&b, revisionMark+"%s: cited sources changed since this was written]\n", at.UTC().Format("2006-01-02 15:04 MST"))
	for _, p := range pages {
		if len(p.Reasons) == 0 {
			continue
		}
		fmt.Fprintf(&b, "- %s: %s\n", p.URL, strings.Join(p.Reasons, "; "))
	}
	return strings.TrimRight(b.String(), "\n")
}

// revisionMark opens the note a revision draft adds to the correction.
const revisionMark = "[Recheck "

// IsRevision reports whether a draft is a revision draft a recheck kept.
func (d Draft) IsRevision() bool { return !d.Edited && strings.Contains(d.Text, revisionMark) }

// LatestRevision is the index of the latest revision draft among ds
// (oldest first, as Drafts returns them), -1 when there is none.
func LatestRevision(ds []Draft) int {
	for i := len(ds) - 1; i >= 0; i-- {
		if ds[i].IsRevision() {
			return i
		}
	}
	return -1
}

// saveRechecks replaces the recheck rows of the cases rs, in one
// transaction (one commit for a chunk of cases, not one a case).
func (s *Store) saveRechecks(ctx context.Context, rs []CaseRecheck) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("save recheck: %w", err)
	}
	defer tx.Rollback()
	for _, r := range rs {
		if _, err := tx.ExecContext(ctx, s.q("DELETE FROM rechecks WHERE case_id = ?"), r.ID); err != nil {
			return fmt.Errorf("save recheck of case %s: %w", r.ID, err)
		}
		for _, p := range r.Pages {
			reasons, _ := json.Marshal(append([]string{}, p.Reasons...))
			if _, err := tx.ExecContext(ctx, s.q(`INSERT INTO rechecks (case_id, url, checked_at, status, final_url, not_modified, reasons, error, acknowledged)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`), r.ID, s.clean(p.URL), p.CheckedAt.UnixMilli(), p.Status, s.clean(p.FinalURL), p.NotModified,
				s.clean(string(reasons)), s.clean(p.Error), p.Acknowledged); err != nil {
				return fmt.Errorf("save recheck of case %s: %w", r.ID, err)
			}
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("save recheck: %w", err)
	}
	return nil
}

// Rechecks returns the last recheck of each of the cases ids that has
// one, by ID.
func (s *Store) Rechecks(ctx context.Context, ids ...string) (map[string]CaseRecheck, error) {
	pages, err := s.rechecksOf(ctx, ids)
	if err != nil {
		return nil, err
	}
	out := map[string]CaseRecheck{}
	for id, ps := range pages {
		out[id] = CaseRecheck{ID: id, Pages: ps}
	}
	return out, nil
}

func (s *Store) rechecksOf(ctx context.Context, ids []string) (map[string][]PageRecheck, error) {
	out := map[string][]PageRecheck{}
	for _, id := range ids {
		rows, err := s.db.QueryContext(ctx, s.q(`SELECT url, checked_at, status, final_url, not_modified, reasons, error, acknowledged
FROM rechecks WHERE case_id = ? ORDER BY url`), id)
		if err != nil {
			return nil, fmt.Errorf("read recheck of case %s: %w", id, err)
		}
		for rows.Next() {
			var p PageRecheck
			var at int64
			var reasons string
			if err := rows.Scan(&p.URL, &at, &p.Status, &p.FinalURL, &p.NotModified, &reasons, &p.Error, &p.Acknowledged); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read recheck of case %s: %w", id, err)
			}
			p.CheckedAt = time.UnixMilli(at)
			if err := json.Unmarshal([]byte(reasons), &p.Reasons); err != nil {
				rows.Close()
				return nil, fmt.Errorf("read recheck of case %s: %w", id, err)
			}
			out[id] = append(out[id], p)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, fmt.Errorf("read recheck of case %s: %w", id, err)
		}
	}
	return out, nil
}

// ErrNoRevision is returned (wrapped) by AcceptRevision when the case has
// no changed evidence to accept a revision for.
var ErrNoRevision = errors.New("no revision draft to accept")

// AcceptRevision makes the case's latest recheck revision draft (or, when
// text is not empty, the checker's own revision of it) the case's
// correction, kept as an edited draft, and marks the changes it answers
// acknowledged: the case leaves the top of the list until a later
// recheck finds something else. The text becomes the correction as an
// edit does (pipeline.Check.SetCorrection: its links are the cited
// ones); the trail says whose text it was.
func (s *Store) AcceptRevision(ctx context.Context, id, text string) error {
	own := text != ""
	if own && strings.TrimSpace(text) == "" {
		return fmt.Errorf("accept revision of case %s: the revision is empty", id)
	}
	rs, err := s.Rechecks(ctx, id)
	if err != nil {
		return err
	}
	r, ok := rs[id]
	if !ok || !r.Changed() {
		return fmt.Errorf("accept revision of case %s: %w (its cited pages have not changed since the last recheck, or the change was accepted)", id, ErrNoRevision)
	}
	if !own {
		ds, err := s.Drafts(ctx, id)
		if err != nil {
			return err
		}
		if i := LatestRevision(ds); i >= 0 {
			text = ds[i].Text
		}
		if text == "" {
			return fmt.Errorf("accept revision of case %s: %w", id, ErrNoRevision)
		}
	}
	c, err := s.Get(ctx, id)
	if err != nil {
		return err
	}
	c.SetCorrection(text, true)
	if err := s.Save(ctx, c); err != nil {
		var ce *ConflictError
		if !errors.As(err, &ce) {
			return err
		}
	}
	if err := s.SaveDraft(ctx, id, text, true); err != nil {
		return err
	}
	if _, err := s.db.ExecContext(ctx, s.q(`UPDATE rechecks SET acknowledged = ? WHERE case_id = ? AND reasons <> '[]'`), true, id); err != nil {
		return fmt.Errorf("accept revision of case %s: %w", id, err)
	}
	whose := "the revision draft"
	if own {
		whose = "the checker's revision"
		if ds, err := s.Drafts(ctx, id); err == nil {
			if i := LatestRevision(ds); i >= 0 && ds[i].Text == text {
				whose = "the revision draft" // accepted as the recheck wrote it
			}
		}
	}
	if err := s.audit(ctx, s.db, id, ActionRevised, fmt.Sprintf("%s of the recheck of %s (cited pages changed: %d)", whose, r.CheckedAt().UTC().Format("2006-01-02 15:04 MST"), r.ChangedPages())); err != nil {
		return fmt.Errorf("accept revision of case %s: %w", id, err)
	}
	return nil
}

// RecheckIDs are the cases a recheck of all reads: every case, newest
// first (a case that cites no page is read and has nothing to recheck).
func (s *Store) RecheckIDs(ctx context.Context) ([]string, error) {
	list, err := s.List(ctx, ListOptions{})
	if err != nil {
		return nil, err
	}
	ids := make([]string, 0, len(list))
	for _, sm := range list {
		ids = append(ids, sm.ID)
	}
	return ids, nil
}
