package pipeline_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/setup"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch/fetchtest"
)

// The walls publishers serve in front of an article, end to end: a whole
// check (NewFromConfig + Run) over a world whose search finds the
// Springfield Ledger's story, behind one wall, and a blog page that says
// nothing about the claim. The refuting sentence is in the story's fifth
// paragraph: past what a teaser leaves readable.

const ledger = "www.springfieldledger.example"

var ledgerURL = "http://" + ledger + testworld.WallArticle.Path

// wallWorld serves pages (by host and path) with the blog page beside
// them, and makes the search find results (and the blog page); archived
// pages are put in the local archive first.
func wallWorld(t *testing.T, pages map[string]http.Handler, results []string, archived ...archive.Doc) *testworld.Env {
	t.Helper()
	env := testworld.New(t, nil)
	blog := env.Pages["www.unratedblog.example"]
	blogURL := testworld.PageURL("www.unratedblog.example", blog)
	env.Proxy = fetchtest.NewProxy(t, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		key := strings.ToLower(r.Host) + r.URL.Path
		if h, ok := pages[key]; ok {
			h.ServeHTTP(w, r)
			return
		}
		if "http://"+key == blogURL {
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, testworld.ArticleHTML(blog))
			return
		}
		http.NotFound(w, r)
	}))
	sx := testworld.SearXNG(t, func(string) []string { return append(append([]string{}, results...), blogURL) })
	env.Cfg.SearXNGURL = sx.URL
	if len(archived) > 0 {
		st, err := archive.Open(context.Background(), env.Cfg.ArchivePath())
		if err != nil {
			t.Fatal(err)
		}
		if err := st.AddAll(context.Background(), archived); err != nil {
			t.Fatal(err)
		}
		st.Close()
	}
	return env
}

func htmlPage(doc string) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, doc)
	})
}

// wholeStory is the story as the archive keeps a page muse read whole.
func wholeStory(u string) archive.Doc {
	a := testworld.WallArticle
	return archive.Doc{URL: u, Title: a.Title, Text: strings.Join(a.Paras, "\n\n"), Publisher: a.Site,
		Published: testworld.Cutoff.AddDate(0, 0, -11)}
}

