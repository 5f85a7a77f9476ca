package cases

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/sqlitedb"
)

func openAs(t *testing.T, loc, user string) *Store {
	t.Helper()
	s, err := OpenOptions(context.Background(), Options{Path: loc, User: user})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { s.Close() })
	return s
}

// TestCheckersAndConflicts: two checkers on one store. Each case says who
// made and last saved it, the list filters by checker, and a save made on
// a stale version keeps both versions and names who changed the case.
func TestCheckersAndConflicts(t *testing.T) { engines(t, testCheckersAndConflicts) }

func testCheckersAndConflicts(t *testing.T, loc string) {
	ctx := context.Background()
	alice, bob := openAs(t, loc, "alice"), openAs(t, loc, "bob")
	c := sampleCheck()
	if err := alice.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	mine := sampleCheck()
	if err := bob.Save(ctx, mine); err != nil {
		t.Fatal(err)
	}
	// Bob opens alice's case; alice edits it meanwhile; bob saves his edit.
	got, err := bob.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	c.Correction.Text = "alice's correction"
	if err := alice.Save(ctx, c); err != nil {
		t.Fatalf("alice saves on the version she wrote: %v", err)
	}
	got.Correction.Text = "bob's correction"
	err = bob.Save(ctx, got)
	var conflict *ConflictError
	if !errors.As(err, &conflict) {
		t.Fatalf("bob's stale save: err = %v, want a *ConflictError", err)
	}
	if conflict.By != "alice" || conflict.Theirs != 2 || conflict.Version != 3 || conflict.At.IsZero() ||
		!strings.Contains(err.Error(), "changed by alice at ") {
		t.Errorf("conflict = %+v (%v)", conflict, err)
	}
	if now, err := alice.Get(ctx, c.ID); err != nil || now.Correction.Text != "bob's correction" {
		t.Errorf("the later save is the case now: %v %q", err, now.Correction.Text)
	}
	if old, err := alice.GetVersion(ctx, c.ID, 2); err != nil || old.Correction.Text != "alice's correction" {
		t.Errorf("alice's version is kept: %v %+v", err, old)
	}
	if vs, _ := bob.Versions(ctx, c.ID); len(vs) != 1 || vs[0].Version != 2 || vs[0].UpdatedBy != "alice" {
		t.Errorf("versions = %+v", vs)
	}
	// Bob goes on from his own version without a conflict; alice, whose
	// last read is stale now, is told in turn.
	got.Correction.Text = "bob's second"
	if err := bob.Save(ctx, got); err != nil {
		t.Errorf("bob's next save: %v", err)
	}
	c.Correction.Text = "alice again"
	if err := alice.Save(ctx, c); !errors.As(err, &conflict) || conflict.By != "bob" || conflict.Theirs != 4 {
		t.Errorf("alice's stale save: %v", err)
	}

	list, err := alice.List(ctx, ListOptions{})
	if err != nil || len(list) != 2 {
		t.Fatalf("list: %v %+v", err, list)
	}
	by := map[string]Summary{}
	for _, sm := range list {
		by[sm.ID] = sm
	}
	if sm := by[c.ID]; sm.CreatedBy != "alice" || sm.UpdatedBy != "alice" || sm.Version != 5 {
		t.Errorf("alice's case: %+v", sm)
	}
	if sm := by[mine.ID]; sm.CreatedBy != "bob" || sm.UpdatedBy != "bob" || sm.Version != 1 {
		t.Errorf("bob's case: %+v", sm)
	}
	if l, _ := alice.List(ctx, ListOptions{By: "bob"}); len(l) != 1 || l[0].ID != mine.ID {
		t.Errorf("--by bob: %+v, want his case only (alice saved hers last)", l)
	}
	alice.Save(ctx, sampleCheck())
	if l, _ := bob.List(ctx, ListOptions{By: "alice"}); len(l) != 2 {
		t.Errorf("--by alice: %d cases, want 2", len(l))
	}
	if l, _ := bob.List(ctx, ListOptions{By: "carol"}); len(l) != 0 {
		t.Errorf("--by carol: %+v", l)
	}

	// The trail says who did what; it outlives the case.
	if err := bob.SaveDraft(ctx, c.ID, "an edit by bob", true); err != nil {
		t.Fatal(err)
	}
	if err := alice.Audit(ctx, c.ID, ActionExported, "md"); err != nil {
		t.Fatal(err)
	}
	if err := bob.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	trail, err := alice.Trail(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	var lines []string
	for _, e := range trail {
		lines = append(lines, e.User+" "+e.Action)
		if e.Time.IsZero() || e.CaseID != c.ID {
			t.Errorf("entry %+v", e)
		}
	}
	want := "alice created|bob conflict|alice conflict|bob edited|alice exported|bob deleted"
	if strings.Join(lines, "|") != want {
		t.Errorf("trail:\n got %s\nwant %s", strings.Join(lines, "|"), want)
	}
	// Alice opens bob's case and saves it, no one in between: a change.
	m, _ := alice.Get(ctx, mine.ID)
	m.Correction.Text = "alice's take"
	if err := alice.Save(ctx, m); err != nil {
		t.Fatal(err)
	}
	if tr, _ := bob.Trail(ctx, mine.ID); len(tr) != 2 || tr[1].User != "alice" || tr[1].Action != ActionChanged {
		t.Errorf("trail of bob's case: %+v", tr)
	}
	if err := bob.SaveDraft(ctx, mine.ID, "model draft", false); err != nil {
		t.Fatal(err)
	}
	if ds, _ := bob.Drafts(ctx, mine.ID); len(ds) != 1 || ds[0].By != "bob" {
		t.Errorf("drafts = %+v", ds)
	}
	// Alice saves the case bob deleted: it is put back, and she is told.
	c.Correction.Text = "alice after the deletion"
	if err := alice.Save(ctx, c); !errors.As(err, &conflict) || !conflict.Deleted || conflict.By != "bob" {
		t.Errorf("save after a deletion: %v", err)
	}
	if back, err := bob.Get(ctx, c.ID); err != nil || back.Correction.Text != "alice after the deletion" {
		t.Errorf("the case is back: %v", err)
	}
}

// TestWatchSeesOtherCheckers: a Store's watch reports the saves and
// deletions of other Stores, not its own (LISTEN/NOTIFY on PostgreSQL,
// polling the cases and the audit trail on SQLite).
func TestWatchSeesOtherCheckers(t *testing.T) { engines(t, testWatch) }

func testWatch(t *testing.T, loc string) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	alice, bob := openAs(t, loc, "alice"), openAs(t, loc, "bob")
	alice.poll = 50 * time.Millisecond
	changes, err := alice.Watch(ctx)
	if err != nil {
		t.Fatal(err)
	}
	c := sampleCheck()
	if err := alice.Save(ctx, c); err != nil { // her own: not reported
		t.Fatal(err)
	}
	time.Sleep(150 * time.Millisecond)
	got, err := bob.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	got.Correction.Text = "bob's edit"
	if err := bob.Save(ctx, got); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-changes:
		if ch.ID != c.ID || ch.By != "bob" || ch.Version != 2 || ch.Deleted || !strings.Contains(ch.String(), "changed by bob at ") {
			t.Errorf("change = %+v", ch)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bob's save was not reported to alice's watch")
	}
	select {
	case ch := <-changes:
		t.Errorf("one save reported twice, or alice's own: %+v", ch)
	case <-time.After(300 * time.Millisecond):
	}
	// A deletion by another Store is reported, the same on both engines;
	// her own is not.
	if err := bob.Delete(ctx, c.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-changes:
		if ch.ID != c.ID || ch.By != "bob" || !ch.Deleted || ch.At.IsZero() || !strings.Contains(ch.String(), "deleted by bob at ") {
			t.Errorf("deletion = %+v", ch)
		}
	case <-time.After(10 * time.Second):
		t.Fatal("bob's deletion was not reported to alice's watch")
	}
	mine := sampleCheck()
	mine.ID = "case-alice-deletes"
	if err := alice.Save(ctx, mine); err != nil {
		t.Fatal(err)
	}
	if err := alice.Delete(ctx, mine.ID); err != nil {
		t.Fatal(err)
	}
	select {
	case ch := <-changes:
		t.Errorf("alice's own save or deletion reported, or one reported twice: %+v", ch)
	case <-time.After(300 * time.Millisecond):
	}
	cancel()
	for range changes { // closes when ctx ends
	}
}

