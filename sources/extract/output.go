package extract

import (
	"encoding/json"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"

	"github.com/musecheck/muse/sources/sanitize"
)

// jsonArticle is the `muse extract --json` record: every key is always
// present (null or empty when unknown) so that scripts need not guess.
type jsonArticle struct {
	URL          string                `json:"url"`
	CanonicalURL string                `json:"canonical_url"`
	Title        string                `json:"title"`
	Publisher    string                `json:"publisher"`
	Site         string                `json:"site"`
	Author       string                `json:"author"`
	Published    *time.Time            `json:"published"`
	Modified     *time.Time            `json:"modified"`
	Language     string                `json:"language"`
	Image        string                `json:"image"`
	Words        int                   `json:"words"`
	ClaimReviews []sources.ClaimReview `json:"claim_reviews"`
	Text         string                `json:"text"`
	Paragraphs   []string              `json:"paragraphs"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// WriteJSON writes the article as one indented JSON object with snake_case
// keys.
func WriteJSON(w io.Writer, a *Article) error {
	j := jsonArticle{
		URL: a.URL, CanonicalURL: a.CanonicalURL, Title: a.Title, Publisher: a.Publisher, Site: a.SiteName,
		Author: a.Author, Published: timePtr(a.Published), Modified: timePtr(a.Modified), Language: a.Language,
		Image: a.Image, Words: a.Words, ClaimReviews: a.ClaimReviews, Text: a.Text, Paragraphs: a.Paragraphs,
	}
	if j.ClaimReviews == nil {
		j.ClaimReviews = []sources.ClaimReview{}
	}
	if j.Paragraphs == nil {
		j.Paragraphs = []string{}
	}
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(j); err != nil {
		return fmt.Errorf("write article JSON: %w", err)
	}
	return nil
}

// WriteText writes the article for a person: a header of the known fields,
// the fact-checks found, then the text with paragraphs separated by blank
// lines. Page text is sanitised: no control character or escape sequence
// from the page reaches the terminal.
func WriteText(w io.Writer, a *Article) error {
	var b strings.Builder
	field := func(name, v string) {
		if v != "" {
			fmt.Fprintf(&b, "%-12s%s\n", name+":", v)
		}
	}
	day := func(t time.Time) string {
		if t.IsZero() {
			return ""
		}
		return t.Format("2006-01-02")
	}
	field("Title", a.Title)
	field("Publisher", a.Publisher)
	if a.SiteName != a.Publisher {
		field("Site", a.SiteName)
	}
	field("Author", a.Author)
	published := day(a.Published)
	if published == "" {
		published = "unknown"
	}
	field("Published", published)
	field("Modified", day(a.Modified))
	field("Language", a.Language)
	field("URL", a.URL)
	if a.CanonicalURL != a.URL {
		field("Canonical", a.CanonicalURL)
	}
	field("Image", a.Image)
	field("Words", fmt.Sprint(a.Words))
	for _, cr := range a.ClaimReviews {
		fmt.Fprintf(&b, "\nFact-check: %q\n", cr.Claim)
		field("  Rating", cr.Rating)
		field("  Claimant", cr.Claimant)
		field("  Reviewer", cr.Reviewer)
		field("  Reviewed", day(cr.ReviewDate))
		field("  Review", cr.ReviewURL)
	}
	b.WriteString("\n")
	if a.Text == "" {
		b.WriteString("(no main text found)\n")
	} else {
		b.WriteString(a.Text)
		b.WriteString("\n")
	}
	if _, err := io.WriteString(w, sanitize.String(b.String())); err != nil {
		return fmt.Errorf("write article: %w", err)
	}
	return nil
}
