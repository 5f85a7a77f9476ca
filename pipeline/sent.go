package pipeline

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"unicode/utf8"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/llm"
)

// The evidence step sends each page whole, up to a cap in the model's
// tokens (Options.EvidenceTokens, the setting evidence.page_tokens): the
// paper sends each page's first 20,000 characters, about 5,000 tokens of
// English. Only a page longer than the cap is cut to its passages, chosen
// by meaning (embeddings of the post and the passages) when an embeddings
// model is configured, else by the words they share with the post (BM25,
// passages.go). Pages go to the model in as few calls as its context
// window holds. What was sent of each page is recorded (Source.Sent), so
// that "the model quoted nothing" is said of what the model was shown.

// Per-page caps, in o200k tokens.
const (
	// DefaultPageTokens is the paper's 20,000 characters at four
	// characters a token; 99% of the real news articles of the
	// article-extraction benchmark are whole under it.
	DefaultPageTokens = 5000
	// ThriftyPageTokens is the "thrifty" preset for expensive models:
	// 84% of those articles are whole under it, and a check's page text
	// costs at most about a third of the default's.
	ThriftyPageTokens = 1500
	// minPageTokens is the least a page is cut to when the spend cap or
	// the context window shrinks the cap.
	minPageTokens = 250
)

// PageSent says how much of a page the model was shown for evidence.
type PageSent struct {
	// Tokens is the page text sent, PageTokens the page's whole text,
	// both in the o200k encoding.
	Tokens     int `json:"tokens"`
	PageTokens int `json:"page_tokens"`
	// Whole: every paragraph of the page was sent.
	Whole bool `json:"whole"`
	// Cap is the most tokens of this page that could be sent.
	Cap int `json:"cap"`
	// Why says why a page was cut: longer than the cap, the spend cap,
	// the model's context window, the prompt's 20,000 characters a page.
	Why string `json:"why,omitempty"`
	// ChosenBy is how the passages of a cut page were chosen: "meaning"
	// (embeddings) or "shared words" (BM25).
	ChosenBy string `json:"chosen_by,omitempty"`
	// Passages are the passages sent of a cut page, in page order.
	Passages []SentPassage `json:"passages,omitempty"`
}

// SentPassage is one passage sent of a page that was cut.
type SentPassage struct {
	// Offset and Bytes place the passage in the page's text: its
	// paragraphs joined by "\n".
	Offset int `json:"offset"`
	Bytes  int `json:"bytes"`
	Tokens int `json:"tokens"`
	// Rank is its place among the page's passages, 1 the most related to
	// the post.
	Rank int `json:"rank"`
}

// Part is "all 1200 tokens" or "1500 of 6200 tokens".
func (p PageSent) Part() string {
	if p.Whole {
		return fmt.Sprintf("all %d tokens", p.PageTokens)
	}
	return fmt.Sprintf("%d of %d tokens", p.Tokens, p.PageTokens)
}

// Line says in words what the model was shown of the page.
func (p PageSent) Line() string {
	if p.Whole {
		return "the whole page: " + p.Part()
	}
	by := "the words they share with the post (BM25)"
	if p.ChosenBy == chosenByMeaning {
		by = "meaning (embeddings of the post and of each passage)"
	}
	return fmt.Sprintf("%s in %d passages chosen by %s, %s", p.Part(), len(p.Passages), by, p.Why)
}

// Passages of a cut page are chosen by one of these.
const (
	chosenByMeaning = "meaning"
	chosenByWords   = "shared words"
)

// pageLimits are what may be sent of each page in one evidence round.
type pageLimits struct {
	cap     int    // tokens a page, after the spend cap
	capWhy  string // why a page over the setting is cut
	setting int    // the cap set (evidence.page_tokens)
	// spendWhy says why a page over cap is cut when the spend cap lowered
	// cap.
	spendWhy string
	maxByte  int // bytes a page the context window takes with one page a call; 0: no limit
	window   int
}

