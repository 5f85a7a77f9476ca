package pipeline

import (
	"slices"
	"strings"
	"testing"
)

// TestGuardCorrectionURLVariants: a correction that links another form of
// an evidence page (Google's AMP cache, an AMP or mobile page, tracking
// parameters) keeps the link, written as the evidence page's own URL and
// cited; a page that only looks alike is still removed.
func TestGuardCorrectionURLVariants(t *testing.T) {
	reuters := "https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024"
	bbc := "https://www.bbc.co.uk/news/world-us-springfield-main-street"
	allowed := []string{reuters, bbc}
	for _, link := range []string{
		"https://www-reuters-com.cdn.ampproject.org/c/s/www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024",
		"https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024/amp",
		"https://amp.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024",
		"https://mobile.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024",
		"https://m.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024?utm_source=twitter&utm_medium=social",
		"https://www.reuters.com/world/us/springfield-bicycle-claim-false-idUS2024?outputType=amp",
	} {
		for _, form := range []string{"as Reuters reported (%s).", "as [Reuters reported](%s)."} {
			text := "This post is false: the council banned no bicycles, " + strings.Replace(form, "%s", link, 1)
			got, cited, warnings := GuardCorrection(text, allowed)
			if len(warnings) > 0 || !slices.Equal(cited, []string{reuters}) || !strings.Contains(got, reuters) || strings.Contains(got, "ampproject") {
				t.Errorf("%s:\n got %q, cited %q, warnings %q", text, got, cited, warnings)
			}
		}
	}
	for _, foreign := range []string{
		"https://www.reuters.com/world/us/another-story",
		"https://www-example-com.cdn.ampproject.org/c/s/www.example.com/world/us/springfield-bicycle-claim-false-idUS2024",
		"https://m.bbc.com/news/world-us-springfield-main-street",
	} {
		_, cited, warnings := GuardCorrection("This post is false, see "+foreign+".", allowed)
		if len(cited) != 0 || len(warnings) != 1 {
			t.Errorf("%s: cited %q, warnings %q, want it removed", foreign, cited, warnings)
		}
	}
}

// TestQuoteListNumbering: a model's list numbering before a quote ("1.",
// "(2)", "3)") is not part of the quote when the page does not have it;
// a page that numbers its own list keeps the number in the quote.
func TestQuoteListNumbering(t *testing.T) {
	page := "Springfield's city council has not banned bicycles from Main Street, a council spokesperson told Reuters on Friday.\n" +
		"The steps are:\n1. The council votes on the lane in March.\n2. Work starts in May."
	for quote, want := range map[string]string{
		`"1. Springfield's city council has not banned bicycles from Main Street"`: "Springfield's city council has not banned bicycles from Main Street",
		`(2) Springfield's city council has not banned bicycles from Main Street`:  "Springfield's city council has not banned bicycles from Main Street",
		`3) "Springfield's city council has not banned bicycles from Main Street"`: "Springfield's city council has not banned bicycles from Main Street",
		`1. The council votes on the lane in March.`:                               "1. The council votes on the lane in March.",
	} {
		m := LocateQuote(quote, page)
		if !m.Verified || m.PageQuote != want {
			t.Errorf("%s: %+v, want %q", quote, m, want)
		}
	}
	if m := LocateQuote("1. The council banned bicycles from Main Street.", page); m.Verified {
		t.Errorf("a numbered quote that is not the page's text verified: %+v", m)
	}
}
