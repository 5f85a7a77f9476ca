package cases

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"html"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"path/filepath"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/pgdb"
)

// web is a loopback web whose pages a test changes: every host name
// resolves to one httptest server, which answers with an ETag and
// Last-Modified and honours If-None-Match with 304 Not Modified.
type web struct {
	srv      *httptest.Server
	mu       sync.Mutex
	pages    map[string]string // by host+path; absent: 404
	gone     map[string]int    // status to answer instead (410…)
	moved    map[string]string // redirect to
	requests atomic.Int64
	notMod   atomic.Int64
	inFlight map[string]int
	maxHost  map[string]int // most requests in flight to one host at once
	delay    time.Duration
}

func newWeb(t testing.TB) *web {
	w := &web{pages: map[string]string{}, gone: map[string]int{}, moved: map[string]string{}, inFlight: map[string]int{}, maxHost: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(w.serve))
	t.Cleanup(w.srv.Close)
	return w
}

var lastModified = time.Date(2024, 3, 1, 8, 0, 0, 0, time.UTC).Format(http.TimeFormat)

func (w *web) serve(rw http.ResponseWriter, r *http.Request) {
	w.requests.Add(1)
	host, _, _ := net.SplitHostPort(r.Host)
	key := host + r.URL.Path
	w.mu.Lock()
	w.inFlight[host]++
	w.maxHost[host] = max(w.maxHost[host], w.inFlight[host])
	body, ok := w.pages[key]
	code, to := w.gone[key], w.moved[key]
	delay := w.delay
	w.mu.Unlock()
	defer func() {
		w.mu.Lock()
		w.inFlight[host]--
		w.mu.Unlock()
	}()
	if delay > 0 {
		time.Sleep(delay)
	}
	switch {
	case to != "":
		http.Redirect(rw, r, to, http.StatusMovedPermanently)
		return
	case code != 0:
		http.Error(rw, http.StatusText(code), code)
		return
	case !ok:
		http.NotFound(rw, r)
		return
	}
	sum := sha256.Sum256([]byte(body))
	etag := `"` + hex.EncodeToString(sum[:8]) + `"`
	rw.Header().Set("ETag", etag)
	rw.Header().Set("Last-Modified", lastModified)
	if r.Header.Get("If-None-Match") == etag {
		w.notMod.Add(1)
		rw.WriteHeader(http.StatusNotModified)
		return
	}
	rw.Header().Set("Content-Type", "text/html; charset=utf-8")
	fmt.Fprint(rw, body)
}

func (w *web) set(host, path, body string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pages[host+path] = body
}

func (w *web) setGone(host, path string, code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.gone[host+path] = code
}

func (w *web) url(host, path string) string {
	_, port, _ := net.SplitHostPort(w.srv.Listener.Addr().String())
	return "http://" + host + ":" + port + path
}

// fetcher reads the web through the safe fetcher, every name resolving to
// the loopback server, with store (the archive) for conditional requests.
func (w *web) fetcher(store fetch.Store) *fetch.Fetcher {
	return fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true, Store: store,
		LookupIP: func(context.Context, string) ([]netip.Addr, error) {
			return []netip.Addr{netip.MustParseAddr("127.0.0.1")}, nil
		}})
}

