package cases

import (
	"bufio"
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources/pgdb/pgdbtest"
)

func sampleCheck() *pipeline.Check {
	posted := time.Date(2024, 3, 1, 9, 30, 0, 0, time.UTC)
	return &pipeline.Check{
		CreatedAt: time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC),
		Post: pipeline.Post{Text: "Breaking: the city council   banned bicycles\non every street from Monday!", Author: "Jo Doe",
			Handle: "@jodoe", PostedAt: posted, URL: "https://x.com/jodoe/status/1", Platform: "x"},
		Queries: []pipeline.Query{{Text: "city council bicycle ban", Origin: pipeline.OriginModel, Enabled: true}},
		Sources: []pipeline.Source{
			{URL: "https://www.reuters.com/a", Domain: "reuters.com", Tier: pipeline.TierHigh, Status: pipeline.StatusUsed,
				Reason: "refutes the claim", Paragraphs: []string{"The council voted on a cycle lane plan."},
				FetchedAt: time.Date(2024, 3, 2, 10, 1, 0, 0, time.UTC)},
			{URL: "https://apnews.com/b", Domain: "apnews.com", Tier: pipeline.TierHigh, Status: pipeline.StatusNotNeeded},
			{URL: "https://blog.example/c", Domain: "blog.example", Tier: pipeline.TierExcluded, Status: pipeline.StatusExcludedRating},
		},
		Evidence: []pipeline.Evidence{{SourceURL: "https://www.reuters.com/a", Quote: "The council voted on a cycle lane plan.",
			Kind: pipeline.KindRefutes, Verified: true, Included: true}},
		Correction: pipeline.Correction{Text: "This post is false: the council approved cycle lanes, not a ban.\nSee https://www.reuters.com/a",
			URLs: []string{"https://www.reuters.com/a"}},
		Usage: pipeline.Usage{Usage: pipeline.StageUsage{LLMCalls: 4, PromptTokens: 1200, CompletionTokens: 300, CostUSD: 0.0123},
			ByStage: map[string]pipeline.StageUsage{"correction": {LLMCalls: 1, CostUSD: 0.004}}},
		Events: []pipeline.Event{{Time: posted, Kind: pipeline.EventStageStarted, Stage: pipeline.StageQueries}},
	}
}

// engines runs test on a fresh SQLite file and on a fresh PostgreSQL
// database (skipped, saying so, when MUSE_TEST_DATABASE_URL is unset); loc
// is where the store lives, for Open or for another process.
func engines(t *testing.T, test func(t *testing.T, loc string)) {
	t.Run("sqlite", func(t *testing.T) { test(t, filepath.Join(t.TempDir(), "sub", "cases.db")) })
	t.Run("postgres", func(t *testing.T) { test(t, pgdbtest.Fresh(t)) })
}

func openT(t *testing.T, path string) *Store {
	t.Helper()
	return openAs(t, path, "")
}

func TestSaveReopenRoundTrip(t *testing.T) { engines(t, testSaveReopenRoundTrip) }

