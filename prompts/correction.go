package prompts

import (
	"fmt"
	"regexp"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/ratings"
)

// CorrectionStart is how every correction begins (the paper's "This tweet
// is", for any platform).
const CorrectionStart = "This post is"

var urlRe = regexp.MustCompile(`https?://[^\s<>"'\x60\[\]{}|\\^]+`)

// CheckCorrection finds the URLs a correction cites and what is wrong with
// it. urls are the cited evidence URLs in order of first mention, spelled as
// in ev; warnings name URLs that are not among the evidence (the prompt
// forbids them, so they are likely invented), a missing "This post is"
// opening, and a correction that cites nothing although evidence was given.
func CheckCorrection(text string, ev []EvidenceItem) (urls []string, warnings []string) {
	text = strings.TrimSpace(text)
	if text == "" {
		return nil, []string{"the correction is empty"}
	}
	allowed := map[string]string{}
	for _, e := range ev {
		if u := strings.TrimSpace(e.URL); u != "" {
			allowed[urlKey(u)] = u
		}
	}
	seen := map[string]bool{}
	for _, raw := range urlRe.FindAllString(text, -1) {
		u := trimURL(raw)
		key := urlKey(u)
		if seen[key] {
			continue
		}
		seen[key] = true
		if orig, ok := allowed[key]; ok {
			urls = append(urls, orig)
		} else {
			warnings = append(warnings, fmt.Sprintf("cites a URL that is not among the evidence: %s", u))
		}
	}
	if !strings.HasPrefix(strings.TrimLeft(text, "\"'“*_ "), CorrectionStart) {
		warnings = append(warnings, fmt.Sprintf("does not start with %q", CorrectionStart))
	}
	if len(allowed) > 0 && len(urls) == 0 {
		warnings = append(warnings, "cites none of the evidence URLs")
	}
	return urls, warnings
}

// trimURL drops punctuation that ends the sentence rather than the URL, and
// a closing parenthesis or Markdown link bracket without its opening one.
func trimURL(u string) string {
	for {
		n := len(u)
		u = strings.TrimRight(u, ".,;:!?*_")
		if strings.HasSuffix(u, ")") && strings.Count(u, "(") < strings.Count(u, ")") {
			u = u[:len(u)-1]
		}
		if len(u) == n {
			return u
		}
	}
}

// urlKey compares URLs loosely: scheme, a trailing slash and "www." do not matter.
func urlKey(u string) string {
	k := strings.ToLower(strings.TrimSpace(u))
	k = strings.TrimPrefix(strings.TrimPrefix(k, "https://"), "http://")
	k = strings.TrimPrefix(k, "www.")
	return strings.TrimRight(k, "/")
}

// EvidenceItem is what the correction prompt shows of one source: its quotes
// of one kind.
type EvidenceItem struct {
	URL       string
	Publisher string
	Tier      ratings.Tier
	Published time.Time
	Relevance float64
	Kind      Kind
	Quotes    []string
}

// Correction builds the correction prompt. Evidence is shown ordered by
// tier (high, medium, low, unrated), then relevance, refuting before context;
// items without quotes are left out. With no evidence the prompt asks for a
// cautious answer without URLs. Stream it with no schema.
func Correction(p Post, ev []EvidenceItem) ([]llm.Message, error) {
	return messages("correction", map[string]any{"Post": cleanPost(p), "Evidence": orderEvidence(ev)})
}

func orderEvidence(ev []EvidenceItem) []EvidenceItem {
	out := make([]EvidenceItem, 0, len(ev))
	for _, e := range ev {
		var quotes []string
		for _, q := range e.Quotes {
			if s := strings.TrimSpace(clean(q)); s != "" {
				quotes = append(quotes, s)
			}
		}
		if len(quotes) == 0 || strings.TrimSpace(e.URL) == "" {
			continue
		}
		e.Quotes = quotes
		e.URL = oneLine(clean(e.URL))
		e.Publisher = clean(e.Publisher)
		out = append(out, e)
	}
	slices.SortStableFunc(out, func(a, b EvidenceItem) int {
		if d := a.Tier.Rank() - b.Tier.Rank(); d != 0 {
			return d
		}
		if a.Relevance != b.Relevance {
			if a.Relevance > b.Relevance {
				return -1
			}
			return 1
		}
		return a.Kind.Rank() - b.Kind.Rank()
	})
	return out
}
