package cli

import (
	"bytes"
	"encoding/json"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/ratings"
	"github.com/musecheck/muse/sources/search"
)

// extractFixture reads one of package extract's test pages as muse extract
// would.
func extractFixture(t *testing.T, name, pageURL string) *extract.Article {
	t.Helper()
	a, err := extract.Options{}.ExtractFile(filepath.Join("..", "sources", "extract", "testdata", name), pageURL)
	if err != nil {
		t.Fatalf("extract %s: %v", name, err)
	}
	return a
}

// loadRatings loads one of package ratings' test files.
func loadRatings(t *testing.T, name string) *ratings.Rater {
	t.Helper()
	r, err := ratings.Load(ratings.Options{File: filepath.Join("..", "sources", "ratings", "testdata", name)})
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// date is an RFC 3339 time.
func date(s string) time.Time {
	t, err := time.Parse(time.RFC3339, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestArticleJSONKeys(t *testing.T) {
	a := extractFixture(t, "factcheck.html", "https://www.dailyledger.example/fact-check/hot-water-flu-cure/")
	var buf bytes.Buffer
	if err := writeArticleJSON(&buf, a); err != nil {
		t.Fatal(err)
	}
	var m map[string]any
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil {
		t.Fatal(err)
	}
	for _, k := range []string{"title", "text", "published", "modified", "publisher", "site", "author", "language", "image", "canonical_url", "claim_reviews"} {
		if _, ok := m[k]; !ok {
			t.Errorf("JSON lacks key %q", k)
		}
	}
	if p, _ := m["published"].(string); !sources.ParseDate(p).Equal(time.Date(2023, 1, 28, 19, 2, 0, 0, time.UTC)) {
		t.Errorf("published = %v, want 2023-01-28 19:02 UTC with its time of day", m["published"])
	}
	crs, _ := m["claim_reviews"].([]any)
	if len(crs) != 1 || crs[0].(map[string]any)["rating"] != "False" {
		t.Errorf("claim_reviews = %v", m["claim_reviews"])
	}

	// Unknown values are null or empty, never missing.
	buf.Reset()
	if err := writeArticleJSON(&buf, &extract.Article{}); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), `"published": null`) || !strings.Contains(buf.String(), `"claim_reviews": []`) ||
		!strings.Contains(buf.String(), `"wall": null`) {
		t.Errorf("empty article JSON = %s", buf.String())
	}
}

func TestArticleText(t *testing.T) {
	a := extractFixture(t, "factcheck.html", "https://www.dailyledger.example/fact-check/hot-water-flu-cure/")
	var buf bytes.Buffer
	if err := writeArticle(&buf, a); err != nil {
		t.Fatal(err)
	}
	out := buf.String()
	for _, want := range []string{
		"Title:      Fact Check: No, drinking hot water does not cure the flu\n",
		"Published:  2023-01-28\n",
		"Fact-check: \"Drinking a glass of hot water every hour kills the flu virus.\"\n",
		"  Rating:   False\n",
		"\n\nA post shared thousands of times",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("text output lacks %q:\n%s", want, out)
		}
	}
}

func TestRatingsJSONOrder(t *testing.T) {
	r := loadRatings(t, "combined.json")
	inputs := []string{"twitter.com/a/status/1", "https://gazette.example/x", "unknown.example", "", "metro.example/city"}
	var buf bytes.Buffer
	if err := writeJSON(&buf, list(r.RateAll(inputs))); err != nil {
		t.Fatal(err)
	}
	var objs []map[string]any
	if err := json.Unmarshal(buf.Bytes(), &objs); err != nil {
		t.Fatalf("not one JSON array: %v\n%s", err, buf.String())
	}
	for i, obj := range objs {
		for _, k := range []string{"input", "domain", "publisher", "factuality", "bias", "tier", "origin"} {
			if _, ok := obj[k]; !ok {
				t.Errorf("item %d has no %q: %v", i+1, k, obj)
			}
		}
		if i < len(inputs) && obj["input"] != inputs[i] {
			t.Errorf("item %d is for %q, want %q", i+1, obj["input"], inputs[i])
		}
	}
	if len(objs) != len(inputs) {
		t.Errorf("%d items for %d inputs", len(objs), len(inputs))
	}
	var tb bytes.Buffer
	if err := writeRatings(&tb, r.RateAll(inputs)); err != nil {
		t.Fatal(err)
	}
	lines := strings.Split(strings.TrimSpace(tb.String()), "\n")
	if len(lines) != len(inputs)+1 || !strings.Contains(lines[1], "excluded (user content)") || !strings.Contains(lines[3], "unrated") {
		t.Errorf("table:\n%s", tb.String())
	}
}