func testSaveReopenRoundTrip(t *testing.T, path string) {
	ctx := context.Background()
	s := openT(t, path)
	c := sampleCheck()
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if len(c.ID) != 16 {
		t.Fatalf("Save gave ID %q, want 16 characters", c.ID)
	}
	if err := s.SaveDraft(ctx, c.ID, "model draft", false); err != nil {
		t.Fatal(err)
	}
	if err := s.SaveDraft(ctx, c.ID, "model draft", false); err != nil { // duplicate: kept once
		t.Fatal(err)
	}
	if err := s.SaveDraft(ctx, c.ID, "edited by a person", true); err != nil {
		t.Fatal(err)
	}
	html := []byte("<html><body><p>The council voted on a cycle lane plan.</p></body></html>")
	fetched := time.Date(2024, 3, 2, 10, 1, 0, 0, time.UTC)
	if err := s.SaveSnapshotHeaders(ctx, c.ID, "https://www.reuters.com/a", "https://www.reuters.com/a?amp=0", fetched, "The council voted.", html,
		http.Header{"Content-Type": {"text/html; charset=utf-8"}, "Last-Modified": {"Sat, 02 Mar 2024 09:00:00 GMT"}, "Set-Cookie": {"a=1", "b=2"}}); err != nil {
		t.Fatal(err)
	}
	s.Close()

	s2 := openT(t, path)
	got, err := s2.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Post.Text != c.Post.Text || !got.Post.PostedAt.Equal(c.Post.PostedAt) || got.Correction.Text != c.Correction.Text ||
		len(got.Sources) != 3 || got.Sources[0].Paragraphs[0] != c.Sources[0].Paragraphs[0] ||
		got.Usage.ByStage["correction"].CostUSD != 0.004 || len(got.Events) != 1 || !got.CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("round trip changed the check:\n got %+v\nwant %+v", got, c)
	}
	ds, err := s2.Drafts(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(ds) != 2 || ds[0].Text != "model draft" || ds[0].Edited || ds[1].Text != "edited by a person" || !ds[1].Edited ||
		ds[1].Seq <= ds[0].Seq || ds[0].Time.IsZero() {
		t.Errorf("drafts = %+v", ds)
	}
	for _, u := range []string{"https://www.reuters.com/a", "https://www.reuters.com/a?amp=0"} {
		sn, err := s2.Snapshot(ctx, c.ID, u)
		if err != nil {
			t.Fatalf("snapshot %s: %v", u, err)
		}
		if !bytes.Equal(sn.RawHTML, html) || sn.Text != "The council voted." || !sn.FetchedAt.Equal(fetched) || sn.URL != "https://www.reuters.com/a" ||
			sn.Header.Get("Last-Modified") != "Sat, 02 Mar 2024 09:00:00 GMT" || len(sn.Header.Values("Set-Cookie")) != 2 {
			t.Errorf("snapshot = %+v", sn)
		}
	}
	if _, err := s2.Snapshot(ctx, c.ID, "https://nope.example/"); !errors.Is(err, ErrNotFound) {
		t.Errorf("missing snapshot: err = %v, want ErrNotFound", err)
	}

	list, err := s2.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	want := Summary{ID: c.ID, PostExcerpt: "Breaking: the city council banned bicycles on every street from Monday!",
		PostURL: c.Post.URL, CorrectionLine: "This post is false: the council approved cycle lanes, not a ban.",
		SourcesUsed: 1, CostUSD: 0.0123, Events: 1}
	if len(list) != 1 {
		t.Fatalf("list = %+v", list)
	}
	l := list[0]
	if l.ID != want.ID || l.PostExcerpt != want.PostExcerpt || l.PostURL != want.PostURL || l.CorrectionLine != want.CorrectionLine ||
		l.SourcesUsed != want.SourcesUsed || l.CostUSD != want.CostUSD || l.Events != want.Events || !l.CreatedAt.Equal(c.CreatedAt) {
		t.Errorf("summary = %+v, want %+v", l, want)
	}
	var buf bytes.Buffer
	if err := WriteTable(&buf, list); err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(buf.String(), c.ID) || !strings.Contains(buf.String(), "$0.0123") || !strings.Contains(buf.String(), "This post is false") {
		t.Errorf("table:\n%s", buf.String())
	}
	// A call whose server reported no usage: the list says the cost is at
	// least what was counted, not that it was all of it.
	got.Usage.LLMCalls++
	got.Usage.UnreportedCalls++
	if err := s2.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	list, _ = s2.List(ctx, ListOptions{})
	buf.Reset()
	if err := WriteTable(&buf, list); err != nil {
		t.Fatal(err)
	}
	if len(list) != 1 || list[0].UnreportedCalls != 1 || !strings.Contains(buf.String(), "≥$0.0123") {
		t.Errorf("with a call of unknown cost: %+v\n%s", list, buf.String())
	}

	if err := s2.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	if _, err := s2.Get(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("after delete: err = %v", err)
	}
	if ds, _ := s2.Drafts(ctx, c.ID); len(ds) != 0 {
		t.Errorf("drafts survived delete: %+v", ds)
	}
	if _, err := s2.Snapshot(ctx, c.ID, "https://www.reuters.com/a"); !errors.Is(err, ErrNotFound) {
		t.Errorf("snapshot survived delete: %v", err)
	}
	if err := s2.Delete(ctx, c.ID); !errors.Is(err, ErrNotFound) {
		t.Errorf("second delete: err = %v, want ErrNotFound", err)
	}
}

