package pipeline

import (
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
// pages refute the post; when none does, it searches once more, wider, as
// the paper does. Quotes the person unticked stay unticked on a rerun.
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
			s.Status, s.Reason = StatusPending, ""
			if s.Boosted {
				s.Status, s.Reason = StatusBoosted, "boosted by you"
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
	for i := range c.Sources {
		s := &c.Sources[i]
		if (s.Status == StatusPending || s.Status == StatusBoosted) && !r.read[sources.Key(s.URL)] {
			s.Status = StatusNotNeeded
			switch {
			case err != nil:
				s.Reason = "not read for evidence: the stage stopped early"
			case r.e.opts.NoLLM:
				// No model judged anything: the digest quotes the best-ranked pages.
				s.Reason = fmt.Sprintf("not read for the digest: it quotes the %d best-ranked pages", r.e.opts.DigestPages)
			default:
				s.Reason = "not read for evidence: enough pages had already refuted the post"
			}
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
	full := size*r.e.opts.EvidenceTokens*4/3 + evidenceAnswerTokens(size) + 1500 // pages, answer, instructions and post
	if w.Ollama && w.Tokens > 0 && w.Tokens < full {
		r.warn(StageEvidence, "Ollama's context (num_ctx %d) is smaller than a full evidence prompt (about %d tokens), and Ollama cuts longer prompts silently: muse sends fewer, shorter pages per call; raise num_ctx (OLLAMA_CONTEXT_LENGTH) or set context_window",
			w.Tokens, full)
	}
}

func (r *run) evidenceRounds(ctx context.Context) error {
	refuting, err := r.evidenceRound(ctx, r.unread())
	if err != nil || refuting > 0 {
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
	// EvidencePages picks refuting and context paragraphs from each page.
	// PageQuotes.Page numbers the pages from 1 in the order given; the
	// quotes are the model's words and are verified by the engine.
	EvidencePages(ctx context.Context, in EvidencePagesInput) ([]PageQuotes, CallUsage, error)
}

// EvidencePagesInput is the post and the pages of one evidence call, each
// already cut to the paragraphs most related to the post.
type EvidencePagesInput struct {
	Post   Post
	Images []Image
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
	Page             int
	Refutes, Context []string
}

type evidenceResult struct {
	urls   []string
	quotes []PageQuotes
	err    error
}

// evidenceRound reads the pages in rank order, EvidenceParallel at a time in
// calls of up to EvidenceBatch pages, and sends no further call once
// RefutingPages pages refute. It returns how many pages refute. It fails
// only when every call failed for a reason other than an unusable answer
// (a bad key, a server down).
func (r *run) evidenceRound(ctx context.Context, urls []string) (int, error) {
	if len(urls) == 0 {
		return r.refutingPages(), nil
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	pages := map[string]EvidencePage{}
	post, queries := postText(r.c), queryTexts(r.c)
	for _, u := range urls {
		s := r.c.SourceByURL(u)
		q := newParaQuery(post, queries, pageLanguage(s))
		pages[u] = EvidencePage{URL: u, Title: s.Title, Publisher: s.Publisher, Published: s.Published,
			Paragraphs: selectParagraphs(q, s.Paragraphs, r.e.opts.EvidenceTokens)}
	}
	size, calls := r.batchShape()
	var (
		g        errgroup.Group
		weighing sync.Mutex // one answer weighed at a time
		hardErrs []error
		answered int
	)
	g.SetLimit(calls)
	for batch := range slices.Chunk(urls, size) {
		if rctx.Err() != nil {
			break
		}
		g.Go(func() error {
			if rctx.Err() != nil {
				return nil // enough pages refuted while this call waited
			}
			quotes, usage, err := r.callEvidence(rctx, batch, pages)
			r.addUsage(StageEvidence, usage)
			// The slot is freed only once the answer is weighed, so a page
			// is never sent after enough others have refuted.
			weighing.Lock()
			defer weighing.Unlock()
			r.weigh(evidenceResult{urls: batch, quotes: quotes, err: err}, pages, &answered, &hardErrs, rctx.Err() != nil, stop)
			return nil
		})
	}
	_ = g.Wait() // the calls report through weigh, never through the group
	if err := ctx.Err(); err != nil {
		return r.refutingPages(), fmt.Errorf("evidence: %w", err)
	}
	if answered == 0 && len(hardErrs) > 0 {
		return 0, fmt.Errorf("evidence: every model call failed: %w", hardErrs[0])
	}
	return r.refutingPages(), nil
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
		in := EvidencePagesInput{Post: r.c.Post, Images: r.c.Images}
		for _, u := range urls {
			in.Pages = append(in.Pages, pages[u])
		}
		return b.EvidencePages(ctx, in)
	}
	p := pages[urls[0]]
	ref, ctxq, usage, err := r.e.deps.Model.Evidence(ctx, EvidenceInput{Post: r.c.Post, Images: r.c.Images, URL: p.URL,
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
	}
	r.mu.Unlock()
	if res.err != nil {
		for _, u := range res.urls {
			r.warn(StageEvidence, "evidence from %s: %v", u, res.err)
			r.mu.Lock()
			s := r.c.SourceByURL(u)
			s.Status, s.Reason = StatusNotNeeded, "the model's answer for this page could not be used"
			r.mu.Unlock()
		}
		if !errors.Is(res.err, ErrBadAnswer) {
			*hardErrs = append(*hardErrs, res.err)
		} else {
			r.mu.Lock()
			r.evUnreadable += len(res.urls)
			r.mu.Unlock()
		}
		return
	}
	*answered++
	refuted := 0
	for i, q := range r.attribute(res.urls, res.quotes) {
		if r.addQuotes(res.urls[i], q) >= 1 {
			refuted++
		}
	}
	if refuted > 0 && r.refutingPages() >= r.e.opts.RefutingPages {
		stop()
	}
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
		if i < 0 || i >= len(urls) {
			loose.Refutes = append(loose.Refutes, q.Refutes...)
			loose.Context = append(loose.Context, q.Context...)
			continue
		}
		out[i].Refutes = append(out[i].Refutes, q.Refutes...)
		out[i].Context = append(out[i].Context, q.Context...)
	}
	if len(loose.Refutes)+len(loose.Context) == 0 {
		return out
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	texts := make([]string, len(urls))
	for i, u := range urls {
		texts[i] = strings.Join(r.c.SourceByURL(u).Paragraphs, "\n")
	}
	place := func(q string, into func(*PageQuotes)) {
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
	for _, q := range loose.Context {
		place(q, func(p *PageQuotes) { p.Context = append(p.Context, q) })
	}
	return out
}

// addQuotes verifies a page's quotes against its extracted text and records
// them, at most two of each kind counted; it returns the verified refuting
// quotes kept.
func (r *run) addQuotes(url string, res PageQuotes) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.c.SourceByURL(url)
	full := strings.Join(s.Paragraphs, "\n")
	kept := map[Kind]int{}
	seen := map[string]bool{}
	add := func(kind Kind, quotes []string) {
		for _, q := range quotes {
			q = cleanQuote(q)
			if q == "" {
				continue
			}
			m := LocateQuote(q, full)
			e := Evidence{SourceURL: s.URL, Quote: q, Kind: kind, Verified: m.Verified, Included: m.Verified}
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
			if m.Verified && kept[kind] >= 2 {
				continue // the paper's limit: two of each kind per page
			}
			if m.Verified {
				kept[kind]++
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
	add(KindContext, res.Context)
	switch {
	case kept[KindRefutes]+kept[KindContext] > 0:
		s.Status, s.Reason = StatusUsed, fmt.Sprintf("%d refuting and %d context quotes", kept[KindRefutes], kept[KindContext])
	case len(res.Refutes)+len(res.Context) > 0:
		s.Status, s.Reason = StatusNotNeeded, "read: its quotes could not be found on the page"
		r.evWrong++
	default:
		s.Status, s.Reason = StatusNotNeeded, "read: no paragraph refutes or explains the post"
		r.evNothing++
	}
	return kept[KindRefutes]
}

// refutingPages counts pages with at least one included refuting quote.
func (r *run) refutingPages() int {
	pages := map[string]bool{}
	for _, e := range r.c.Evidence {
		if e.Kind == KindRefutes && e.Verified && e.Included {
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
		if took > 0 {
			s.Status, s.Reason = StatusUsed, "1 related paragraph"
			if took > 1 {
				s.Reason = fmt.Sprintf("%d related paragraphs", took)
			}
		} else {
			s.Status, s.Reason = StatusNotNeeded, "no paragraph shares words with the post"
		}
	}
}

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}
