package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/llm"
)

// NoSourceText is the whole correction when no evidence survived: muse says
// so plainly and cites nothing rather than let a model write from memory.
const NoSourceText = "No credible source was found that addresses this post, so muse cannot write a sourced correction. " + noVerdict

// NotJudgedLead opens the correction muse writes instead of NoSourceText
// when the model could not judge some of the pages: there may be a source
// among them, so muse does not say there is none (NotJudgedText).
const NotJudgedLead = "No source could be checked"

// Unsourced reports whether the correction is one of muse's texts saying
// that no sourced correction could be written (NoEvidenceText: NoSourceText,
// the text that begins NotJudgedLead, or the accounting's sentence) rather
// than a correction.
func (c Correction) Unsourced() bool {
	t := strings.TrimSpace(c.Text)
	return strings.HasSuffix(t, "so muse cannot write a sourced correction. "+noVerdict) || strings.HasPrefix(t, NotJudgedLead) ||
		strings.HasPrefix(t, untickedLead) && strings.HasSuffix(t, noVerdict)
}

// NotJudgedText is the whole correction when no evidence survived and the
// model did not judge some of the pages sent to it: which and why, in words
// a checker can act on, and never that no credible source was found. ""
// when it judged every page.
func NotJudgedText(c *Check) string {
	judged, lost := c.judging()
	if len(lost) == 0 {
		return ""
	}
	one := len(lost) == 1
	them, unread := "them", "the "+pageCount(len(lost))+" not judged"
	if one {
		them, unread = "it", "the page not judged"
	}
	end := " Nothing here says whether the post is true or false: read " + unread + " yourself, or check again with another model or server."
	if judged == 0 {
		all := "all " + pageCount(len(lost))
		if one {
			all = "the one page found"
		}
		return fmt.Sprintf("%s: %s, so muse cannot write a sourced correction.", NotJudgedLead, lostWhy(lost, all)) + end
	}
	address := "do not address"
	if judged == 1 {
		address = "does not address"
	}
	return fmt.Sprintf("%s for %d of %s: %s; the %s judged %s the post.",
		NotJudgedLead, len(lost), pageCount(judged+len(lost)), lostWhy(lost, them), pageCount(judged), address) + end
}

// DigestHeading opens the extractive mode's digest, which lists sources and
// never gives a verdict.
const DigestHeading = "Sources that address this post (found without a language model; this is a reading list, not a verdict):"

