package feeds

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/feeds/feedtest"
)

func fixtureEvents(t *testing.T) [][]byte {
	t.Helper()
	f, err := os.Open("testdata/jetstream_events.jsonl")
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out [][]byte
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		out = append(out, append([]byte(nil), sc.Bytes()...))
	}
	return out
}

// collect runs f until it has delivered want posts (cursor-only
// deliveries are counted apart), then stops it.
func collect(t *testing.T, f Feed, cursor string, want int) (got []Post, cursors []string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := errors.New("enough")
	err := f.Run(ctx, cursor, func(p Post) error {
		cursors = append(cursors, p.Cursor)
		if p.Post != nil {
			got = append(got, p)
		}
		if len(got) == want {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Run: %v after %d posts, want %d", err, len(got), want)
	}
	return got, cursors
}

func TestJetstreamReadsRealEvents(t *testing.T) {
	ev := fixtureEvents(t)
	ev = append(ev[:3:3], append([][]byte{[]byte(`{"did":"did:plc:x","time_us":`), []byte("\x00binary")}, ev[3:]...)...)
	srv := feedtest.NewJetstream(t, ev)
	j := &Jetstream{URL: srv.URL(), DIDs: []string{"did:plc:eygmaihciaxprqvxpfvl6flk", "did:plc:rfov6bpyztcnedeyyzgfq42k"}}
	got, _ := collect(t, j, "", 2)
	p := got[0]
	if p.ID != "at://did:plc:eygmaihciaxprqvxpfvl6flk/app.bsky.feed.post/3l3qo2vutsw2b" || p.Cursor != "1725911162329308" ||
		p.Post.URL != "https://bsky.app/profile/did:plc:eygmaihciaxprqvxpfvl6flk/post/3l3qo2vutsw2b" ||
		!strings.HasPrefix(p.Post.Text, "Measles cases") || !slices.Equal(p.Langs, []string{"en"}) ||
		!slices.Equal(p.ImageKeys, []string{"bafkreibjfgx2gprinfvicegelk5kosd6y2frmqpqzwqkg7usac74l3t2v4"}) ||
		len(p.Post.Images) != 1 || p.Post.Images[0].Alt != "Chart of measles cases by year" ||
		p.Post.PostedAt.IsZero() {
		t.Errorf("first post read as %+v (%+v)", p, p.Post)
	}
	q := got[1]
	if q.Post.Text != "Unemployment just hit a fifty-year low, see https://www.example-news.com/economy/2024/09/unemployment" ||
		q.Post.Card == nil || q.Post.Card.Title != "Unemployment falls to 3.9%" {
		t.Errorf("second post read as %q, card %+v: want its link restored from the facet and its card", q.Post.Text, q.Post.Card)
	}
	if st := j.Snapshot(); st.Malformed != 2 {
		t.Errorf("%d malformed events counted, want 2 (a cut JSON object and a binary frame)", st.Malformed)
	}
	qs := srv.Queries()[0]
	if !strings.Contains(qs, "wantedCollections=app.bsky.feed.post") || !strings.Contains(qs, "wantedDids=did%3Aplc%3Aeygmaihciaxprqvxpfvl6flk") ||
		strings.Contains(qs, "cursor=") {
		t.Errorf("subscribed with %q", qs)
	}
}

func TestJetstreamReconnectsFromItsCursor(t *testing.T) {
	var ev [][]byte
	for i := range 30 {
		ev = append(ev, feedtest.PostEvent("did:plc:ewvi7nxzyoun6zhxrhs64oiz", fmt.Sprintf("3l3qo2vut%04d", i), 1725911162000000+int64(i)*1000,
			fmt.Sprintf("Post number %d about the budget", i)))
	}
	// Each connection drops after 7 events, without a close frame.
	srv := feedtest.NewJetstream(t, ev, 7)
	j := &Jetstream{URL: srv.URL(), Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	seen := map[string]bool{}
	var order []string
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	stop := errors.New("enough")
	err := j.Run(ctx, "", func(p Post) error {
		if p.Post != nil && !seen[p.ID] {
			seen[p.ID] = true
			order = append(order, p.ID)
		}
		if len(seen) == 30 {
			return stop
		}
		return nil
	})
	if !errors.Is(err, stop) {
		t.Fatalf("Run: %v with %d of 30 posts", err, len(seen))
	}
	for i, id := range order {
		if !strings.HasSuffix(id, fmt.Sprintf("3l3qo2vut%04d", i)) {
			t.Fatalf("post %d is %s: out of order", i, id)
		}
	}
	if st := j.Snapshot(); st.Connects < 5 {
		t.Errorf("%d connections for 30 events cut every 7: the feed did not reconnect", st.Connects)
	}
	// Every reconnect asked for the events from the last one read.
	for i, q := range srv.Queries()[1:] {
		if !strings.Contains(q, "cursor=") {
			t.Errorf("reconnect %d asked %q: no cursor", i+1, q)
		}
	}
}

func TestJetstreamKeywordsAndFlood(t *testing.T) {
	var ev [][]byte
	const n = 5000
	for i := range n {
		text := fmt.Sprintf("Ordinary post %d about lunch", i)
		if i%10 == 0 {
			text = fmt.Sprintf("Post %d: the VACCINE figures are out", i)
		}
		ev = append(ev, feedtest.PostEvent("did:plc:ewvi7nxzyoun6zhxrhs64oiz", fmt.Sprintf("r%05d", i), 1725911162000000+int64(i), text))
	}
	srv := feedtest.NewJetstream(t, ev)
	j := &Jetstream{URL: srv.URL(), Keywords: []string{"vaccine"}}
	got, _ := collect(t, j, "", n/10)
	for i, p := range got {
		if !strings.Contains(p.Post.Text, "VACCINE") || p.ID != fmt.Sprintf("at://did:plc:ewvi7nxzyoun6zhxrhs64oiz/app.bsky.feed.post/r%05d", i*10) {
			t.Fatalf("post %d is %s %q", i, p.ID, p.Post.Text)
		}
	}
	if !strings.Contains(j.Name(), "keywords=vaccine") {
		t.Errorf("name %q does not tell the keyword apart", j.Name())
	}
}

func TestJetstreamResumesAfterARestart(t *testing.T) {
	var ev [][]byte
	for i := range 20 {
		ev = append(ev, feedtest.PostEvent("did:plc:ewvi7nxzyoun6zhxrhs64oiz", fmt.Sprintf("k%03d", i), 1725911162000000+int64(i)*10, fmt.Sprintf("Claim %d", i)))
	}
	srv := feedtest.NewJetstream(t, ev)
	first, _ := collect(t, &Jetstream{URL: srv.URL()}, "", 8)
	cursor := first[len(first)-1].Cursor
	// A new process from the kept cursor: Jetstream replays from it
	// inclusive, so the last post kept comes again with the same ID.
	second, _ := collect(t, &Jetstream{URL: srv.URL(), Rewind: -1}, cursor, 13)
	if second[0].ID != first[7].ID {
		t.Errorf("resumed at %s, want the last kept post %s again (the store drops it by ID)", second[0].ID, first[7].ID)
	}
	if !strings.HasSuffix(second[12].ID, "k019") {
		t.Errorf("resumed stream ends at %s", second[12].ID)
	}
	// By default it asks for the 5 s before the cursor too, as Jetstream
	// advises: its time_us is not strictly in order, and an event just
	// before the cursor may not have been read yet. What comes again has
	// the ID it had.
	third, _ := collect(t, &Jetstream{URL: srv.URL()}, cursor, 20)
	qs := srv.Queries()
	us, _ := strconv.ParseInt(cursor, 10, 64)
	if want := fmt.Sprintf("cursor=%d", us-5_000_000); !strings.Contains(qs[len(qs)-1], want) {
		t.Errorf("resumed with %q, want %s", qs[len(qs)-1], want)
	}
	if third[0].ID != first[0].ID || third[7].ID != first[7].ID {
		t.Errorf("the 5 s before the cursor were not read again: %s…", third[0].ID)
	}
	if _, err := (&Jetstream{URL: srv.URL()}).subscribeURL(""); err != nil {
		t.Fatal(err)
	}
	if err := (&Jetstream{URL: srv.URL()}).Run(context.Background(), "yesterday", nil); err == nil {
		t.Error("a cursor that is not a time was accepted")
	}
	if err := (&Jetstream{URL: "https://example.com/x"}).Run(context.Background(), "", nil); err == nil {
		t.Error("an http:// URL was taken for a WebSocket")
	}
}

// A feed that cannot connect, or whose connection drops, says so with the
// wait before it tries again, and says the malformed events it skips: a
// dead feed is never silent.
func TestFeedsSayWhatGoesWrong(t *testing.T) {
	var mu sync.Mutex
	var said []string
	warn := func(s string) {
		mu.Lock()
		said = append(said, s)
		mu.Unlock()
	}
	ev := fixtureEvents(t)
	ev = append([][]byte{[]byte(`{"did":"did:plc:x","time_us":`)}, ev...)
	srv := feedtest.NewJetstream(t, ev, 3) // each connection cut after 3 events
	j := &Jetstream{URL: srv.URL(), Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	j.SetWarn(warn)
	collect(t, j, "", 2)
	mu.Lock()
	all := strings.Join(said, "\n")
	mu.Unlock()
	if !strings.Contains(all, "a malformed event skipped") || !strings.Contains(all, "jetstream read: ") || !strings.Contains(all, "; connecting again in ") {
		t.Errorf("the cut connections and the malformed event were not said:\n%s", all)
	}

	srv.Close() // nothing listens any more
	mu.Lock()
	said = nil
	mu.Unlock()
	m := &Mastodon{Instance: srv.Server.URL, Timeline: "public", Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	m.SetWarn(warn)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- m.Run(ctx, "", func(Post) error { return nil }) }()
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(5 * time.Millisecond) {
		mu.Lock()
		n := len(said)
		first := strings.Join(said, "\n")
		mu.Unlock()
		if n >= 2 {
			if !strings.Contains(first, "connection refused; connecting again in ") {
				t.Errorf("a dead instance said %q", first)
			}
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("a dead instance was retried in silence (%d connects)", m.Snapshot().Connects)
		}
	}
	cancel()
	<-done
}
