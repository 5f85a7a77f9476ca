package extract

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/lang"
)

// Pages are written by anyone, including people who want a check to go
// wrong, so extraction must survive any bytes: an article or an error,
// never a panic, and an article that agrees with itself.

var fuzzNow = time.Date(2024, 6, 1, 0, 0, 0, 0, time.UTC)

func addFixtures(f *testing.F, names ...string) {
	for _, n := range names {
		b, err := os.ReadFile(filepath.Join("testdata", n))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
	}
}

func checkArticle(t *testing.T, a *Article) {
	if a.Text != strings.Join(a.Paragraphs, "\n\n") {
		t.Fatal("Text is not the paragraphs joined")
	}
	if a.Words != lang.Words(a.Text) {
		t.Fatalf("Words %d for %d words in the text", a.Words, lang.Words(a.Text))
	}
	for _, d := range []time.Time{a.Published, a.Modified} {
		if d.After(fuzzNow) {
			t.Fatalf("date %v after Now %v", d, fuzzNow)
		}
	}
	for _, cr := range a.ClaimReviews {
		if cr.Claim == "" && cr.Rating == "" {
			t.Fatalf("empty claim review kept: %+v", cr)
		}
	}
}

func FuzzExtract(f *testing.F) {
	addFixtures(f, "factcheck.html", "claimreview_list.html", "url_date.html")
	for _, s := range []string{
		"<p>one paragraph</p>",
		"<html><head><title>T</title></head><body><article><h1>T</h1><p>" + strings.Repeat("word ", 120) + "</p></article></body></html>",
		"<html><body>" + strings.Repeat("<div>", 500) + "deep" + "</body></html>",
		"<!doctype html><meta charset=iso-8859-1><p>caf\xe9</p>",
		"<script type=\"application/ld+json\">{\"@type\":\"NewsArticle\",\"datePublished\":\"2999-01-01\"}</script><p>x</p>",
		"\x00\x01binary",
		"<a href=\"javascript:alert(1)\">x</a><time datetime=\"0000-00-00\">",
	} {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, page []byte) {
		a, err := Options{Now: fuzzNow}.Extract(page, "https://news.example/2024/01/15/story")
		if err != nil {
			if a != nil {
				t.Fatal("article with an error")
			}
			return
		}
		checkArticle(t, a)
	})
}

// FuzzClaimReviewJSONLD puts arbitrary JSON-LD in an otherwise ordinary
// fact-check page: the ClaimReview reader must take it or leave it.
func FuzzClaimReviewJSONLD(f *testing.F) {
	for _, s := range []string{
		`{"@context":"https://schema.org","@type":"ClaimReview","claimReviewed":"Springfield banned bicycles","reviewRating":{"@type":"Rating","alternateName":"False","ratingValue":1},"author":{"@type":"Organization","name":"Reuters"},"datePublished":"2024-01-20","itemReviewed":{"@type":"Claim","author":{"name":"City Rumours"},"datePublished":"2024-01-18"}}`,
		`[{"@type":["ClaimReview","Review"],"claimReviewed":"x","reviewRating":"False"},{"@graph":[{"@type":"ClaimReview","claimReviewed":"y"}]}]`,
		`{"@graph":{"@graph":{"@graph":{"@type":"ClaimReview","claimReviewed":"deep"}}}}`,
		`{"@type":"ClaimReview","claimReviewed":["a","b"],"reviewRating":{"ratingValue":"NaN","bestRating":0},"datePublished":"-9999-99-99"}`,
		`{"@type":"ClaimReview", "claimReviewed": "trailing comma",}`,
		`not json at all`,
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, ld string) {
		page := `<!doctype html><html><head><title>Fact check</title><script type="application/ld+json">` + ld +
			`</script></head><body><article><h1>Fact check</h1><p>` + strings.Repeat("The claim is false, officials said. ", 30) +
			`</p></article></body></html>`
		a, err := Options{Now: fuzzNow, FastDate: true}.Extract([]byte(page), "https://factcheck.example/a")
		if err != nil {
			if checkHTML([]byte(page), true) == nil {
				t.Fatalf("an ordinary page with odd JSON-LD failed: %v", err)
			}
			return // the JSON-LD made the page binary (NUL bytes and the like)
		}
		checkArticle(t, a)
	})
}

// FuzzExtractPDF feeds damaged and arbitrary PDFs to the PDF reader: an
// article or an error, never a panic.
func FuzzExtractPDF(f *testing.F) {
	good := buildPDF(map[string]string{"Title": "Report", "CreationDate": "D:20230214"}, reportPages...)
	f.Add(good)
	f.Add(good[:len(good)*3/4])
	f.Add(bytes.ReplaceAll(good, []byte("obj"), []byte("ojb")))
	f.Add([]byte("%PDF-1.7\ntrailer\n<< /Root 1 0 R >>\n%%EOF"))
	f.Fuzz(func(t *testing.T, doc []byte) {
		a, err := Options{Now: fuzzNow}.ExtractPDF(doc, "")
		if err != nil {
			if a != nil {
				t.Fatal("article with an error")
			}
			return
		}
		checkArticle(t, a)
	})
}
