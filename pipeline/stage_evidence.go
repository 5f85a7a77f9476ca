package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/llm"
	"golang.org/x/sync/errgroup"
)

// evidence quotes the pages, best first and many at once, until enough
// pages agree on each claim of the post (settled); when none confirms or
// refutes it, it searches once more, wider, as the paper does. Quotes the person unticked stay unticked on a rerun.
func (r *run) evidence(ctx context.Context) (int, error) {
	c := r.c
	excluded := map[string]bool{}
	for _, e := range c.Evidence {
		if !e.Included && e.Verified {
			excluded[evidenceKey(e.SourceURL, e.Quote)] = true
		}
	}
	r.excluded = excluded
	c.Evidence = nil
	for i := range c.Sources {
		s := &c.Sources[i]
		switch {
		case s.Dropped:
			s.Status, s.Reason = StatusDropped, "dropped by you"
		case s.Eligible():
			s.Sent = nil
			s.Status, s.Reason = StatusPending, s.withTextFrom("")
			if s.Wall != nil {
				s.Status, s.Reason = StatusPartial, partialReason(*s)
			}
			if s.Boosted {
				s.Status, s.Reason = StatusBoosted, s.withTextFrom(s.withPartial("boosted by you"))
			}
		}
	}
	r.rank()
	r.read = map[string]bool{}
	var err error
	if r.e.opts.NoLLM {
		r.digestEvidence()
	} else {
		r.warnSmallOllama(ctx)
		err = r.evidenceRounds(ctx)
	}
	if n := c.NotJudgedNote(); n != "" {
		r.partial = n
	}
	for i := range c.Sources {
		s := &c.Sources[i]
		if (s.Status == StatusPending || s.Status == StatusBoosted || s.Status == StatusPartial) && !r.read[sources.Key(s.URL)] {
			s.Status = StatusNotNeeded
			switch {
			case err != nil:
				s.Reason = "not read for evidence: the stage stopped early"
			case r.e.opts.NoLLM:
				// No model judged anything: the digest quotes the best-ranked pages.
				s.Reason = fmt.Sprintf("not read for the digest: it quotes the %d best-ranked pages", r.e.opts.DigestPages)
			default:
				s.Reason = "not read for evidence: enough pages had already agreed on the post"
			}
			if s.Wall != nil {
				s.Status, s.Reason = StatusPartial, partialReason(*s)+"; "+s.Reason
			}
			s.Reason = s.withTextFrom(s.Reason)
		}
	}
	return len(c.IncludedEvidence()), err
}

// warnSmallOllama says when Ollama's context is smaller than a full
// evidence prompt: Ollama would cut such a prompt silently, so muse sends
// fewer and shorter pages per call, and the person should know why.
func (r *run) warnSmallOllama(ctx context.Context) {
	m, ok := r.e.deps.Model.(interface {
		ContextWindow(context.Context) llm.Window
	})
	if !ok {
		return
	}
	w := m.ContextWindow(ctx)
	size, _ := r.batchShape()
	// A page's budget in o200k tokens is about twice as many in the
	// window check's deliberately high estimate (llm.EstimateTokens: 1.5
	// times for English, nearly 3 for Devanagari).
	full := size*r.e.opts.EvidenceTokens*2 + evidenceAnswerTokens(size) + 1500 // pages, answer, instructions and post
	if one := r.e.opts.EvidenceTokens*2 + evidenceAnswerTokens(1) + 1500; w.Ollama && w.Tokens > 0 && w.Tokens < one {
		r.warn(StageEvidence, "Ollama's context (num_ctx %d) cannot hold one page at the cap of %d tokens a page (evidence.page_tokens), and Ollama cuts longer prompts silently: muse sends fewer pages a call and cuts longer pages to the passages that fit, and each page says how much of it was sent; raise num_ctx (OLLAMA_CONTEXT_LENGTH) or set context_window",
			w.Tokens, r.e.opts.EvidenceTokens)
		return
	}
	if w.Ollama && w.Tokens > 0 && w.Tokens < full {
		r.warn(StageEvidence, "Ollama's context (num_ctx %d) is smaller than a full evidence prompt (about %d tokens), and Ollama cuts longer prompts silently: muse sends fewer, shorter pages per call; raise num_ctx (OLLAMA_CONTEXT_LENGTH) or set context_window",
			w.Tokens, full)
	}
}