func TestListFiltersAndResolve(t *testing.T) { engines(t, testListFiltersAndResolve) }

func testListFiltersAndResolve(t *testing.T, loc string) {
	ctx := context.Background()
	s := openT(t, loc)
	base := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	var ids []string
	for i := range 5 {
		c := sampleCheck()
		c.ID = pipeline.NewIDAt(base.Add(time.Duration(i) * time.Hour))
		c.CreatedAt = base.Add(time.Duration(i) * time.Hour)
		c.Post.Text = fmt.Sprintf("post number %d", i)
		if err := s.Save(ctx, c); err != nil {
			t.Fatal(err)
		}
		ids = append(ids, c.ID)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] <= ids[i-1] {
			t.Errorf("IDs do not sort by time: %s after %s", ids[i], ids[i-1])
		}
	}
	all, _ := s.List(ctx, ListOptions{})
	if len(all) != 5 || all[0].ID != ids[4] {
		t.Errorf("list not newest first: %+v", all)
	}
	page, _ := s.List(ctx, ListOptions{Limit: 2, Offset: 1})
	if len(page) != 2 || page[0].ID != ids[3] || page[1].ID != ids[2] {
		t.Errorf("limit/offset: %+v", page)
	}
	win, _ := s.List(ctx, ListOptions{Since: base.Add(time.Hour), Before: base.Add(3 * time.Hour)})
	if len(win) != 2 {
		t.Errorf("since/before: %+v", win)
	}
	one, _ := s.List(ctx, ListOptions{Contains: "NUMBER 3"})
	if len(one) != 1 || one[0].ID != ids[3] {
		t.Errorf("contains: %+v", one)
	}
	if pct, _ := s.List(ctx, ListOptions{Contains: "%"}); len(pct) != 0 {
		t.Errorf("a %% filter must be literal, got %d cases", len(pct))
	}
	got, err := s.Resolve(ctx, ids[2])
	if err != nil || got != ids[2] {
		t.Errorf("Resolve(full) = %q, %v", got, err)
	}
	// All five share the time prefix down to the hour digit; the whole ID
	// minus its random tail is unique.
	got, err = s.Resolve(ctx, ids[2][:10])
	if err != nil || got != ids[2] {
		t.Errorf("Resolve(prefix) = %q, %v", got, err)
	}
	if _, err := s.Resolve(ctx, ids[0][:3]); err == nil || !strings.Contains(err.Error(), "several") {
		t.Errorf("ambiguous prefix: err = %v", err)
	}
	if _, err := s.Resolve(ctx, "zzzz"); !errors.Is(err, ErrNotFound) {
		t.Errorf("unknown: err = %v", err)
	}
}

func TestBadInputs(t *testing.T) {
	ctx := context.Background()
	if _, err := Open(ctx, ""); err == nil {
		t.Error("empty path must fail")
	}
	notDB := filepath.Join(t.TempDir(), "cases.db")
	os.WriteFile(notDB, bytes.Repeat([]byte("not a database "), 100), 0o600)
	if _, err := Open(ctx, notDB); err == nil || !strings.Contains(err.Error(), notDB) {
		t.Errorf("garbage file: err = %v, want one naming the file", err)
	}
	s := openT(t, filepath.Join(t.TempDir(), "cases.db"))
	if err := s.Save(ctx, nil); err == nil {
		t.Error("nil check must fail")
	}
	if err := s.SaveDraft(ctx, "", "x", false); err == nil {
		t.Error("draft without ID must fail")
	}
	if err := s.SaveSnapshot(ctx, "x", "", "", time.Now(), "", nil); err == nil {
		t.Error("snapshot without URL must fail")
	}
	if _, err := s.Get(ctx, "nope"); !errors.Is(err, ErrNotFound) {
		t.Errorf("Get(nope) = %v", err)
	}
}