// TestWriteTableSanitises: what was typed or stored cannot send the
// terminal escape sequences (issue 12).
func TestRatingsTableSanitised(t *testing.T) {
	var b strings.Builder
	if err := writeRatings(&b, []ratings.Rating{{Input: "evil\x1b]0;pwned\x07.example", Publisher: "Pub\x1b[2J", Origin: "none"}}); err != nil {
		t.Fatal(err)
	}
	if out := b.String(); strings.ContainsAny(out, "\x1b\a") || !strings.Contains(out, "evil.example") || !strings.Contains(out, "Pub") {
		t.Errorf("writeRatings = %q", out)
	}
}

// TestWriteTextSanitises: an archived page's title and text cannot send
// the terminal escape sequences (issue 12).
func TestArchiveHitsSanitised(t *testing.T) {
	var b strings.Builder
	err := writeArchiveHits(&b, []archive.Hit{{URL: "https://example.org/a\x07", Title: "Title\x1b]0;pwned\x07", Snippet: "text\x1b[2J\u009d52;c;aGk=\x07 more"}})
	if err != nil {
		t.Fatal(err)
	}
	if want := "1. Title\n   https://example.org/a (undated, score 0.00)\n   text more\n"; b.String() != want {
		t.Errorf("writeArchiveHits = %q, want %q", b.String(), want)
	}
}

// A page archived without a title is named by its publisher or host.
func TestArchiveHitsNameUntitledPages(t *testing.T) {
	var b strings.Builder
	if err := writeArchiveHits(&b, []archive.Hit{
		{URL: "https://www.politifact.com/a", Title: " "},
		{URL: "https://apnews.com/b", Publisher: "AP News"},
	}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"1. (untitled) politifact.com\n", "2. (untitled) AP News\n"} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("writeArchiveHits = %q, want it to hold %q", b.String(), want)
		}
	}
}

func TestSearchHitsText(t *testing.T) {
	hits := []search.Hit{
		{URL: "https://fullfact.org/health/5g-coronavirus/", Title: "There is no link between 5G and the new coronavirus",
			Provider: "factcheck", Rank: 1, Published: date("2020-04-03T00:00:00Z"),
			Also:        []search.Origin{{Provider: "serpapi", Query: "5G coronavirus", Rank: 2}},
			ClaimReview: &sources.ClaimReview{Claim: "5G mobile networks spread COVID-19.", Rating: "Incorrect", Reviewer: "Full Fact"}},
		{URL: "https://apnews.com/x", Provider: "brave", Rank: 2},
	}
	var b strings.Builder
	if err := writeSearchHits(&b, hits); err != nil {
		t.Fatal(err)
	}
	want := ` 1. There is no link between 5G and the new coronavirus
    https://fullfact.org/health/5g-coronavirus/
    factcheck #1, serpapi #2 · 2020-04-03
    fact-check: Full Fact rated "Incorrect": 5G mobile networks spread COVID-19.
 2. (untitled)
    https://apnews.com/x
    brave #2
`
	if b.String() != want {
		t.Errorf("got:\n%s\nwant:\n%s", b.String(), want)
	}
	b.Reset()
	writeSearchHits(&b, nil)
	if b.String() != "no hits\n" {
		t.Errorf("empty: %q", b.String())
	}
}

