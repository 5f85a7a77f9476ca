package cli

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/pipeline/cases"
	"github.com/musecheck/muse/sources/archive"
	"github.com/musecheck/muse/sources/fetch"
)

// TestCasesRecheck: muse cases recheck reads a saved case's cited pages
// again (an unchanged one answered with a 304 for the ETag the archive
// kept), marks the case whose quoted page is gone, lists it first, and
// --accept makes its revision draft the correction.
func TestCasesRecheck(t *testing.T) {
	data := isolate(t)
	t.Setenv("MUSE_ALLOW_PRIVATE_ADDRESSES", "1")
	t.Setenv("MUSE_IGNORE_ROBOTS", "1")
	page := func(title, para string) string {
		return fmt.Sprintf(`<!doctype html><html lang="en"><head><title>%s</title></head><body><article><h1>%s</h1>
<p>%s</p><p>The transport office said construction would begin in the spring, starting with Main Street and River Road.</p>
<p>Opponents argued that the lanes would remove about 300 parking spaces, a figure the city's transport office disputed.</p>
</article></body></html>`, title, title, para)
	}
	var mu sync.Mutex
	pages := map[string]string{
		"/lanes":  page("Council approves cycle lanes", "The city council voted 7-2 on Tuesday to approve protected cycle lanes on six streets."),
		"/budget": page("Cycle lane budget set", "The plan costs $4.2 million and was first proposed in 2022 after a rise in collisions."),
	}
	notModified := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		body, ok := pages[r.URL.Path]
		if !ok {
			http.NotFound(w, r)
			return
		}
		etag := fmt.Sprintf(`"%x"`, len(body))
		w.Header().Set("ETag", etag)
		if r.Header.Get("If-None-Match") == etag {
			notModified++
			w.WriteHeader(http.StatusNotModified)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()

	// The case as a check leaves it: its pages in the archive, quoted,
	// snapshotted.
	ctx := context.Background()
	arch, err := archive.Open(ctx, filepath.Join(data, "archive.db"))
	if err != nil {
		t.Fatal(err)
	}
	st, err := cases.Open(ctx, cases.DefaultPath(data))
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true, Store: arch})
	c := &pipeline.Check{CreatedAt: time.Now().Add(-time.Hour), Post: pipeline.Post{Text: "Bicycles are banned"},
		Correction: pipeline.Correction{Text: "False: the council approved cycle lanes."}}
	older := &pipeline.Check{CreatedAt: time.Now().Add(-2 * time.Hour), Post: pipeline.Post{Text: "Lanes cost $40 million"},
		Correction: pipeline.Correction{Text: "False: they cost $4.2 million."}}
	for _, k := range []struct {
		c     *pipeline.Check
		path  string
		quote string
	}{
		{c, "/lanes", "The city council voted 7-2 on Tuesday to approve protected cycle lanes on six streets."},
		{older, "/budget", "The plan costs $4.2 million"},
	} {
		u := srv.URL + k.path
		p, err := f.Fetch(ctx, u)
		if err != nil {
			t.Fatal(err)
		}
		k.c.Sources = []pipeline.Source{{URL: u, FinalURL: p.FinalURL, Status: pipeline.StatusUsed, Paragraphs: []string{k.quote}}}
		k.c.Evidence = []pipeline.Evidence{{SourceURL: u, Quote: k.quote, Verified: true, Included: true, Kind: pipeline.KindRefutes}}
		k.c.Correction.URLs = []string{u}
		if err := st.Save(ctx, k.c); err != nil {
			t.Fatal(err)
		}
		if err := st.SaveSnapshot(ctx, k.c.ID, u, p.FinalURL, p.FetchedAt, k.quote, p.Raw); err != nil {
			t.Fatal(err)
		}
	}
	st.Close()
	arch.Close()
	f.CloseIdleConnections()

	mu.Lock()
	delete(pages, "/budget") // the older case's page is gone
	mu.Unlock()
	out, errOut, code := run(t, "cases", "recheck", "--all")
	if code != 0 {
		t.Fatalf("exit %d: %s", code, errOut)
	}
	if !strings.Contains(out, older.ID+"  CHANGED  1 cited pages") || !strings.Contains(out, srv.URL+"/budget: gone: HTTP 404") ||
		!strings.Contains(out, c.ID+"  ok  1 cited pages") || !strings.Contains(out, "muse cases recheck --accept "+older.ID) {
		t.Errorf("stdout:\n%s", out)
	}
	if !strings.Contains(errOut, "rechecked 2 cases, 2 pages (1 answered 304 Not Modified, 0 could not be read); 1 with changed evidence") || notModified != 1 {
		t.Errorf("stderr: %s (server 304s: %d)", errOut, notModified)
	}
	// The list shows the changed case first, though it is the older one.
	out, _, _ = run(t, "cases")
	lines := strings.Split(strings.TrimSpace(out), "\n")
	if len(lines) != 3 || !strings.HasPrefix(lines[1], older.ID) || !strings.Contains(lines[1], "CHANGED 1") || !strings.Contains(lines[2], " ok ") {
		t.Errorf("muse cases:\n%s", out)
	}
	if _, errOut, code := run(t, "cases", "recheck", "--accept", older.ID); code != 0 || !strings.Contains(errOut, "is its correction now") {
		t.Errorf("--accept: exit %d: %s", code, errOut)
	}
	out, _, _ = run(t, "cases", "--json")
	if strings.Contains(out, `"evidence_changed"`) || !strings.Contains(out, `"rechecked_at"`) {
		t.Errorf("after --accept, muse cases --json:\n%s", out)
	}
	if _, errOut, code := run(t, "cases", "recheck"); code != 2 {
		t.Errorf("recheck of nothing named: exit %d: %s", code, errOut)
	}
}