// article is a realistic news page: title, publication date, byline and
// paragraphs (extra ones after the body, such as a correction notice).
func article(title, date string, paras ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s | The Daily Record</title>
<meta property="og:title" content="%s"><meta property="article:published_time" content="%sT09:00:00Z">
</head><body><header><nav><a href="/">Home</a> <a href="/news">News</a> <a href="/sport">Sport</a></nav></header>
<main><article><h1>%s</h1><p class="byline">By Ana Ruiz, City Hall reporter</p><time datetime="%s">%s</time>
`, html.EscapeString(title), html.EscapeString(title), date, html.EscapeString(title), date, date)
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
	}
	b.WriteString(`</article></main><footer><p>© 2024 The Daily Record. All rights reserved.</p></footer></body></html>`)
	return b.String()
}

var councilParas = []string{
	"The city council voted 7-2 on Tuesday to approve a network of protected cycle lanes on six of the city's busiest streets.",
	"Council member Dana Hill said the plan \"does not ban anyone from riding anywhere\" and would be finished by the end of next year.",
	"The plan, which costs $4.2 million, was first proposed in 2022 after a rise in collisions involving cyclists on Main Street.",
	"Opponents argued that the lanes would remove about 300 parking spaces, a figure the city's transport office disputed.",
	"The transport office said construction would begin in the spring, starting with Main Street and River Road.",
}

// makeCase is a case as the engine leaves one: its cited pages read
// through f (so the archive keeps their validators), extracted, quoted,
// and kept as snapshots.
func makeCase(t *testing.T, st *Store, f *fetch.Fetcher, created time.Time, quotes map[string]string) *pipeline.Check {
	t.Helper()
	ctx := context.Background()
	c := &pipeline.Check{CreatedAt: created, Post: pipeline.Post{Text: "The council banned bicycles on every street", URL: "https://x.com/a/status/1"}}
	var urls []string
	for u := range quotes {
		urls = append(urls, u)
	}
	for _, u := range urls {
		p, err := f.Fetch(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		a, err := extract.Options{}.ExtractContent(p.Raw, p.ContentType, p.FinalURL)
		if err != nil {
			t.Fatal(err)
		}
		if !pipeline.LocateQuote(quotes[u], a.Text).Verified {
			t.Fatalf("the quote %q is not on %s as extracted:\n%s", quotes[u], u, a.Text)
		}
		c.Sources = append(c.Sources, pipeline.Source{URL: u, FinalURL: p.FinalURL, Title: a.Title, Published: a.Published,
			Paragraphs: a.Paragraphs, Status: pipeline.StatusUsed, FetchedAt: p.FetchedAt})
		c.Evidence = append(c.Evidence, pipeline.Evidence{SourceURL: u, Quote: quotes[u], Kind: pipeline.KindRefutes, Verified: true, Included: true})
		c.Correction.URLs = append(c.Correction.URLs, u)
	}
	c.Correction.Text = "False: the council approved cycle lanes; it banned no one from riding. " + strings.Join(urls, " ")
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i, u := range urls {
		p, _ := f.Fetch(ctx, u) // a 304: the archived page
		if err := st.SaveSnapshot(ctx, c.ID, u, p.FinalURL, p.FetchedAt, strings.Join(c.Sources[i].Paragraphs, "\n\n"), p.Raw); err != nil {
			t.Fatal(err)
		}
	}
	return c
}

func TestRecheckFindsChangedEvidence(t *testing.T) { engines(t, testRecheck) }

func testRecheck(t *testing.T, loc string) {
	ctx := context.Background()
	st := openT(t, loc)
	archPath := loc
	if !pgdb.IsURL(loc) {
		archPath = filepath.Join(filepath.Dir(loc), "archive.db")
	}
	arch, err := archive.Open(ctx, archPath)
	if err != nil {
		t.Fatal(err)
	}
	defer arch.Close()
	w := newWeb(t)
	f := w.fetcher(arch)
	defer f.CloseIdleConnections()

	const date = "2024-03-01"
	title := "Council approves protected cycle lanes on six streets"
	for _, h := range []string{"stable.test", "gone.test", "edited.test", "corrected.test", "typo.test"} {
		w.set(h, "/council", article(title, date, councilParas...))
	}
	quote := "Council member Dana Hill said the plan \"does not ban anyone from riding anywhere\" and would be finished by the end of next year."
	day := time.Date(2024, 3, 2, 0, 0, 0, 0, time.UTC)
	caseGone := makeCase(t, st, f, day, map[string]string{w.url("stable.test", "/council"): councilParas[0], w.url("gone.test", "/council"): quote})
	caseEdited := makeCase(t, st, f, day.Add(time.Hour), map[string]string{w.url("edited.test", "/council"): quote})
	caseCorrected := makeCase(t, st, f, day.Add(2*time.Hour), map[string]string{w.url("corrected.test", "/council"): councilParas[2]})
	caseSame := makeCase(t, st, f, day.Add(3*time.Hour), map[string]string{w.url("typo.test", "/council"): quote, w.url("stable.test", "/council"): councilParas[0]})

	// The web changes after the cases were made.
	w.setGone("gone.test", "/council", http.StatusGone)
	edited := append([]string(nil), councilParas...)
	edited[1] = "Council member Dana Hill said the plan would restrict riding on some streets and would be finished by the end of next year."
	w.set("edited.test", "/council", article(title, date, edited...))
	corrected := append(append([]string(nil), councilParas...),
		"Correction: An earlier version of this story misstated the cost of the plan. It is $2.4 million, not $4.2 million.")
	w.set("corrected.test", "/council", article(title, date, corrected...))
	// Only the form of the quoted passage changes: curly quotes, a
	// non-breaking space, capitals. Not a change of the evidence.
	typo := append([]string(nil), councilParas...)
	typo[1] = "Council member Dana Hill said the plan “Does not ban anyone from riding\u00a0anywhere” and would be finished by the end of next year."
	w.set("typo.test", "/council", article(title, date, typo...))

	notModBefore := w.notMod.Load()
	ids := []string{caseGone.ID, caseEdited.ID, caseCorrected.ID, caseSame.ID}
	res, stats, err := st.Recheck(ctx, ids, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	by := map[string]CaseRecheck{}
	for _, r := range res {
		by[r.ID] = r
	}
	page := func(id, host string) PageRecheck {
		for _, p := range by[id].Pages {
			if strings.Contains(p.URL, host) {
				return p
			}
		}
		t.Fatalf("case %s: no recheck of %s in %+v", id, host, by[id])
		return PageRecheck{}
	}
	if p := page(caseGone.ID, "gone.test"); len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "gone: HTTP 410") || p.Status != 410 {
		t.Errorf("a page now 410 Gone: %+v", p)
	}
	if p := page(caseGone.ID, "stable.test"); len(p.Reasons) != 0 || !p.NotModified || p.Status != http.StatusNotModified {
		t.Errorf("an unchanged page, asked with its ETag: %+v", p)
	}
	if p := page(caseEdited.ID, "edited.test"); len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "is no longer on the page") {
		t.Errorf("the quoted passage edited: %+v", p)
	}
	if p := page(caseCorrected.ID, "corrected.test"); len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "a notice was added: “Correction: An earlier version") {
		t.Errorf("a correction notice added: %+v", p)
	}
	// Each reason reads back as its kind.
	for _, c := range []struct{ id, host, kind, label string }{
		{caseGone.ID, "gone.test", FindingGone, "gone (410)"},
		{caseEdited.ID, "edited.test", FindingQuoteLost, FindingQuoteLost},
		{caseCorrected.ID, "corrected.test", FindingNotice, FindingNotice},
	} {
		p := page(c.id, c.host)
		if fs := p.Findings(); len(fs) != 1 || fs[0].Kind != c.kind || fs[0].Label(p.Status) != c.label || fs[0].Text != p.Reasons[0] {
			t.Errorf("%s: findings %+v, want one %q labelled %q", c.host, fs, c.kind, c.label)
		}
	}
	if p := page(caseSame.ID, "typo.test"); len(p.Reasons) != 0 || p.NotModified {
		t.Errorf("the quoted passage changed only in form: %+v", p)
	}
	for id, want := range map[string]bool{caseGone.ID: true, caseEdited.ID: true, caseCorrected.ID: true, caseSame.ID: false} {
		if by[id].Changed() != want || by[id].Draft != want {
			t.Errorf("case %s: changed %v, draft %v; want %v", id, by[id].Changed(), by[id].Draft, want)
		}
	}
	// stable.test is cited by two cases and read once; it and nothing
	// else answered 304.
	if stats.Pages != 5 || stats.NotModified != 1 || w.notMod.Load()-notModBefore != 1 || stats.Changed != 3 || stats.Cases != 4 {
		t.Errorf("stats %+v, server 304s %d", stats, w.notMod.Load()-notModBefore)
	}

	// The case list shows the changed cases first, marked.
	list, err := st.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 4 || list[3].ID != caseSame.ID || list[3].EvidenceChanged != 0 || list[3].RecheckedAt.IsZero() {
		t.Fatalf("list: %+v", list)
	}
	for _, sm := range list[:3] {
		if sm.EvidenceChanged != 1 {
			t.Errorf("case %s listed with %d changed pages, want 1", sm.ID, sm.EvidenceChanged)
		}
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, list); err != nil {
		t.Fatal(err)
	}
	if strings.Count(buf.String(), "CHANGED 1") != 3 {
		t.Errorf("table:\n%s", buf.String())
	}

	// The revision draft says which citation broke.
	ds, err := st.Drafts(ctx, caseGone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 1 || !strings.Contains(ds[0].Text, w.url("gone.test", "/council")+": gone: HTTP 410") ||
		strings.Contains(ds[0].Text, w.url("stable.test", "/council")+":") || !strings.HasPrefix(ds[0].Text, caseGone.Correction.Text) {
		t.Errorf("revision draft: %+v", ds)
	}

	// A second recheck finds the same: no second draft; the unchanged
	// pages, the typo page among them now, cost a 304 each.
	notModBefore = w.notMod.Load()
	_, stats, err = st.Recheck(ctx, ids, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if stats.NotModified != 4 || w.notMod.Load()-notModBefore != 4 || stats.Changed != 3 {
		t.Errorf("second recheck: %+v", stats)
	}
	if ds, _ := st.Drafts(ctx, caseGone.ID); len(ds) != 1 {
		t.Errorf("the same change drafted again: %d drafts", len(ds))
	}

	// A page that cannot be read now (503) neither clears nor changes what
	// its last reading found.
	w.setGone("gone.test", "/council", http.StatusServiceUnavailable)
	res, stats, err = st.Recheck(ctx, []string{caseGone.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	by[caseGone.ID] = res[0]
	if p := page(caseGone.ID, "gone.test"); p.Error == "" || len(p.Reasons) != 1 || !strings.Contains(p.Reasons[0], "410") ||
		!res[0].Changed() || res[0].Draft || stats.Failed != 1 {
		t.Errorf("a 503 after a 410: %+v, %+v", res[0], stats)
	}
	w.setGone("gone.test", "/council", http.StatusGone)

	// The checker accepts the revision: the case leaves the top of the list.
	if err := st.AcceptRevision(ctx, caseGone.ID, ""); err != nil {
		t.Fatal(err)
	}
	if err := st.AcceptRevision(ctx, caseSame.ID, ""); err == nil {
		t.Error("accepted a revision of a case whose evidence did not change")
	}
	got, err := st.Get(ctx, caseGone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if !got.Correction.Edited || !strings.Contains(got.Correction.Text, "gone: HTTP 410") {
		t.Errorf("accepted correction: %+v", got.Correction)
	}
	trail, err := st.Trail(ctx, caseGone.ID)
	if err != nil {
		t.Fatal(err)
	}
	if e := trail[len(trail)-1]; e.Action != ActionRevised || !strings.Contains(e.Detail, "(cited pages changed: 1)") {
		t.Errorf("the acceptance is not the trail's last entry: %+v", trail)
	}
	list, _ = st.List(ctx, ListOptions{})
	for _, sm := range list {
		if sm.ID == caseGone.ID && sm.EvidenceChanged != 0 {
			t.Errorf("accepted case still marked: %+v", sm)
		}
	}
	if list[0].ID == caseGone.ID || list[0].EvidenceChanged != 1 {
		t.Errorf("list after accepting: %+v", list)
	}
	// A later recheck that finds something else marks it again.
	w.setGone("stable.test", "/council", http.StatusNotFound)
	res, _, err = st.Recheck(ctx, []string{caseGone.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if !res[0].Changed() || !res[0].Draft {
		t.Errorf("a new change after acceptance: %+v", res[0])
	}
}

// TestRecheckRedirectElsewhere: a cited page that now redirects to
// another page is a change; one that redirects to itself (http→https,
// a trailing slash) is not.
func TestRecheckRedirectElsewhere(t *testing.T) {
	ctx := context.Background()
	st := openT(t, filepath.Join(t.TempDir(), "cases.db"))
	w := newWeb(t)
	f := w.fetcher(nil)
	w.set("a.test", "/story", article("Council approves cycle lanes", "2024-03-01", councilParas...))
	w.set("a.test", "/home", article("Home page of The Daily Record", "2024-05-01", "Today's top stories from around the city and beyond, updated through the day by our newsroom staff."))
	c := makeCase(t, st, f, time.Now(), map[string]string{w.url("a.test", "/story"): councilParas[0]})
	w.mu.Lock()
	w.moved["a.test/story"] = "/home"
	w.mu.Unlock()
	res, _, err := st.Recheck(ctx, []string{c.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	rs := res[0].Pages[0].Reasons
	if len(rs) == 0 || !strings.Contains(rs[0], "now leads elsewhere: "+w.url("a.test", "/home")) {
		t.Errorf("redirected to the home page: %+v", res[0])
	}
}

// TestRecheckTitleAndDate: a cited page whose headline or publication date
// changed is a change; the quoted passage is still there.
func TestRecheckTitleAndDate(t *testing.T) {
	ctx := context.Background()
	st := openT(t, filepath.Join(t.TempDir(), "cases.db"))
	w := newWeb(t)
	f := w.fetcher(nil)
	w.set("a.test", "/story", article("Council approves cycle lanes", "2024-03-01", councilParas...))
	c := makeCase(t, st, f, time.Now(), map[string]string{w.url("a.test", "/story"): councilParas[0]})
	w.set("a.test", "/story", article("Council scraps cycle lanes after outcry", "2024-04-15",
		append([]string{"Updated: April 15, 2024 at 10:02 a.m. ET"}, councilParas...)...))
	res, _, err := st.Recheck(ctx, []string{c.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	rs := strings.Join(res[0].Pages[0].Reasons, "\n")
	if !strings.Contains(rs, "the title changed: “Council approves cycle lanes") || !strings.Contains(rs, "→ “Council scraps cycle lanes after outcry”") ||
		!strings.Contains(rs, "the date changed: 2024-03-01 → 2024-04-15") || strings.Contains(rs, "passage") || strings.Contains(rs, "notice") {
		t.Errorf("reasons:\n%s", rs)
	}
}

func TestIsNotice(t *testing.T) {
	for par, want := range map[string]bool{
		"Correction: An earlier version of this story misstated the cost of the plan.":                true,
		"CORRECTION (March 3, 2024): The vote was 7-2, not 6-3 as first reported.":                    true,
		"Editor’s note: This article has been updated to include a response from the mayor's office.": true,
		"Update, 5 p.m.: The council has postponed the second vote until next week.":                  true,
		"Clarification — The plan covers six streets, not the whole city centre.":                     true,
		"Updated: April 15, 2024 at 10:02 a.m. ET":                                                    false,
		"Update: Mon, Dec 5 2026 15:45 GMT":                                                           false,
		"The correction was issued by the council on Tuesday after residents complained.":             false,
	} {
		if got := isNotice(par); got != want {
			t.Errorf("isNotice(%q) = %v, want %v", par, got, want)
		}
	}
}

// TestRecheckNoticeNeedsABaseline: a page the case links but kept no text
// of (a fact-check the checker added to the correction, never read by the
// check) is not said to have gained the notice it carries: it may have
// carried it all along. Against a snapshot kept as raw HTML alone, an
// added notice is still found.
func TestRecheckNoticeNeedsABaseline(t *testing.T) {
	ctx := context.Background()
	st := openT(t, filepath.Join(t.TempDir(), "cases.db"))
	w := newWeb(t)
	f := w.fetcher(nil)
	w.set("a.test", "/story", article("Council approves cycle lanes", "2024-03-01", councilParas...))
	notice := "Correction: An earlier version of this story misstated the cost of the plan. It is $2.4 million, not $4.2 million."
	w.set("b.test", "/factcheck", article("No, the council did not ban bicycles", "2024-03-02",
		append(append([]string{}, councilParas[1:3]...), notice)...))
	c := makeCase(t, st, f, time.Now(), map[string]string{w.url("a.test", "/story"): councilParas[0]})
	linked := w.url("b.test", "/factcheck")
	c.Correction.URLs = append(c.Correction.URLs, linked)
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	res, _, err := st.Recheck(ctx, []string{c.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range res[0].Pages {
		if len(p.Reasons) > 0 {
			t.Errorf("%s: %q, want no change: nothing was kept to compare the notice with", p.URL, p.Reasons)
		}
	}
	// A snapshot of raw HTML alone (no text kept): the notice is compared
	// with the page as it was.
	p, err := f.Fetch(ctx, linked)
	if err != nil {
		t.Fatal(err)
	}
	w.set("b.test", "/factcheck", article("No, the council did not ban bicycles", "2024-03-02", councilParas[1:3]...))
	was, _ := f.Fetch(ctx, linked)
	if err := st.SaveSnapshot(ctx, c.ID, linked, was.FinalURL, was.FetchedAt, "", was.Raw); err != nil {
		t.Fatal(err)
	}
	w.set("b.test", "/factcheck", string(p.Raw))
	res, _, err = st.Recheck(ctx, []string{c.ID}, RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	found := false
	for _, p := range res[0].Pages {
		found = found || p.URL == linked && len(p.Reasons) == 1 && strings.HasPrefix(p.Reasons[0], "a notice was added: “Correction:")
	}
	if !found {
		t.Errorf("the notice added since the snapshot: %+v", res[0].Pages)
	}
}
