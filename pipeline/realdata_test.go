package pipeline

import (
	"encoding/csv"
	"encoding/json"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/musecheck/muse/internal/testkit"
)

// politifactArticle is one fact-check of the Vo & Lee 2020 data.
type politifactArticle struct {
	Claim string   `json:"claim"`
	Title string   `json:"headerTitle"`
	Body  []string `json:"body-text"`
}

// Text is the fact-check's page text as muse would extract it.
func (a politifactArticle) Text() string { return a.Claim + "\n" + strings.Join(a.Body, "\n") }

// tweetPair is a real tweet (with its images' OCR text) and the PolitiFact
// fact-check written about it.
type tweetPair struct{ Post, URL string }

// voLee reads the tweet / fact-check pairs of
// ../shared/data/factcheck-tweets-vo-lee-2020 (skipping when absent), in
// the file's order.
func voLee(t testing.TB) ([]tweetPair, map[string]politifactArticle) {
	t.Helper()
	dir := filepath.Join(testkit.SharedData(t, "factcheck-tweets-vo-lee-2020"), "politifact")
	var queries map[string]struct {
		Raw    string `json:"OriginalTweetContent_Raw"`
		Images map[string]struct {
			Text string `json:"text_for_the_image"`
		} `json:"Images_in_tweet"`
	}
	var articles map[string]politifactArticle
	var qIndex, aIndex map[string]int
	for name, v := range map[string]any{"queries_content.json": &queries, "articles_content.json": &articles,
		"query_mapped.json": &qIndex, "article_mapped.json": &aIndex} {
		b, err := os.ReadFile(filepath.Join(dir, name))
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, v); err != nil {
			t.Fatalf("%s: %v", name, err)
		}
	}
	byQ := map[int]string{}
	for id, i := range qIndex {
		byQ[i] = id
	}
	byA := map[int]string{}
	for u, i := range aIndex {
		byA[i] = u
	}
	f, err := os.Open(filepath.Join(dir, "query_article_interaction.csv"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	rows, err := csv.NewReader(f).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var pairs []tweetPair
	for _, r := range rows {
		qi, _ := strconv.Atoi(r[0])
		ai, _ := strconv.Atoi(r[1])
		q, ok := queries[byQ[qi]]
		if a := articles[byA[ai]]; !ok || (a.Title == "" && a.Claim == "" && len(a.Body) == 0) {
			continue
		}
		post := q.Raw
		for _, k := range slices.Sorted(maps.Keys(q.Images)) {
			post += "\n" + q.Images[k].Text // the OCR text stands in for the image description
		}
		pairs = append(pairs, tweetPair{post, byA[ai]})
	}
	if len(pairs) < 1000 {
		t.Fatalf("only %d pairs read", len(pairs))
	}
	return pairs, articles
}

// RealPolitiFactPair is one real tweet and the text of the PolitiFact
// fact-check about it, for the external tests of this package.
func RealPolitiFactPair(t testing.TB, n int) (post, url, title string, paragraphs []string) {
	pairs, articles := voLee(t)
	p := pairs[n%len(pairs)]
	a := articles[p.URL]
	return p.Post, p.URL, a.Title, append([]string{a.Claim}, a.Body...)
}
