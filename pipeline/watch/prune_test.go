package watch

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/feeds"
	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

// Clusters no post has joined for longer than Retain are forgotten with
// their posts, unless the checker acted on them; a repost of a forgotten
// one starts a new cluster, a repost of a kept one joins it. The IDs of
// posts seen longer ago are forgotten too.
func TestTriageForgetsOldClusters(t *testing.T) {
	eachEngine(t, testForgetsOldClusters)
}

func testForgetsOldClusters(t *testing.T, location string) {
	ctx := context.Background()
	st := openStore(t, location)
	tr, err := New(ctx, Options{Store: st, Retain: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	texts := []string{
		"The unemployment rate fell to 3.9 percent in April, the lowest since 2001.", // old, new: forgotten
		"Crime in the city doubled over the last five years, police figures show.",   // old, dismissed: forgotten
		"The new stadium cost taxpayers 400 million dollars more than promised.",     // old, pinned: kept
		"Half of all food bought in the country is thrown away uneaten each year.",   // recent: kept
		"Ok", // old, short: forgotten
	}
	ids := make([]int64, len(texts))
	for i, s := range texts {
		c, err := tr.Handle(ctx, "list", feeds.Post{ID: fmt.Sprintf("at://a/%d", i), Cursor: fmt.Sprint(i), Post: postOf(s)})
		if err != nil {
			t.Fatal(err)
		}
		ids[i] = c.ID
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if err := st.SetState(ctx, ids[1], StateDismissed, "", ""); err != nil {
		t.Fatal(err)
	}
	if err := st.SetState(ctx, ids[2], StatePinned, "", ""); err != nil {
		t.Fatal(err)
	}
	old := time.Now().Add(-2 * time.Hour).UnixMicro()
	for _, i := range []int{0, 1, 2, 4} {
		if _, err := st.db.ExecContext(ctx, st.q(`UPDATE watch_cluster SET last_us = ? WHERE id = ?`), old, ids[i]); err != nil {
			t.Fatal(err)
		}
		if _, err := st.db.ExecContext(ctx, st.q(`UPDATE watch_post SET seen_us = ? WHERE cluster = ?`), old, ids[i]); err != nil {
			t.Fatal(err)
		}
	}
	if err := tr.prune(ctx); err != nil {
		t.Fatal(err)
	}
	for i, id := range ids {
		_, err := st.Cluster(ctx, id)
		if kept := i == 2 || i == 3; kept != (err == nil) {
			t.Errorf("cluster of %q: kept %v (%v)", texts[i], err == nil, err)
		}
	}
	// The pinned cluster is kept, with its count, but not its old post's
	// ID.
	if n, _ := st.PostsSeen(ctx); n != 1 {
		t.Errorf("%d posts kept, want the recent one", n)
	}
	// The same posts again, and reposts under new IDs.
	for i, s := range texts {
		for _, id := range []string{fmt.Sprintf("at://a/%d", i), fmt.Sprintf("at://b/%d", i)} {
			c, err := tr.Handle(ctx, "list", feeds.Post{ID: id, Cursor: "9", Post: postOf("RT @x: " + s)})
			if err != nil {
				t.Fatal(err)
			}
			switch {
			case i == 2 || i == 3:
				if c.ID != 0 && c.ID != ids[i] {
					t.Errorf("a repost of %q in cluster %d, want %d", s, c.ID, ids[i])
				}
			case id == fmt.Sprintf("at://a/%d", i):
				if c.ID == 0 || c.ID == ids[i] || c.Size != 1 {
					t.Errorf("a forgotten post of %q again: cluster %d size %d, want a new cluster", s, c.ID, c.Size)
				}
				ids[i] = c.ID
			case c.ID != ids[i]:
				t.Errorf("a repost of %q in cluster %d, want the new one %d", s, c.ID, ids[i])
			}
		}
	}
	if err := tr.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if c, err := st.Cluster(ctx, ids[2]); err != nil || c.Size != 3 || c.State != StatePinned {
		t.Errorf("the pinned cluster: %+v, %v; want it kept, pinned, joined by its forgotten post and the repost", c, err)
	}
	if c, err := st.Cluster(ctx, ids[3]); err != nil || c.Size != 2 {
		t.Errorf("the recent cluster: %+v, %v; want its post counted once, joined by the repost", c, err)
	}
}

// X's eligible-posts feed offers the same posts poll after poll, for as
// long as people ask notes for them. A post it keeps offering is not
// forgotten after Retain, nor its cluster: offered again, it is not
// counted again, and a cluster the checker dismissed stays dismissed
// instead of coming back as new. Once the feed stops offering them, they
// are forgotten like any other.
func TestTriageRemembersAPostItsFeedKeepsOffering(t *testing.T) {
	eachEngine(t, testRemembersOfferedPosts)
}

func testRemembersOfferedPosts(t *testing.T, location string) {
	ctx := context.Background()
	st := openStore(t, location)
	tr, err := New(ctx, Options{Store: st, Retain: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	at := time.Date(2024, 1, 30, 9, 0, 0, 0, time.UTC)
	srv := notewritertest.New(t,
		notewritertest.Post{ID: "1901", Text: "The council banned bikes from Main Street without a vote last night", Lang: "en", CreatedAt: at},
		notewritertest.Post{ID: "1903", Text: "Tap water in the city now holds ten times the legal limit of lead", Lang: "en", CreatedAt: at},
	)
	f := &feeds.XEligible{Client: notewriter.New(srv.URL, notewritertest.Keys, nil), Every: time.Millisecond}
	// poll delivers one poll's posts to the triage and says what came back.
	poll := func() map[string]Cluster {
		t.Helper()
		out := map[string]Cluster{}
		done := errors.New("polled")
		err := f.Run(ctx, "", func(p feeds.Post) error {
			c, err := tr.Handle(ctx, f.Name(), p)
			if err != nil {
				return err
			}
			out[p.ID] = c
			if len(out) == 2 {
				return done
			}
			return nil
		})
		if !errors.Is(err, done) {
			t.Fatalf("poll: %v", err)
		}
		if err := tr.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		return out
	}
	age := func() {
		t.Helper()
		old := time.Now().Add(-2 * time.Hour).UnixMicro()
		for _, q := range []string{`UPDATE watch_cluster SET last_us = ?`, `UPDATE watch_post SET seen_us = ?`} {
			if _, err := st.db.ExecContext(ctx, st.q(q), old); err != nil {
				t.Fatal(err)
			}
		}
	}
	const a, b = "https://x.com/i/status/1901", "https://x.com/i/status/1903"
	first := poll()
	if first[a].ID == 0 || first[b].ID == 0 || first[a].ID == first[b].ID {
		t.Fatalf("first poll: %+v", first)
	}
	if err := st.SetState(ctx, first[a].ID, StateDismissed, "", ""); err != nil {
		t.Fatal(err)
	}
	// Two hours pass with X offering both every poll.
	age()
	if again := poll(); again[a].ID != 0 || again[b].ID != 0 {
		t.Errorf("offered again: %+v, want nothing counted", again)
	}
	if err := tr.prune(ctx); err != nil {
		t.Fatal(err)
	}
	if again := poll(); again[a].ID != 0 || again[b].ID != 0 {
		t.Errorf("offered again after the clusters' retention: %+v, want nothing counted", again)
	}
	ca, errA := st.Cluster(ctx, first[a].ID)
	cb, errB := st.Cluster(ctx, first[b].ID)
	if errA != nil || errB != nil || ca.Size != 1 || ca.State != StateDismissed || cb.Size != 1 || cb.State != StateNew {
		t.Errorf("clusters %+v (%v), %+v (%v): want both kept, of one post, the first still dismissed", ca, errA, cb, errB)
	}
	if n, _ := st.PostsSeen(ctx); n != 2 {
		t.Errorf("%d post IDs kept, want the 2 offered", n)
	}
	// X stops offering them: two hours on, both are forgotten.
	age()
	if err := tr.prune(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := st.PostsSeen(ctx); n != 0 {
		t.Errorf("%d post IDs kept, want none once they are no longer offered", n)
	}
	if _, err := st.Cluster(ctx, first[a].ID); err == nil {
		t.Error("the dismissed cluster no longer offered is kept")
	}
}