func (r *run) evidenceRounds(ctx context.Context) error {
	decisive, err := r.evidenceRound(ctx, r.unread())
	if err != nil || decisive > 0 {
		return err
	}
	read, err := r.searchWider(ctx)
	if err != nil || !read {
		return err
	}
	_, err = r.evidenceRound(ctx, r.unread())
	return err
}

// unread lists the eligible sources not yet quoted, in rank order.
func (r *run) unread() []string {
	var out []string
	for _, s := range r.c.Sources {
		if s.Eligible() && !r.read[sources.Key(s.URL)] {
			out = append(out, s.URL)
		}
	}
	return out
}

// EvidenceBatcher is a Model that reads several pages in one evidence call,
// so the system message, the post and the instructions are sent once per
// call instead of once per page. LLMModel implements it; with a Model that
// does not, every page is its own call.
type EvidenceBatcher interface {
	// EvidencePages picks the paragraphs of each page that confirm,
	// refute or give context to a claim of the post.
	// PageQuotes.Page numbers the pages from 1 in the order given; the
	// quotes are the model's words and are verified by the engine.
	EvidencePages(ctx context.Context, in EvidencePagesInput) ([]PageQuotes, CallUsage, error)
}

// EvidencePagesInput is the post and the pages of one evidence call, each
// already cut to the paragraphs most related to the post.
type EvidencePagesInput struct {
	Post   Post
	Images []Image
	Video  *Video
	// Claims are the post's claims when it has several (Check.Claims),
	// numbered from 1 in the prompt; nil when it is one claim.
	Claims []string
	Pages  []EvidencePage
}

// EvidencePage is one page of an evidence call.
type EvidencePage struct {
	URL        string
	Title      string
	Publisher  string
	Published  time.Time
	Paragraphs []string
}

// PageQuotes are the quotes a model gave for one page of a call.
type PageQuotes struct {
	// Page is the page's number in the call (1-based); 0 or a number out of
	// range means the model did not say, and each quote goes to the one
	// page of the call it is found on, or nowhere.
	Page                       int
	Refutes, Supports, Context []string
	// Claims is the number of the post's claim (from 1) each quote bears
	// on, keyed by the quote as given; a quote not in it bears on claim 1.
	Claims map[string]int
	// Cut is set when the answer was cut at its length limit: quotes
	// after the cut are lost.
	Cut bool
}

type evidenceResult struct {
	urls   []string
	quotes []PageQuotes
	err    error
}

