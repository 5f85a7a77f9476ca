package tui

import (
	"context"
	"fmt"
	"html"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	tea "github.com/charmbracelet/bubbletea"
	"github.com/charmbracelet/x/exp/golden"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
)

// changingWeb is a loopback news site whose pages a test changes after a
// case cites them: a page is served, answers a status instead (410, 503),
// or is replaced.
type changingWeb struct {
	srv    *httptest.Server
	mu     sync.Mutex
	pages  map[string]string
	status map[string]int
}

func newChangingWeb(t *testing.T) *changingWeb {
	w := &changingWeb{pages: map[string]string{}, status: map[string]int{}}
	w.srv = httptest.NewServer(http.HandlerFunc(func(rw http.ResponseWriter, r *http.Request) {
		w.mu.Lock()
		body, ok := w.pages[r.URL.Path]
		code := w.status[r.URL.Path]
		w.mu.Unlock()
		switch {
		case code != 0:
			http.Error(rw, http.StatusText(code), code)
		case !ok:
			http.NotFound(rw, r)
		default:
			rw.Header().Set("Content-Type", "text/html; charset=utf-8")
			fmt.Fprint(rw, body)
		}
	}))
	t.Cleanup(w.srv.Close)
	return w
}

func (w *changingWeb) set(path, body string) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.pages[path], w.status[path] = body, 0
}

func (w *changingWeb) fail(path string, code int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.status[path] = code
}

// newsPage is a realistic article page.
func newsPage(title string, paras ...string) string {
	var b strings.Builder
	fmt.Fprintf(&b, `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>%s | The Harbour Courier</title>
<meta property="article:published_time" content="2024-03-26T09:00:00Z"></head><body>
<header><nav><a href="/">Home</a> <a href="/news">News</a></nav></header><main><article><h1>%s</h1>
<p class="byline">By Sam Okafor, transport correspondent</p>`, html.EscapeString(title), html.EscapeString(title))
	for _, p := range paras {
		fmt.Fprintf(&b, "<p>%s</p>\n", html.EscapeString(p))
	}
	b.WriteString(`</article></main><footer><p>© 2024 The Harbour Courier</p></footer></body></html>`)
	return b.String()
}

var bridgeParas = []string{
	"The Francis Scott Key Bridge in Baltimore collapsed early on Tuesday after a container ship struck one of its supports.",
	"Officials said six road workers were missing and presumed dead; the search was suspended on Tuesday evening.",
	"The governor said there was no evidence of a terrorist attack and that the ship had lost power before the collision.",
	"Traffic was diverted through the harbour tunnels while divers searched the Patapsco River.",
}

// changedCase saves, in st, a case citing three pages of web as the
// engine leaves one (sources read and extracted, quotes verified,
// snapshots kept); then the web changes — one page is gone (410), one no
// longer holds the passage quoted, one cannot be read (503) — and a
// recheck reads them again through the fetcher.
func changedCase(t *testing.T, st *cases.Store, web *changingWeb, created time.Time) *pipeline.Check {
	t.Helper()
	ctx := context.Background()
	f := fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true})
	t.Cleanup(f.CloseIdleConnections)
	quotes := map[string]string{"/gone": bridgeParas[0], "/edited": bridgeParas[1], "/down": bridgeParas[2]}
	for p := range quotes {
		web.set(p, newsPage("Baltimore bridge collapses after ship strike", bridgeParas...))
	}
	c := &pipeline.Check{ID: pipeline.NewID(), CreatedAt: created, Post: testPost}
	var raws [][]byte
	for _, p := range []string{"/gone", "/edited", "/down"} {
		u := web.srv.URL + p
		pg, err := f.Fetch(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		a, err := extract.Options{}.ExtractContent(pg.Raw, pg.ContentType, pg.FinalURL)
		if err != nil {
			t.Fatal(err)
		}
		c.Sources = append(c.Sources, pipeline.Source{URL: u, FinalURL: pg.FinalURL, Domain: "127.0.0.1", Title: a.Title, Published: a.Published,
			Paragraphs: a.Paragraphs, Status: pipeline.StatusUsed, FetchedAt: pg.FetchedAt})
		c.Evidence = append(c.Evidence, pipeline.Evidence{SourceURL: u, Quote: quotes[p], Kind: pipeline.KindRefutes, Verified: true, Included: true})
		c.Correction.URLs = append(c.Correction.URLs, u)
		raws = append(raws, pg.Raw)
	}
	c.Correction.Text = "Misleading: a ship struck the bridge after losing power; officials found no sign of an attack."
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	for i, s := range c.Sources {
		if err := st.SaveSnapshot(ctx, c.ID, s.URL, s.FinalURL, s.FetchedAt, strings.Join(s.Paragraphs, "\n\n"), raws[i]); err != nil {
			t.Fatal(err)
		}
	}
	web.fail("/gone", http.StatusGone)
	edited := append([]string(nil), bridgeParas...)
	edited[1] = "Officials have not said how many people were on the bridge."
	web.set("/edited", newsPage("Baltimore bridge collapses after ship strike", edited...))
	web.fail("/down", http.StatusServiceUnavailable)
	res, _, err := st.Recheck(ctx, []string{c.ID}, cases.RecheckOptions{Fetcher: f})
	if err != nil {
		t.Fatal(err)
	}
	if len(res) != 1 || !res[0].Changed() || !res[0].Draft || res[0].ChangedPages() != 2 {
		t.Fatalf("the recheck did not find the two changed pages: %+v", res)
	}
	return c
}