func TestSearchHitsJSON(t *testing.T) {
	var b strings.Builder
	if err := writeJSON(&b, list([]search.Hit(nil))); err != nil || b.String() != "[]\n" {
		t.Errorf("empty: %q %v", b.String(), err)
	}
	b.Reset()
	h := search.Hit{URL: "https://fullfact.org/a", Title: "T", Provider: "factcheck", Query: "q", Rank: 1,
		Published: date("2020-04-03T00:00:00Z"), ClaimReview: &sources.ClaimReview{Claim: "c", Rating: "False"}}
	if err := writeJSON(&b, []search.Hit{h, {URL: "https://x.org/", Provider: "brave", Query: "q", Rank: 2}}); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`"url": "https://fullfact.org/a"`, `"published": "2020-04-03T00:00:00Z"`,
		`"claim_review": {`, `"rating": "False"`, `"provider": "brave"`} {
		if !strings.Contains(b.String(), want) {
			t.Errorf("JSON lacks %s:\n%s", want, b.String())
		}
	}
	if strings.Count(b.String(), `"published"`) != 1 || strings.Contains(b.String(), `"also"`) {
		t.Errorf("empty fields not omitted:\n%s", b.String())
	}
}

// TestWriteTextSanitises: a title or claim from a provider cannot set the
// terminal title or clear the screen (issue 12).
func TestSearchHitsSanitised(t *testing.T) {
	hits := []search.Hit{{URL: "https://example.org/x\x1b[2J", Title: "Real title\x1b]0;pwned\x07 \u009b2J",
		Provider: "searxng", Rank: 1, ClaimReview: &sources.ClaimReview{Claim: "claim\x1b]52;c;aGk=\x07", Rating: "False\a"}}}
	var b strings.Builder
	if err := writeSearchHits(&b, hits); err != nil {
		t.Fatal(err)
	}
	out := b.String()
	if strings.ContainsAny(out, "\x1b\a\u009b") || !strings.Contains(out, "Real title ") || !strings.Contains(out, "https://example.org/x") {
		t.Errorf("writeSearchHits = %q", out)
	}
}

// TestArticleTextSanitised: what a page says cannot drive the terminal
// through muse extract, whatever the reader let through (issue 12).
func TestArticleTextSanitised(t *testing.T) {
	a := &extract.Article{Title: "Title\x1b]0;pwned\x07", Publisher: "Pub\x1b[2J", URL: "https://example.org/\x1b[H",
		Text: "Evidence\x1b]52;c;aGk=\x07 paragraph \u009b2J that clears the screen."}
	var out strings.Builder
	if err := writeArticle(&out, a); err != nil {
		t.Fatal(err)
	}
	if i := strings.IndexFunc(out.String(), func(r rune) bool { return r < 0x20 && r != '\n' || r >= 0x7f && r <= 0x9f }); i >= 0 {
		t.Errorf("writeArticle keeps a control at %d: %q", i, out.String())
	}
	if !strings.Contains(out.String(), "Evidence paragraph") {
		t.Errorf("writeArticle = %q, want the text kept", out.String())
	}
}

// A paywall teaser says what wall stopped the text, as text and as JSON.
func TestArticleWall(t *testing.T) {
	const u = "https://www.springfieldledger.example/news/2024/01/21/springfield-main-street-bicycles"
	a, err := extract.Extract([]byte(testworld.PaywallTeaserHTML(testworld.WallArticle, 2, "")), u)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	if err := writeArticle(&buf, a); err != nil {
		t.Fatal(err)
	}
	if want := "Wall:       paywall (isAccessibleForFree: false"; !strings.Contains(buf.String(), want) {
		t.Errorf("text output lacks %q:\n%s", want, buf.String())
	}
	buf.Reset()
	if err := writeArticleJSON(&buf, a); err != nil {
		t.Fatal(err)
	}
	var m struct {
		Wall  *extract.Wall `json:"wall"`
		Words int           `json:"words"`
	}
	if err := json.Unmarshal(buf.Bytes(), &m); err != nil || m.Wall == nil || m.Wall.Kind != extract.WallPaywall || m.Words != testworld.WallWords(2) {
		t.Errorf("JSON wall %+v, %d words (%v):\n%s", m.Wall, m.Words, err, buf.String())
	}
}
