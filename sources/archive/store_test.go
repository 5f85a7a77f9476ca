package archive

import (
	"bytes"
	"compress/gzip"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/fetch"
)

func openTemp(t *testing.T) (*Store, string) {
	t.Helper()
	path := filepath.Join(t.TempDir(), "muse", "archive.db")
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s, path
}

var sample = []Doc{
	{URL: "https://www.politifact.com/factchecks/2017/jan/05/a/sugar-tax-soda/", Title: "Did Philadelphia's sugar tax double soda prices?",
		Text: "A viral post says the soda tax doubled prices. The beverage tax added 1.5 cents per ounce; prices of soda rose, but did not double.", Publisher: "PolitiFact",
		Published: time.Date(2017, 1, 5, 0, 0, 0, 0, time.UTC)},
	{URL: "https://www.reuters.com/article/fact-check-crime-rate/", Title: "Fact check: Violent crime rate fell in 2016? No, it rose",
		Text: "FBI figures show the violent crime rate rose in 2016 after years of decline.", Publisher: "Reuters",
		Published: time.Date(2018, 3, 1, 0, 0, 0, 0, time.UTC)},
	{URL: "https://apnews.com/article/vaccine-autism", Title: "No link between vaccines and autism",
		Text: "Studies of millions of children found no link between the measles vaccine and autism.", Publisher: "AP"},
}

func TestAddSearchGet(t *testing.T) { eachEngine(t, testAddSearchGet) }

func testAddSearchGet(t *testing.T, s *Store) {
	ctx := context.Background()
	for _, d := range sample {
		if err := s.Add(ctx, d); err != nil {
			t.Fatal(err)
		}
	}
	hits, err := s.Search(ctx, "RT @someone: the SUGAR tax doubled soda prices!! https://t.co/abc #SodaTax", SearchOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(hits) == 0 || hits[0].URL != sample[0].URL {
		t.Fatalf("hits = %+v; want the sugar-tax fact-check first", hits)
	}
	if h := hits[0]; h.Publisher != "PolitiFact" || !h.Published.Equal(sample[0].Published) || h.Snippet == "" || h.Score <= 0 {
		t.Errorf("first hit = %+v; want publisher, date, snippet and a positive score", h)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score {
			t.Errorf("hits not best first: %v then %v", hits[i-1].Score, hits[i].Score)
		}
	}

	// Upsert by canonical URL: tracking parameters and www. do not make a
	// second document, and empty fields keep what was known.
	if err := s.Add(ctx, Doc{URL: "http://politifact.com/factchecks/2017/jan/05/a/sugar-tax-soda?utm_source=x", Text: "Updated text about soda levies and prices."}); err != nil {
		t.Fatal(err)
	}
	if n, _ := s.Count(ctx); n != len(sample) {
		t.Errorf("count = %d after re-adding; want %d", n, len(sample))
	}
	d, err := s.Get(ctx, sample[0].URL)
	if err != nil {
		t.Fatal(err)
	}
	if d.Title != sample[0].Title || !strings.Contains(d.Text, "levies") || !d.Published.Equal(sample[0].Published) {
		t.Errorf("after update: %+v", d)
	}
	if hits, _ := s.Search(ctx, "levies", SearchOptions{}); len(hits) != 1 {
		t.Errorf("the index did not follow the update: %+v", hits)
	}
	if hits, _ := s.Search(ctx, "beverage", SearchOptions{}); len(hits) != 0 {
		t.Errorf("the index still holds replaced text: %+v", hits)
	}
	if _, err := s.Get(ctx, "https://nowhere.example/x"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get of an unknown URL: %v; want ErrNotFound", err)
	}
}

func TestSearchBeforeAndLimit(t *testing.T) { eachEngine(t, testSearchBeforeAndLimit) }

func testSearchBeforeAndLimit(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	hits, err := s.Search(ctx, "crime rate tax vaccine", SearchOptions{Before: time.Date(2017, 6, 1, 0, 0, 0, 0, time.UTC)})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]bool{}
	for _, h := range hits {
		got[h.URL] = true
	}
	if got[sample[1].URL] || !got[sample[0].URL] || !got[sample[2].URL] {
		t.Errorf("before 2017-06: %v; want the 2017 and the undated document, not the 2018 one", got)
	}
	if hits, _ := s.Search(ctx, "crime rate tax vaccine", SearchOptions{Limit: 1}); len(hits) != 1 {
		t.Errorf("limit 1 gave %d hits", len(hits))
	}
}

// Query text is data, never FTS5 syntax.
func TestSearchHostileQueries(t *testing.T) { eachEngine(t, testSearchHostileQueries) }

