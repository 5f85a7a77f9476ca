package extract

import (
	"bytes"
	"compress/gzip"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/lang"
)

var testNow = time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

func extractFixture(t *testing.T, name, pageURL string) *Article {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	a, err := Options{Now: testNow}.Extract(b, pageURL)
	if err != nil {
		t.Fatalf("extract %s: %v", name, err)
	}
	return a
}

func day(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.Format("2006-01-02")
}

func TestExtractNewsArticleWithClaimReview(t *testing.T) {
	a := extractFixture(t, "factcheck.html", "https://www.dailyledger.example/fact-check/hot-water-flu-cure/?utm_source=x")
	checks := []struct{ name, got, want string }{
		{"title", a.Title, "Fact Check: No, drinking hot water does not cure the flu"},
		{"publisher", a.Publisher, "Daily Ledger Media Group"},
		{"site", a.SiteName, "The Daily Ledger"},
		{"author", a.Author, "Maria Okafor"},
		{"language", a.Language, "en"},
		{"published", day(a.Published), "2023-01-28"},
		{"modified", day(a.Modified), "2023-02-03"},
		{"canonical", a.CanonicalURL, "https://www.dailyledger.example/fact-check/hot-water-flu-cure/"},
		{"image", a.Image, "https://www.dailyledger.example/images/2023/kettle.jpg"},
	}
	for _, c := range checks {
		if c.got != c.want {
			t.Errorf("%s = %q, want %q", c.name, c.got, c.want)
		}
	}
	if len(a.Paragraphs) < 4 {
		t.Fatalf("got %d paragraphs, want the 4 of the story: %q", len(a.Paragraphs), a.Paragraphs)
	}
	if !strings.HasPrefix(a.Paragraphs[0], "A post shared thousands of times") {
		t.Errorf("first paragraph %q should open the story (headline and byline are not body text)", a.Paragraphs[0])
	}
	if strings.Contains(a.Text, "Privacy") || strings.Contains(a.Text, "Politics") {
		t.Errorf("navigation or footer leaked into the text: %q", a.Text)
	}
	if a.Text != strings.Join(a.Paragraphs, "\n\n") {
		t.Error("Text should be the paragraphs joined by blank lines")
	}
	if a.Words < 100 || a.Words != lang.Words(a.Text) {
		t.Errorf("Words = %d for a text of %d words", a.Words, lang.Words(a.Text))
	}

	if len(a.ClaimReviews) != 1 {
		t.Fatalf("got %d claim reviews, want 1: %+v", len(a.ClaimReviews), a.ClaimReviews)
	}
	cr := a.ClaimReviews[0]
	if cr.Claim != "Drinking a glass of hot water every hour kills the flu virus." || cr.Rating != "False" ||
		cr.Reviewer != "The Daily Ledger Fact Check" || cr.Claimant != "@healthtruths99" ||
		day(cr.ClaimDate) != "2023-01-20" || day(cr.ReviewDate) != "2023-01-28" ||
		cr.ReviewURL != "https://www.dailyledger.example/fact-check/hot-water-flu-cure/" {
		t.Errorf("claim review = %+v", cr)
	}
}

func TestExtractDateOnlyInURL(t *testing.T) {
	a := extractFixture(t, "url_date.html", "https://seeblick.example/2021/03/14/warum-der-bodensee-so-klar-ist/")
	if got := day(a.Published); got != "2021-03-14" {
		t.Errorf("published = %q, want 2021-03-14 from the URL", got)
	}
	if !a.Modified.IsZero() {
		t.Errorf("modified = %v, want zero: the page declares none", a.Modified)
	}
	if a.Language != "de" {
		t.Errorf("language = %q, want de", a.Language)
	}
	if !strings.Contains(a.Text, "Kläranlagen") || strings.Contains(a.Text, "Kategorien") {
		t.Errorf("text = %q", a.Text)
	}

	// The same page without its URL has no date at all.
	b, _ := os.ReadFile(filepath.Join("testdata", "url_date.html"))
	a2, err := Options{Now: testNow}.Extract(b, "")
	if err != nil {
		t.Fatal(err)
	}
	if !a2.Published.IsZero() {
		t.Errorf("published without URL = %v, want zero", a2.Published)
	}
}

