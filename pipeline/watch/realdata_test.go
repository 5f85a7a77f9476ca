package watch

import (
	"encoding/csv"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
)

// realPostTexts are real post and claim texts from ../shared/data: the
// PolitiFact tweets of Vo & Lee (2020), the LIAR-PLUS claims and the
// AVeriTeC dev claims, in that order, each text once.
func realPostTexts(tb testing.TB) []string {
	tb.Helper()
	var out []string
	seen := map[string]bool{}
	add := func(s string) {
		s = strings.TrimSpace(s)
		if s != "" && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	var tweets map[string]struct {
		Raw string `json:"OriginalTweetContent_Raw"`
	}
	readJSON(tb, filepath.Join(testkit.SharedData(tb, "factcheck-tweets-vo-lee-2020"), "politifact", "queries_content.json"), &tweets)
	for _, k := range sortedKeys(tweets) {
		add(tweets[k].Raw)
	}
	f, err := os.Open(filepath.Join(testkit.SharedData(tb, "liar-plus"), "test2.tsv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	r := csv.NewReader(f)
	r.Comma, r.LazyQuotes, r.FieldsPerRecord = '\t', true, -1
	rows, err := r.ReadAll()
	if err != nil {
		tb.Fatal(err)
	}
	for _, row := range rows {
		if len(row) > 3 {
			add(row[3])
		}
	}
	var av []struct {
		Claim string `json:"claim"`
	}
	readJSON(tb, filepath.Join(testkit.SharedData(tb, "averitec-dev"), "dev.json"), &av)
	for _, c := range av {
		add(c.Claim)
	}
	return out
}

// politifactReviews are the PolitiFact fact-checks the tweets are paired
// with, as ClaimReviews (the rating read from the meter image's name, the
// date from the URL).
func politifactReviews(tb testing.TB) []sources.ClaimReview {
	tb.Helper()
	var arts map[string]struct {
		Claim  string     `json:"claim"`
		Rating [][]string `json:"rating"`
	}
	readJSON(tb, filepath.Join(testkit.SharedData(tb, "factcheck-tweets-vo-lee-2020"), "politifact", "articles_content.json"), &arts)
	meter := regexp.MustCompile(`tom-([a-z]+)\.`)
	day := regexp.MustCompile(`/(\d{4})/([a-z]{3})/(\d{1,2})/`)
	ratings := map[string]string{"false": "False", "pantsonfire": "Pants on Fire", "mostlyfalse": "Mostly False",
		"halftrue": "Half True", "mostlytrue": "Mostly True", "true": "True"}
	var out []sources.ClaimReview
	for _, u := range sortedKeys(arts) {
		a := arts[u]
		cr := sources.ClaimReview{Claim: a.Claim, Reviewer: "PolitiFact", ReviewURL: u, Language: "en"}
		if len(a.Rating) > 0 && len(a.Rating[0]) > 0 {
			if m := meter.FindStringSubmatch(a.Rating[0][0]); m != nil {
				cr.Rating = ratings[m[1]]
			}
		}
		if m := day.FindStringSubmatch(u); m != nil {
			cr.ReviewDate, _ = time.Parse("2006/Jan/2", m[1]+"/"+strings.ToUpper(m[2][:1])+m[2][1:]+"/"+m[3])
		}
		if cr.Claim != "" && cr.Rating != "" {
			out = append(out, cr)
		}
	}
	return out
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("%s: %v", path, err)
	}
}

func sortedKeys[V any](m map[string]V) []string {
	ks := make([]string, 0, len(m))
	for k := range m {
		ks = append(ks, k)
	}
	slices.Sort(ks)
	return ks
}