// plainCase saves a case whose evidence nobody rechecked.
func plainCase(t *testing.T, st *cases.Store, text string, created time.Time) *pipeline.Check {
	t.Helper()
	c := &pipeline.Check{ID: pipeline.NewID(), CreatedAt: created, Post: pipeline.Post{Text: text},
		Correction: pipeline.Correction{Text: "False: " + text}}
	if err := st.Save(context.Background(), c); err != nil {
		t.Fatal(err)
	}
	return c
}

// TestCaseListOpensChangedCase: ctrl+o on the compose form lists the
// saved cases, the one whose cited pages changed first (CHANGED 2) though
// it is the oldest; / filters; enter opens the case as `muse cases open`
// does (in its trail, nothing run), with a banner, each changed page
// marked in Sources with what the recheck found and the page that could
// not be read said as such, not as a change.
func TestCaseListOpensChangedCase(t *testing.T) {
	store := openStore(t)
	web := newChangingWeb(t)
	day := time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC)
	changed := changedCase(t, store, web, day)
	plainCase(t, store, "The bridge was blown up by divers", day.Add(time.Hour))
	newest := plainCase(t, store, "Tunnels under the harbour are closed for good", day.Add(2*time.Hour))

	r := newRunner(t)
	opts := testOptions(r)
	opts.Cases = store
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+o")
	if m.overlay != overlayCases {
		t.Fatalf("ctrl+o on the compose form did not open the case list (status %q)", m.status)
	}
	rows := m.shownCases()
	if len(rows) != 3 || rows[0].ID != changed.ID || rows[1].ID != newest.ID {
		t.Fatalf("list order: %+v", rows)
	}
	v := m.View()
	lines := strings.Split(v, "\n")
	if i := lineWith(lines, "CHANGED 2"); i < 0 || !strings.Contains(lines[i], "▸") || lineWith(lines, "Tunnels under") < i {
		t.Errorf("the changed case is not first and selected:\n%s", v)
	}
	for i, l := range lines {
		if cells(l) > 80 {
			t.Errorf("line %d is %d cells wide: %q", i, cells(l), l)
		}
	}

	press(t, m, "/", "t", "u", "n")
	if got := m.shownCases(); len(got) != 1 || got[0].ID != newest.ID {
		t.Errorf("the filter “tun” keeps %+v", got)
	}
	press(t, m, "esc") // clears the filter
	if got := m.shownCases(); len(got) != 3 || m.caseList.filtering {
		t.Errorf("esc did not clear the filter: %d rows, filtering %v", len(got), m.caseList.filtering)
	}

	press(t, m, "enter")
	if m.overlay != overlayNone || m.screen != screenCheck || m.check.ID != changed.ID || m.running {
		t.Fatalf("enter did not open the case: overlay %v, screen %v, running %v", m.overlay, m.screen, m.running)
	}
	if runs, _ := r.runs(); len(runs) != 0 {
		t.Errorf("opening a case ran %v", runs)
	}
	trail, err := store.Trail(t.Context(), changed.ID)
	if err != nil || trail[len(trail)-1].Action != cases.ActionOpened {
		t.Errorf("the opening is not in the trail: %+v, %v", trail, err)
	}
	if m.recheck == nil || !m.recheck.Changed() {
		t.Fatalf("the case's recheck was not read: %+v", m.recheck)
	}
	v = m.View()
	if !strings.Contains(v, "Δ 2 of 3 cited pages changed (") || !strings.Contains(v, "gone (410)") ||
		!strings.Contains(v, "quote lost") || !strings.Contains(v, "· v: revision draft") {
		t.Errorf("no banner over the case:\n%s", v)
	}
	m.Update(tea.WindowSizeMsg{Width: 120, Height: 24}) // wider: the pages not read and the date too
	if v := m.View(); !strings.Contains(v, "Δ recheck ") || !strings.Contains(v, "), 1 not read now · v: revision draft") {
		t.Errorf("the banner at 120 columns:\n%s", v)
	}
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})

	// The stage list is a line lower under the banner: a click on its
	// second row picks the second stage.
	m.Update(tea.MouseMsg{X: 1, Y: 3, Action: tea.MouseActionPress, Button: tea.MouseButtonLeft})
	if m.sel != 1 {
		t.Errorf("a click on the second stage's row selected stage %d", m.sel+1)
	}
	m.moveStage(stageIndex(pipeline.StageSources))
	v = m.View()
	for _, want := range []string{"Δ gone (410)", "Δ quote lost", "2 cited pages changed", "1 cited page could not be read now: not counted as a change"} {
		if !strings.Contains(v, want) {
			t.Errorf("the Sources pane lacks %q:\n%s", want, v)
		}
	}
	if strings.Count(v, "Δ ") != 4 { // the banner, the pane's line and two rows; not the page that was not read
		t.Errorf("%d pages marked changed:\n%s", strings.Count(v, "Δ ")-2, v)
	}
	// "why this source" of each: the change in the recheck's words; the
	// page not read, as such.
	why := func(path string) string {
		for i, s := range m.check.Sources {
			if strings.HasSuffix(s.URL, path) {
				m.setCursor(pipeline.StageSources, i)
			}
		}
		press(t, m, "enter")
		defer press(t, m, "esc")
		m.Update(tea.WindowSizeMsg{Width: 80, Height: 60})
		defer m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
		return strings.Join(strings.Fields(m.View()), " ")
	}
	if v := why("/edited"); !strings.Contains(v, "Δ quote lost: the quoted passage") || !strings.Contains(v, "“Officials said six road workers") {
		t.Errorf("why this source, /edited:\n%s", v)
	}
	if v := why("/gone"); !strings.Contains(v, "Δ gone (410): gone: HTTP 410") {
		t.Errorf("why this source, /gone:\n%s", v)
	}
	if v := why("/down"); !strings.Contains(v, "could not be read now") || !strings.Contains(v, "not a change of the evidence") || strings.Count(v, "Δ ") != 1 {
		t.Errorf("why this source, /down:\n%s", v)
	}

	// From the check, ctrl+o again: the list, on the case open.
	press(t, m, "ctrl+o")
	if sm := m.selectedSummary(); m.overlay != overlayCases || sm == nil || sm.ID != changed.ID {
		t.Errorf("ctrl+o from the check: overlay %v, selected %+v", m.overlay, sm)
	}
	press(t, m, "esc")
	if m.overlay != overlayNone || m.check.ID != changed.ID {
		t.Errorf("esc did not go back to the case")
	}
}

