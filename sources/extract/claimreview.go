package extract

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"strings"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/lang"
)

// claimReviews turns the page's schema.org ClaimReview objects into
// sources.ClaimReview values, skipping duplicates (pages often repeat the
// same markup in two blocks) and reviews that name no claim and no rating.
func claimReviews(nodes []node) []sources.ClaimReview {
	var out []sources.ClaimReview
	seen := map[string]bool{}
	for _, n := range nodes {
		if !n.hasType("ClaimReview") {
			continue
		}
		cr := claimReview(n)
		if cr.Claim == "" && cr.Rating == "" {
			continue
		}
		key := cr.Claim + "\x00" + cr.Rating + "\x00" + cr.Reviewer
		if seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, cr)
	}
	return out
}

func claimReview(n node) sources.ClaimReview {
	cr := sources.ClaimReview{
		Claim:      n.str("claimReviewed"),
		Rating:     rating(n.obj("reviewRating")),
		ReviewURL:  n.str("url"),
		ReviewDate: n.date("datePublished"),
		Language:   inLanguage(n),
	}
	if r := n.names("author"); len(r) > 0 {
		cr.Reviewer = r[0]
	} else if r := n.names("publisher"); len(r) > 0 {
		cr.Reviewer = r[0]
	}
	item := n.obj("itemReviewed")
	if item == nil {
		return cr
	}
	if cr.Claim == "" {
		cr.Claim = firstNonEmpty(item.str("name"), item.str("text"))
	}
	if cr.Language == "" {
		cr.Language = inLanguage(item)
	}
	cr.ClaimDate = item.date("datePublished")
	cr.Claimant = strings.Join(item.names("author"), ", ")
	// A claim's appearance is the post or speech where it was made; its
	// author is the claimant when the Claim itself names none.
	for _, key := range []string{"appearance", "firstAppearance"} {
		cr.Appearances = append(cr.Appearances, appearanceURLs(item[key])...)
		app := item.obj(key)
		if app == nil {
			continue
		}
		if cr.Claimant == "" {
			cr.Claimant = strings.Join(app.names("author"), ", ")
		}
		if cr.ClaimDate.IsZero() {
			cr.ClaimDate = app.date("datePublished")
		}
	}
	slices.Sort(cr.Appearances)
	cr.Appearances = slices.Compact(cr.Appearances)
	return cr
}

// rating prefers the reviewer's own words ("Pants on Fire", "Misleading"),
// which is what readers see, over the numeric scale that sites fill in
// inconsistently; a bare number is kept with its scale so it stays readable.
func rating(r node) string {
	if r == nil {
		return ""
	}
	if s := firstNonEmpty(r.str("alternateName"), r.str("name"), r.str("ratingExplanation")); s != "" {
		return s
	}
	v := r.str("ratingValue")
	if v == "" {
		return ""
	}
	if best := r.str("bestRating"); best != "" {
		worst := r.str("worstRating")
		if worst == "" {
			worst = "1"
		}
		return v + " (on a scale from " + worst + " to " + best + ")"
	}
	return v
}

func firstNonEmpty(s ...string) string {
	for _, x := range s {
		if x = strings.TrimSpace(x); x != "" {
			return x
		}
	}
	return ""
}

// ClaimReviewsJSON reads the ClaimReview objects of a JSON-LD document as
// fact-checkers publish it outside a page: one ClaimReview, a list of them,
// an @graph, or a schema.org DataFeed such as the Data Commons fact-check
// feed (dataFeedElement[].item[]). Objects at any depth are found.
func ClaimReviewsJSON(b []byte) ([]sources.ClaimReview, error) {
	var v any
	if err := json.Unmarshal(repairJSON(string(b)), &v); err != nil {
		return nil, fmt.Errorf("read ClaimReview JSON-LD: %w", err)
	}
	var nodes []node
	collectNodes(v, &nodes, 0)
	crs := claimReviews(nodes)
	// A feed may say its language once, for every review in it.
	if root, ok := v.(map[string]any); ok {
		if code := inLanguage(node(root)); code != "" {
			for i := range crs {
				crs[i].Language = cmp.Or(crs[i].Language, code)
			}
		}
	}
	return crs, nil
}

// inLanguage is the language n declares (schema.org inLanguage: a
// code such as "es" or "pt-BR", a name, or a Language object), as ISO
// 639-1; "" when it declares none that names a language.
func inLanguage(n node) string {
	if l := n.obj("inLanguage"); l != nil { // {"@type": "Language", "name": "Spanish", "alternateName": "es"}
		return cmp.Or(lang.Normalise(l.str("alternateName")), lang.Normalise(l.str("name")))
	}
	return lang.Normalise(n.str("inLanguage"))
}

// appearanceURLs are the http(s) addresses an appearance property gives:
// a URL, an object's url or @id (a CreativeWork, a SocialMediaPosting), or
// a list of either.
func appearanceURLs(v any) []string {
	var out []string
	switch x := v.(type) {
	case string:
		if _, err := sources.ParseHTTP(strings.TrimSpace(x)); err == nil {
			out = append(out, strings.TrimSpace(x))
		}
	case map[string]any:
		for _, k := range []string{"url", "@id", "sameAs"} {
			out = append(out, appearanceURLs(x[k])...)
		}
	case []any:
		for _, e := range x {
			out = append(out, appearanceURLs(e)...)
		}
	}
	return out
}