// correction writes the correction from the included evidence only, then
// removes any URL that is not an evidence page.
func (r *run) correction(ctx context.Context) (int, error) {
	c := r.c
	c.Correction = Correction{}
	ev := append(r.orderedEvidence(), r.factCheckEvidence()...)
	sharedOrigins(c, ev)
	note := c.NotJudgedNote()
	if len(ev) == 0 && note != "" {
		// Pages the model did not judge may refute the post: say so, and
		// never ask the model to write from "no facts were found".
		c.Correction.Text = NoEvidenceText(c)
		c.Correction.Warnings = []string{note}
		r.partial = "no sourced correction: " + note
		r.item(StageCorrection, c.Correction, "pages not judged")
		return 0, nil
	}
	if len(ev) == 0 {
		// What the accounting says happened, never "no credible source"
		// unless every page found was judged.
		c.Correction.Text = NoEvidenceText(c)
		r.item(StageCorrection, c.Correction, "no evidence")
		return 0, nil
	}
	if r.e.opts.NoLLM {
		c.Correction.Text, c.Correction.URLs = r.digest(ev)
		r.item(StageCorrection, c.Correction, "digest written")
		return len(c.Correction.URLs), nil
	}
	in := CorrectionInput{Post: c.Post, Images: c.Images, Video: c.Video, Evidence: ev, Claims: c.promptClaims(), Language: r.correctionLanguage()}
	var allowed []string
	for _, e := range ev {
		allowed = append(allowed, e.URL)
		if s := c.SourceByURL(e.URL); s != nil && s.FinalURL != "" {
			allowed = append(allowed, s.FinalURL)
		}
	}
	ids, material := prompts.CorrectionSources(promptEvidence(ev)), correctionMaterial(c.Post, ev)
	write := func() (string, error) {
		var sofar strings.Builder
		text, u, err := r.e.deps.Model.Correction(ctx, in, func(delta string) {
			sofar.WriteString(delta)
			preview, _ := ResolveSourceIDs(sofar.String(), ids, material)
			// A link is shown only once the guard has passed it: an
			// injected one never reaches the screen, even mid-stream.
			preview, _, _ = GuardCorrection(preview, allowed)
			r.emit(Event{Kind: EventTokenDelta, Stage: StageCorrection, Delta: delta, Text: preview})
		})
		r.addUsage(StageCorrection, u)
		return text, err
	}
	text, err := write()
	var langWarning string
	if got := writtenIn(text, in.Language); got != "" && err == nil && !isRefusal(text) {
		// One more call: the model was asked for in.Language.
		r.warn(StageCorrection, "the correction came back in %s, not %s as asked; asking again", lang.Name(got), lang.Name(in.Language))
		in.Insist = true
		again, err2 := write()
		switch {
		case err2 != nil || isRefusal(again) || strings.TrimSpace(again) == "":
			langWarning = fmt.Sprintf("the correction is written in %s, not %s as asked (asking again failed)", lang.Name(got), lang.Name(in.Language))
		default:
			text = again
			if g := writtenIn(again, in.Language); g != "" {
				langWarning = fmt.Sprintf("the correction is written in %s, not %s as asked", lang.Name(g), lang.Name(in.Language))
			}
		}
	}
	text, warnings := ResolveSourceIDs(text, ids, material)
	if langWarning != "" {
		warnings = append(warnings, langWarning)
	}
	guarded, cited, linkWarnings := GuardCorrection(text, allowed)
	warnings = append(warnings, linkWarnings...)
	for _, w := range warnings {
		r.warn(StageCorrection, "%s", w)
	}
	if note != "" {
		// Warned by the evidence stage; the correction's record says it too.
		warnings = append(warnings, note+"; the correction rests on the pages judged")
	}
	c.Correction = Correction{Text: guarded, URLs: cited, Warnings: warnings, Model: r.e.deps.Model.ModelName("correction")}
	if errors.Is(err, ErrAnswerCut) {
		// The server's own token limit: the text is kept, and said to be
		// cut, for the checker to finish.
		err = nil
		cut := "the model's answer reached its length limit: the correction may end mid-sentence"
		c.Correction.Warnings = append(c.Correction.Warnings, cut)
		r.warn(StageCorrection, "%s", cut)
		r.partial = cut
	}
	if err != nil {
		switch {
		case ctx.Err() != nil:
		case errors.Is(err, llm.ErrStreamCut):
			c.Correction.Warnings = append(c.Correction.Warnings, "the model's answer stopped before it was complete: "+err.Error())
		case errors.Is(err, llm.ErrContentFilter):
			c.Correction.Warnings = append(c.Correction.Warnings, "the model server's content filter withheld the correction: "+err.Error())
		case errors.Is(err, llm.ErrRefusal):
			c.Correction.Warnings = append(c.Correction.Warnings, "the model declined to write a correction: "+err.Error())
		default:
			c.Correction.Warnings = append(c.Correction.Warnings, "no usable correction: "+err.Error())
		}
		r.item(StageCorrection, c.Correction, "correction incomplete")
		return len(cited), fmt.Errorf("write correction: %w", err)
	}
	if strings.TrimSpace(guarded) == "" {
		return 0, fmt.Errorf("write correction: the model returned an empty answer: %w", ErrBadAnswer)
	}
	if isRefusal(guarded) {
		// The refusal is the model's, not a correction: it is not kept as one.
		c.Correction.Text, c.Correction.URLs = "", nil
		c.Correction.Warnings = append(c.Correction.Warnings, fmt.Sprintf("the model declined to write a correction (%q); no correction is kept", clip(guarded, 120)))
		r.item(StageCorrection, c.Correction, "model declined")
		return 0, fmt.Errorf("write correction: the model declined (%q): %w", clip(guarded, 120), ErrBadAnswer)
	}
	var more []string
	if len(cited) == 0 {
		// Said now, and derived from the text whenever it is read
		// (CorrectionWarnings), not kept beside it.
		r.warn(StageCorrection, "%s", citesNone)
	}
	if in.Language == "en" && !strings.HasPrefix(strings.TrimLeft(guarded, "\"'“*_ "), prompts.CorrectionStart) {
		more = append(more, fmt.Sprintf("the correction does not start with %q", prompts.CorrectionStart))
	}
	for _, w := range more {
		c.Correction.Warnings = append(c.Correction.Warnings, w)
		r.warn(StageCorrection, "%s", w)
	}
	r.item(StageCorrection, c.Correction, "correction written")
	return len(cited), nil
}