// TestTwoStoresWriteConcurrently writes from two Stores on one file, and
// from a second process, at the same time: every write lands, none fails
// with "database is locked", and the file stays intact.
//
// Both Stores rewrite one shared case, each from a version the other has
// moved on: every such save is a conflict that keeps both versions, and
// is reported as one (a *ConflictError), not as a failure.
func TestTwoStoresWriteConcurrently(t *testing.T) { engines(t, testTwoStoresWriteConcurrently) }

func testTwoStoresWriteConcurrently(t *testing.T, path string) {
	ctx := context.Background()
	a, b := openT(t, path), openT(t, path)
	shared := sampleCheck()
	shared.ID = pipeline.NewID()
	if err := a.Save(ctx, shared); err != nil {
		t.Fatal(err)
	}
	const n = 40
	child := exec.Command(os.Args[0], "-test.run=^TestChildWriter$")
	child.Env = append(os.Environ(), "MUSE_CASES_CHILD=write", "MUSE_CASES_DB="+path, "MUSE_CASES_N="+strconv.Itoa(n))
	var childOut bytes.Buffer
	child.Stdout, child.Stderr = &childOut, &childOut
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 4*n)
	var conflicts sync.Map // the versions each conflicting save kept as theirs
	for w, s := range []*Store{a, b} {
		wg.Go(func() {
			for i := range n {
				c := sampleCheck()
				c.ID = fmt.Sprintf("store%d-%03d", w, i)
				if err := s.Save(ctx, c); err != nil {
					errs <- err
				}
				// Both also rewrite one shared case and add drafts to it.
				sh := shared.Clone()
				sh.Correction.Text = fmt.Sprintf("draft %d from store %d", i, w)
				var conflict *ConflictError
				if err := s.Save(ctx, sh); errors.As(err, &conflict) {
					conflicts.Store(conflict.Theirs, conflict.By)
				} else if err != nil {
					errs <- err
				}
				if err := s.SaveDraft(ctx, shared.ID, sh.Correction.Text, w == 1); err != nil {
					errs <- err
				}
			}
		})
	}
	wg.Wait()
	if err := child.Wait(); err != nil {
		t.Fatalf("child writer: %v\n%s", err, childOut.String())
	}
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	list, err := a.List(ctx, ListOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(list) != 3*n+1 {
		t.Errorf("%d cases, want %d", len(list), 3*n+1)
	}
	ds, _ := b.Drafts(ctx, shared.ID)
	if len(ds) != 2*n {
		t.Errorf("%d drafts of the shared case, want %d", len(ds), 2*n)
	}
	got, err := b.Get(ctx, shared.ID)
	if err != nil || !strings.HasPrefix(got.Correction.Text, "draft ") {
		t.Errorf("shared case: %v %+v", err, got)
	}
	// Every version a conflicting save replaced is kept and readable.
	kept, err := a.Versions(ctx, shared.ID)
	if err != nil {
		t.Fatal(err)
	}
	nConflicts := 0
	conflicts.Range(func(v, _ any) bool {
		nConflicts++
		if _, err := a.GetVersion(ctx, shared.ID, v.(int64)); err != nil {
			t.Errorf("version %d, replaced in a conflict: %v", v, err)
		}
		return true
	})
	if nConflicts == 0 || len(kept) != nConflicts {
		t.Errorf("%d conflicts reported, %d versions kept; want as many, and some", nConflicts, len(kept))
	}
	if a.postgres {
		return
	}
	var ok string
	if err := a.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
}