func testSearchHostileQueries(t *testing.T, s *Store) {
	ctx := context.Background()
	if err := s.AddAll(ctx, sample); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`"`, `crime" OR "x`, `NEAR(crime rate`, `title:crime`, `crime*`, `AND OR NOT`, `')); DROP TABLE docs; --`, `^crime`, "", "   ", `{title text}: crime`, "😀 émeute"} {
		if _, err := s.Search(ctx, q, SearchOptions{}); err != nil {
			t.Errorf("Search(%q): %v", q, err)
		}
	}
	if n, _ := s.Count(ctx); n != len(sample) {
		t.Errorf("archive holds %d documents after hostile queries", n)
	}
}

func TestAddRejectsBadDocs(t *testing.T) { eachEngine(t, testAddRejectsBadDocs) }

func testAddRejectsBadDocs(t *testing.T, s *Store) {
	for _, d := range []Doc{{URL: "ftp://x.example/a", Title: "t"}, {URL: "not a url", Title: "t"}, {URL: "https://x.example/a"}} {
		if err := s.Add(context.Background(), d); err == nil {
			t.Errorf("Add(%+v) succeeded", d)
		}
	}
}

func TestPagesRoundTrip(t *testing.T) { eachEngine(t, testPagesRoundTrip) }

func testPagesRoundTrip(t *testing.T, s *Store) {
	ctx := context.Background()
	if _, _, ok := s.Validators(ctx, "https://example.com/a"); ok {
		t.Fatal("validators for a page never saved")
	}
	if _, err := s.Cached(ctx, "https://example.com/a"); !errors.Is(err, ErrNotFound) {
		t.Fatalf("Cached of a page never saved: %v", err)
	}
	raw := []byte("<html><head><meta charset=windows-1252></head><body>caf\xe9</body></html>")
	p := &fetch.Page{URL: "https://example.com/a?utm_source=feed", FinalURL: "https://www.example.com/a/final", Status: 200,
		ContentType: "text/html", Charset: "windows-1252", Raw: raw,
		Body:      []byte("<html><head><meta charset=windows-1252></head><body>café</body></html>"),
		FetchedAt: time.Date(2024, 5, 6, 7, 8, 9, 10, time.UTC), ETag: `W/"abc"`, LastModified: "Mon, 06 May 2024 07:00:00 GMT"}
	if err := s.SavePage(ctx, p); err != nil {
		t.Fatal(err)
	}
	etag, lm, ok := s.Validators(ctx, "https://example.com/a")
	if !ok || etag != p.ETag || lm != p.LastModified {
		t.Errorf("Validators = %q, %q, %v", etag, lm, ok)
	}
	for _, u := range []string{"https://example.com/a", "https://example.com/a/final"} {
		got, err := s.Cached(ctx, u)
		if err != nil {
			t.Fatalf("Cached(%s): %v", u, err)
		}
		if !got.FromCache || got.FinalURL != p.FinalURL || got.Status != 200 || got.Charset != p.Charset ||
			!bytes.Equal(got.Raw, p.Raw) || !bytes.Equal(got.Body, p.Body) || !got.FetchedAt.Equal(p.FetchedAt) {
			t.Errorf("Cached(%s) = %+v", u, got)
		}
	}
	var stored int
	if err := s.db.QueryRow(s.sql(`SELECT length(raw_gz) FROM pages`)).Scan(&stored); err != nil || stored == 0 {
		t.Errorf("raw page not stored compressed: %d bytes, %v", stored, err)
	}
}

func TestReopenKeepsSchema(t *testing.T) {
	s, path := openTemp(t)
	ctx := context.Background()
	if err := s.Add(ctx, sample[0]); err != nil {
		t.Fatal(err)
	}
	s2, err := Open(ctx, path)
	if err != nil {
		t.Fatal(err)
	}
	defer s2.Close()
	var mode string
	if err := s2.db.QueryRow("PRAGMA journal_mode").Scan(&mode); err != nil || mode != "wal" {
		t.Errorf("journal_mode = %q, %v; want wal", mode, err)
	}
	if n, _ := s2.Count(ctx); n != 1 {
		t.Errorf("reopened archive holds %d documents", n)
	}
	if _, err := s2.db.Exec("PRAGMA user_version = 99"); err != nil {
		t.Fatal(err)
	}
	if _, err := Open(ctx, path); err == nil || !strings.Contains(err.Error(), "newer") {
		t.Errorf("opening a newer schema: %v", err)
	}
}

func TestImport(t *testing.T) { eachEngine(t, testImport) }