func TestClaimReviewListsAndBrokenBlocks(t *testing.T) {
	a := extractFixture(t, "claimreview_list.html", "https://checkcity.example/bridge")
	want := []struct{ claim, rating, claimant string }{
		{"The new bridge cost $4 billion.", "2 (on a scale from 1 to 6)", "Sen. Dana Ruiz"},
		{"The bridge was finished two years late.", "Mostly True", "Mayor Tom Bell"},
		{"A broken block with a raw line break", "Half True", ""},
	}
	if len(a.ClaimReviews) != len(want) {
		t.Fatalf("got %d claim reviews, want %d: %+v", len(a.ClaimReviews), len(want), a.ClaimReviews)
	}
	for i, w := range want {
		cr := a.ClaimReviews[i]
		if cr.Claim != w.claim || cr.Rating != w.rating || cr.Claimant != w.claimant {
			t.Errorf("review %d = %+v, want %+v", i, cr, w)
		}
	}
	if a.ClaimReviews[0].Reviewer != "CheckCity" {
		t.Errorf("reviewer = %q", a.ClaimReviews[0].Reviewer)
	}
}

func TestExtractRejectsNonHTML(t *testing.T) {
	cases := map[string][]byte{
		"empty":  {},
		"blank":  []byte("  \n\t "),
		"binary": append([]byte("\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR"), bytes.Repeat([]byte{0, 1, 2, 200}, 100)...),
		"pdf":    append([]byte("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n"), bytes.Repeat([]byte{0x01, 0x9c, 0x02, 0x1f}, 200)...),
		"text":   []byte("just a note, nothing marked up here at all"),
	}
	for name, in := range cases {
		_, err := Extract(in, "")
		if !errors.Is(err, ErrNotHTML) {
			t.Errorf("%s: err = %v, want ErrNotHTML", name, err)
		}
		if err != nil && strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: error should be one line: %q", name, err)
		}
	}
}

func TestExtractFragmentWithoutMainText(t *testing.T) {
	a, err := Extract([]byte(`<html><head><title>Hi</title></head><body><p>Short.</p></body></html>`), "")
	if err != nil {
		t.Fatalf("a tiny page is still a page: %v", err)
	}
	if a.Title != "Hi" {
		t.Errorf("title = %q", a.Title)
	}
}

func TestExtractFileConvertsCharset(t *testing.T) {
	// windows-1252: "Café" and a curly apostrophe (0x92), declared in <meta>.
	page := []byte("<html><head><meta charset=\"windows-1252\"><title>Caf\xe9 news</title></head><body><article>" +
		strings.Repeat("<p>The caf\xe9\x92s owner said the street market would return in spring, after a winter of roadworks that kept customers away from the old town.</p>", 4) +
		"</article></body></html>")
	path := filepath.Join(t.TempDir(), "page.html")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	a, err := Options{Now: testNow}.ExtractFile(path, "")
	if err != nil {
		t.Fatal(err)
	}
	if a.Title != "Café news" || !strings.Contains(a.Text, "café’s owner") {
		t.Errorf("title %q text %.80q: charset not converted", a.Title, a.Text)
	}

	// Undeclared UTF-8 whose first non-ASCII byte comes after the first
	// 1024 bytes, where charset sniffing alone guesses windows-1252: the
	// file is read as the fetcher reads such a page, as UTF-8.
	page = []byte("<html><head><title>Market news</title></head><body><article>" +
		strings.Repeat("<p>The owner said the street market would return in spring, after a winter of roadworks that kept customers away from the old town.</p>", 10) +
		"<p>Later the café’s owner said the square would reopen in May.</p></article></body></html>")
	if err := os.WriteFile(path, page, 0o644); err != nil {
		t.Fatal(err)
	}
	if a, err = (Options{Now: testNow}).ExtractFile(path, ""); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(a.Text, "the café’s owner") {
		t.Errorf("late UTF-8 misread: %q", a.Text[max(0, len(a.Text)-120):])
	}
}