// promptOverhead estimates, in llm.EstimateTokens, what an evidence call
// sends besides the pages: the system message, the instructions and the
// post.
func (r *run) promptOverhead() int {
	post := r.c.Post.Text
	if len(post) > maxPostChars {
		post = post[:maxPostChars]
	}
	return 1500 + llm.EstimateTokens(post)
}

// pageFence estimates what each page adds besides its text: its fence,
// number, address, title and date.
const pageFence = 80

// limits works out the per-page cap for a round over urls: the setting,
// shrunk when the spend cap left would not pay for the pages at it, and
// the bytes a page may take when the model's context window is small.
func (r *run) limits(ctx context.Context, urls []string) pageLimits {
	l := pageLimits{cap: r.e.opts.EvidenceTokens, setting: r.e.opts.EvidenceTokens}
	l.capWhy = fmt.Sprintf("the page being longer than the cap of %d tokens a page (evidence.page_tokens)", l.cap)
	if m, ok := r.e.deps.Model.(interface {
		ContextWindow(context.Context) llm.Window
	}); ok {
		if w := m.ContextWindow(ctx); w.Tokens > 0 {
			l.window = w.Tokens
			room := max(w.Tokens-evidenceAnswerTokens(1)-r.promptOverhead()-pageFence, 0)
			l.maxByte = max(room*3, 1200) // llm.EstimateTokens is a token per three bytes
		}
	}
	if cap, left, ok := r.spendCapPageTokens(urls, l.cap); ok && cap < l.cap && r.estimateEvidence(urls, cap).Tokens < r.estimateEvidence(urls, l.cap).Tokens {
		r.warn(StageEvidence, "the spend cap ($%.2f per check, $%.4f left) pays for about %d tokens a page, not the %d set (evidence.page_tokens): longer pages are cut to their passages, and each says so",
			r.e.opts.SpendCapCheckUSD, max(left, 0), cap, l.cap)
		l.cap = cap
		l.spendWhy = fmt.Sprintf("the spend cap ($%.2f per check) leaving %d tokens a page, under the %d set", r.e.opts.SpendCapCheckUSD, cap, l.setting)
	}
	return l
}

// correctionReserve is what the spend cap keeps for the correction when
// it sizes the evidence: a prompt of the post and quotes, and its answer.
const correctionReserve = 4000

// spendCapPageTokens is the largest per-page cap, down to
// minPageTokens, at which reading every page of urls would leave the
// correction's share of the check's spend cap; ok is false without a
// cap or a price.
func (r *run) spendCapPageTokens(urls []string, cap int) (int, float64, bool) {
	m, ok := r.e.deps.Model.(*LLMModel)
	if !ok || r.e.opts.SpendCapCheckUSD <= 0 {
		return cap, 0, false
	}
	r.mu.Lock()
	spent := r.c.Usage.CostUSD
	r.mu.Unlock()
	left := r.e.opts.SpendCapCheckUSD - spent - m.Client.Cost(m.Client.ModelFor(llm.TaskCorrection), correctionReserve, llm.DefaultCompletionEstimate)
	for {
		if r.estimateEvidence(urls, cap).CostUSD <= left || cap <= minPageTokens {
			return cap, left, true
		}
		cap = max(cap*3/4, minPageTokens)
	}
}

// EvidencePlan is what the evidence step expects to send, worked out
// before its calls: every eligible page read, at the per-page cap.
type EvidencePlan struct {
	Pages int `json:"pages"`
	// PageTokens is the per-page cap in force; Setting the one set.
	PageTokens int `json:"page_tokens"`
	Setting    int `json:"page_tokens_setting"`
	// Calls and Tokens are the calls and tokens (prompt and answer at
	// most) expected; CostUSD their cost at the evidence model's price (0
	// without one).
	Calls   int     `json:"calls"`
	Tokens  int     `json:"tokens"`
	CostUSD float64 `json:"cost_usd"`
	// Cut is how many pages are longer than the cap.
	Cut int `json:"cut"`
}

