package pipeline

import (
	"cmp"
	"context"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources"
)

// Verdict is what the evidence says of a claim or of the post: AVeriTeC's
// four labels and "misleading" (true words, false impression).
type Verdict string

// Verdicts, in the order the app cycles through them.
const (
	VerdictSupported   Verdict = "supported"
	VerdictRefuted     Verdict = "refuted"
	VerdictMisleading  Verdict = "misleading"
	VerdictConflicting Verdict = "conflicting"
	VerdictNotEnough   Verdict = "not_enough_evidence"
)

// AllVerdicts lists the verdicts in the app's order.
var AllVerdicts = []Verdict{VerdictSupported, VerdictRefuted, VerdictMisleading, VerdictConflicting, VerdictNotEnough}

// Label is the verdict in words: "Supported", "Not enough evidence".
func (v Verdict) Label() string {
	switch v {
	case VerdictSupported:
		return "Supported"
	case VerdictRefuted:
		return "Refuted"
	case VerdictMisleading:
		return "Misleading"
	case VerdictConflicting:
		return "Conflicting evidence"
	case VerdictNotEnough:
		return "Not enough evidence"
	}
	return ""
}

// ParseVerdict reads a verdict as a person types it ("supported", "not
// enough evidence", "Conflicting"); ok is false for anything else.
func ParseVerdict(s string) (Verdict, bool) {
	t := strings.Join(strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return r == ' ' || r == '_' || r == '-' }), "_")
	switch t {
	case "supported", "support", "true", "accurate":
		return VerdictSupported, true
	case "refuted", "refute", "false":
		return VerdictRefuted, true
	case "misleading", "missing_context", "cherry_picking":
		return VerdictMisleading, true
	case "conflicting", "conflicting_evidence", "disputed", "conflicting_evidence/cherrypicking":
		return VerdictConflicting, true
	case "not_enough_evidence", "not_enough", "nee", "unverified", "unproven":
		return VerdictNotEnough, true
	}
	return "", false
}

// Who set a verdict.
const (
	VerdictByChecker    = "checker"    // the person chose it
	VerdictByCorrection = "correction" // the correction's opening (the model's, or the person's edit), within what the evidence allows
	VerdictByEvidence   = "evidence"   // derived from the stances of the quotes
)

// Claim is one checkable claim of the post. A post without claims is one
// claim, its text.
type Claim struct {
	Text   string `json:"text"`
	Origin string `json:"origin"` // model|user
	// CheckerVerdict is the verdict the person chose for the claim; ""
	// leaves it to the evidence. It is kept across reruns.
	CheckerVerdict Verdict `json:"checker_verdict,omitempty"`
}

// ClaimVerdict is one claim with its verdict and the quotes it rests on.
type ClaimVerdict struct {
	Claim   int      `json:"claim"` // from 1
	Text    string   `json:"text"`
	Verdict Verdict  `json:"verdict"`
	By      string   `json:"by"`
	Quotes  []Quoted `json:"quotes,omitempty"`
}

// Quoted is one included quote as a verdict shows it.
type Quoted struct {
	URL       string `json:"url"`
	Publisher string `json:"publisher,omitempty"`
	Tier      Tier   `json:"tier,omitempty"`
	Stance    Kind   `json:"stance"`
	Quote     string `json:"quote"`
}

// Verdicts is the post's verdict and each claim's, derived from the
// current evidence and correction whenever they are read, never stored:
// only what the person chose is (CheckerVerdict).
type Verdicts struct {
	Post   Verdict        `json:"post"`
	By     string         `json:"by"`
	Claims []ClaimVerdict `json:"claims"`
}