// evidenceRound reads the pages in rank order, EvidenceParallel at a time in
// calls of up to EvidenceBatch pages, and sends no further call once the
// evidence is settled (settled: RefutingPages independent pages agree on
// each claim, none disagreeing). It returns how many pages confirm or
// refute a claim of the post (context alone settles nothing: with none,
// the search goes wider). It fails
// only when every call failed for a reason other than an unusable answer
// (a bad key, a server down).
func (r *run) evidenceRound(ctx context.Context, urls []string) (int, error) {
	if len(urls) == 0 {
		return r.decisivePages(), nil
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	pages := r.evidencePages(rctx, urls)
	batches := r.packBatches(rctx, urls, pages)
	calls := r.callsInFlight(batches)
	var (
		g        errgroup.Group
		weighing sync.Mutex // one answer weighed at a time
		hardErrs []error
		answered int
	)
	g.SetLimit(calls)
	for _, batch := range batches {
		if rctx.Err() != nil {
			break
		}
		g.Go(func() error {
			// The slot is freed only once every answer about the batch is
			// weighed, so a page is never sent after enough others have
			// refuted.
			r.judgeBatch(rctx, batch, pages, func(res evidenceResult) {
				weighing.Lock()
				defer weighing.Unlock()
				r.weigh(res, pages, &answered, &hardErrs, rctx.Err() != nil, stop)
			})
			return nil
		})
	}
	_ = g.Wait() // the calls report through weigh, never through the group
	if err := ctx.Err(); err != nil {
		return r.decisivePages(), fmt.Errorf("evidence: %w", err)
	}
	if answered == 0 && len(hardErrs) > 0 {
		return 0, fmt.Errorf("evidence: every model call failed: %w", hardErrs[0])
	}
	return r.decisivePages(), nil
}

// judgeBatch asks the model about a batch of pages and weighs each answer.
// When an answer cannot be used — a content filter refused the call, the
// model refused, the server sent an error in its place, it could not be
// read — the pages are asked about again in two halves, and a half that
// fails again in halves, down to one page a call, so that a page that
// trips a filter costs that page and not its neighbours. The halves cost
// at most as many calls as the batch has pages (each split is two calls);
// a piece still unanswered when they are spent, or a single page, is
// weighed with its error and its pages are not judged.
func (r *run) judgeBatch(ctx context.Context, batch []string, pages map[string]EvidencePage, weigh func(evidenceResult)) {
	extra := len(batch)
	queue := [][]string{batch}
	for len(queue) > 0 {
		urls := queue[0]
		queue = queue[1:]
		if ctx.Err() != nil {
			return // enough pages refuted while this call waited
		}
		quotes, usage, err := r.callEvidence(ctx, urls, pages)
		r.addUsage(StageEvidence, usage)
		if err != nil && errors.Is(err, ErrBadAnswer) && len(urls) > 1 && extra >= 2 && ctx.Err() == nil {
			extra -= 2
			half := len(urls) / 2
			r.warn(StageEvidence, "the model's answer about %d pages could not be used (%s): asking about them again, %d and %d pages a call",
				len(urls), lostReason(err), half, len(urls)-half)
			queue = append(queue, urls[:half], urls[half:])
			continue
		}
		weigh(evidenceResult{urls: urls, quotes: quotes, err: err})
	}
}

// batchShape is how many pages go in one call and how many calls run at
// once, so that about EvidenceParallel pages are read at a time either way.
func (r *run) batchShape() (size, calls int) {
	o := r.e.opts
	if _, ok := r.e.deps.Model.(EvidenceBatcher); !ok {
		return 1, o.EvidenceParallel
	}
	size = min(o.EvidenceBatch, o.EvidenceParallel, prompts.MaxPagesPerCall)
	return size, max(1, o.EvidenceParallel/size)
}

// callEvidence asks the model about one batch of pages.
func (r *run) callEvidence(ctx context.Context, urls []string, pages map[string]EvidencePage) ([]PageQuotes, CallUsage, error) {
	if b, ok := r.e.deps.Model.(EvidenceBatcher); ok {
		in := EvidencePagesInput{Post: r.c.Post, Images: r.c.Images, Video: r.c.Video, Claims: r.c.promptClaims()}
		for _, u := range urls {
			in.Pages = append(in.Pages, pages[u])
		}
		return b.EvidencePages(ctx, in)
	}
	p := pages[urls[0]]
	ref, ctxq, usage, err := r.e.deps.Model.Evidence(ctx, EvidenceInput{Post: r.c.Post, Images: r.c.Images, Video: r.c.Video, URL: p.URL,
		Title: p.Title, Publisher: p.Publisher, Published: p.Published, Paragraphs: p.Paragraphs})
	if err != nil {
		return nil, usage, err
	}
	return []PageQuotes{{Page: 1, Refutes: ref, Context: ctxq}}, usage, nil
}

// weigh records the answer about one batch of pages and stops the round
// once enough pages refute.
func (r *run) weigh(res evidenceResult, pages map[string]EvidencePage, answered *int, hardErrs *[]error, stopped bool, stop func()) {
	if res.err != nil && (stopped || errors.Is(res.err, context.Canceled) || errors.Is(res.err, context.DeadlineExceeded)) {
		return // stopped on purpose, or cancelled: the pages stay unread
	}
	r.mu.Lock()
	for _, u := range res.urls {
		r.read[sources.Key(u)] = true
		s := r.c.SourceByURL(u)
		for _, p := range pages[u].Paragraphs {
			s.SentChars += len(p)
		}
		s.Sent = r.sentRecord(u)
	}
	r.mu.Unlock()
	if res.err != nil {
		reason := lostReason(res.err)
		for _, u := range res.urls {
			r.warn(StageEvidence, "evidence from %s: %v", u, res.err)
			r.mu.Lock()
			s := r.c.SourceByURL(u)
			s.Status, s.Reason = StatusNotJudged, reason
			r.mu.Unlock()
		}
		if !errors.Is(res.err, ErrBadAnswer) {
			*hardErrs = append(*hardErrs, res.err)
		}
		return
	}
	*answered++
	bearing := 0
	cut := slices.ContainsFunc(res.quotes, func(q PageQuotes) bool { return q.Cut })
	for i, q := range r.attribute(res.urls, res.quotes) {
		if r.addQuotes(res.urls[i], q) >= 1 {
			bearing++
		}
		if cut {
			r.cutAnswer(res.urls[i])
		}
	}
	if bearing > 0 && r.settled() {
		stop()
	}
}

// cutAnswer records that the model's answer about a page was cut at its
// length limit: a page it quoted keeps the quotes written before the cut,
// with a warning; a page it had not yet quoted was not judged.
func (r *run) cutAnswer(url string) {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.c.SourceByURL(url)
	if s.Status == StatusUsed {
		r.warnLocked(StageEvidence, "the model's answer about %s was cut at its length limit: the quotes before the cut are kept, any after it are lost", url)
		return
	}
	s.Status, s.Reason = StatusNotJudged, lostCut.reason
	r.warnLocked(StageEvidence, "evidence from %s: %s, before it quoted the page", url, lostCut.reason)
}

// attribute gives each page of a batch the quotes the model gave for it.
// A quote the model did not place on a page of the batch goes to the one
// page whose text holds it; found on none or on several, it is left out
// with a warning, since its source cannot be told.
func (r *run) attribute(urls []string, quotes []PageQuotes) []PageQuotes {
	out := make([]PageQuotes, len(urls))
	var loose PageQuotes
	for _, q := range quotes {
		i := q.Page - 1
		if len(urls) == 1 {
			i = 0 // one page: every quote is about it, verified below
		}
		into := &loose
		if i >= 0 && i < len(urls) {
			into = &out[i]
		}
		into.Refutes = append(into.Refutes, q.Refutes...)
		into.Supports = append(into.Supports, q.Supports...)
		into.Context = append(into.Context, q.Context...)
		for quote, n := range q.Claims {
			if into.Claims == nil {
				into.Claims = map[string]int{}
			}
			into.Claims[quote] = n
		}
	}
	if len(loose.Refutes)+len(loose.Supports)+len(loose.Context) == 0 {
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	texts := make([]string, len(urls))
	for i, u := range urls {
		texts[i] = strings.Join(r.c.SourceByURL(u).Paragraphs, "\n")
	}
	place := func(q string, into func(*PageQuotes)) {
		into = func(add func(*PageQuotes)) func(*PageQuotes) {
			return func(p *PageQuotes) {
				add(p)
				if n, ok := loose.Claims[q]; ok {
					if p.Claims == nil {
						p.Claims = map[string]int{}
					}
					p.Claims[q] = n
				}
			}
		}(into)
		found := -1
		for i, t := range texts {
			if VerifyQuote(q, t) {
				if found >= 0 {
					r.warnLocked(StageEvidence, "left out a quote found on more than one page: %q", clip(q, 80))
					return
				}
				found = i
			}
		}
		if found < 0 {
			r.warnLocked(StageEvidence, "left out a quote found on none of the pages read with it: %q", clip(q, 80))
			return
		}
		into(&out[found])
	}
	for _, q := range loose.Refutes {
		place(q, func(p *PageQuotes) { p.Refutes = append(p.Refutes, q) })
	}
	for _, q := range loose.Supports {
		place(q, func(p *PageQuotes) { p.Supports = append(p.Supports, q) })
	}
	for _, q := range loose.Context {
		place(q, func(p *PageQuotes) { p.Context = append(p.Context, q) })
	}
	return out
}

// addQuotes verifies a page's quotes against its extracted text and records
// them, each with the claim it bears on, at most two of each kind counted;
// it returns the verified quotes kept, in any stance.
func (r *run) addQuotes(url string, res PageQuotes) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.c.SourceByURL(url)
	full := strings.Join(s.Paragraphs, "\n")
	kept := map[Kind]int{}
	type stance struct {
		kind  Kind
		claim int
	}
	perClaim := map[stance]int{}
	seen := map[string]bool{}
	claims := len(r.c.ClaimTexts())
	add := func(kind Kind, quotes []string) {
		for _, raw := range quotes {
			q := cleanQuote(raw)
			if q == "" {
				continue
			}
			m := LocateQuote(q, full)
			e := Evidence{SourceURL: s.URL, Quote: q, Kind: kind, Verified: m.Verified, Included: m.Verified}
			if n := res.Claims[raw]; n > 1 && n <= claims {
				e.Claim = n // claim 1 is the default, left unsaid
			}
			if m.Verified {
				e.Quote = m.PageQuote
				if e.Quote != q {
					e.ModelQuote = q
				}
			}
			nq := normaliseForMatch(e.Quote)
			if seen[nq] {
				continue
			}
			seen[nq] = true
			if m.Verified && perClaim[stance{kind, e.ClaimOf()}] >= 2 {
				continue // the paper's limit: two of each kind per page (and claim)
			}
			if m.Verified {
				kept[kind]++
				perClaim[stance{kind, e.ClaimOf()}]++
				if r.excluded[evidenceKey(s.URL, e.Quote)] {
					e.Included = false
				}
			} else {
				e.Reason = m.Reason
				if m.Closest != "" {
					e.Reason += "; closest passage of the page: \u201c" + m.Closest + "\u201d"
				}
				r.warnLocked(StageEvidence, "left out a quote not found on %s (%s): %q", s.URL, m.Reason, clip(q, 80))
			}
			r.c.Evidence = append(r.c.Evidence, e)
			r.itemLocked(StageEvidence, e, "quote found")
		}
	}
	add(KindRefutes, res.Refutes)
	add(KindSupports, res.Supports)
	add(KindContext, res.Context)
	given := len(res.Refutes) + len(res.Supports) + len(res.Context)
	switch {
	case kept[KindRefutes]+kept[KindSupports]+kept[KindContext] > 0:
		s.Status, s.Reason = StatusUsed, s.withPartial(quoteCounts(kept))
	case s.Wall != nil && given > 0:
		s.Status, s.Reason = StatusPartial, partialReason(*s)+partialJudged+quotesOffPage
	case s.Wall != nil:
		// Only the opening was read: nothing is said of the rest.
		s.Status, s.Reason = StatusPartial, partialReason(*s)+partialJudged+"it quoted none of them as confirming, refuting or explaining the post"
	case given > 0:
		s.Status, s.Reason = StatusNotNeeded, judgedReason+quotesOffPage
	default:
		s.Status, s.Reason = StatusNotNeeded, judgedReason+s.inPartSent()+"the model quoted no paragraph of it as confirming, refuting or explaining the post"
	}
	s.Reason = s.withTextFrom(s.Reason)
	return kept[KindRefutes] + kept[KindSupports] + kept[KindContext]
}

// quoteCounts is a used page's reason: "2 refuting and 1 context quotes",
// "1 confirming quote", naming the stances it has.
func quoteCounts(kept map[Kind]int) string {
	var parts []string
	for _, k := range []struct {
		kind Kind
		word string
	}{{KindRefutes, "refuting"}, {KindSupports, "confirming"}, {KindContext, "context"}} {
		if n := kept[k.kind]; n > 0 || k.kind == KindRefutes && kept[KindSupports] == 0 {
			parts = append(parts, fmt.Sprintf("%d %s", n, k.word))
		}
	}
	if len(parts) == 1 {
		return parts[0] + verb(kept[KindRefutes]+kept[KindSupports]+kept[KindContext], " quote", " quotes")
	}
	return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1] + " quotes"
}

