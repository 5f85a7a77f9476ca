package pipeline

import (
	"fmt"
	"slices"
	"strings"
)

// Community Notes classifications (X's API field "classification").
const (
	ClassMisleading    = "misinformed_or_potentially_misleading"
	ClassNotMisleading = "not_misleading"
)

// Community Notes misleading tags, as X's API names them.
const (
	TagDisputedClaimAsFact     = "disputed_claim_as_fact"
	TagFactualError            = "factual_error"
	TagManipulatedMedia        = "manipulated_media"
	TagMisinterpretedSatire    = "misinterpreted_satire"
	TagMissingImportantContext = "missing_important_context"
	TagOutdatedInformation     = "outdated_information"
	TagOther                   = "other"
)

// MisleadingTags lists X's misleading tags in X's order.
var MisleadingTags = []string{TagDisputedClaimAsFact, TagFactualError, TagManipulatedMedia,
	TagMisinterpretedSatire, TagMissingImportantContext, TagOutdatedInformation, TagOther}

// NoteChoice is the classification and tags the person chose for the
// post's note, kept in the Check across reruns; the rest of NoteFields is
// derived.
type NoteChoice struct {
	Classification string   `json:"classification"`
	Tags           []string `json:"misleading_tags,omitempty"`
}

// NoteTag is one misleading tag with why it applies.
type NoteTag struct {
	Tag    string `json:"tag"`
	Reason string `json:"reason"`
}

// NoteFields are a Community Note's fields beside its text, derived from
// the verdict and the evidence whenever they are read (never stored), or
// the person's NoteChoice. Abstain, when set, says why no note should be
// written: the evidence holds no refuting or context page, or the verdict
// is not enough evidence.
type NoteFields struct {
	Classification string    `json:"classification,omitempty"`
	Tags           []NoteTag `json:"misleading_tags,omitempty"`
	By             string    `json:"by,omitempty"` // evidence|checker
	Abstain        string    `json:"abstain,omitempty"`
}

// TagNames are the fields' tags, by name.
func (f NoteFields) TagNames() []string {
	var out []string
	for _, t := range f.Tags {
		out = append(out, t.Tag)
	}
	return out
}

// Short is the fields in a few words: "misleading · factual_error",
// "not misleading", "no note: …".
func (f NoteFields) Short() string {
	switch {
	case f.Abstain != "" && f.Classification == "":
		return "no note: " + f.Abstain
	case f.Classification == ClassNotMisleading:
		return "not misleading"
	case f.Classification == ClassMisleading:
		return strings.Join(append([]string{"misleading"}, f.TagNames()...), " · ")
	}
	return ""
}

// SetNoteChoice keeps the person's classification and tags for the note;
// an empty classification gives the choice back to the evidence. A
// misleading note needs at least one of X's tags, a note that is not
// misleading none.
func (c *Check) SetNoteChoice(classification string, tags []string) error {
	switch classification {
	case "":
		c.CheckerNote = nil
		return nil
	case ClassMisleading:
		if len(tags) == 0 {
			return fmt.Errorf("a misleading note needs at least one tag (%s)", strings.Join(MisleadingTags, ", "))
		}
	case ClassNotMisleading:
		if len(tags) > 0 {
			return fmt.Errorf("a note that is not misleading takes no misleading tags")
		}
	default:
		return fmt.Errorf("unknown classification %q: use %s or %s", classification, ClassMisleading, ClassNotMisleading)
	}
	var keep []string
	for _, t := range tags {
		if !slices.Contains(MisleadingTags, t) {
			return fmt.Errorf("unknown misleading tag %q: use %s", t, strings.Join(MisleadingTags, ", "))
		}
		if !slices.Contains(keep, t) {
			keep = append(keep, t)
		}
	}
	c.CheckerNote = &NoteChoice{Classification: classification, Tags: keep}
	return nil
}

