package pipeline

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
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
		case isEligible(*s):
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
		err = r.evidenceRounds(ctx)
	}
	for i := range c.Sources {
		s := &c.Sources[i]
		if (s.Status == StatusPending || s.Status == StatusBoosted) && !r.read[canonicalKey(s.URL)] {
			s.Status = StatusNotNeeded
			s.Reason = "not read for evidence: enough pages had already refuted the post"
			if err != nil {
				s.Reason = "not read for evidence: the stage stopped early"
			}
		}
	}
	return len(c.IncludedEvidence()), err
}

func (r *run) evidenceRounds(ctx context.Context) error {
	refuting, err := r.evidenceRound(ctx, r.unread())
	if err != nil || refuting > 0 {
		return err
	}
	for _, h := range r.c.Hits {
		if h.Pass == 2 {
			return nil // the wider pass was already run for this check
		}
	}
	r.emit(Event{Kind: EventProgress, Stage: StageEvidence,
		Message: fmt.Sprintf("no page refutes the post: searching wider (top %d per query)", r.e.opts.SecondPassHits)})
	hits, err := r.searchPass(ctx, StageEvidence, 2, r.e.opts.SecondPassHits)
	if err != nil {
		return err
	}
	if len(hits) == 0 {
		return nil
	}
	if err := r.readHits(ctx, StageEvidence, hits, nil); err != nil {
		return err
	}
	_, err = r.evidenceRound(ctx, r.unread())
	return err
}

// unread lists the eligible sources not yet quoted, in rank order.
func (r *run) unread() []string {
	var out []string
	for _, s := range r.c.Sources {
		if isEligible(s) && !r.read[canonicalKey(s.URL)] {
			out = append(out, s.URL)
		}
	}
	return out
}

type evidenceResult struct {
	url              string
	refutes, context []string
	err              error
}

// evidenceRound asks the model about each page, EvidenceParallel at a time
// in rank order, and stops the rest once RefutingPages pages refute. It
// returns how many pages refute. It fails only when every call failed for a
// reason other than an unusable answer (a bad key, a server down).
func (r *run) evidenceRound(ctx context.Context, urls []string) (int, error) {
	if len(urls) == 0 {
		return r.refutingPages(), nil
	}
	rctx, stop := context.WithCancel(ctx)
	defer stop()
	inputs := map[string]EvidenceInput{}
	post := postForSearch(r.c)
	for _, u := range urls {
		s := r.c.SourceByURL(u)
		paras := selectParagraphs(post, s.Paragraphs, r.e.opts.EvidenceTokens)
		inputs[u] = EvidenceInput{Post: r.c.Post, Images: r.c.Images, URL: u, Title: s.Title, Publisher: s.Publisher,
			Published: s.Published, Paragraphs: paras}
	}
	results := make(chan evidenceResult)
	sem := make(chan struct{}, r.e.opts.EvidenceParallel)
	var wg sync.WaitGroup
	go func() {
		defer func() { wg.Wait(); close(results) }()
		for _, u := range urls {
			select {
			case sem <- struct{}{}:
			case <-rctx.Done():
				return
			}
			if rctx.Err() != nil {
				return
			}
			wg.Go(func() {
				ref, ctxq, usage, err := r.e.deps.Model.Evidence(rctx, inputs[u])
				r.addUsage(StageEvidence, usage)
				results <- evidenceResult{url: u, refutes: ref, context: ctxq, err: err}
			})
		}
	}()
	var hardErrs []error
	answered := 0
	for res := range results {
		// The slot is freed only once the answer is weighed, so a page is
		// never sent after enough others have refuted.
		r.weigh(res, inputs, &answered, &hardErrs, rctx.Err() != nil, stop)
		<-sem
	}
	if err := ctx.Err(); err != nil {
		return r.refutingPages(), fmt.Errorf("evidence: %w", err)
	}
	if answered == 0 && len(hardErrs) > 0 {
		return 0, fmt.Errorf("evidence: every model call failed: %w", hardErrs[0])
	}
	return r.refutingPages(), nil
}

