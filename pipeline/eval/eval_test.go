package eval

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	openai "github.com/sashabaranov/go-openai"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/testworld"
	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/llm"
	"github.com/musecheck/muse/sources/llm/llmtest"
)

// pageFact is a sentence only the cited article carries: the judge double
// rates a correction well only when it is shown it.
const pageFact = "The county water authority tested 48 samples from the river intake and found no contamination above federal limits."

// articleHTML is a news article as a publisher serves it.
func articleHTML(title string, paras ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!DOCTYPE html><html lang="en"><head><meta charset="utf-8"><title>%s</title>
<meta property="og:site_name" content="Valley Ledger"><meta property="article:published_time" content="2023-02-14T10:00:00Z"></head>
<body><header><nav><a href="/">Home</a> <a href="/news">News</a></nav></header><main><article><h1>%s</h1>
<p class="byline">By Dana Ortiz, February 14, 2023</p>`, title, title)
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", p)
	}
	b.WriteString(`</article></main><footer><p>© 2023 Valley Ledger</p></footer></body></html>`)
	return b.String()
}

var filler = []string{
	"Officials from three agencies gathered at the treatment plant on Tuesday morning to explain how the samples were drawn, stored and sent to an accredited laboratory in the state capital.",
	"Residents who attended the briefing asked whether wells on private land were included, and the authority said a separate programme of free tests for private wells would open next week.",
	"The authority publishes each round of results on its website, listing the compounds tested for, the detection limits of each method and the dates on which samples were taken.",
	"Engineers added that the intake was closed for two days as a precaution while the first results were awaited, and that customers were supplied from reserve tanks in that time.",
}

// newsSite serves the article at /news/water-tests and a 404 elsewhere.
func newsSite(t *testing.T) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		switch r.URL.Path {
		case "/robots.txt":
			http.NotFound(w, r)
		case "/news/water-tests":
			w.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(w, articleHTML("River water tests find no contamination", append([]string{pageFact}, filler...)...))
		default:
			http.NotFound(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv
}

// judgeDouble is the world's judge keyed on pageFact.
func judgeDouble(t *testing.T) *llmtest.Server { return testworld.Judge(t, pageFact) }

func client(t *testing.T, srv *llmtest.Server, model string, prices map[string]llm.Price) *llm.Client {
	c, err := llm.New(llm.Config{BaseURL: srv.BaseURL, Model: model, MaxRetries: -1, Prices: prices})
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func loopbackReader() *Reader {
	return &Reader{Fetcher: fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true, Timeout: 5 * time.Second})}
}

var postedAt = time.Date(2023, 2, 15, 9, 0, 0, 0, time.UTC)

func waterPost(id, correction string) Post {
	return Post{ID: id, Post: pipeline.Post{Text: "The toxic spill has already poisoned the river that gives 5 million people their drinking water.", PostedAt: postedAt, Language: "en"},
		Corrections: map[string]string{"notes": correction}}
}

// TestJudgeSeesCitedPages: the judge is shown the text of the pages a
// correction cites, read now through the safe fetcher; a correction whose
// page cannot be read is judged without it (and scores as the judge
// double scores an unsupported correction).
func TestJudgeSeesCitedPages(t *testing.T) {
	site := newsSite(t)
	judge := &Judge{Client: client(t, judgeDouble(t), "judge-model", nil)}
	good := fmt.Sprintf("This post is misleading: \"%s\" %s/news/water-tests", pageFact, site.URL)
	bad := fmt.Sprintf("This post is misleading: tests found nothing. %s/news/gone", site.URL)
	posts := []Post{waterPost("1", good), waterPost("2", bad)}
	var out bytes.Buffer
	rs, err := Run(context.Background(), posts, Options{Systems: []System{&Given{SystemName: "notes"}}, Judge: judge, Reader: loopbackReader()}, &out)
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]Result{}
	for _, r := range rs {
		by[r.PostID] = r
	}
	g, b := by["1"], by["2"]
	if g.Judge == nil || b.Judge == nil {
		t.Fatalf("not judged: %+v / %+v", g, b)
	}
	if g.Judge.Scores[prompts.Overall] != 8 || g.Judge.References[0]["reference_relevance"] != 1 || g.Judge.References[0]["reachability"] != 1 {
		t.Errorf("the judge was not shown the cited page: %+v", g.Judge)
	}
	if b.Judge.Scores[prompts.Overall] != 3 || b.Judge.References[0]["reachability"] != 0 {
		t.Errorf("unreadable page judged as read: %+v", b.Judge)
	}
	if _, ok := b.Judge.References[0]["reference_relevance"]; ok {
		t.Errorf("Cant Determine scored: %+v", b.Judge.References[0])
	}
	gl, bl := g.Measures.Links[0], b.Measures.Links[0]
	// A loopback address with a port is no valid link by X's pattern.
	if !gl.Page.Reachable || !gl.EvidencePage || gl.ValidByX || bl.Page.Reachable || bl.Page.Status != 404 || bl.EvidencePage {
		t.Errorf("links: %+v %+v / %+v %+v", gl, gl.Page, bl, bl.Page)
	}
	if g.Measures.Quotes != 1 || g.Measures.QuotesVerified != 1 || !g.Measures.QuotesChecked {
		t.Errorf("quote on the page not verified: %+v", g.Measures)
	}
	if g.Measures.LanguageOK == nil || !*g.Measures.LanguageOK {
		t.Errorf("English correction of an English post: %+v", g.Measures)
	}
	if n := strings.Count(out.String(), "\n"); n != 2 {
		t.Errorf("%d result lines, want 2:\n%s", n, out.String())
	}
}

// archiveOf is a local archive holding pages by URL.
type archiveOf map[string]string

func (a archiveOf) Lookup(_ context.Context, u string) (pipeline.ArchivedPage, bool) {
	t, ok := a[u]
	return pipeline.ArchivedPage{URL: u, Text: t}, ok
}

// TestArchivedCopyOfAGonePage: a cited page gone now is not reachable, but
// the archive's copy of it is shown to the judge, said to be a copy.
func TestArchivedCopyOfAGonePage(t *testing.T) {
	site := newsSite(t)
	gone := site.URL + "/news/gone"
	var judged string
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		judged = llmtest.AllText(req)
		return `{"overall":6,"references":[{"n":1,"reachability":"No","reference_relevance":"Yes","credibility":"High"}]}`, nil
	})
	reader := loopbackReader()
	reader.Archive = archiveOf{gone: pageFact + " " + strings.Join(filler, " ")}
	rs, err := Run(context.Background(), []Post{waterPost("1", "This post is misleading. "+gone)},
		Options{Systems: []System{&Given{SystemName: "notes"}}, Judge: &Judge{Client: client(t, srv, "judge-model", nil)}, Reader: reader}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	l := rs[0].Measures.Links[0]
	if l.Page.Reachable || !l.Page.Archived || !l.EvidencePage {
		t.Errorf("gone page with an archived copy: %+v", l.Page)
	}
	if !strings.Contains(judged, pageFact) || !strings.Contains(judged, "this is an archived copy of what it said") {
		t.Errorf("the judge was not shown the archived copy as one:\n%s", judged)
	}
}

func TestMeasuresWithoutAModel(t *testing.T) {
	text := "This post is false. See https://www.reuters.com/world/us/some-story-2023-02-14/ and https://bad_host/x"
	m, _ := Measure(context.Background(), Output{Text: text, URLs: CitedURLs(text), Language: "en"}, nil, nil)
	if len(m.Links) != 2 || !m.Links[0].ValidByX || m.Links[1].ValidByX {
		t.Errorf("X's pattern: %+v", m.Links)
	}
	if m.Links[0].Page != nil {
		t.Error("fetched without a reader")
	}
	quoted := `This post is false: officials said "no samples showed contamination above the limits" on Tuesday.`
	if m, _ := Measure(context.Background(), Output{Text: quoted}, nil, nil); m.Quotes != 1 || m.QuotesChecked {
		t.Errorf("a quote with no page to look in: %+v", m)
	} else if _, ok := Values(Result{Status: StatusDone, Measures: &m})["m_quotes"]; ok {
		t.Error("a quote no page was read for was scored")
	}
	// Each link counts 1: 47 characters of text and two links.
	if want := len([]rune("This post is false. See  and ")) + 2; m.NoteLength != want || !m.WithinLimit {
		t.Errorf("note length %d, want %d", m.NoteLength, want)
	}
	long := strings.Repeat("word ", 60) + "https://example.org/" + strings.Repeat("x", 400)
	if m, _ := Measure(context.Background(), Output{Text: long}, nil, nil); m.WithinLimit {
		t.Errorf("300 characters of text fit a note: %d", m.NoteLength)
	}
	for u, want := range map[string]bool{"https://apnews.com/article/x": true, "http://a.b": false, "https://x.com/": true, "https://192.168.1.1/x": false} {
		if ValidByX(u) != want {
			t.Errorf("ValidByX(%q) = %v", u, !want)
		}
	}
	es := "Esta publicación es engañosa: las pruebas del agua del río no encontraron contaminación por encima de los límites federales."
	m, _ = Measure(context.Background(), Output{Text: es, Language: "en"}, nil, nil)
	if m.LanguageOK == nil || *m.LanguageOK || m.Language != "es" {
		t.Errorf("a Spanish correction asked in English: %+v", m)
	}
}

func TestMatchGold(t *testing.T) {
	gold := []string{"https://web.archive.org/web/20201020/https://www.cdc.gov/flu/about/index.html", "https://example.org/a"}
	if g := MatchGold([]string{"https://cdc.gov/flu/about/index.html/"}, gold); !g.URLHit || !g.DomainHit {
		t.Errorf("same page: %+v", g)
	}
	if g := MatchGold([]string{"https://news.cdc.gov/other"}, gold); g.URLHit || !g.DomainHit {
		t.Errorf("same domain: %+v", g)
	}
	if g := MatchGold([]string{"https://who.int/flu"}, gold); g.URLHit || g.DomainHit {
		t.Errorf("another domain: %+v", g)
	}
}

// modelDouble is a model asked for the baseline's correction: it answers
// "This post is …" citing the news site, after waiting for release when
// set.
func modelDouble(t *testing.T, site string, calls *atomic.Int32) *llmtest.Server {
	return llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		calls.Add(1)
		if !strings.Contains(llmtest.AllText(req), `should start with "This post is"`) {
			return "", errors.New("not the baseline prompt")
		}
		return "This post is misleading: the water tests found no contamination. " + site + "/news/water-tests", nil
	})
}

// TestRunResumesAfterAKill: a run killed part way (its last line cut
// mid-write, as kill -9 leaves it) resumes from the results file: every
// post and system is scored once in the end, and the report counts each
// once.
func TestRunResumesAfterAKill(t *testing.T) {
	site := newsSite(t)
	var calls atomic.Int32
	model := &ModelAlone{SystemName: "model-alone", Client: client(t, modelDouble(t, site.URL, &calls), "test-model", nil)}
	systems := []System{model, &Given{SystemName: "notes"}}
	var posts []Post
	for i := range 10 {
		posts = append(posts, waterPost(fmt.Sprint(i), fmt.Sprintf("Note %d: the tests found nothing. %s/news/water-tests", i, site.URL)))
	}
	path := filepath.Join(t.TempDir(), "results.jsonl")
	f, err := OpenResults(path)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	w := &cancelAfter{w: f, n: 7, cancel: cancel}
	_, err = Run(ctx, posts, Options{Systems: systems, Reader: loopbackReader(), Parallel: 2}, w)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("first run: %v", err)
	}
	f.WriteString(`{"post_id":"9","system":"notes","status":"do`) // cut by the kill
	f.Close()
	first, err := ReadResults(path)
	if err != nil {
		t.Fatal(err)
	}
	done := map[string]bool{}
	for _, r := range first {
		if r.Status == StatusDone {
			done[r.Key()] = true
		}
	}
	if len(done) < 7 || len(done) >= 20 {
		t.Fatalf("%d done after the kill, want 7 to 19", len(done))
	}
	f, err = OpenResults(path)
	if err != nil {
		t.Fatal(err)
	}
	before := calls.Load()
	_, err = Run(context.Background(), posts, Options{Systems: systems, Reader: loopbackReader(), Done: done}, f)
	f.Close()
	if err != nil {
		t.Fatal(err)
	}
	all, _ := ReadResults(path)
	latest := Latest(all)
	if len(latest) != 20 {
		t.Fatalf("%d results after resuming, want 20", len(latest))
	}
	for _, r := range latest {
		if r.Status != StatusDone {
			t.Errorf("%s: %s %s", r.Key(), r.Status, r.Error)
		}
	}
	modelDone := 0
	for k := range done {
		if strings.HasSuffix(k, "model-alone") {
			modelDone++
		}
	}
	if got := int(calls.Load() - before); got != 10-modelDone {
		t.Errorf("the resumed run asked the model %d times, want %d (the posts not done)", got, 10-modelDone)
	}
	s := Summarise(all)
	for _, ss := range s.Systems {
		if ss.Posts != 10 || ss.Metrics["m_reachable"].Mean != 1 {
			t.Errorf("%s: %d posts, reachable %.2f", ss.Name, ss.Posts, ss.Metrics["m_reachable"].Mean)
		}
	}
}

// cancelAfter cancels the run once n lines are written.
type cancelAfter struct {
	w      interface{ Write([]byte) (int, error) }
	n      int
	cancel func()
}

func (c *cancelAfter) Write(b []byte) (int, error) {
	n, err := c.w.Write(b)
	if c.n--; c.n == 0 {
		c.cancel()
	}
	return n, err
}

// TestSpendCap: the run's cap stops the model calls that would pass it and
// every item after; what was done is kept.
func TestSpendCap(t *testing.T) {
	site := newsSite(t)
	var calls atomic.Int32
	prices := map[string]llm.Price{"test-model": {PromptPerMTok: 1000, CompletionPerMTok: 1000}}
	model := &ModelAlone{SystemName: "model-alone", Client: client(t, modelDouble(t, site.URL, &calls), "test-model", prices)}
	var posts []Post
	for i := range 20 {
		posts = append(posts, waterPost(fmt.Sprint(i), ""))
	}
	// One call's real cost, then a cap that leaves room for the estimate
	// of one more call (the guard's upper bound) plus about three calls.
	one, err := Run(context.Background(), posts[:1], Options{Systems: []System{model}}, &bytes.Buffer{})
	if err != nil || one[0].CostUSD <= 0 {
		t.Fatalf("one call: %v %+v", err, one)
	}
	calls.Store(0)
	est := model.Client.Estimate(llm.Request{Messages: mustBaseline(t, posts[0])})
	capUSD := est + 3.5*one[0].CostUSD
	rs, err := Run(context.Background(), posts, Options{Systems: []System{model}, Parallel: 1, SpendCapUSD: capUSD}, &bytes.Buffer{})
	if !errors.Is(err, ErrSpendCap) {
		t.Fatalf("err %v, want the spend cap", err)
	}
	if n := int(calls.Load()); n < 3 || n > 4 {
		t.Errorf("%d model calls under a cap with room for 3.5 calls", n)
	}
	spent := 0.0
	for _, r := range rs {
		spent += r.CostUSD
	}
	if spent > capUSD {
		t.Errorf("spent $%.4f, over the cap of $%.4f", spent, capUSD)
	}
}

func mustBaseline(t *testing.T, p Post) []llm.Message {
	m, err := prompts.Baseline(prompts.Post{Text: p.Post.Text, PostedAt: p.Post.PostedAt})
	if err != nil {
		t.Fatal(err)
	}
	return m
}

func TestReadPosts(t *testing.T) {
	dir := t.TempDir()
	jl := filepath.Join(dir, "p.jsonl")
	os.WriteFile(jl, []byte(`{"id":"a","text":"The river is poisoned.","posted_at":"2023-02-15","corrections":{"notes":"No, it is not."}}`+"\n\n"+
		`{"text":"Second post","posted_at":"2023-02-16T10:00:00Z"}`+"\n"), 0o644)
	ps, err := ReadPosts(jl)
	if err != nil || len(ps) != 2 || ps[0].ID != "a" || ps[0].Corrections["notes"] != "No, it is not." || ps[1].ID != "3" || ps[1].Post.PostedAt.Hour() != 10 {
		t.Fatalf("JSONL: %v %+v", err, ps)
	}
	csvPath := filepath.Join(dir, "p.csv")
	os.WriteFile(csvPath, []byte("id,text,posted_at,correction:people\nx1,\"A post, with a comma\",2023-02-15,\"A note.\"\nx2,Another,2023-02-16,\n"), 0o644)
	ps, err = ReadPosts(csvPath)
	if err != nil || len(ps) != 2 || ps[0].Post.Text != "A post, with a comma" || ps[0].Corrections["people"] != "A note." || ps[1].Corrections != nil {
		t.Fatalf("CSV: %v %+v", err, ps)
	}
	av := filepath.Join(dir, "dev.json")
	os.WriteFile(av, []byte(`[{"claim":"Masks do not work.","label":"Refuted","claim_date":"31-10-2020","questions":[{"answers":[{"source_url":"https://www.cdc.gov/x"},{"source_url":""}]}]},
{"claim":"Second.","label":"Supported","claim_date":"9-10-2020"}]`), 0o644)
	ps, err = ReadPosts(av)
	if err != nil || len(ps) != 2 || ps[1].Post.PostedAt.Day() != 9 || ps[0].GoldLabel != "Refuted" || len(ps[0].GoldURLs) != 1 || !ps[0].Post.PostedAt.Equal(time.Date(2020, 10, 31, 0, 0, 0, 0, time.UTC)) {
		t.Fatalf("AVeriTeC: %v %+v", err, ps)
	}
	os.WriteFile(jl, []byte(`{"id":"a","text":"x","posted_at":"yesterday-ish"}`), 0o644)
	if _, err := ReadPosts(jl); err == nil {
		t.Error("a bad posted_at was accepted")
	}
}

func TestResultsJSONHasNoNaN(t *testing.T) {
	rs := []Result{{PostID: "1", System: "a", Status: StatusDone, Measures: &Measures{}}, {PostID: "1", System: "b", Status: StatusDone, Measures: &Measures{}}}
	if _, err := json.Marshal(Summarise(rs)); err != nil {
		t.Fatal(err)
	}
}

// TestAVeriTeCLabelWithAJudge: with a judge, the verdict the correction
// reaches is read by it and scored against the gold label.
func TestAVeriTeCLabelWithAJudge(t *testing.T) {
	srv := llmtest.NewServer(t, func(req openai.ChatCompletionRequest) (string, error) {
		if llmtest.SchemaName(req) == "verdict" {
			if strings.Contains(llmtest.AllText(req), "is false") {
				return `{"verdict":"Refuted"}`, nil
			}
			return `{"verdict":"Supported"}`, nil
		}
		return `{"overall":5,"references":[]}`, nil
	})
	mk := func(id, label, correction string) Post {
		return Post{ID: id, Post: pipeline.Post{Text: "Masks do not work.", PostedAt: postedAt}, GoldLabel: label,
			GoldURLs: []string{"https://www.cdc.gov/x"}, Corrections: map[string]string{"notes": correction}}
	}
	posts := []Post{mk("1", "Refuted", "This claim is false: https://www.cdc.gov/x"), mk("2", "Refuted", "This is right."), mk("3", "Supported", "This is right.")}
	rs, err := Run(context.Background(), posts, Options{Systems: []System{&Given{SystemName: "notes"}}, Judge: &Judge{Client: client(t, srv, "judge-model", nil)}}, &bytes.Buffer{})
	if err != nil {
		t.Fatal(err)
	}
	s := Summarise(rs)
	if iv := s.Systems[0].Metrics["m_gold_label"]; iv.N != 3 || math.Abs(iv.Mean-2.0/3) > 1e-9 {
		t.Errorf("label accuracy %+v, want 2 of 3", iv)
	}
	if iv := s.Systems[0].Metrics["m_gold_url"]; iv.Mean != 1.0/3 {
		t.Errorf("gold URL %+v, want 1 of 3", iv)
	}
}