// decisivePages counts pages with at least one included quote that
// confirms or refutes a claim.
func (r *run) decisivePages() int {
	pages := map[string]bool{}
	for _, e := range r.c.Evidence {
		if e.Verified && e.Included && e.Kind != KindContext {
			pages[e.SourceURL] = true
		}
	}
	return len(pages)
}

func evidenceKey(url, quote string) string {
	return sources.Key(url) + "\x00" + normaliseForMatch(cleanQuote(quote))
}

// digestEvidence is the extractive mode's evidence: the paragraphs most
// related to the post from the best pages, as context, never as refutation.
func (r *run) digestEvidence() {
	post, queries := postText(r.c), queryTexts(r.c)
	n := 0
	for i := range r.c.Sources {
		s := &r.c.Sources[i]
		if !s.Eligible() || n == r.e.opts.DigestPages {
			continue
		}
		n++
		r.read[sources.Key(s.URL)] = true
		q := newParaQuery(post, queries, pageLanguage(s))
		order := rankParagraphs(q, s.Paragraphs)
		took := 0
		for _, pi := range order {
			if took == 2 {
				break
			}
			p := s.Paragraphs[pi]
			if ws := words(p, q.lang); len(ws) < 8 || !slices.ContainsFunc(ws, func(w string) bool { return q.terms[w] }) {
				continue
			}
			took++
			e := Evidence{SourceURL: s.URL, Quote: p, Kind: KindContext, Verified: true,
				Included: !r.excluded[evidenceKey(s.URL, p)]}
			r.c.Evidence = append(r.c.Evidence, e)
			r.item(StageEvidence, e, "paragraph found")
		}
		switch {
		case took > 0:
			s.Status, s.Reason = StatusUsed, "1 related paragraph"
			if took > 1 {
				s.Reason = fmt.Sprintf("%d related paragraphs", took)
			}
			s.Reason = s.withPartial(s.Reason)
		case s.Wall != nil:
			s.Status, s.Reason = StatusPartial, partialReason(*s)+partialJudged+"none of them shares words with the post"
		default:
			s.Status, s.Reason = StatusNotNeeded, "no paragraph shares words with the post"
		}
		s.Reason = s.withTextFrom(s.Reason)
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// judgedReason opens the reason of a page the model read and found nothing
// to quote on: it was judged.
const judgedReason = "read: "

// partialJudged follows partialReason in the reason of a partial page
// the model read (its opening) and found nothing to quote on.
const partialJudged = ", and the model read them: "

// quotesOffPage ends the reason of a page judged whose quotes are none of
// them on the page.
const quotesOffPage = "its quotes could not be found on the page"

// lostCause is one reason why the model's answer about pages was lost: the
// opening of the page's Reason, and the same said of several pages, %s
// naming them ("them", "it", "all 7 pages").
type lostCause struct{ reason, of string }

// Why the model's answers about pages were lost, in the order the texts
// name them.
var (
	lostFilter   = lostCause{"the model server's content filter refused it", "the model server's content filter refused %s"}
	lostRefusal  = lostCause{"the model refused", "the model refused to read %s"}
	lostInBand   = lostCause{"the model server sent an error in place of an answer", "the model server sent an error in place of an answer about %s"}
	lostJSON     = lostCause{"the answer could not be read as JSON", "no answer about %s could be read as JSON"}
	lostEmpty    = lostCause{"the model's answer was empty", "the model answered nothing about %s"}
	lostLong     = lostCause{"the model's answer was longer than muse accepts", "the answer about %s was longer than muse accepts"}
	lostCut      = lostCause{"the model's answer was cut at its length limit", "the model's answer about %s was cut at its length limit"}
	lostSpendCap = lostCause{"the spend cap was reached", "the spend cap was reached before %s could be read"}
	lostUnusable = lostCause{"the model's answer could not be used", "no answer about %s could be used"}
	lostFailed   = lostCause{"the model server failed", "the model server failed on %s"}
	lostCauses   = []lostCause{lostFilter, lostRefusal, lostInBand, lostJSON, lostEmpty, lostLong, lostCut, lostSpendCap, lostUnusable, lostFailed}
)

// lostReason says in plain words why the model's answer about a page could
// not be used, with the server's or the model's own words: the Reason of a
// page not judged.
func lostReason(err error) string {
	var ae *llm.APIError
	errors.As(err, &ae)
	var words string // the server's or the model's
	if ae != nil {
		words = clip(strings.Join(strings.Fields(ae.Message), " "), 200)
	}
	switch {
	case errors.Is(err, llm.ErrContentFilter):
		detail := ""
		if ae != nil {
			detail = strings.Join(ae.Filtered, "; ")
			if ae.Provider != "" {
				detail = strings.TrimSuffix(ae.Provider+": "+detail, ": ")
			}
		}
		if detail != "" {
			detail = " (" + detail + ")"
		}
		return lostFilter.reason + detail
	case errors.Is(err, llm.ErrRefusal):
		var ua *unreadAnswer
		if ae == nil && errors.As(err, &ua) {
			words = clip(strings.Join(strings.Fields(llm.StripReasoning(ua.text)), " "), 200)
		}
		return lostRefusal.reason + ": " + cmp.Or(words, "no reason given")
	case errors.Is(err, llm.ErrInBand):
		if ae != nil && ae.Provider != "" {
			words = ae.Provider + ": " + words
		}
		return lostInBand.reason + " (" + words + ")"
	case errors.Is(err, ErrAnswerCut):
		return lostCut.reason
	case errors.Is(err, llm.ErrMalformed):
		return lostJSON.reason
	case errors.Is(err, llm.ErrEmpty):
		return lostEmpty.reason
	case errors.Is(err, llm.ErrTooLarge):
		return lostLong.reason
	case errors.Is(err, llm.ErrSpendCap):
		return lostSpendCap.reason + ": " + clip(err.Error(), 200)
	case errors.Is(err, ErrBadAnswer):
		return lostUnusable.reason + ": " + clip(err.Error(), 200)
	}
	return lostFailed.reason + ": " + clip(cmp.Or(words, err.Error()), 200)
}

// judging splits the pages sent to the model for evidence into those it
// judged (used, or read with nothing to quote) and those it did not.
func (c *Check) judging() (judged int, lost []Source) {
	for _, s := range c.Sources {
		switch {
		case s.Dropped:
		case s.Status == StatusNotJudged:
			lost = append(lost, s)
		case s.Status == StatusUsed, s.Status == StatusNotNeeded && strings.HasPrefix(s.Reason, judgedReason),
			s.Status == StatusPartial && strings.Contains(s.Reason, partialJudged):
			judged++
		}
	}
	return judged, lost
}

// lostWhy says why the pages were not judged, of names them ("them", "all
// 7 pages"): one cause in the words of lostCauses, several with a count
// each ("the model server's content filter refused 2 and the model refused
// to read 1").
func lostWhy(lost []Source, of string) string {
	counts := make([]int, len(lostCauses))
	for _, s := range lost {
		i := slices.IndexFunc(lostCauses, func(lc lostCause) bool { return strings.HasPrefix(s.Reason, lc.reason) })
		if i < 0 {
			i = slices.Index(lostCauses, lostUnusable)
		}
		counts[i]++
	}
	var parts []string
	for i, n := range counts {
		who := of
		if n != len(lost) {
			who = fmt.Sprint(n)
		}
		if n > 0 {
			parts = append(parts, fmt.Sprintf(lostCauses[i].of, who))
		}
	}
	if len(parts) > 1 {
		return strings.Join(parts[:len(parts)-1], ", ") + " and " + parts[len(parts)-1]
	}
	return strings.Join(parts, "")
}

// pageCount is "1 page" or "n pages".
func pageCount(n int) string {
	if n == 1 {
		return "1 page"
	}
	return fmt.Sprintf("%d pages", n)
}

// NotJudgedNote says which pages sent to the model for evidence it did not
// judge and why — "3 of 7 pages were not judged: the model server's
// content filter refused them" — or "" when it judged every one.
func (c *Check) NotJudgedNote() string {
	judged, lost := c.judging()
	if len(lost) == 0 {
		return ""
	}
	them, were := "them", "were"
	if len(lost) == 1 {
		them, were = "it", "was"
	}
	return fmt.Sprintf("%d of %s %s not judged: %s", len(lost), pageCount(judged+len(lost)), were, lostWhy(lost, them))
}