func TestWallsEndToEnd(t *testing.T) {
	t.Parallel()
	art := testworld.WallArticle
	path := ledger + art.Path
	ampPath := ledger + "/amp" + art.Path
	teaserWords := testworld.WallWords(2)
	// A story whose opening is about the weather: the relevance gate would
	// keep a page out for it, but says nothing of the rest of the story.
	offTopic := art
	offTopic.Title = "What a rainy January did to the orchards"
	offTopic.Paras = append([]string{
		"Apple growers in the valley say the wettest January in thirty years has left their orchards waterlogged, with some " +
			"rows standing in puddles for weeks and the pruning season pushed back until the ground firms up again.",
		"Several farms have brought in extra pumps, and the growers' cooperative expects the first blossom to arrive late, " +
			"though it says a dry February would still let most trees catch up before the spring frosts are over.",
	}, art.Paras...)
	type want struct {
		status   pipeline.Status
		refutes  bool     // the story's refuting sentence is quoted from it
		reason   []string // words its reason carries
		textFrom []string // words its TextFrom carries ("" none)
		summary  []string // words the accounting's summary carries
	}
	rows := []struct {
		name     string
		pages    map[string]http.Handler
		results  []string
		archived []archive.Doc
		want     want
	}{
		{"consent overlay", map[string]http.Handler{path: htmlPage(testworld.ConsentHTML(art))}, nil, nil,
			want{status: pipeline.StatusUsed, refutes: true, reason: []string{"1 refuting"}}},
		{"paywall teaser", map[string]http.Handler{path: htmlPage(testworld.PaywallTeaserHTML(art, 2, ""))}, nil, nil,
			want{status: pipeline.StatusPartial,
				reason:  []string{fmt.Sprintf("paywalled: only the first %d words were readable", teaserWords), "it quoted none of them as confirming, refuting"},
				summary: []string{"1 page was read and it does not address the post", fmt.Sprintf("1 more was behind a paywall: only its first %d words could be read", teaserWords)}}},
		{"paywall teaser, the whole story archived", map[string]http.Handler{path: htmlPage(testworld.PaywallTeaserHTML(art, 2, ""))}, nil,
			[]archive.Doc{wholeStory(ledgerURL)},
			want{status: pipeline.StatusUsed, refutes: true, reason: []string{"1 refuting", "text from the local archive (the live page is paywalled"},
				textFrom: []string{"the local archive", "isAccessibleForFree: false"}}},
		{"paywall teaser at a short link, the story archived at its canonical URL",
			map[string]http.Handler{ledger + "/s/8fk2": htmlPage(testworld.PaywallTeaserHTML(art, 2, ledgerURL))},
			[]string{"http://" + ledger + "/s/8fk2"}, []archive.Doc{wholeStory(ledgerURL)},
			want{status: pipeline.StatusUsed, refutes: true, textFrom: []string{"the local archive", "paywall"}}},
		{"paywall teaser whose opening shares none of the post's words", map[string]http.Handler{path: htmlPage(testworld.PaywallTeaserHTML(offTopic, 2, ""))}, nil, nil,
			want{status: pipeline.StatusPartial, reason: []string{"paywalled: only the first", "it quoted none of them as confirming, refuting"},
				summary: []string{"1 more was behind a paywall"}}},
		{"registration wall", map[string]http.Handler{path: htmlPage(testworld.RegistrationWallHTML(art, 3))}, nil, nil,
			want{status: pipeline.StatusPartial,
				reason:  []string{fmt.Sprintf("behind a registration wall: only the first %d words were readable", testworld.WallWords(3))},
				summary: []string{"behind a registration wall"}}},
		{"JavaScript shell with an AMP link", map[string]http.Handler{
			path:    htmlPage(testworld.ShellHTML(art, "/amp"+art.Path, art.Path)),
			ampPath: htmlPage(testworld.AMPHTML(art))}, nil, nil,
			want{status: pipeline.StatusUsed, refutes: true, textFrom: []string{"AMP version http://" + ampPath, "the live page has"}}},
		{"JavaScript shell whose AMP link is another site's", map[string]http.Handler{
			path:                              htmlPage(testworld.ShellHTML(art, "http://www.elsewhere.example/amp/story", art.Path)),
			"www.elsewhere.example/amp/story": htmlPage(testworld.AMPHTML(art))}, nil, nil,
			want{status: pipeline.StatusTooShort, reason: []string{"words of main text"}}},
		{"JavaScript shell at a short link whose canonical URL is the story", map[string]http.Handler{
			ledger + "/s/q7": htmlPage(testworld.ShellHTML(art, "", ledgerURL)),
			path:             htmlPage(testworld.ConsentHTML(art))}, []string{"http://" + ledger + "/s/q7"}, nil,
			want{status: pipeline.StatusUsed, refutes: true, textFrom: []string{"canonical address " + ledgerURL}}},
		{"JavaScript shell whose canonical URL is the home page", map[string]http.Handler{
			path:         htmlPage(testworld.ShellHTML(art, "", "/")),
			ledger + "/": htmlPage(testworld.ConsentHTML(art))}, nil, nil,
			want{status: pipeline.StatusTooShort, reason: []string{"words of main text"}}},
		{"JavaScript shell whose canonical URL is another story", map[string]http.Handler{
			path:                         htmlPage(testworld.ShellHTML(art, "", "/news/other-story")),
			ledger + "/news/other-story": htmlPage(testworld.ArticleHTML(testworld.Page{Title: "Harbor Avenue repaving begins", Site: art.Site, Date: art.Date, Paras: testworld.Background("The Ledger", 8)}))}, nil, nil,
			want{status: pipeline.StatusTooShort, reason: []string{"words of main text"}}},
		{"Cloudflare challenge, the story archived", map[string]http.Handler{path: testworld.Challenges[0]}, nil,
			[]archive.Doc{wholeStory(ledgerURL)},
			want{status: pipeline.StatusUsed, refutes: true,
				textFrom: []string{"the local archive (the site's bot protection refused muse (Cloudflare, HTTP 403))"}}},
	}
	for _, c := range testworld.Challenges {
		rows = append(rows, struct {
			name     string
			pages    map[string]http.Handler
			results  []string
			archived []archive.Doc
			want     want
		}{c.Vendor + " challenge", map[string]http.Handler{path: c}, nil, nil,
			want{status: pipeline.StatusBlocked,
				reason:  []string{fmt.Sprintf("the site's bot protection refused muse (%s, HTTP %d)", c.Vendor, c.Status)},
				summary: []string{fmt.Sprintf("1 more could not be read: the site's bot protection refused muse (HTTP %d)", c.Status)}}})
	}
	for _, row := range rows {
		t.Run(row.name, func(t *testing.T) {
			t.Parallel()
			results := row.results
			if results == nil {
				results = []string{ledgerURL}
			}
			env := wallWorld(t, row.pages, results, row.archived...)
			c, err := env.Check(t, env.Options())
			if err != nil && row.want.refutes {
				t.Fatalf("the check stopped: %v", err)
			}
			faultInvariants(t, c)
			s := c.SourceByURL(results[0])
			if s == nil {
				t.Fatalf("no source for %s", results[0])
			}
			a := c.Account()
			t.Logf("%s: %s (%s) text from %q; %s", row.name, s.Status, s.Reason, s.TextFrom, a.Summary)
			if s.Status != row.want.status {
				t.Errorf("status %s (%s), want %s", s.Status, s.Reason, row.want.status)
			}
			wantContains(t, "reason", s.Reason, row.want.reason...)
			wantContains(t, "text from", s.TextFrom, row.want.textFrom...)
			if len(row.want.textFrom) == 0 && s.TextFrom != "" {
				t.Errorf("text from %q, want the live page", s.TextFrom)
			}
			wantContains(t, "summary", a.Summary, row.want.summary...)
			// What `muse check --json` prints says the same.
			js, err := json.Marshal(c.ForOutput())
			if err != nil {
				t.Fatal(err)
			}
			wantJSON := []string{fmt.Sprintf(`"status":%q`, row.want.status)}
			switch row.want.status {
			case pipeline.StatusPartial:
				wantJSON = append(wantJSON, `"wall":{"kind":`, `"fate":"partial"`)
			case pipeline.StatusBlocked:
				wantJSON = append(wantJSON, `"fate":"blocked"`)
			}
			if len(row.want.textFrom) > 0 {
				wantJSON = append(wantJSON, `"text_from":"`)
			}
			wantContains(t, "the check's JSON", string(js), wantJSON...)
			quoted := false
			for _, e := range c.IncludedEvidence() {
				if e.Kind == pipeline.KindRefutes && strings.Contains(e.Quote, "has not banned bicycles") && c.SourceByURL(e.SourceURL) == s {
					quoted = true
				}
			}
			if quoted != row.want.refutes {
				t.Errorf("refuting sentence quoted from the page: %v, want %v (evidence %+v)", quoted, row.want.refutes, c.Evidence)
			}
			if row.want.refutes {
				if !strings.Contains(strings.Join(c.Correction.URLs, " "), results[0]) {
					t.Errorf("the correction does not cite the story: %q %v", c.Correction.Text, c.Correction.URLs)
				}
				return
			}
			// No readable copy: nothing may say the page was read and
			// found wanting.
			for _, p := range a.Pages {
				if p.URL == s.URL && (p.Fate == pipeline.FateNothing || p.Fate.Judged()) {
					t.Errorf("the page is counted %s: %s", p.Fate, p.Reason)
				}
			}
			if a.Genuine() || strings.Contains(c.Correction.Text, pipeline.NoSourceText) {
				t.Errorf("the correction says no credible source was found: %q", c.Correction.Text)
			}
			if strings.Contains(c.Correction.Text, "2 pages were read") || strings.Contains(a.Summary, "2 pages were read") {
				t.Errorf("the story is counted among the pages read: %q", a.Summary)
			}
		})
	}
}