// Line says the plan in one sentence.
func (p EvidencePlan) Line() string {
	s := fmt.Sprintf("evidence: up to %s in %d model calls, about %d tokens", pageCount(p.Pages), p.Calls, p.Tokens)
	if p.CostUSD > 0 {
		s += fmt.Sprintf(" (up to $%.4f)", p.CostUSD)
	}
	s += fmt.Sprintf(", at up to %d tokens a page", p.PageTokens)
	if p.PageTokens < p.Setting {
		s += fmt.Sprintf(" (the spend cap allows no more than that; %d set)", p.Setting)
	}
	if p.Cut > 0 {
		s += fmt.Sprintf("; %d longer cut to their passages", p.Cut)
	}
	return s
}

// estimateEvidence is the plan for reading urls at cap tokens a page.
func (r *run) estimateEvidence(urls []string, cap int) EvidencePlan {
	p := EvidencePlan{Pages: len(urls), PageTokens: cap, Setting: r.e.opts.EvidenceTokens}
	size, _ := r.batchShape()
	p.Calls = (len(urls) + size - 1) / max(size, 1)
	page := 0
	for _, u := range urls {
		s := r.c.SourceByURL(u)
		if s == nil {
			continue
		}
		n := pageTokens(strings.Join(s.Paragraphs, "\n"))
		if n > cap {
			p.Cut++
		}
		page += min(n, cap) + pageFence/2
	}
	overhead := r.promptOverhead() * 2 / 3 // EstimateTokens is high; o200k is nearer two thirds of it
	prompt := page + p.Calls*overhead
	answer := 0
	for i := range p.Calls {
		answer += evidenceAnswerTokens(min(size, len(urls)-i*size))
	}
	p.Tokens = prompt + answer
	if m, ok := r.e.deps.Model.(*LLMModel); ok {
		p.CostUSD = m.Client.Cost(m.Client.ModelFor(llm.TaskEvidence), prompt, answer)
	}
	return p
}

// cutPage is a page longer than its budget: its passages, ranked.
type cutPage struct {
	url    string
	budget int
	ps     []string
	order  []int
	by     string
}

// evidencePages is what is sent of each page of urls; what was sent is
// recorded in r.sent.
func (r *run) evidencePages(ctx context.Context, urls []string) map[string]EvidencePage {
	l := r.limits(ctx, urls)
	plan := r.estimateEvidence(urls, l.cap)
	r.mu.Lock()
	r.c.EvidencePlan = &plan
	r.mu.Unlock()
	r.emit(Event{Kind: EventProgress, Stage: StageEvidence, Message: plan.Line()})
	post, queries := postText(r.c), queryTexts(r.c)
	pages := map[string]EvidencePage{}
	var cut []*cutPage
	for _, u := range urls {
		s := r.c.SourceByURL(u)
		text := strings.Join(s.Paragraphs, "\n")
		total := pageTokens(text)
		budget, why := l.pageBudget(text, total)
		pages[u] = EvidencePage{URL: u, Title: s.Title, Publisher: s.Label(), Published: s.Published, Paragraphs: s.Paragraphs}
		if total <= budget {
			r.sentLocked(u, PageSent{Tokens: total, PageTokens: total, Whole: true, Cap: budget})
			continue
		}
		r.sentLocked(u, PageSent{PageTokens: total, Cap: budget, Why: why})
		cp := cutPassages(newParaQuery(post, queries, pageLanguage(s)), s.Paragraphs, budget)
		cp.url = u
		cut = append(cut, cp)
	}
	r.embedPassages(ctx, post.Text, cut)
	for _, cp := range cut {
		chosen := cp.choose()
		p := pages[cp.url]
		p.Paragraphs = pick(cp.ps, chosen)
		pages[cp.url] = p
		r.mu.Lock()
		ps := r.sent[sources.Key(cp.url)]
		ps.ChosenBy, ps.Passages = cp.by, placePassages(r.c.SourceByURL(cp.url).Paragraphs, cp.ps, chosen, cp.order)
		for _, sp := range ps.Passages {
			ps.Tokens += sp.Tokens
		}
		r.sent[sources.Key(cp.url)] = ps
		r.mu.Unlock()
	}
	return pages
}