func lineWith(lines []string, s string) int {
	for i, l := range lines {
		if strings.Contains(l, s) {
			return i
		}
	}
	return -1
}

// TestAcceptRevisionInApp: the revision draft the recheck kept is among
// the versions, labelled as the recheck's and selected; a accepts it as
// `muse cases recheck --accept` does (cases.Store.AcceptRevision): it is
// the correction, the trail says so, the case leaves the top of the list
// and the banner goes.
func TestAcceptRevisionInApp(t *testing.T) {
	store := openStore(t)
	web := newChangingWeb(t)
	day := time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC)
	c := changedCase(t, store, web, day)
	newer := plainCase(t, store, "Tunnels under the harbour are closed for good", day.Add(time.Hour))
	got, err := store.Get(t.Context(), c.ID)
	if err != nil {
		t.Fatal(err)
	}
	opts := testOptions(newRunner(t))
	opts.Cases, opts.Case = store, got
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	drive(t, m, m.Init())
	if m.recheckBanner() == "" {
		t.Fatalf("a case opened with `muse cases open` shows no banner:\n%s", m.View())
	}

	press(t, m, "v")
	if m.overlay != overlayVersions || !m.revisionSelected() {
		t.Fatalf("v: overlay %v, the revision draft selected %v", m.overlay, m.revisionSelected())
	}
	revision := m.versions.list[m.versions.cursor].Text
	v := m.View()
	if !strings.Contains(v, "recheck") || !strings.Contains(v, "a accept the recheck's revision draft") {
		t.Errorf("the versions do not show the revision draft as the recheck's:\n%s", v)
	}
	press(t, m, "a")
	if m.check.Correction.Text != revision || !m.check.Correction.Edited {
		t.Errorf("the correction shown is not the revision: %q", m.check.Correction.Text)
	}
	saved, err := store.Get(t.Context(), c.ID)
	if err != nil || saved.Correction.Text != revision {
		t.Fatalf("the store's correction is not the revision: %v", err)
	}
	trail, _ := store.Trail(t.Context(), c.ID)
	if e := trail[len(trail)-1]; e.Action != cases.ActionRevised {
		t.Errorf("the acceptance is not in the trail: %+v", trail)
	}
	if m.recheckBanner() != "" || m.recheck == nil || m.recheck.Changed() {
		t.Errorf("the banner stays after accepting: %+v", m.recheck)
	}
	press(t, m, "ctrl+o")
	if rows := m.shownCases(); len(rows) != 2 || rows[0].ID != newer.ID || rows[1].EvidenceChanged != 0 {
		t.Errorf("the accepted case is still listed first: %+v", rows)
	}
	// A later save from the app keeps the revision.
	press(t, m, "esc")
	drive(t, m, m.saveCaseNow())
	if saved, _ := store.Get(t.Context(), c.ID); saved.Correction.Text != revision {
		t.Errorf("a later save lost the revision: %q", saved.Correction.Text)
	}
	// Nothing is left to accept.
	press(t, m, "v")
	if m.revisionSelected() {
		t.Error("the accepted revision is still offered")
	}
	if v := m.View(); !strings.Contains(v, "yours") || !strings.Contains(v, "= version 1, the revision accepted") {
		t.Errorf("the accepted revision is not listed as such:\n%s", v)
	}
}