// TestWorkerRecheckNeedsCases: a worker asked to recheck the cases it does
// not keep says so rather than scheduling nothing.
func TestWorkerRecheckNeedsCases(t *testing.T) {
	isolate(t)
	_, errOut, code := run(t, "worker", "--no-save", "--recheck-every", "1h")
	if code != 2 || !strings.Contains(errOut, "--recheck-every: no case store to recheck") {
		t.Errorf("exit %d: %s", code, errOut)
	}
}

// TestRecheckUnreadIsNotOK: a case whose cited page could not be read at
// the recheck (a 503) is not said to be "ok", in the recheck's output or
// in the case list: what the page says now is not known. It is not
// counted as changed either.
func TestRecheckUnreadIsNotOK(t *testing.T) {
	data := isolate(t)
	t.Setenv("MUSE_ALLOW_PRIVATE_ADDRESSES", "1")
	t.Setenv("MUSE_IGNORE_ROBOTS", "1")
	quote := "The city council voted 7-2 on Tuesday to approve protected cycle lanes on six streets."
	body := `<!doctype html><html lang="en"><head><title>Council approves cycle lanes</title></head><body><article>
<h1>Council approves cycle lanes</h1><p>` + quote + `</p>
<p>The transport office said construction would begin in the spring, starting with Main Street and River Road.</p></article></body></html>`
	var mu sync.Mutex
	busy := false
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		defer mu.Unlock()
		if busy {
			http.Error(w, "Service Unavailable", http.StatusServiceUnavailable)
			return
		}
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		fmt.Fprint(w, body)
	}))
	defer srv.Close()
	ctx := context.Background()
	st, err := cases.Open(ctx, cases.DefaultPath(data))
	if err != nil {
		t.Fatal(err)
	}
	f := fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true})
	u := srv.URL + "/lanes"
	p, err := f.Fetch(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	c := &pipeline.Check{CreatedAt: time.Now().Add(-time.Hour), Post: pipeline.Post{Text: "Bicycles are banned"},
		Correction: pipeline.Correction{Text: "False: the council approved cycle lanes.", URLs: []string{u}},
		Sources:    []pipeline.Source{{URL: u, FinalURL: p.FinalURL, Status: pipeline.StatusUsed, Paragraphs: []string{quote}}},
		Evidence:   []pipeline.Evidence{{SourceURL: u, Quote: quote, Verified: true, Included: true, Kind: pipeline.KindRefutes}}}
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := st.SaveSnapshot(ctx, c.ID, u, p.FinalURL, p.FetchedAt, quote, p.Raw); err != nil {
		t.Fatal(err)
	}
	st.Close()
	f.CloseIdleConnections()
	mu.Lock()
	busy = true
	mu.Unlock()
	out, errOut, code := run(t, "cases", "recheck", "--all")
	if code != 0 || !strings.Contains(out, c.ID+"  unread 1  1 cited pages") || strings.Contains(out, " ok ") ||
		!strings.Contains(out, "not read now") || !strings.Contains(errOut, "1 could not be read); 0 with changed evidence") {
		t.Errorf("exit %d\nstdout:\n%s\nstderr: %s", code, out, errOut)
	}
	out, _, _ = run(t, "cases")
	if lines := strings.Split(strings.TrimSpace(out), "\n"); len(lines) != 2 || !strings.Contains(lines[1], "unread 1") || strings.Contains(lines[1], " ok ") {
		t.Errorf("muse cases:\n%s", out)
	}
	if out, _, _ = run(t, "cases", "--json"); !strings.Contains(out, `"evidence_unread": 1`) || strings.Contains(out, `"evidence_changed"`) {
		t.Errorf("muse cases --json:\n%s", out)
	}
	mu.Lock()
	busy = false
	mu.Unlock()
	if out, _, _ = run(t, "cases", "recheck", "--all"); !strings.Contains(out, c.ID+"  ok  1 cited pages") {
		t.Errorf("read again: %s", out)
	}
	if out, _, _ = run(t, "cases"); !strings.Contains(out, " ok ") {
		t.Errorf("muse cases after a full read:\n%s", out)
	}
}