// cutPassages splits a page longer than its budget into passages and
// ranks them by the words they share with the post (BM25 and the
// refutation cues of passages.go): the ranking without embeddings.
func cutPassages(q paraQuery, paras []string, budget int) *cutPage {
	ps := splitPassages(paras, passageLimit(budget), budget)
	return &cutPage{budget: budget, ps: ps, order: chosenPassages.rank(q, ps), by: chosenByWords}
}

// choose takes the best-ranked passages within the budget, and within the
// prompt's characters a page; it returns their indexes in page order.
func (cp *cutPage) choose() []int {
	var chosen []int
	fitRunes(cp.budget, func(b int) []string {
		chosen = fillIndexes(cp.ps, cp.order, b)
		return pick(cp.ps, chosen)
	})
	return chosen
}

// pick is ps at the indexes idx.
func pick(ps []string, idx []int) []string {
	out := make([]string, 0, len(idx))
	for _, i := range idx {
		out = append(out, ps[i])
	}
	return out
}

// sentLocked records what is sent of the page at u.
func (r *run) sentLocked(u string, p PageSent) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.sent == nil {
		r.sent = map[string]PageSent{}
	}
	r.sent[sources.Key(u)] = p
}

// passageLimit is the longest passage of a cut page, in tokens: small
// enough that a passage is about one thing.
func passageLimit(budget int) int { return min(chosenPassages.limit(budget), 300) }

// pageBudget is the most tokens of a page that may be sent, and why it is
// less than the page: the cap, no more than the prompt's
// prompts.MaxArticleChars characters a page, and no more bytes than the
// context window takes.
func (l pageLimits) pageBudget(text string, tokens int) (int, string) {
	budget, why := l.cap, l.capWhy
	if l.spendWhy != "" {
		why = l.spendWhy
	}
	if runes := utf8.RuneCountInString(text); runes > prompts.MaxArticleChars {
		if b := tokens * prompts.MaxArticleChars / runes; b < budget {
			budget, why = b, fmt.Sprintf("the page being longer than the %d characters a page the evidence prompt takes", prompts.MaxArticleChars)
		}
	}
	if l.maxByte > 0 && len(text) > l.maxByte {
		if b := tokens * l.maxByte / len(text); b < budget {
			budget, why = max(b, minPageTokens), fmt.Sprintf("the model's context window (%d tokens) holding no more of it", l.window)
		}
	}
	return budget, why
}

// fitRunes chooses with budget tokens, and with less while what is
// chosen is longer than the prompt's characters a page, so that the
// prompt never cuts what was chosen.
func fitRunes(budget int, choose func(int) []string) []string {
	for {
		ps := choose(budget)
		n := 0
		for _, p := range ps {
			n += utf8.RuneCountInString(p)
		}
		if n <= prompts.MaxArticleChars || budget <= minPageTokens {
			return ps
		}
		budget = budget * 9 / 10
	}
}

// placePassages places the passages chosen (indexes of ps, in page
// order) in the page's text, each with its rank in order.
func placePassages(paras, ps []string, chosen, order []int) []SentPassage {
	text := strings.Join(paras, "\n")
	rank := make([]int, len(ps))
	for k, i := range order {
		rank[i] = k + 1
	}
	var out []SentPassage
	pos := 0
	for _, i := range chosen {
		j := strings.Index(text[pos:], ps[i])
		if j < 0 {
			continue // not verbatim page text: cannot happen (splitPassages)
		}
		out = append(out, SentPassage{Offset: pos + j, Bytes: len(ps[i]), Tokens: pageTokens(ps[i]), Rank: rank[i]})
		pos += j + len(ps[i])
	}
	return out
}