// orderedEvidence lists the included, verified quotes as the prompt wants
// them: by the rank of their page (tier, then relevance), refutations
// first, then confirmations, then context.
func (r *run) orderedEvidence() []EvidenceForPrompt {
	c := r.c
	pos := map[string]int{}
	for i, s := range c.Sources {
		pos[sources.Key(s.URL)] = i
	}
	inc := c.IncludedEvidence()
	slices.SortStableFunc(inc, func(a, b Evidence) int {
		return cmp.Or(cmp.Compare(pos[sources.Key(a.SourceURL)], pos[sources.Key(b.SourceURL)]),
			cmp.Compare(a.Kind.Rank(), b.Kind.Rank()))
	})
	out := make([]EvidenceForPrompt, 0, len(inc))
	for _, e := range inc {
		p := EvidenceForPrompt{URL: e.SourceURL, Kind: e.Kind, Claim: e.Claim, Quote: e.Quote}
		if s := c.SourceByURL(e.SourceURL); s != nil {
			if !s.Eligible() {
				continue // its page was dropped after it was quoted
			}
			p.Publisher, p.Tier, p.Published = s.Label(), s.Tier, s.Published
		}
		out = append(out, p)
	}
	return out
}

// correctionMaterial is the text the correction prompt shows besides its
// rules: a word of it that looks like a source id ("S1") is a name.
func correctionMaterial(p Post, ev []EvidenceForPrompt) string {
	parts := []string{p.Text, p.Author, p.Handle}
	for _, e := range ev {
		parts = append(parts, e.Publisher, e.Quote)
	}
	return strings.Join(parts, "\n")
}

// promptEvidence is the evidence as the correction prompt shows it; the
// prompt's source ids (prompts.CorrectionSources) follow from it.
func promptEvidence(ev []EvidenceForPrompt) []prompts.EvidenceItem {
	var items []prompts.EvidenceItem
	for _, e := range ev {
		items = append(items, prompts.EvidenceItem{URL: e.URL, Publisher: e.Publisher, Tier: e.Tier,
			Published: e.Published, Kind: e.Kind, Claim: e.Claim, Quotes: []string{e.Quote}, Origin: e.Origin})
	}
	return items
}

// digest lists the evidence pages and their paragraphs without judging.
func (r *run) digest(ev []EvidenceForPrompt) (string, []string) {
	var b strings.Builder
	b.WriteString(DigestHeading)
	b.WriteString("\n")
	var urls []string
	n := 0
	for _, e := range ev {
		if !slices.Contains(urls, e.URL) {
			urls = append(urls, e.URL)
			n++
			fmt.Fprintf(&b, "\n%d. %s (%s tier", n, cmp.Or(e.Publisher, e.URL), cmp.Or(e.Tier, TierUnrated))
			if !e.Published.IsZero() {
				fmt.Fprintf(&b, ", %s", e.Published.Format(time.DateOnly))
			}
			fmt.Fprintf(&b, "): %s\n", e.URL)
		}
		fmt.Fprintf(&b, "   > %s\n", clip(strings.Join(strings.Fields(e.Quote), " "), 400))
	}
	return strings.TrimRight(b.String(), "\n"), urls
}

// isRefusal spots the stock openings of a model declining a task.
func isRefusal(text string) bool {
	t := strings.ToLower(strings.TrimSpace(text))
	t = strings.NewReplacer("’", "'").Replace(t)
	for _, p := range []string{"i'm sorry", "i am sorry", "sorry, ", "i cannot", "i can't", "i can not",
		"i'm unable", "i am unable", "as an ai", "i won't", "i will not"} {
		if strings.HasPrefix(t, p) {
			return true
		}
	}
	return false
}

// writtenIn is the language text is plainly written in when that is not
// want, else "": a correction long enough to tell (a dozen words) whose
// detection is reliable. Quotes and names in another language do not tip
// a correction written around them.
func writtenIn(text, want string) string {
	if want == "" || lang.Words(text) < 12 {
		return ""
	}
	d := lang.Detect(text)
	if !d.Reliable || d.Code == "" || lang.Base(d.Code) == lang.Base(want) {
		return ""
	}
	return d.Code
}

// correctionLanguage is the language the correction is written in (ISO
// 639-1): the checker's choice (Options.CorrectionLanguage), else the
// post's, else English.
func (r *run) correctionLanguage() string {
	return lang.Base(cmp.Or(r.e.opts.CorrectionLanguage, r.c.Post.Language))
}

// sharedOrigins names, on each item of ev whose page shares its origin
// with another page of the evidence (Check.Origins), that origin, so the
// correction's prompt says which sources carry one report.
func sharedOrigins(c *Check, ev []EvidenceForPrompt) {
	label := map[string]string{}
	for _, o := range c.Origins() {
		if len(o.URLs) < 2 {
			continue
		}
		for _, u := range o.URLs {
			label[sources.Key(u)] = o.Label
		}
	}
	for i := range ev {
		ev[i].Origin = label[sources.Key(ev[i].URL)]
	}
}