// NoteFields derives the note's classification and tags from the post's
// verdict and the stances of the quotes on each claim:
//
//   - a refuted claim: factual_error, naming the refuting pages;
//   - a misleading claim: missing_important_context, naming the pages
//     giving context (or refuting part of it);
//   - a claim the pages disagree on: disputed_claim_as_fact;
//   - a claim not supported whose confirming page is stale (published
//     StaleAge or more before the post) while a refuting or context page
//     is not: outdated_information, naming both;
//   - a supported post: not_misleading, with no tags;
//   - not enough evidence, or no refuting or context quote at all for a
//     misleading note: no note (Abstain).
//
// manipulated_media, misinterpreted_satire and other are never derived —
// the check holds no signal for them — and come only
// from the person's NoteChoice, which replaces the derived classification
// and tags (a derived tag the person kept keeps its reason). The
// abstention stands whatever the choice: no note rests on no source.
func (c *Check) NoteFields() NoteFields {
	v := c.Verdicts()
	var f NoteFields
	if v.Post == "" {
		f.Abstain = "a --no-llm digest judges nothing"
		return f
	}
	against := map[string]bool{} // pages refuting or adding context, any claim
	for _, cv := range v.Claims {
		for _, q := range cv.Quotes {
			if q.Stance == KindRefutes || q.Stance == KindContext {
				against[q.Publisher] = true
			}
		}
	}
	pages := func(cv ClaimVerdict, ks ...Kind) string {
		var ps []string
		for _, q := range cv.Quotes {
			if slices.Contains(ks, q.Stance) && !slices.Contains(ps, q.Publisher) {
				ps = append(ps, q.Publisher)
			}
		}
		if len(ps) == 0 {
			return "no quoted page"
		}
		return strings.Join(ps, ", ")
	}
	claim := func(cv ClaimVerdict) string {
		who := ""
		if cv.By == VerdictByChecker {
			who = " (the checker's verdict)"
		}
		if len(v.Claims) == 1 {
			return "the post" + who
		}
		return fmt.Sprintf("claim %d%s", cv.Claim, who)
	}
	add := func(tag, reason string) {
		for i, t := range f.Tags {
			if t.Tag == tag {
				f.Tags[i].Reason += "; " + reason
				return
			}
		}
		f.Tags = append(f.Tags, NoteTag{Tag: tag, Reason: reason})
	}
	f.By = VerdictByEvidence
	switch v.Post {
	case VerdictNotEnough:
		f.Abstain = "NOT ENOUGH EVIDENCE: the verdict is not enough evidence, so no note is written"
	case VerdictSupported:
		f.Classification = ClassNotMisleading
	default:
		f.Classification = ClassMisleading
		for _, cv := range v.Claims {
			switch cv.Verdict {
			case VerdictRefuted:
				add(TagFactualError, fmt.Sprintf("%s is refuted by %s", claim(cv), pages(cv, KindRefutes)))
			case VerdictMisleading:
				add(TagMissingImportantContext, fmt.Sprintf("%s lacks context that %s give", claim(cv), pages(cv, KindContext, KindRefutes)))
			case VerdictConflicting:
				add(TagDisputedClaimAsFact, fmt.Sprintf("%s is stated as fact, but %s confirm it and %s dispute it", claim(cv), pages(cv, KindSupports), pages(cv, KindRefutes)))
			}
		}
		for _, cv := range v.Claims {
			if old, newer := c.outdated(cv); old != "" && cv.Verdict != VerdictSupported && cv.Verdict != VerdictNotEnough {
				add(TagOutdatedInformation, fmt.Sprintf("%s was confirmed by %s, published a year or more before the post, and %s, published since, says otherwise", claim(cv), old, newer))
			}
		}
		if len(f.Tags) == 0 { // the post's verdict was set above its claims'
			switch v.Post {
			case VerdictRefuted:
				add(TagFactualError, "the post's verdict is refuted ("+v.By+")")
			case VerdictConflicting:
				add(TagDisputedClaimAsFact, "the post's verdict is conflicting evidence ("+v.By+")")
			default:
				add(TagMissingImportantContext, "the post's verdict is misleading ("+v.By+")")
			}
		}
		if len(against) == 0 {
			f.Abstain = "no quoted page refutes the post or adds context to it, and a note needs one"
		}
	}
	if ch := c.CheckerNote; ch != nil {
		derived := f.Tags
		f.Classification, f.Tags, f.By = ch.Classification, nil, VerdictByChecker
		for _, t := range ch.Tags {
			reason := "chosen by the checker"
			if i := slices.IndexFunc(derived, func(d NoteTag) bool { return d.Tag == t }); i >= 0 {
				reason = derived[i].Reason
			}
			f.Tags = append(f.Tags, NoteTag{Tag: t, Reason: reason})
		}
		if ch.Classification == ClassMisleading && len(against) == 0 && f.Abstain == "" {
			f.Abstain = "no quoted page refutes the post or adds context to it, and a note needs one"
		}
	}
	return f
}

// outdated names, for one claim, the pages confirming it that are stale
// (published StaleAge or more before the post) and the pages refuting it
// or giving context that are not (dated, and later): the post repeats
// what was said then. Both are "" unless both exist.
func (c *Check) outdated(cv ClaimVerdict) (old, newer string) {
	var olds, news []string
	for _, q := range cv.Quotes {
		s := c.SourceByURL(q.URL)
		if s == nil {
			continue
		}
		t := c.Timing(*s)
		if t == nil {
			continue
		}
		switch {
		case q.Stance == KindSupports && t.Stale && !slices.Contains(olds, q.Publisher):
			olds = append(olds, q.Publisher)
		case q.Stance != KindSupports && !t.Stale && !slices.Contains(news, q.Publisher):
			news = append(news, q.Publisher)
		}
	}
	if len(olds) == 0 || len(news) == 0 {
		return "", ""
	}
	return strings.Join(olds, ", "), strings.Join(news, ", ")
}