// embedPassages ranks the passages of the cut pages by the cosine
// similarity of their embeddings with the post's, in one call, when an
// Embedder is configured; when the call fails they keep their ranking by
// shared words, with a warning.
func (r *run) embedPassages(ctx context.Context, post string, cut []*cutPage) {
	if len(cut) == 0 || r.e.deps.Embedder == nil || r.e.opts.NoLLM {
		return
	}
	texts := []string{post}
	for _, cp := range cut {
		texts = append(texts, cp.ps...)
	}
	vecs, u, err := r.e.deps.Embedder.Embed(ctx, texts)
	r.addUsage(StageEvidence, u)
	if err == nil && len(vecs) != len(texts) {
		err = fmt.Errorf("%d vectors for %d texts", len(vecs), len(texts))
	}
	if err != nil {
		if ctx.Err() == nil {
			r.warn(StageEvidence, "embeddings failed (%v); the passages of pages longer than the cap are chosen by the words they share with the post", err)
		}
		return
	}
	k := 1
	for _, cp := range cut {
		scores := make([]float64, len(cp.ps))
		for i := range cp.ps {
			scores[i] = archive.Cosine(vecs[0], vecs[k])
			k++
		}
		cp.order, cp.by = byScore(scores), chosenByMeaning
	}
}

// packBatches groups urls, in rank order, into the evidence calls: as
// many pages a call as batchShape allows and the model's context window
// holds with the answer they need, when the window is known (the model
// then shrinks a call the server still finds too long).
func (r *run) packBatches(ctx context.Context, urls []string, pages map[string]EvidencePage) [][]string {
	size, _ := r.batchShape()
	window := 0
	if m, ok := r.e.deps.Model.(interface {
		ContextWindow(context.Context) llm.Window
	}); ok {
		window = m.ContextWindow(ctx).Tokens
	}
	return packPages(urls, size, window, r.promptOverhead(), func(u string) int {
		n := pageFence
		for _, p := range pages[u].Paragraphs {
			n += llm.EstimateTokens(p)
		}
		return n
	})
}

// callsInFlight is how many evidence calls run at once: as many as keep
// about EvidenceParallel pages in flight (batchShape), counted with the
// calls as packed, so that pages the context window sends one or two a
// call are not read fewer at a time.
func (r *run) callsInFlight(batches [][]string) int {
	size, calls := r.batchShape()
	if size <= 1 {
		return calls
	}
	most := 1
	for _, b := range batches {
		most = max(most, len(b))
	}
	return max(calls, r.e.opts.EvidenceParallel/most)
}

// packPages cuts urls, in order, into runs of at most size pages whose
// estimated prompt (overhead, then each page's cost) and answer fit in
// window tokens (0: unknown, pages are counted only). A page that does
// not fit even alone is a call of its own.
func packPages(urls []string, size, window, overhead int, cost func(string) int) [][]string {
	var out [][]string
	var cur []string
	used := overhead
	for _, u := range urls {
		c := cost(u)
		if len(cur) > 0 && (len(cur) == size || window > 0 && used+c+evidenceAnswerTokens(len(cur)+1) > window) {
			out = append(out, cur)
			cur, used = nil, overhead
		}
		cur = append(cur, u)
		used += c
	}
	if len(cur) > 0 {
		out = append(out, cur)
	}
	return out
}

// sentRecord is the record of what is sent of the page at u.
func (r *run) sentRecord(u string) *PageSent {
	p, ok := r.sent[sources.Key(u)]
	if !ok {
		return nil
	}
	p.Passages = slices.Clone(p.Passages)
	return &p
}

// inPartSent opens what is said of a page the model found nothing on when
// it was shown only part of it: "in the part sent (1500 of 6200 tokens),
// ".
func (s *Source) inPartSent() string {
	if s.Sent == nil || s.Sent.Whole {
		return ""
	}
	return partSent + "(" + s.Sent.Part() + "), "
}