func TestExtractFileGzipped(t *testing.T) {
	// Saved pages often come compressed (page.html.gz, crawls); the file is
	// read as what it unpacks to, whatever its name.
	page := []byte("<html><head><title>Market news</title></head><body><article>" +
		strings.Repeat("<p>The owner said the street market would return in spring, after a winter of roadworks that kept customers away.</p>", 6) +
		"</article></body></html>")
	dir := t.TempDir()
	gz := func(name string, b []byte) string {
		var buf bytes.Buffer
		zw := gzip.NewWriter(&buf)
		zw.Write(b)
		zw.Close()
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
			t.Fatal(err)
		}
		return path
	}
	for _, name := range []string{"page.html.gz", "page.html"} {
		a, err := Options{Now: testNow}.ExtractFile(gz(name, page), "")
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if a.Title != "Market news" || !strings.Contains(a.Text, "street market would return") {
			t.Errorf("%s: title %q text %.80q", name, a.Title, a.Text)
		}
	}

	// A small file that unpacks past the bound is refused like a large page.
	bomb := gz("bomb.html.gz", bytes.Repeat([]byte("<p>a</p>"), (maxFileBytes/8)+1024))
	if fi, _ := os.Stat(bomb); fi.Size() > 1<<20 {
		t.Fatalf("the test's bomb is %d bytes compressed", fi.Size())
	}
	if _, err := (Options{}).ExtractFile(bomb, ""); err == nil || !strings.Contains(err.Error(), "larger than") {
		t.Errorf("bomb: err = %v, want 'larger than'", err)
	}

	// A truncated gzip file is a clear one-line error, not binary soup.
	whole, _ := os.ReadFile(gz("whole.html.gz", page))
	cut := filepath.Join(dir, "cut.html.gz")
	os.WriteFile(cut, whole[:12], 0o644)
	if _, err := (Options{}).ExtractFile(cut, ""); err == nil || !strings.Contains(err.Error(), "gzip") || strings.Contains(err.Error(), "\n") {
		t.Errorf("truncated gzip: err = %v, want one line naming gzip", err)
	}
}

func TestExtractFileErrors(t *testing.T) {
	dir := t.TempDir()
	bin := filepath.Join(dir, "photo.jpg")
	os.WriteFile(bin, []byte("\xff\xd8\xff\xe0\x00\x10JFIF\x00\x01\x01\x00\x00\x01"), 0o644)
	empty := filepath.Join(dir, "empty.html")
	os.WriteFile(empty, nil, 0o644)
	for path, want := range map[string]string{
		bin:                        "binary",
		empty:                      "empty",
		filepath.Join(dir, "nope"): "no such file",
		dir:                        "directory",
	} {
		_, err := Options{}.ExtractFile(path, "")
		if err == nil || !strings.Contains(err.Error(), want) || strings.Contains(err.Error(), "\n") {
			t.Errorf("%s: err = %v, want one line mentioning %q", filepath.Base(path), err, want)
		}
	}
}

func TestCleanParagraphs(t *testing.T) {
	in := []string{
		"Opinion | Is it safe?", "Is it safe?", "First real paragraph of the story.",
		"www.example.com", "http://amzn.to/abc", "Second paragraph.", "Third paragraph.",
		"Fourth.", "Fifth.", "You may also like:", "Another story entirely",
	}
	got := cleanParagraphs(in, "Opinion | Is it safe? - Example News", "example.com")
	want := []string{"First real paragraph of the story.", "http://amzn.to/abc", "Second paragraph.", "Third paragraph.", "Fourth.", "Fifth."}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("got  %q\nwant %q", got, want)
	}
	// A copyright line early in a story is a quote, not furniture.
	in = []string{"The court read: Copyright law protects expression.", "Copyright 2019 holds here too.", "a", "b", "c", "d"}
	if got := cleanParagraphs(in, "", ""); len(got) != len(in) {
		t.Errorf("early copyright lines were cut: %q", got)
	}
}

