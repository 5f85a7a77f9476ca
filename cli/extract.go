package cli

import (
	"context"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/sanitize"
)

// extractCmd is `muse extract [--json] [--url ORIGINAL_URL] FILE|URL|-`.
func extractCmd(app *App) *cobra.Command {
	var asJSON bool
	var origURL string
	cmd := &cobra.Command{
		Use:   "extract [--json] [--url ORIGINAL_URL] FILE|URL|-",
		Short: "Show a page's main text, title, publisher, author, dates, language and fact-checks",
		Long: "Reads a saved HTML page (any charset; - for standard input) or fetches an http(s) URL, and\n" +
			"prints what muse reads from it: title, publisher and site, author, original publication and\n" +
			"modification dates, language, lead image, canonical URL, any ClaimReview fact-checks and the\n" +
			"main text. --url says where a saved page came from (it helps find the date and resolve links).",
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			a, err := extractArticle(cmd.Context(), app, args[0], origURL)
			if err != nil {
				return err
			}
			if asJSON {
				return writeArticleJSON(app.Stdout, a)
			}
			return writeArticle(app.Stdout, a)
		},
	}
	cmd.Flags().BoolVar(&asJSON, "json", false, "print one JSON object (snake_case keys)")
	cmd.Flags().StringVar(&origURL, "url", "", "the page's original URL, for a saved file")
	return cmd
}

// extractArticle reads arg as a file, or fetches it when it is an http(s) URL.
func extractArticle(ctx context.Context, app *App, arg, origURL string) (*extract.Article, error) {
	lower := strings.ToLower(arg)
	if !strings.HasPrefix(lower, "http://") && !strings.HasPrefix(lower, "https://") {
		return extract.Options{}.ExtractFile(arg, origURL)
	}
	f := fetch.New(setup.FetchOptions(app.Cfg))
	defer f.CloseIdleConnections()
	page, err := f.Fetch(ctx, arg)
	if err != nil {
		return nil, err
	}
	pageURL := page.FinalURL
	if origURL != "" {
		pageURL = origURL
	}
	return extract.Extract(page.Body, pageURL)
}

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
	// Wall is the paywall or registration wall the page shows (null when
	// none): then the text is only what it leaves readable.
	Wall       *extract.Wall `json:"wall"`
	AMPURL     string        `json:"amp_url"`
	Text       string        `json:"text"`
	Paragraphs []string      `json:"paragraphs"`

	// PublishedPartial is the year or month ("2008", "2008-03") when
	// that is all the page states of its date, null otherwise; published
	// is then null.
	PublishedPartial *sources.PartialDate `json:"published_partial"`
}

func timePtr(t time.Time) *time.Time {
	if t.IsZero() {
		return nil
	}
	return &t
}

// writeArticleJSON writes the article as one indented JSON object with snake_case
// keys.
func writeArticleJSON(w io.Writer, a *extract.Article) error {
	j := jsonArticle{
		URL: a.URL, CanonicalURL: a.CanonicalURL, Title: a.Title, Publisher: a.Publisher, Site: a.SiteName,
		Author: a.Author, Published: timePtr(a.Published), Modified: timePtr(a.Modified), Language: a.Language,
		Image: a.Image, Words: a.Words, ClaimReviews: a.ClaimReviews, Wall: a.Wall, AMPURL: a.AMPURL, Text: a.Text, Paragraphs: a.Paragraphs,
	}
	if !a.PublishedPartial.IsZero() {
		j.PublishedPartial = &a.PublishedPartial
	}
	if j.ClaimReviews == nil {
		j.ClaimReviews = []sources.ClaimReview{}
	}
	if j.Paragraphs == nil {
		j.Paragraphs = []string{}
	}
	return writeJSON(w, j)
}

// writeArticle writes the article for a person: a header of the known fields,
// the fact-checks found, then the text with paragraphs separated by blank
// lines. Page text is sanitised: no control character or escape sequence
// from the page reaches the terminal.
func writeArticle(w io.Writer, a *extract.Article) error {
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
	if published == "" && !a.PublishedPartial.IsZero() {
		published = a.PublishedPartial.String() + " (the page states no day)"
	}
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
	field("AMP", a.AMPURL)
	field("Image", a.Image)
	field("Words", fmt.Sprint(a.Words))
	if a.Wall != nil {
		field("Wall", a.Wall.String()+": only the text before it was read")
	}
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