// TestCaseListReadOnly: with a store that can only be read, the list
// reads it and a case opens read-only, saying so; its recheck is shown,
// and accepting the revision is refused with the command that can.
func TestCaseListReadOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "cases.db")
	rw, err := cases.OpenOptions(context.Background(), cases.Options{Path: path})
	if err != nil {
		t.Fatal(err)
	}
	c := changedCase(t, rw, newChangingWeb(t), time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC))
	rw.Close()
	ro, err := cases.OpenOptions(context.Background(), cases.Options{Path: path, ReadOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { ro.Close() })
	opts := testOptions(newRunner(t))
	opts.CaseList = ro
	m := New(context.Background(), opts)
	m.Update(tea.WindowSizeMsg{Width: 80, Height: 24})
	press(t, m, "ctrl+o", "enter")
	if m.check == nil || m.check.ID != c.ID || !strings.HasPrefix(m.status, "read-only") {
		t.Fatalf("opened %v, status %q", m.check, m.status)
	}
	if m.recheckBanner() == "" {
		t.Error("no banner on the read-only case")
	}
	if cmd := m.acceptRevision(""); cmd == nil || !strings.Contains(m.status, "muse cases recheck --accept "+c.ID) {
		t.Errorf("accepting on a read-only store: %q", m.status)
	}
}

// caseListReader is a fixed store for the views' goldens (the dates a
// real store writes are its clock's).
type caseListReader struct {
	rows    []cases.Summary
	checks  map[string]*pipeline.Check
	recheck map[string]cases.CaseRecheck
}

func (r caseListReader) List(context.Context, cases.ListOptions) ([]cases.Summary, error) {
	return r.rows, nil
}

func (r caseListReader) Get(_ context.Context, id string) (*pipeline.Check, error) {
	return cloneCheck(r.checks[id]), nil
}

func (r caseListReader) Rechecks(_ context.Context, ids ...string) (map[string]cases.CaseRecheck, error) {
	out := map[string]cases.CaseRecheck{}
	for _, id := range ids {
		if rc, ok := r.recheck[id]; ok {
			out[id] = rc
		}
	}
	return out, nil
}

