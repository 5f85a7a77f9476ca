package export

import (
	"cmp"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/rivo/uniseg"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/lang"
)

// Reviewer is the fact-checking organisation publishing the ClaimReview.
type Reviewer struct {
	Name string // organisation name (required)
	URL  string // organisation's home page
	// ReviewURL is the page where the fact-check is published, the
	// ClaimReview's url. Empty means URL (schema.org requires one of them).
	ReviewURL string
	// Published is the review's publication date; zero means now.
	Published time.Time
	// Claim is the claim reviewed as the reviewer states it, in a
	// sentence ("5G networks spread COVID-19"); empty means the post's
	// text, which may run to paragraphs.
	Claim string
}

// Rating is the verdict as ClaimReview states it: the check's verdict
// (VerdictRating) unless the person publishing gives another.
type Rating struct {
	// AlternateName is the verdict in words, e.g. "False" (required).
	AlternateName string
	// Value, Best and Worst place it on a numeric scale; all zero omits the
	// scale, as many fact-checkers do.
	Value, Best, Worst int
}

// scale is the 1 (worst) to 5 (best) scale ParseRating uses for the usual
// verdicts.
var scale = map[string]int{"false": 1, "pants on fire": 1, "fake": 1, "incorrect": 1,
	"mostly false": 2, "misleading": 2, "half true": 3, "mixed": 3, "missing context": 3, "partly false": 2,
	"mostly true": 4, "true": 5, "correct": 5}

// VerdictRating is the ClaimReview rating of a verdict: True, False and
// Misleading on the 1–5 scale ParseRating uses, "Conflicting evidence"
// and "Unproven" by name alone; the zero Rating for no verdict (the
// extractive digest).
func VerdictRating(v pipeline.Verdict) Rating {
	switch v {
	case pipeline.VerdictSupported:
		return Rating{AlternateName: "True", Value: scale["true"], Best: 5, Worst: 1}
	case pipeline.VerdictRefuted:
		return Rating{AlternateName: "False", Value: scale["false"], Best: 5, Worst: 1}
	case pipeline.VerdictMisleading:
		return Rating{AlternateName: "Misleading", Value: scale["misleading"], Best: 5, Worst: 1}
	case pipeline.VerdictConflicting:
		return Rating{AlternateName: "Conflicting evidence"}
	case pipeline.VerdictNotEnough:
		return Rating{AlternateName: "Unproven"}
	}
	return Rating{}
}

// NoteRating is the ClaimReview rating of the checker's choice for the
// Community Note (pipeline.NoteChoice), so that the checker answers once:
// not misleading is True; a misleading note is rated by its gravest tag —
// factual_error False, manipulated_media "Manipulated media",
// outdated_information "Outdated", misinterpreted_satire "Satire",
// missing_important_context "Missing context", disputed_claim_as_fact and
// other Misleading.
func NoteRating(ch pipeline.NoteChoice) Rating {
	if ch.Classification == pipeline.ClassNotMisleading {
		return Rating{AlternateName: "True", Value: scale["true"], Best: 5, Worst: 1}
	}
	for _, t := range []struct{ tag, name string }{
		{pipeline.TagFactualError, "False"}, {pipeline.TagManipulatedMedia, "Manipulated media"},
		{pipeline.TagOutdatedInformation, "Outdated"}, {pipeline.TagMisinterpretedSatire, "Satire"},
		{pipeline.TagMissingImportantContext, "Missing context"},
	} {
		if slices.Contains(ch.Tags, t.tag) {
			r := Rating{AlternateName: t.name}
			if v, ok := scale[strings.ToLower(t.name)]; ok {
				r.Value, r.Best, r.Worst = v, 5, 1
			}
			return r
		}
	}
	return Rating{AlternateName: "Misleading", Value: scale["misleading"], Best: 5, Worst: 1}
}

// CheckRating is the check's ClaimReview rating: the checker's choice for
// the note when there is one (NoteRating), else the verdict's
// (VerdictRating).
func CheckRating(c *pipeline.Check) Rating {
	if c.CheckerNote != nil && c.CheckerNote.Classification != "" {
		return NoteRating(*c.CheckerNote)
	}
	return VerdictRating(c.Verdicts().Post)
}

// ParseRating reads a verdict as a person types it. The usual ones (false,
// misleading, mostly false, partly false, half true, mixed, missing
// context, mostly true, true) get a 1–5 scale (1 worst); anything else is
// kept as the alternate name alone.
func ParseRating(s string) (Rating, error) {
	name := strings.Join(strings.Fields(s), " ")
	if name == "" {
		return Rating{}, errors.New("no verdict given; use one such as false, misleading, mostly false or missing context")
	}
	key := strings.ToLower(strings.ReplaceAll(name, "-", " "))
	if v, ok := scale[key]; ok {
		return Rating{AlternateName: strings.ToUpper(name[:1]) + name[1:], Value: v, Best: 5, Worst: 1}, nil
	}
	return Rating{AlternateName: name}, nil
}