// TestChildWriter is the other process of the two tests above and below;
// it does nothing unless started by them.
func TestChildWriter(t *testing.T) {
	mode := os.Getenv("MUSE_CASES_CHILD")
	if mode == "" {
		t.Skip("helper process for TestTwoStoresWriteConcurrently and TestKilledMidRun")
	}
	ctx := context.Background()
	s, err := Open(ctx, os.Getenv("MUSE_CASES_DB"))
	if err != nil {
		fmt.Println("open:", err)
		os.Exit(3)
	}
	switch mode {
	case "write":
		n, _ := strconv.Atoi(os.Getenv("MUSE_CASES_N"))
		for i := range n {
			c := sampleCheck()
			c.ID = fmt.Sprintf("child-%03d", i)
			if err := s.Save(ctx, c); err != nil {
				fmt.Println("save:", err)
				os.Exit(4)
			}
		}
	case "run":
		// A simulated run: after each engine event the Check grows and is
		// saved, a draft and a snapshot now and then; "saved N" is printed
		// only once the save has returned.
		c := sampleCheck()
		c.ID = os.Getenv("MUSE_CASES_ID")
		c.Events = nil
		page := bytes.Repeat([]byte("<p>evidence paragraph</p>"), 2000)
		for i := 0; ; i++ {
			c.Events = append(c.Events, pipeline.Event{Time: time.Now(), Kind: pipeline.EventItem, Message: fmt.Sprintf("event %d", i)})
			c.Usage.LLMCalls = i
			if err := s.Save(ctx, c.Clone()); err != nil {
				fmt.Println("save:", err)
				os.Exit(4)
			}
			if i%5 == 0 {
				if err := s.SaveDraft(ctx, c.ID, fmt.Sprintf("draft %d", i), false); err != nil {
					fmt.Println("draft:", err)
					os.Exit(4)
				}
				if err := s.SaveSnapshot(ctx, c.ID, fmt.Sprintf("https://example.com/%d", i), "", time.Now(), "text", page); err != nil {
					fmt.Println("snapshot:", err)
					os.Exit(4)
				}
			}
			fmt.Printf("saved %d\n", i)
		}
	}
	s.Close()
	os.Exit(0)
}

// TestKilledMidRun starts a process that saves the case after every
// simulated event, SIGKILLs it mid-run, reopens the database and finds
// every event whose save had returned.
func TestKilledMidRun(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	id := pipeline.NewID()
	child := exec.Command(os.Args[0], "-test.run=^TestChildWriter$")
	child.Env = append(os.Environ(), "MUSE_CASES_CHILD=run", "MUSE_CASES_DB="+path, "MUSE_CASES_ID="+id)
	out, err := child.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	var stderr bytes.Buffer
	child.Stderr = &stderr
	if err := child.Start(); err != nil {
		t.Fatal(err)
	}
	last := -1
	sc := bufio.NewScanner(out)
	for sc.Scan() {
		line := sc.Text()
		if n, ok := strings.CutPrefix(line, "saved "); ok {
			last, _ = strconv.Atoi(n)
		} else {
			t.Fatalf("child: %s\n%s", line, stderr.String())
		}
		if last >= 60 {
			break
		}
	}
	if err := child.Process.Signal(syscall.SIGKILL); err != nil {
		t.Fatal(err)
	}
	child.Wait()
	if last < 60 {
		t.Fatalf("child stopped after %d saves: %s", last, stderr.String())
	}

	s := openT(t, path)
	c, err := s.Get(ctx, id)
	if err != nil {
		t.Fatal(err)
	}
	if len(c.Events) < last+1 {
		t.Fatalf("after the kill the case has %d events, want at least %d (the last acknowledged save)", len(c.Events), last+1)
	}
	for i := 0; i <= last; i++ {
		if c.Events[i].Message != fmt.Sprintf("event %d", i) {
			t.Fatalf("event %d = %q", i, c.Events[i].Message)
		}
	}
	ds, _ := s.Drafts(ctx, id)
	if len(ds) < last/5+1 {
		t.Errorf("%d drafts after the kill, want at least %d", len(ds), last/5+1)
	}
	if _, err := s.Snapshot(ctx, id, fmt.Sprintf("https://example.com/%d", last/5*5)); err != nil {
		t.Errorf("snapshot saved before the kill: %v", err)
	}
	var ok string
	if err := s.db.QueryRowContext(ctx, "PRAGMA integrity_check").Scan(&ok); err != nil || ok != "ok" {
		t.Errorf("integrity_check = %q, %v", ok, err)
	}
	list, _ := s.List(ctx, ListOptions{})
	if len(list) != 1 || list[0].Events < last+1 {
		t.Errorf("list after kill: %+v", list)
	}
}