// weigh records one page's answer and stops the round once enough pages
// refute.
func (r *run) weigh(res evidenceResult, inputs map[string]EvidenceInput, answered *int, hardErrs *[]error, stopped bool, stop func()) {
	if res.err != nil && (stopped || errors.Is(res.err, context.Canceled) || errors.Is(res.err, context.DeadlineExceeded)) {
		return // stopped on purpose, or cancelled: the page stays unread
	}
	r.mu.Lock()
	r.read[canonicalKey(res.url)] = true
	s := r.c.SourceByURL(res.url)
	for _, p := range inputs[res.url].Paragraphs {
		s.SentChars += len(p)
	}
	r.mu.Unlock()
	if res.err != nil {
		r.warn(StageEvidence, "evidence from %s: %v", res.url, res.err)
		r.mu.Lock()
		s.Status, s.Reason = StatusNotNeeded, "the model's answer for this page could not be used"
		r.mu.Unlock()
		if !errors.Is(res.err, ErrBadAnswer) {
			*hardErrs = append(*hardErrs, res.err)
		}
		return
	}
	*answered++
	if r.addQuotes(res) >= 1 && r.refutingPages() >= r.e.opts.RefutingPages {
		stop()
	}
}

// addQuotes verifies a page's quotes against its extracted text and records
// them, at most two of each kind counted; it returns the verified refuting
// quotes kept.
func (r *run) addQuotes(res evidenceResult) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	s := r.c.SourceByURL(res.url)
	full := strings.Join(s.Paragraphs, "\n")
	kept := map[string]int{}
	seen := map[string]bool{}
	add := func(kind string, quotes []string) {
		for _, q := range quotes {
			q = cleanQuote(q)
			nq := normaliseForMatch(q)
			if q == "" || seen[nq] {
				continue
			}
			seen[nq] = true
			ok := VerifyQuote(q, full)
			if ok && kept[kind] >= 2 {
				continue // the paper's limit: two of each kind per page
			}
			e := Evidence{SourceURL: s.URL, Quote: q, Kind: kind, Verified: ok, Included: ok}
			if ok {
				kept[kind]++
				if r.excluded[evidenceKey(s.URL, q)] {
					e.Included = false
				}
			} else {
				r.warnLocked(StageEvidence, "left out a quote not found on %s: %q", s.URL, clip(q, 80))
			}
			r.c.Evidence = append(r.c.Evidence, e)
			r.itemLocked(StageEvidence, e, "quote found")
		}
	}
	add(KindRefutes, res.refutes)
	add(KindContext, res.context)
	switch {
	case kept[KindRefutes]+kept[KindContext] > 0:
		s.Status, s.Reason = StatusUsed, fmt.Sprintf("%d refuting and %d context quotes", kept[KindRefutes], kept[KindContext])
	case len(res.refutes)+len(res.context) > 0:
		s.Status, s.Reason = StatusNotNeeded, "read: its quotes could not be found on the page"
	default:
		s.Status, s.Reason = StatusNotNeeded, "read: no paragraph refutes or explains the post"
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
	return canonicalKey(url) + "\x00" + normaliseForMatch(cleanQuote(quote))
}

// digestEvidence is the extractive mode's evidence: the paragraphs most
// related to the post from the best pages, as context, never as refutation.
func (r *run) digestEvidence() {
	post := postForSearch(r.c)
	n := 0
	for i := range r.c.Sources {
		s := &r.c.Sources[i]
		if !isEligible(*s) || n == r.e.opts.DigestPages {
			continue
		}
		n++
		r.read[canonicalKey(s.URL)] = true
		order := rankParagraphs(post, s.Paragraphs)
		took := 0
		for _, pi := range order {
			if took == 2 {
				break
			}
			p := s.Paragraphs[pi]
			if len(words(p)) < 8 || LexicalRelevance(post, "", p) == 0 {
				continue
			}
			took++
			e := Evidence{SourceURL: s.URL, Quote: p, Kind: KindContext, Verified: true,
				Included: !r.excluded[evidenceKey(s.URL, p)]}
			r.c.Evidence = append(r.c.Evidence, e)
			r.item(StageEvidence, e, "paragraph found")
		}
		if took > 0 {
			s.Status, s.Reason = StatusUsed, fmt.Sprintf("%d related paragraphs", took)
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
