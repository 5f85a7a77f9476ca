package cases

import (
	"context"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/pipeline"
)

// TestListStamp: the stamp stays while nothing changes and moves with
// every change List would show: a case made, saved again, the recheck
// rows written, a revision accepted, a case deleted.
func TestListStamp(t *testing.T) { engines(t, testListStamp) }

func testListStamp(t *testing.T, loc string) {
	ctx := context.Background()
	st := openT(t, loc)
	at := time.Date(2024, 3, 2, 10, 0, 0, 0, time.UTC)
	st.now = func() time.Time { at = at.Add(time.Millisecond); return at }
	stamp := func() string {
		t.Helper()
		s, err := st.ListStamp(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	last := stamp()
	step := func(what string, moves bool) {
		t.Helper()
		now := stamp()
		if (now != last) != moves {
			t.Errorf("%s: stamp %q, before %q (should move: %v)", what, now, last, moves)
		}
		last = now
	}
	step("nothing", false)
	a, b := sampleCheck(), sampleCheck()
	for _, c := range []*pipeline.Check{a, b} {
		if err := st.Save(ctx, c); err != nil {
			t.Fatal(err)
		}
	}
	step("two cases made", true)
	step("nothing", false)
	a.Correction.Text = "Misleading: the council approved cycle lanes."
	if err := st.Save(ctx, a); err != nil {
		t.Fatal(err)
	}
	step("a case saved again", true)
	gone := CaseRecheck{ID: a.ID, Pages: []PageRecheck{{URL: a.Sources[0].URL, CheckedAt: at, Status: 410, Reasons: []string{"gone: HTTP 410 Gone"}}}}
	if err := st.saveRechecks(ctx, []CaseRecheck{gone}); err != nil {
		t.Fatal(err)
	}
	step("a recheck written", true)
	if err := st.AcceptRevision(ctx, a.ID, "Misleading: the council approved cycle lanes (the Reuters page is gone)."); err != nil {
		t.Fatal(err)
	}
	step("a revision accepted", true)
	step("nothing", false)
	if err := st.Delete(ctx, b.ID); err != nil {
		t.Fatal(err)
	}
	step("a case deleted", true)
}

// BenchmarkListRefresh compares what an open case list costs every few
// seconds on a store of 5,000 cases: reading the list (List, 500 rows, as
// the app does) against reading the stamp that says whether to.
func BenchmarkListRefresh(b *testing.B) {
	ctx := context.Background()
	st, err := Open(ctx, filepath.Join(b.TempDir(), "cases.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer st.Close()
	for i := range 5000 {
		c := sampleCheck()
		c.Post.Text = fmt.Sprintf("Post %d: %s", i, c.Post.Text)
		if err := st.Save(ctx, c); err != nil {
			b.Fatal(err)
		}
		if i%10 == 0 {
			r := CaseRecheck{ID: c.ID, Pages: []PageRecheck{{URL: c.Sources[0].URL, CheckedAt: time.Now(), Status: 410, Reasons: []string{"gone: HTTP 410 Gone"}}}}
			if err := st.saveRechecks(ctx, []CaseRecheck{r}); err != nil {
				b.Fatal(err)
			}
		}
	}
	b.Run("list", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.List(ctx, ListOptions{Limit: 500}); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stamp", func(b *testing.B) {
		for b.Loop() {
			if _, err := st.ListStamp(ctx); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// TestAcceptOwnRevision: the checker's own text is accepted as the
// revision as an edit is kept (its links are the correction's, a version
// of the person's), the trail says whose text it was, and the guards
// hold: an empty text is refused, and so is a second acceptance.
func TestAcceptOwnRevision(t *testing.T) { engines(t, testAcceptOwnRevision) }

func testAcceptOwnRevision(t *testing.T, loc string) {
	ctx := context.Background()
	st := openT(t, loc)
	c := sampleCheck()
	if err := st.Save(ctx, c); err != nil {
		t.Fatal(err)
	}
	if err := st.AcceptRevision(ctx, c.ID, "Misleading: see https://apnews.com/b"); !errors.Is(err, ErrNoRevision) {
		t.Errorf("accepted a revision of a case whose evidence did not change: %v", err)
	}
	gone := CaseRecheck{ID: c.ID, Pages: []PageRecheck{{URL: c.Sources[0].URL, CheckedAt: time.Now(), Status: 410, Reasons: []string{"gone: HTTP 410 Gone"}}}}
	if err := st.saveRechecks(ctx, []CaseRecheck{gone}); err != nil {
		t.Fatal(err)
	}
	if err := st.AcceptRevision(ctx, c.ID, " \n "); err == nil || !strings.Contains(err.Error(), "empty") {
		t.Errorf("an empty revision: %v", err)
	}
	text := "Misleading: the council approved cycle lanes, not a ban.\nSee https://apnews.com/b (the Reuters page is gone)."
	if err := st.AcceptRevision(ctx, c.ID, text); err != nil {
		t.Fatal(err)
	}
	got, err := st.Get(ctx, c.ID)
	if err != nil {
		t.Fatal(err)
	}
	if got.Correction.Text != text || !got.Correction.Edited || !slices.Equal(got.Correction.URLs, []string{"https://apnews.com/b"}) {
		t.Errorf("the correction after accepting: %+v", got.Correction)
	}
	ds, _ := st.Drafts(ctx, c.ID)
	if d := ds[len(ds)-1]; d.Text != text || !d.Edited {
		t.Errorf("the revision is not kept as the person's version: %+v", d)
	}
	trail, _ := st.Trail(ctx, c.ID)
	if e := trail[len(trail)-1]; e.Action != ActionRevised || !strings.HasPrefix(e.Detail, "the checker's revision of the recheck of ") {
		t.Errorf("the trail's last entry: %+v", e)
	}
	if list, _ := st.List(ctx, ListOptions{}); list[0].EvidenceChanged != 0 {
		t.Errorf("the accepted case is still marked: %+v", list[0])
	}
	if err := st.AcceptRevision(ctx, c.ID, text+" Again."); !errors.Is(err, ErrNoRevision) {
		t.Errorf("accepted twice: %v", err)
	}
}