func TestSecretsRedacted(t *testing.T) { engines(t, testSecretsRedacted) }

func testSecretsRedacted(t *testing.T, loc string) {
	ctx := context.Background()
	const key = "sk-test-SECRETKEY-1234567890"
	s, err := OpenOptions(ctx, Options{Path: loc, Secrets: []string{key, "abc"}})
	if err != nil {
		t.Fatal(err)
	}
	c := sampleCheck()
	c.Events = append(c.Events, pipeline.Event{Kind: pipeline.EventWarning, Message: "search: GET https://api.example/?key=" + key + ": timeout"})
	c.Correction.Warnings = []string{"Authorization: Bearer " + key}
	if err := s.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	s.SaveDraft(ctx, c.ID, "draft quoting "+key, true)
	s.SaveSnapshot(ctx, c.ID, "https://p.example/?api_key="+key, "", time.Now(), "text "+key, []byte("<p>"+key+"</p>"))
	got, _ := s.Get(ctx, c.ID)
	if !strings.Contains(got.Events[1].Message, "[redacted]") || strings.Contains(got.Events[1].Message, key) {
		t.Errorf("event message not redacted: %q", got.Events[1].Message)
	}
	// Snapshots are gzipped, so the file scan below cannot see into them.
	if sn, err := s.Snapshot(ctx, c.ID, "https://p.example/?api_key=[redacted]"); err != nil ||
		strings.Contains(sn.Text+string(sn.RawHTML), key) {
		t.Errorf("snapshot not redacted: %v %+v", err, sn)
	}
	if !strings.Contains(got.Post.Text, "Breaking") {
		t.Error("a short 'secret' must not mangle text")
	}
	if s.postgres {
		defer s.Close()
		var n int
		err := s.db.QueryRowContext(ctx, `SELECT
	(SELECT count(*) FROM cases WHERE position($1::bytea IN check_json) > 0) +
	(SELECT count(*) FROM drafts WHERE position($2 IN text) > 0) +
	(SELECT count(*) FROM snapshots WHERE position($2 IN url) > 0)`, []byte(key), key).Scan(&n)
		if err != nil || n != 0 {
			t.Errorf("%d rows hold the secret (%v)", n, err)
		}
		return
	}
	s.Close()
	scanDirFor(t, filepath.Dir(loc), key)
}

// scanDirFor fails when any file under dir (database, WAL, shared memory)
// holds secret, in clear or gzip-free form.
func scanDirFor(t *testing.T, dir, secret string) {
	t.Helper()
	n := 0
	filepath.WalkDir(dir, func(p string, d os.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		n++
		if bytes.Contains(b, []byte(secret)) {
			t.Errorf("%s holds the secret", p)
		}
		return nil
	})
	if n == 0 {
		t.Fatal("no files scanned")
	}
}

func TestShouldSave(t *testing.T) {
	if ShouldSave(pipeline.Event{Kind: pipeline.EventTokenDelta}) || !ShouldSave(pipeline.Event{Kind: pipeline.EventItem}) ||
		!ShouldSave(pipeline.Event{Kind: pipeline.EventDone}) {
		t.Error("ShouldSave must skip token deltas only")
	}
}