// TestCaseListViews: the list and a changed case at 80×24, plain text.
func TestCaseListViews(t *testing.T) {
	local := time.Local
	time.Local = time.UTC
	t.Cleanup(func() { time.Local = local })
	m, _ := finished(t, 80, 24)
	c := cloneCheck(m.check)
	c.ID = "20240327-101500-ab12cd"
	at := time.Date(2024, 4, 2, 6, 0, 0, 0, time.UTC)
	var pages []cases.PageRecheck
	for i, s := range c.Sources {
		p := cases.PageRecheck{URL: s.URL, Status: http.StatusNotModified, NotModified: true, CheckedAt: at}
		switch i {
		case 0:
			p.Status, p.NotModified, p.Reasons = http.StatusGone, false, []string{"gone: HTTP 410 Gone"}
		case 1:
			p.Status, p.NotModified, p.Reasons = http.StatusOK, false, []string{"a notice was added: “Correction: an earlier version of this story misstated the toll.”"}
		case 2:
			p.Status, p.NotModified, p.Error = 0, false, "timeout after 30s"
		}
		pages = append(pages, p)
	}
	sum := func(id, post, corr string, day int, changed int) cases.Summary {
		sm := cases.Summary{ID: id, CreatedAt: time.Date(2024, 3, day, 10, 15, 0, 0, time.UTC), PostExcerpt: post, CorrectionLine: corr,
			CreatedBy: "alice", EvidenceChanged: changed}
		if changed > 0 {
			sm.RecheckedAt = at
		}
		return sm
	}
	r := caseListReader{
		rows: []cases.Summary{
			sum(c.ID, c.Post.Text, strings.SplitN(c.Correction.Text, "\n", 2)[0], 27, 2),
			sum("20240401-090000-ef34ab", "Tunnels under the harbour are closed for good, says a viral post with a map", "", 31, 0),
			sum("20240329-120000-cd56ef", "The bridge was blown up by divers \x1b]0;pwned\x07 before dawn", "False: a ship struck the bridge.", 29, 0),
		},
		checks:  map[string]*pipeline.Check{c.ID: c},
		recheck: map[string]cases.CaseRecheck{c.ID: {ID: c.ID, Pages: pages}},
	}
	r.rows[1].CreatedAt = time.Date(2024, 4, 1, 9, 0, 0, 0, time.UTC)
	m.opts.CaseList = r
	m.dirty = false // copied: the check shown may be left
	press(t, m, "ctrl+o")
	t.Run("list", func(t *testing.T) { golden.RequireEqual(t, m.View()) })
	press(t, m, "enter")
	if m.check.ID != c.ID {
		t.Fatalf("enter did not open the case: %q", m.status)
	}
	m.moveStage(stageIndex(pipeline.StageSources))
	m.status = ""
	t.Run("sources", func(t *testing.T) { golden.RequireEqual(t, m.View()) })
}

// TestCaseListKeepsWork: a check kept nowhere whose correction has
// changes not copied or exported is not dropped for a listed case; a post
// being composed stays for n; ? on the list comes back to it.
func TestCaseListKeepsWork(t *testing.T) {
	store := openStore(t)
	listed := plainCase(t, store, "Tunnels under the harbour are closed for good", time.Date(2024, 3, 27, 10, 0, 0, 0, time.UTC))
	m, _ := finished(t, 80, 24)
	m.opts.CaseList = store
	m.dirty = true
	shown := m.check.ID
	press(t, m, "ctrl+o", "?")
	if m.overlay != overlayHelp {
		t.Fatalf("? on the list: overlay %v", m.overlay)
	}
	press(t, m, "x")
	if m.overlay != overlayCases {
		t.Errorf("closing the help did not come back to the list: overlay %v", m.overlay)
	}
	press(t, m, "enter")
	if m.check.ID != shown || !strings.Contains(m.status, "not copied or exported") {
		t.Errorf("the unsaved check was left for case %s (status %q)", m.check.ID, m.status)
	}

	m.dirty = false
	press(t, m, "esc", "n")
	press(t, m, "A", " ", "p", "o", "s", "t")
	press(t, m, "ctrl+o", "enter")
	if m.check.ID != listed.ID || m.screen != screenCheck {
		t.Fatalf("the listed case did not open: %q", m.status)
	}
	press(t, m, "n")
	if got := m.compose.text.Value(); got != "A post" {
		t.Errorf("the post being composed was lost: %q", got)
	}
}