func testImport(t *testing.T, s *Store) {
	dir := t.TempDir()
	jsonl := filepath.Join(dir, "recs.jsonl")
	os.WriteFile(jsonl, []byte(`{"url":"https://a.example/1","title":"One","text":"first record","published":"2020-02-03"}
not json
{"url":"https://a.example/2","title":"Two","text":"second","published":"yesterday"}

{"url":"https://a.example/3","title":"Three","text":"third","publisher":"A"}
`), 0o644)
	var errs bytes.Buffer
	res := s.Import(context.Background(), []string{jsonl, "testdata/site", filepath.Join(dir, "missing.html"), "https://x.example/"}, ImportOptions{Errors: &errs})
	if res.Added != 3 || res.Failed != 4 {
		t.Errorf("Import = %+v; want 3 added, 4 failed\n%s", res, errs.String())
	}
	if lines := strings.Count(errs.String(), "\n"); lines != 4 {
		t.Errorf("%d error lines; want 4:\n%s", lines, errs.String())
	}
	d, err := s.Get(context.Background(), "https://healthdesk.example.org/2019/04/measles-vaccine-autism")
	if err != nil {
		t.Fatalf("HTML file not archived under its canonical URL: %v\n%s", err, errs.String())
	}
	if !strings.Contains(d.Text, "Danish study") || d.Published.Year() != 2019 {
		t.Errorf("archived HTML = %+v", d)
	}
}

// Two handles on one file, writing at once, lose nothing and see no
// SQLITE_BUSY.
func TestConcurrentHandles(t *testing.T) {
	_, path := openTemp(t)
	const writers, each = 2, 100
	var wg sync.WaitGroup
	errs := make(chan error, writers)
	for w := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			s, err := Open(context.Background(), path)
			if err != nil {
				errs <- err
				return
			}
			defer s.Close()
			errs <- writeDocs(s, fmt.Sprint("h", w), each)
		}()
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Fatal(err)
		}
	}
	checkCount(t, path, writers*each)
}

func writeDocs(s *Store, who string, n int) error {
	ctx := context.Background()
	for i := range n {
		d := Doc{URL: fmt.Sprintf("https://w.example/%s/%d", who, i), Title: "concurrent " + who, Text: "written while another writer writes"}
		if err := s.Add(ctx, d); err != nil {
			return err
		}
		if i%10 == 0 {
			if _, err := s.Search(ctx, "concurrent writer", SearchOptions{}); err != nil {
				return err
			}
		}
	}
	return nil
}

func checkCount(t *testing.T, path string, want int) {
	t.Helper()
	s, err := Open(context.Background(), path)
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	if n, _ := s.Count(context.Background()); n != want {
		t.Errorf("archive holds %d documents; want %d", n, want)
	}
	var ok string
	if err := s.db.QueryRow("PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	checkStats(t, s) // the postings and counts are the documents'

}

const childEnv = "MUSE_ARCHIVE_TEST_CHILD"

// Two processes (this test binary re-run) write to one new database at once.
func TestConcurrentProcesses(t *testing.T) {
	if spec := os.Getenv(childEnv); spec != "" {
		path, who, _ := strings.Cut(spec, "|")
		s, err := Open(context.Background(), path)
		if err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		defer s.Close()
		if err := writeDocs(s, who, 100); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(3)
		}
		return
	}
	path := filepath.Join(t.TempDir(), "shared", "archive.db")
	var cmds []*exec.Cmd
	outs := make([]*bytes.Buffer, 2)
	for i := range 2 {
		cmd := exec.Command(os.Args[0], "-test.run=^TestConcurrentProcesses$")
		cmd.Env = append(os.Environ(), childEnv+"="+path+"|p"+strconv.Itoa(i))
		outs[i] = &bytes.Buffer{}
		cmd.Stdout, cmd.Stderr = outs[i], outs[i]
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		cmds = append(cmds, cmd)
	}
	for i, cmd := range cmds {
		if err := cmd.Wait(); err != nil {
			t.Errorf("writer process %d: %v\n%s", i, err, outs[i])
		}
	}
	checkCount(t, path, 200)
}

// Saved pages often come gzip-compressed (crawls, the benchmark sets): a
// folder of page.html.gz is archived as a folder of pages is.
func TestImportCompressedPages(t *testing.T) {
	s, _ := openTemp(t)
	page, err := os.ReadFile("testdata/site/measles.html")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	var buf bytes.Buffer
	zw := gzip.NewWriter(&buf)
	zw.Write(page)
	zw.Close()
	os.WriteFile(filepath.Join(dir, "measles.html.gz"), buf.Bytes(), 0o644)
	os.WriteFile(filepath.Join(dir, "notes.txt.gz"), buf.Bytes(), 0o644) // not a page by name: left alone
	var errs bytes.Buffer
	res := s.Import(context.Background(), []string{dir}, ImportOptions{Errors: &errs})
	if res.Added != 1 || res.Failed != 0 || res.Skipped != 1 {
		t.Fatalf("Import = %+v; want 1 added, 1 skipped\n%s", res, errs.String())
	}
	d, err := s.Get(context.Background(), "https://healthdesk.example.org/2019/04/measles-vaccine-autism")
	if err != nil || !strings.Contains(d.Text, "Danish study") {
		t.Errorf("compressed page not archived: %v %+v", err, d)
	}
}