// Saved pages (no URL of their own to resolve against) declare their address
// in the ways real pages do; the canonical URL is always absolute http(s) or
// empty, never a path muse could not cite.
func TestCanonicalURLOfSavedPages(t *testing.T) {
	body := "<article>" + strings.Repeat("<p>The council said the bridge would reopen in spring after repairs to its deck and railings.</p>", 4) + "</article>"
	for _, c := range []struct{ name, head, pageURL, want string }{
		{"relative canonical, absolute og:url", `<link rel="canonical" href="/news/bridge"><meta property="og:url" content="https://www.city.example/news/bridge">`, "", "https://www.city.example/news/bridge"},
		{"relative canonical, page URL known", `<link rel="canonical" href="/news/bridge"><meta property="og:url" content="https://m.city.example/bridge">`, "https://www.city.example/a?x=1", "https://www.city.example/news/bridge"},
		{"relative canonical, base href", `<base href="https://www.city.example/"><link rel="canonical" href="news/bridge">`, "", "https://www.city.example/news/bridge"},
		{"relative canonical alone", `<link rel="canonical" href="/news/bridge">`, "", ""},
		{"percent-encoded canonical", `<link rel="canonical" href="https%3A%2F%2Fwww.city.example%2Fnews%2Fbr%C3%BCcke%2F">`, "", "https://www.city.example/news/br%C3%BCcke/"},
		{"javascript canonical", `<link rel="canonical" href="javascript:alert(1)">`, "", ""},
	} {
		page := "<html><head><title>Bridge</title>" + c.head + "</head><body>" + body + "</body></html>"
		a, err := Options{Now: testNow}.Extract([]byte(page), c.pageURL)
		if err != nil {
			t.Fatalf("%s: %v", c.name, err)
		}
		if a.CanonicalURL != c.want {
			t.Errorf("%s: canonical = %q, want %q", c.name, a.CanonicalURL, c.want)
		}
	}
}

// Most CMSs (Yoast and its kin) name the publisher and author once in an
// @graph and point at them by @id; the names are read, not the identifiers.
func TestJSONLDReferencesByID(t *testing.T) {
	ld := `{"@context":"https://schema.org","@graph":[
	{"@type":"NewsArticle","@id":"https://www.city.example/news/bridge#article","headline":"Bridge to reopen",
	 "author":{"@id":"https://www.city.example/#/schema/person/ab12"},
	 "publisher":{"@id":"https://www.city.example/#organization"},"datePublished":"2021-03-04T08:00:00+01:00"},
	{"@type":"Organization","@id":"https://www.city.example/#organization","name":"City Courier","url":"https://www.city.example/"},
	{"@type":"Person","@id":"https://www.city.example/#/schema/person/ab12","name":"Ana Ruiz"}]}`
	dangling := strings.ReplaceAll(ld, `"name":"City Courier",`, ``)
	dangling = strings.ReplaceAll(dangling, `"name":"Ana Ruiz"`, `"url":"https://www.city.example/author/ana"`)
	body := "<article>" + strings.Repeat("<p>The council said the bridge would reopen in spring after repairs to its deck and railings.</p>", 4) + "</article>"
	for _, c := range []struct{ name, ld, publisher, author string }{
		{"resolved", ld, "City Courier", "Ana Ruiz"},
		{"pointing at objects without names", dangling, "", ""},
	} {
		page := `<html><head><title>Bridge to reopen</title><script type="application/ld+json">` + c.ld + `</script></head><body>` + body + `</body></html>`
		a, err := Options{Now: testNow}.Extract([]byte(page), "https://www.city.example/news/bridge")
		if err != nil {
			t.Fatal(err)
		}
		if a.Publisher != c.publisher || a.Author != c.author {
			t.Errorf("%s: publisher %q author %q, want %q and %q", c.name, a.Publisher, a.Author, c.publisher, c.author)
		}
	}
}