// ClaimTexts are the post's claims: its Claims, or its text as its one
// claim.
func (c *Check) ClaimTexts() []string {
	var out []string
	for _, cl := range c.Claims {
		if t := strings.TrimSpace(cl.Text); t != "" {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return []string{strings.TrimSpace(c.Post.Text)}
	}
	return out
}

// ClaimsModel is a Model whose query answer also splits the post into its
// checkable claims; LLMModel is one. With a Model that is not, the post is
// one claim unless the person splits it.
type ClaimsModel interface {
	QueriesClaims(ctx context.Context, in QueriesInput) (queries, claims []string, informative bool, u CallUsage, err error)
}

// setClaims puts the model's claims in place of the model's last ones. The
// person's claims, and the model's once the person has edited any claim or
// set a claim's verdict, are kept as they are.
func (r *run) setClaims(claims []string) {
	c := r.c
	if slices.ContainsFunc(c.Claims, func(cl Claim) bool { return cl.Origin == OriginUser || cl.CheckerVerdict != "" }) {
		return
	}
	c.Claims = nil
	if len(claims) < 2 {
		return // one claim: the post itself, as before
	}
	for _, t := range claims {
		c.Claims = append(c.Claims, Claim{Text: t, Origin: OriginModel})
	}
}

// SetClaims puts the person's claims in place of the post's (empty texts
// are dropped; none, or one, checks the post whole), keeping the verdict
// they set on a claim of the same text, and returns the stage to run
// again: the evidence, whose quotes are tied to the claims.
func (c *Check) SetClaims(texts []string) Stage {
	set := map[string]Verdict{}
	for _, cl := range c.Claims {
		set[strings.TrimSpace(cl.Text)] = cl.CheckerVerdict
	}
	var out []Claim
	for _, t := range texts {
		if t = strings.Join(strings.Fields(t), " "); t != "" {
			out = append(out, Claim{Text: t, Origin: OriginUser, CheckerVerdict: set[t]})
		}
	}
	if len(out) < 2 {
		// One claim is the post itself; an empty list marks the post as
		// the person's choice, so the model's split does not come back.
		out = []Claim{{Text: strings.TrimSpace(c.Post.Text), Origin: OriginUser}}
	}
	c.Claims = out
	c.markStale(StageEvidence)
	return StageEvidence
}

// promptClaims are the claims the prompts number: the post's claims when
// it has more than one; a post of one claim is shown as today, whole.
func (c *Check) promptClaims() []string {
	if t := c.ClaimTexts(); len(t) > 1 {
		return t
	}
	return nil
}

// ClaimOf is the claim a quote bears on, from 1.
func (e Evidence) ClaimOf() int { return max(1, e.Claim) }

// credible reports whether a tier counts as a credible reference for a
// verdict: high or medium. Quotes from other pages count only where no
// credible page bears on the claim.
func credible(t Tier) bool { return t == TierHigh || t == TierMedium }

// stances is, for one claim, the pages quoted in each stance.
type stances map[Kind]map[string]bool

func (st stances) n(k Kind) int { return len(st[k]) }

// claimQuotes gathers the included quotes on the claims of the post, from
// pages still kept, and the stances that count on each claim: the credible
// pages', or every page's where no credible page bears on the claim.
func (c *Check) claimQuotes() ([][]Quoted, []stances) {
	n := len(c.ClaimTexts())
	quotes := make([][]Quoted, n)
	all, cred := make([]stances, n), make([]stances, n)
	for _, e := range c.IncludedEvidence() {
		s := c.SourceByURL(e.SourceURL)
		if s == nil || !s.Eligible() {
			continue
		}
		i := e.ClaimOf() - 1
		if i >= n {
			i = 0
		}
		quotes[i] = append(quotes[i], Quoted{URL: e.SourceURL, Publisher: s.Label(), Tier: s.Tier, Stance: e.Kind, Quote: e.Quote})
		if len(s.Flags) > 0 {
			continue // a flagged page (a look-alike, a copy) is quoted but never settles a claim
		}
		page := independenceKey(*s)
		for _, st := range []*stances{&all[i], &cred[i]} {
			if st == &cred[i] && !credible(s.Tier) {
				continue
			}
			if *st == nil {
				*st = stances{}
			}
			if (*st)[e.Kind] == nil {
				(*st)[e.Kind] = map[string]bool{}
			}
			(*st)[e.Kind][page] = true
		}
	}
	for i := range cred {
		if len(cred[i]) == 0 {
			cred[i] = all[i]
		}
	}
	return quotes, cred
}

// independenceKey names where a page's report comes from, for the stop
// rule and the verdict: the news agency it credits, declares or is the
// site of (three copies of one AP story are one source, as Origins groups
// them), else the origin it
// declares (the site its canonical link or syndication metadata points to,
// which is that site's own key), else its publisher (two pages of one
// domain are one source). Near copies of whole texts are left to Origins'
// display: the stop rule's count is settled page by page.
func independenceKey(s Source) string {
	if a := agencyOfPage(s); a != "" {
		return "agency " + a
	}
	return cmp.Or(declaredOrigin(s).key, publisherKey(s))
}

// publisherKey names a page's publisher for independence: two pages of one
// domain are one source.
func publisherKey(s Source) string {
	return cmp.Or(s.Domain, sources.HostOf(cmp.Or(s.FinalURL, s.URL)), sources.Key(s.URL))
}

// derive is a claim's verdict from the stances on it: conflicting when
// pages disagree, refuted with a refuting page, misleading with context
// (and a confirmation, or none), supported with confirmations only, and
// not enough evidence with no page.
func derive(st stances) Verdict {
	s, r, ctx := st.n(KindSupports), st.n(KindRefutes), st.n(KindContext)
	switch {
	case s > 0 && r > 0:
		return VerdictConflicting
	case r > 0:
		return VerdictRefuted
	case ctx > 0:
		return VerdictMisleading
	case s > 0:
		return VerdictSupported
	}
	return VerdictNotEnough
}

// bounded reports whether the evidence allows verdict v on stances st: no
// "refuted" without a refuting page, no "supported" without a confirming
// one or with a refuting one, no "misleading" without a refuting or
// context page, "conflicting" only when pages disagree, and nothing but
// "conflicting" when they do.
func bounded(v Verdict, st stances) bool {
	s, r, ctx := st.n(KindSupports), st.n(KindRefutes), st.n(KindContext)
	if s > 0 && r > 0 {
		return v == VerdictConflicting
	}
	switch v {
	case VerdictSupported:
		return s > 0
	case VerdictRefuted:
		return r > 0
	case VerdictMisleading:
		return r > 0 || ctx > 0
	case VerdictConflicting:
		return false
	case VerdictNotEnough:
		return true
	}
	return false
}

// combine is the post's verdict from its claims': one verdict when all
// agree; conflicting when one is; misleading when one holds and another
// does not; refuted when one is refuted and none holds; and not enough
// evidence when none is known or one that holds stands beside one not
// known.
func combine(vs []Verdict) Verdict {
	has := map[Verdict]bool{}
	for _, v := range vs {
		has[v] = true
	}
	switch {
	case len(has) == 1:
		return vs[0]
	case has[VerdictConflicting]:
		return VerdictConflicting
	case has[VerdictSupported] && (has[VerdictRefuted] || has[VerdictMisleading]):
		return VerdictMisleading
	case has[VerdictRefuted]:
		return VerdictRefuted
	case has[VerdictMisleading]:
		return VerdictMisleading
	}
	return VerdictNotEnough
}

// Verdicts derives the verdict of each claim and of the post from the
// included evidence, the correction's opening and the person's choices
// (see Verdicts). The extractive mode gives none: its digest judges
// nothing.
func (c *Check) Verdicts() Verdicts {
	if c.NoLLM {
		return Verdicts{}
	}
	texts := c.ClaimTexts()
	quotes, sts := c.claimQuotes()
	var out Verdicts
	var vs []Verdict
	for i, t := range texts {
		cv := ClaimVerdict{Claim: i + 1, Text: t, Verdict: derive(sts[i]), By: VerdictByEvidence, Quotes: quotes[i]}
		if i < len(c.Claims) && c.Claims[i].CheckerVerdict != "" {
			cv.Verdict, cv.By = c.Claims[i].CheckerVerdict, VerdictByChecker
		}
		out.Claims = append(out.Claims, cv)
		vs = append(vs, cv.Verdict)
	}
	out.Post, out.By = combine(vs), VerdictByEvidence
	if slices.ContainsFunc(out.Claims, func(cv ClaimVerdict) bool { return cv.By == VerdictByChecker }) {
		out.By = VerdictByChecker
	}
	if p := ProposedVerdict(c.Correction); p != "" && out.By == VerdictByEvidence {
		ok := bounded(p, sts[0])
		if len(texts) > 1 {
			// A post of several claims: the proposal must be what its
			// claims' verdicts make it, or "misleading" where some
			// claim does not hold and none is disputed.
			ok = p == out.Post || p == VerdictMisleading && out.Post != VerdictConflicting &&
				slices.ContainsFunc(vs, func(v Verdict) bool { return v == VerdictRefuted || v == VerdictMisleading })
		}
		if ok {
			out.Post, out.By = p, VerdictByCorrection
			if len(texts) == 1 {
				out.Claims[0].Verdict, out.Claims[0].By = p, VerdictByCorrection
			}
		}
	}
	if c.CheckerVerdict != "" {
		out.Post, out.By = c.CheckerVerdict, VerdictByChecker
		if len(texts) == 1 && (len(c.Claims) == 0 || c.Claims[0].CheckerVerdict == "") {
			out.Claims[0].Verdict, out.Claims[0].By = c.CheckerVerdict, VerdictByChecker
		}
	}
	return out
}

// ProposedVerdict reads the verdict a correction written by the model
// opens with — "This post is accurate", "This post is false", "… is
// misleading", "… is disputed", "… is unverified" — or "" when it opens
// with none of these (another language, muse's own texts, an edit).
func ProposedVerdict(corr Correction) Verdict {
	if corr.Unsourced() {
		return ""
	}
	t := strings.ToLower(strings.TrimLeft(corr.Text, "\"'“*_ \n"))
	rest, ok := strings.CutPrefix(t, "this post is ")
	if !ok {
		return ""
	}
	if i := strings.IndexAny(rest, ".:;,\n"); i >= 0 {
		rest = rest[:i]
	}
	words := strings.Fields(rest)
	if len(words) > 4 {
		words = words[:4]
	}
	head := " " + strings.Join(words, " ") + " "
	has := func(ws ...string) bool {
		return slices.ContainsFunc(ws, func(w string) bool { return strings.Contains(head, w) })
	}
	switch {
	case has(" unverified ", " unverifiable ", " unproven ", " unsubstantiated ", " cannot be verified ", " can't be verified ", " not verifiable "):
		return VerdictNotEnough
	case has(" disputed ", " contested ", " conflicting "):
		return VerdictConflicting
	case has(" misleading ", " partly ", " partially ", " half ", " mostly ", " missing context ", " out of context ", " exaggerat", " mixed "):
		return VerdictMisleading
	case has(" false ", " not true ", " untrue ", " inaccurate ", " incorrect ", " wrong ", " fabricated ", " fake ", " not accurate "):
		return VerdictRefuted
	case has(" accurate ", " true ", " correct ", " right ", " confirmed "):
		return VerdictSupported
	}
	return ""
}

// settled reports whether the evidence read so far is enough: on every
// claim, RefutingPages independent pages agree (all confirming, or all
// refuting) and none disagrees. A disagreement keeps reading.
func (r *run) settled() bool {
	r.mu.Lock()
	defer r.mu.Unlock()
	_, sts := r.c.claimQuotes()
	for _, st := range sts {
		s, rf := st.n(KindSupports), st.n(KindRefutes)
		if s > 0 && rf > 0 || max(s, rf) < r.e.opts.RefutingPages {
			return false
		}
	}
	return true
}
