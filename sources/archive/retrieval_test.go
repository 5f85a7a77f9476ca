package archive

import (
	"context"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/internal/testkit"
	"github.com/musecheck/muse/sources"
)

// factChecks is the PolitiFact half of the Vo & Lee (EMNLP 2020) data: tweets
// that were answered with a link to a fact-check, and those fact-checks.
type factChecks struct {
	docs    []Doc
	queries []string
	// relevant[i] holds the canonical URLs of the fact-checks that answer
	// queries[i].
	relevant []map[string]bool
	// posted[i] is when queries[i] was posted, read from its Snowflake ID.
	posted []time.Time
}

// snowflakeTime is when a tweet was posted: its ID's top bits count
// milliseconds since Twitter's epoch.
func snowflakeTime(id string) time.Time {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil {
		return time.Time{}
	}
	return time.UnixMilli(int64(n>>22) + 1288834974657).UTC()
}

var urlDateRe = regexp.MustCompile(`/(\d{4})/([a-z]{3})/(\d{1,2})/`)

// publishedFromURL reads the date in a PolitiFact URL path such as
// /statements/2016/jul/11/donald-trump/…; the data set's publish_date is
// empty for every article.
func publishedFromURL(u string) time.Time {
	m := urlDateRe.FindStringSubmatch(u)
	if m == nil {
		return time.Time{}
	}
	t, err := time.Parse("2006 Jan 2", m[1]+" "+strings.ToUpper(m[2][:1])+m[2][1:]+" "+m[3])
	if err != nil {
		return time.Time{}
	}
	return t
}

func loadFactChecks(tb testing.TB) factChecks {
	tb.Helper()
	dir := filepath.Join(testkit.SharedData(tb, "factcheck-tweets-vo-lee-2020"), "politifact")
	var articles map[string]struct {
		Claim string   `json:"claim"`
		Title string   `json:"headerTitle"`
		Body  []string `json:"body-text"`
	}
	var tweets map[string]struct {
		Raw    string `json:"OriginalTweetContent_Raw"`
		Images map[string]struct {
			OCR string `json:"text_for_the_image"`
		} `json:"Images_in_tweet"`
	}
	var queryIdx, articleIdx map[string]int
	readJSON(tb, filepath.Join(dir, "articles_content.json"), &articles)
	readJSON(tb, filepath.Join(dir, "queries_content.json"), &tweets)
	readJSON(tb, filepath.Join(dir, "query_mapped.json"), &queryIdx)
	readJSON(tb, filepath.Join(dir, "article_mapped.json"), &articleIdx)

	var fc factChecks
	urlOf := map[int]string{}
	for u, a := range articles {
		key, err := sources.Canonical(u)
		if err != nil {
			tb.Fatalf("fact-check URL %q: %v", u, err)
		}
		urlOf[articleIdx[u]] = key
		// The claim is shown at the top of every PolitiFact page, so it is
		// part of the page's text.
		text := strings.Join(append([]string{a.Claim}, a.Body...), "\n\n")
		fc.docs = append(fc.docs, Doc{URL: u, Title: a.Title, Text: text, Publisher: "PolitiFact", Published: publishedFromURL(u)})
	}
	sort.Slice(fc.docs, func(i, j int) bool { return fc.docs[i].URL < fc.docs[j].URL })

	f, err := os.Open(filepath.Join(dir, "query_article_interaction.csv"))
	if err != nil {
		tb.Fatal(err)
	}
	defer f.Close()
	pairs, err := csv.NewReader(f).ReadAll()
	if err != nil {
		tb.Fatalf("read interactions: %v", err)
	}
	rel := map[int]map[string]bool{}
	for _, p := range pairs {
		q, err1 := strconv.Atoi(p[0])
		a, err2 := strconv.Atoi(p[1])
		if err1 != nil || err2 != nil || urlOf[a] == "" {
			tb.Fatalf("bad interaction row %v", p)
		}
		if rel[q] == nil {
			rel[q] = map[string]bool{}
		}
		rel[q][urlOf[a]] = true
	}
	ids := make([]string, 0, len(tweets))
	for id := range tweets {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		tw := tweets[id]
		r := rel[queryIdx[id]]
		if len(r) == 0 {
			continue
		}
		q := tw.Raw
		imgs := make([]string, 0, len(tw.Images))
		for k := range tw.Images {
			imgs = append(imgs, k)
		}
		sort.Strings(imgs)
		for _, k := range imgs {
			q += "\n" + tw.Images[k].OCR
		}
		fc.queries = append(fc.queries, q)
		fc.relevant = append(fc.relevant, r)
		fc.posted = append(fc.posted, snowflakeTime(id))
	}
	return fc
}

func readJSON(tb testing.TB, path string, v any) {
	tb.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	if err := json.Unmarshal(b, v); err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
}

func indexFactChecks(tb testing.TB, docs []Doc) *Store {
	tb.Helper()
	s, err := Open(context.Background(), filepath.Join(tb.TempDir(), "archive.db"))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(func() { s.Close() })
	if err := s.AddAll(context.Background(), docs); err != nil {
		tb.Fatal(err)
	}
	return s
}

type retrievalScores struct{ mrr, recall10 float64 }

func (r retrievalScores) String() string {
	return fmt.Sprintf("MRR %.3f, recall@10 %.3f", r.mrr, r.recall10)
}

func evaluate(tb testing.TB, s *Store, fc factChecks, r ranker) retrievalScores {
	tb.Helper()
	var sc retrievalScores
	for i, q := range fc.queries {
		hits, err := s.search(context.Background(), q, SearchOptions{Limit: 100, Posted: fc.posted[i]}, r)
		if err != nil {
			tb.Fatalf("query %d: %v", i, err)
		}
		found := 0
		for rank, h := range hits {
			key, _ := sources.Canonical(h.URL)
			if !fc.relevant[i][key] {
				continue
			}
			if found == 0 {
				sc.mrr += 1 / float64(rank+1)
			}
			if rank < 10 {
				found++
			}
		}
		sc.recall10 += float64(found) / float64(len(fc.relevant[i]))
	}
	n := float64(len(fc.queries))
	return retrievalScores{sc.mrr / n, sc.recall10 / n}
}

// TestArchiveRetrieval indexes the 467 PolitiFact fact-checks and asks for
// each tweet's fact-check with the tweet's text plus its images' OCR text.
// Plain BM25's figure is only shown beside it, so it is worked out only
// with -v, where it is printed.
func TestArchiveRetrieval(t *testing.T) {
	fc := loadFactChecks(t)
	if len(fc.docs) != 467 || len(fc.queries) != 1013 {
		t.Fatalf("data set has %d fact-checks and %d tweets with pairs; want 467 and 1013", len(fc.docs), len(fc.queries))
	}
	s := indexFactChecks(t, fc.docs)
	if n, err := s.Count(context.Background()); err != nil || n != 467 {
		t.Fatalf("archive holds %d documents (%v); want 467", n, err)
	}
	got := evaluate(t, s, fc, defaultRanker)
	if testing.Verbose() {
		t.Logf("plain BM25 (OR of terms, equal column weights): %v", evaluate(t, s, fc, plainBM25))
	}
	t.Logf("archive search:                                 %v", got)
	if got.mrr < 0.75 || got.recall10 < 0.93 {
		t.Errorf("archive search reaches %v; want MRR ≥ 0.75 and recall@10 ≥ 0.93", got)
	}
}