// partSent opens what is said of a page read in part.
const partSent = "in the part sent "

// PageTokens is the setting evidence.page_tokens: a number of tokens, or
// "thrifty" (ThriftyPageTokens) or "default" (DefaultPageTokens); 0 is
// the default.
type PageTokens int

// ParsePageTokens reads a PageTokens from its text: a whole number of at
// least minPageTokens, "thrifty" or "default".
func ParsePageTokens(s string) (PageTokens, error) {
	switch strings.ToLower(strings.TrimSpace(s)) {
	case "thrifty":
		return ThriftyPageTokens, nil
	case "default", "":
		return DefaultPageTokens, nil
	}
	var n int
	if _, err := fmt.Sscan(s, &n); err != nil || fmt.Sprint(n) != strings.TrimSpace(s) {
		return 0, fmt.Errorf("want a number of tokens a page (%d or more), thrifty or default", minPageTokens)
	}
	return checkPageTokens(n)
}

func checkPageTokens(n int) (PageTokens, error) {
	if n < minPageTokens {
		return 0, fmt.Errorf("%d tokens a page: want %d or more (thrifty is %d)", n, minPageTokens, ThriftyPageTokens)
	}
	return PageTokens(n), nil
}

// UnmarshalText reads the environment's and a flag's text.
func (p *PageTokens) UnmarshalText(b []byte) error {
	v, err := ParsePageTokens(string(b))
	if err == nil {
		*p = v
	}
	return err
}

// UnmarshalTOML reads the config file's value: a number or a string.
func (p *PageTokens) UnmarshalTOML(v any) error {
	switch x := v.(type) {
	case int64:
		n, err := checkPageTokens(int(x))
		if err == nil {
			*p = n
		}
		return err
	case string:
		return p.UnmarshalText([]byte(x))
	}
	return fmt.Errorf("want a number of tokens a page, thrifty or default")
}

// Tokens is the cap in tokens, the default for 0.
func (p PageTokens) Tokens() int {
	if p <= 0 {
		return DefaultPageTokens
	}
	return int(p)
}

func (p PageTokens) String() string {
	switch p.Tokens() {
	case ThriftyPageTokens:
		return fmt.Sprintf("%d (thrifty)", ThriftyPageTokens)
	}
	return fmt.Sprint(p.Tokens())
}

// EvidenceLine says what the evidence step expected to send and what it
// sent: "evidence: expected up to 12 pages, about 18400 tokens (up to
// $0.0510); sent 9800 tokens of page text from 8 pages (7 whole, 1 cut to
// its passages), 3 calls, $0.0290". "" when no page was sent.
func (c *Check) EvidenceLine() string {
	pages, whole, tokens := 0, 0, 0
	for _, s := range c.Sources {
		if s.Sent == nil {
			continue
		}
		pages++
		tokens += s.Sent.Tokens
		if s.Sent.Whole {
			whole++
		}
	}
	if pages == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("evidence: ")
	if p := c.EvidencePlan; p != nil {
		fmt.Fprintf(&b, "expected up to %s, about %d tokens", pageCount(p.Pages), p.Tokens)
		if p.CostUSD > 0 {
			fmt.Fprintf(&b, " (up to $%.4f)", p.CostUSD)
		}
		b.WriteString("; ")
	}
	fmt.Fprintf(&b, "sent %d tokens of page text from %s (%d whole", tokens, pageCount(pages), whole)
	switch cut := pages - whole; cut {
	case 0:
	case 1:
		b.WriteString(", 1 cut to its passages")
	default:
		fmt.Fprintf(&b, ", %d cut to their passages", cut)
	}
	b.WriteString(")")
	if u, ok := c.Usage.ByStage[string(StageEvidence)]; ok && u.LLMCalls > 0 {
		fmt.Fprintf(&b, ", %d model calls, %d tokens, %s", u.LLMCalls, u.Tokens(), u.CostText())
	}
	return b.String()
}