// ClaimReview returns schema.org ClaimReview JSON-LD for the check: the
// post is the claim reviewed (the claim as the reviewer states it, else the
// post's text; the post's author and date, with the post URL as the
// claim's appearance), the correction is the review body, and the
// reviewer is the author. It refuses without a reviewer name, a review URL,
// a post, or without a rating name where the check has no verdict (the
// extractive digest). A rating without a name is the check's
// (CheckRating: the checker's choice for the note, else the verdict).
func ClaimReview(c *pipeline.Check, r Reviewer, rating Rating) ([]byte, error) {
	if c == nil {
		return nil, errors.New("export ClaimReview: no check given")
	}
	if strings.TrimSpace(rating.AlternateName) == "" {
		rating = CheckRating(c)
	}
	claim := excerptText(cmp.Or(strings.TrimSpace(r.Claim), c.Post.Text), 1000)
	if claim == "" {
		return nil, fmt.Errorf("export ClaimReview of case %s: the post has no text to name as the claim reviewed", c.ID)
	}
	if strings.TrimSpace(r.Name) == "" {
		return nil, fmt.Errorf("export ClaimReview of case %s: the reviewing organisation's name is required", c.ID)
	}
	reviewURL := cmp.Or(strings.TrimSpace(r.ReviewURL), strings.TrimSpace(r.URL))
	if !isHTTPURL(reviewURL) {
		return nil, fmt.Errorf("export ClaimReview of case %s: a review URL (http or https) is required, got %q", c.ID, reviewURL)
	}
	if strings.TrimSpace(rating.AlternateName) == "" {
		return nil, fmt.Errorf("export ClaimReview of case %s: the rating needs a name such as \"False\"", c.ID)
	}
	if rating.Value != 0 || rating.Best != 0 || rating.Worst != 0 {
		if rating.Worst >= rating.Best || rating.Value < rating.Worst || rating.Value > rating.Best {
			return nil, fmt.Errorf("export ClaimReview of case %s: rating value %d is not between worst %d and best %d",
				c.ID, rating.Value, rating.Worst, rating.Best)
		}
	}
	published := r.Published
	if published.IsZero() {
		published = time.Now()
	}

	org := map[string]any{"@type": "Organization", "name": strings.TrimSpace(r.Name)}
	if isHTTPURL(r.URL) {
		org["url"] = r.URL
	}
	rev := map[string]any{"@type": "Rating", "alternateName": strings.TrimSpace(rating.AlternateName)}
	if rating.Best != 0 {
		rev["ratingValue"], rev["bestRating"], rev["worstRating"] = rating.Value, rating.Best, rating.Worst
	}
	item := map[string]any{"@type": "Claim"}
	if c.Post.Language != "" {
		item["inLanguage"] = c.Post.Language
	}
	var person map[string]any
	if name := cmp.Or(c.Post.Author, c.Post.Handle); name != "" {
		person = map[string]any{"@type": "Person", "name": name}
		if c.Post.Author != "" && c.Post.Handle != "" {
			person["alternateName"] = c.Post.Handle
		}
		item["author"] = person
	}
	if !c.Post.PostedAt.IsZero() {
		item["datePublished"] = day(c.Post.PostedAt)
	}
	if isHTTPURL(c.Post.URL) {
		app := map[string]any{"@type": "CreativeWork", "url": c.Post.URL}
		if c.Post.Platform != "" || c.Post.Handle != "" {
			app["@type"] = "SocialMediaPosting"
		}
		if person != nil {
			app["author"] = person
		}
		if !c.Post.PostedAt.IsZero() {
			app["datePublished"] = day(c.Post.PostedAt)
		}
		item["appearance"] = []any{app}
	}
	doc := map[string]any{
		"@context":      "https://schema.org",
		"@type":         "ClaimReview",
		"url":           reviewURL,
		"claimReviewed": claim,
		"reviewRating":  rev,
		"itemReviewed":  item,
		"author":        org,
		"datePublished": day(published),
	}
	body := strings.TrimSpace(c.Correction.Text)
	if c.Correction.Unsourced() {
		body = ""
	}
	if body != "" {
		doc["reviewBody"] = body
	}
	if l := reviewLanguage(c.Post.Language, body); l != "" {
		doc["inLanguage"] = l
	}
	if cited := citations(c); body != "" && len(cited) > 0 {
		doc["citation"] = cited
	}
	b, err := json.MarshalIndent(doc, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("export ClaimReview of case %s: %w", c.ID, err)
	}
	return append(b, '\n'), nil
}

// citations are the pages the correction cites, each as the bytes muse
// read (a schema.org MediaObject with its SHA-256, the hash the evidence
// pack gives the page): a published review is tied to the pack by them.
// A page muse kept no bytes of is named by its address alone.
func citations(c *pipeline.Check) []any {
	var out []any
	for _, s := range c.CitedSources() {
		u := cmp.Or(s.FinalURL, s.URL)
		if !isHTTPURL(u) {
			continue
		}
		if s.SHA256 == "" {
			out = append(out, map[string]any{"@type": "WebPage", "url": u})
			continue
		}
		out = append(out, map[string]any{"@type": "MediaObject", "contentUrl": u, "encodingFormat": "text/html", "sha256": s.SHA256})
	}
	return out
}

// reviewLanguage is the language the review is written in (schema.org
// inLanguage, an IETF BCP 47 code): the correction's, as detected, since
// the checker may have asked for another than the post's; the post's when
// the correction says too little to tell (or is in a script written
// without spaces, which detection does not read).
func reviewLanguage(post, body string) string {
	d := lang.Detect(body)
	if d.Code != "" && (d.Reliable || post == "") {
		return d.Code
	}
	return post
}

func isHTTPURL(s string) bool {
	u, err := url.Parse(s)
	return err == nil && (u.Scheme == "http" || u.Scheme == "https") && u.Host != ""
}

func excerptText(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if uniseg.GraphemeClusterCount(s) <= n {
		return s
	}
	return Clip(s, n-1)
}