// TestWallTeaserNotArchived: a paywall teaser is not kept in the local
// archive, where it would stand for the page or replace its whole copy.
func TestWallTeaserNotArchived(t *testing.T) {
	t.Parallel()
	art := testworld.WallArticle
	env := wallWorld(t, map[string]http.Handler{ledger + art.Path: htmlPage(testworld.PaywallTeaserHTML(art, 2, ""))}, []string{ledgerURL},
		wholeStory(ledgerURL))
	env.Pages = nil
	if _, err := env.Check(t, env.Options()); err != nil {
		t.Fatal(err)
	}
	st, err := archive.Open(context.Background(), env.Cfg.ArchivePath())
	if err != nil {
		t.Fatal(err)
	}
	defer st.Close()
	d, err := st.Get(context.Background(), ledgerURL)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(d.Text, testworld.QuoteR1) {
		t.Errorf("the archive's whole copy was replaced by the teaser:\n%s", d.Text)
	}
}

// TestPasteSourceText: the checker reads a page muse could not (behind a
// bot challenge) in their browser and pastes its text into the source; a
// rerun from the sources stage reads that text, the refuting sentence is
// quoted from it, and the source says the text was pasted.
func TestPasteSourceText(t *testing.T) {
	t.Parallel()
	art := testworld.WallArticle
	env := wallWorld(t, map[string]http.Handler{ledger + art.Path: testworld.Challenges[0]}, []string{ledgerURL})
	e, closeFn, err := setup.NewFromConfig(context.Background(), env.Cfg, env.Options())
	if err != nil {
		t.Fatal(err)
	}
	defer closeFn()
	c := e.NewCheck(pipeline.Post{Text: testworld.Post, PostedAt: testworld.Cutoff}, testworld.Cutoff)
	_ = e.Run(context.Background(), c, pipeline.StageImages, nil) // no evidence: the story was refused
	i := slices.IndexFunc(c.Sources, func(s pipeline.Source) bool { return s.URL == ledgerURL })
	if i < 0 || c.Sources[i].Status != pipeline.StatusBlocked {
		t.Fatalf("the story is not blocked: %+v", c.Sources)
	}
	if _, err := c.PasteSourceText(i, "   \n\n ", time.Now()); !errors.Is(err, pipeline.ErrNoText) {
		t.Errorf("an empty paste: %v", err)
	}
	// As a browser copies it: the headline, the byline and date, then
	// the paragraphs one line each.
	pasted := art.Title + "\r\nBy Maria Chen, Springfield Ledger\r\nJanuary 21, 2024 at 8:15 a.m. EST\r\n" + strings.Join(art.Paras, "\r\n")
	from, err := c.PasteSourceText(i, pasted, time.Now())
	if err != nil || from != pipeline.StageSources || c.Stage(pipeline.StageSources).State != pipeline.StateStale {
		t.Fatalf("paste: %v, rerun from %q, sources %s", err, from, c.Stage(pipeline.StageSources).State)
	}
	if err := e.Run(context.Background(), c, from, nil); err != nil {
		t.Fatalf("the rerun stopped: %v", err)
	}
	faultInvariants(t, c)
	s := c.SourceByURL(ledgerURL)
	if s.Published.Format(time.DateOnly) != "2024-01-21" {
		t.Errorf("the pasted text is dated %v, want its dateline's 2024-01-21", s.Published)
	}
	if s.Status != pipeline.StatusUsed || s.TextFrom != pipeline.TextPasted || !strings.Contains(s.Reason, "text pasted by the checker") {
		t.Errorf("after the paste: %s (%s), text from %q", s.Status, s.Reason, s.TextFrom)
	}
	if !slices.ContainsFunc(c.IncludedEvidence(), func(e pipeline.Evidence) bool {
		return e.Kind == pipeline.KindRefutes && e.Quote == testworld.QuoteR1 && e.SourceURL == ledgerURL
	}) {
		t.Errorf("the refuting sentence was not quoted from the pasted text: %+v", c.Evidence)
	}
}