// A hostile page's objects that point at themselves, or at each other, by
// @id (in a property or a list) are read without looping.
func TestJSONLDReferenceCycles(t *testing.T) {
	ld := `{"@context":"https://schema.org","@graph":[
	{"@type":"NewsArticle","@id":"#a","headline":"Bridge","name":[{"@id":"#a"}],"url":{"@id":"#a"},
	 "author":[{"@id":"#p"}],"publisher":{"@id":"#o"}},
	{"@type":"Person","@id":"#p","name":[{"@id":"#p"}],"worksFor":{"@id":"#o"}},
	{"@type":"Organization","@id":"#o","name":{"@id":"#a"},"url":{"@id":"#o"}}]}`
	body := "<article>" + strings.Repeat("<p>The council said the bridge would reopen in spring after repairs to its deck and railings.</p>", 4) + "</article>"
	page := `<html><head><title>Bridge</title><script type="application/ld+json">` + ld + `</script></head><body>` + body + `</body></html>`
	done := make(chan error, 1)
	go func() {
		_, err := Options{Now: testNow}.Extract([]byte(page), "https://www.city.example/news/bridge")
		done <- err
	}()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("reading self-referring JSON-LD did not finish")
	}
}

// TestSiteNameIsNotTheTitle: sites that write the page's title into
// og:site_name or application-name get their name from what is beside it,
// there or in the <title> element; a page naming itself nothing else keeps
// what it says.
func TestSiteNameIsNotTheTitle(t *testing.T) {
	body := "<body><article><h1>%s</h1>" + strings.Repeat("<p>The council met on Tuesday and agreed the budget for the coming year after a long debate about roads.</p>", 6) + "</article></body>"
	page := func(head, title string) []byte {
		return []byte("<html><head>" + head + "</head>" + fmt.Sprintf(body, title) + "</html>")
	}
	for _, tc := range []struct {
		name, head, title, url, want string
	}{
		{"og:site_name holds title and name", `<title>Council agrees the budget | Die Zeitung</title><meta property="og:title" content="Council agrees the budget"><meta property="og:site_name" content="Council agrees the budget | Die Zeitung">`,
			"Council agrees the budget", "https://zeitung.example/a", "Die Zeitung"},
		{"application-name is the title", `<title>Council agrees the budget for next year | Exxpress</title><meta property="og:title" content="Council agrees the budget for next year"><meta name="application-name" content="Council agrees the budget for next year">`,
			"Council agrees the budget for next year", "https://exxpress.example/a", "Exxpress"},
		{"the title is the host's name", `<title>Disfunctions.de</title><meta property="og:site_name" content="Disfunctions.de » Blog Archiv">`,
			"Disfunctions.de", "https://www.disfunctions.de/podcasts", "Disfunctions.de » Blog Archiv"},
		{"nothing else to go by", `<title>Council agrees the budget</title><meta property="og:site_name" content="Council agrees the budget">`,
			"Council agrees the budget", "https://council.example/a", "Council agrees the budget"},
		{"a name that is not the title", `<title>Council agrees the budget - The Courier</title><meta property="og:site_name" content="The Courier">`,
			"Council agrees the budget", "https://courier.example/a", "The Courier"},
	} {
		a, err := Extract(page(tc.head, tc.title), tc.url)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if a.SiteName != tc.want || a.Publisher != tc.want {
			t.Errorf("%s: site %q, publisher %q (title %q), want %q", tc.name, a.SiteName, a.Publisher, a.Title, tc.want)
		}
	}
}