// TestUpgradeFromUserVersionSchema opens a cases.db written by the muse
// before goose migrations (PRAGMA user_version 1): its cases, drafts and
// snapshots read as before and it takes the new columns; a read-only open
// of such a file asks for one write-access open first.
func TestUpgradeFromUserVersionSchema(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "cases.db")
	schema, err := os.ReadFile("testdata/schema_v1.sql")
	if err != nil {
		t.Fatal(err)
	}
	db, err := sqlitedb.Open(path, sqlitedb.Options{Busy: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	if _, err := db.Exec(string(schema)); err != nil {
		t.Fatal(err)
	}
	c := sampleCheck()
	c.ID = pipeline.NewID()
	tz, _ := sources.Gzip([]byte("page text"))
	hz, _ := sources.Gzip([]byte("<p>page</p>"))
	for _, st := range []struct {
		q    string
		args []any
	}{
		{`INSERT INTO cases (id, created_at, updated_at, post_excerpt, check_json) VALUES (?, ?, ?, ?, ?)`,
			[]any{c.ID, c.CreatedAt.UnixMilli(), c.CreatedAt.UnixMilli(), "old post",
				`{"id":"` + c.ID + `","post":{"text":"old post"},"usage":{"llm_calls":3,"cached_calls":1,"unreported_calls":2,"cost_usd":0}}`}},
		{`INSERT INTO drafts (case_id, at, text, edited) VALUES (?, ?, ?, 1)`, []any{c.ID, c.CreatedAt.UnixMilli(), "old draft"}},
		{`INSERT INTO snapshots (case_id, url, fetched_at, text_gz, html_gz) VALUES (?, ?, ?, ?, ?)`,
			[]any{c.ID, "https://a.example/", c.CreatedAt.UnixMilli(), tz, hz}},
	} {
		if _, err := db.Exec(st.q, st.args...); err != nil {
			t.Fatal(err)
		}
	}
	db.Close()

	if _, err := OpenOptions(ctx, Options{Path: path, ReadOnly: true}); err == nil || !strings.Contains(err.Error(), "write access") {
		t.Errorf("read-only open of the old schema: %v", err)
	}
	s := openAs(t, path, "carol")
	got, err := s.Get(ctx, c.ID)
	if err != nil || got.Post.Text != "old post" {
		t.Fatalf("old case: %v %+v", err, got)
	}
	if ds, err := s.Drafts(ctx, c.ID); err != nil || len(ds) != 1 || ds[0].Text != "old draft" || !ds[0].Edited || ds[0].By != "" {
		t.Errorf("old drafts: %v %+v", err, ds)
	}
	if sn, err := s.Snapshot(ctx, c.ID, "https://a.example/"); err != nil || sn.Text != "page text" {
		t.Errorf("old snapshot: %v", err)
	}
	list, _ := s.List(ctx, ListOptions{})
	if len(list) != 1 || list[0].CreatedBy != "" || list[0].Version != 1 {
		t.Errorf("old case listed as %+v", list)
	} else if cost := list[0].Usage().CostCell(); cost != "unknown" {
		t.Errorf("old case whose server reported no usage listed at %q, want unknown", cost)
	}
	got.Correction.Text = "carol's edit"
	if err := s.Save(ctx, got); err != nil {
		t.Fatalf("save on the old case after Get: %v", err)
	}
	if l, _ := s.List(ctx, ListOptions{By: "carol"}); len(l) != 1 || l[0].UpdatedBy != "carol" || l[0].Version != 2 {
		t.Errorf("after carol's save: %+v", l)
	}
	s.Close()
	ro, err := OpenOptions(ctx, Options{Path: path, ReadOnly: true})
	if err != nil {
		t.Fatalf("read-only open after the upgrade: %v", err)
	}
	defer ro.Close()
	if _, err := ro.Get(ctx, c.ID); err != nil {
		t.Error(err)
	}
}

// TestLongCheckerNameSaves: a checker's name longer than PostgreSQL's
// NOTIFY payload limit (8000 bytes) does not stop the case from saving;
// the case keeps the name whole, the notification a cut of it.
func TestLongCheckerNameSaves(t *testing.T) { engines(t, testLongCheckerNameSaves) }

func testLongCheckerNameSaves(t *testing.T, loc string) {
	name := strings.Repeat("é", 50000) // 100,000 bytes
	s := openAs(t, loc, name)
	c := sampleCheck()
	if err := s.Save(context.Background(), c); err != nil {
		t.Fatalf("save as a 100,000-byte name: %v", err)
	}
	got, err := s.Get(context.Background(), c.ID)
	if err != nil || got.ID != c.ID {
		t.Fatalf("get: %v", err)
	}
}
