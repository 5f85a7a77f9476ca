package feeds

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"
)

// mastoServer is a loopback Mastodon instance: the hashtag streaming
// endpoint (server-sent events with heartbeats) and the hashtag timeline
// (REST, min_id), behind a bearer token. Statuses are posted to it in ID
// order; each stream connection sends the statuses posted after it opened
// (and those given to it at once), with malformed events and heartbeats
// between, and is cut after cut events.
type mastoServer struct {
	*httptest.Server
	t        *testing.T
	mu       sync.Mutex
	statuses []map[string]any // by ID, ascending
	live     []int            // per connection, how many statuses it streams before it is cut (-1: all, then quiet)
	conns    int
	rest     []string // min_id of each timeline request
	template map[string]any
}

func newMastoServer(t *testing.T, n int, live ...int) *mastoServer {
	t.Helper()
	b, err := os.ReadFile("testdata/mastodon_status.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &mastoServer{t: t, live: live}
	if err := json.Unmarshal(b, &s.template); err != nil {
		t.Fatal(err)
	}
	for i := range n {
		s.statuses = append(s.statuses, s.status(i))
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

func (s *mastoServer) status(i int) map[string]any {
	st := map[string]any{}
	for k, v := range s.template {
		st[k] = v
	}
	id := strconv.FormatInt(111985453312768311+int64(i), 10)
	st["id"], st["url"] = id, "https://mastodon.example/@healthwatch/"+id
	st["uri"] = "https://mastodon.example/users/healthwatch/statuses/" + id
	st["content"] = fmt.Sprintf("<p>Status %d: 5G masts cause headaches <a href=\"https://mastodon.example/tags/5G\" class=\"mention hashtag\" rel=\"tag\">#<span>5G</span></a></p>", i)
	return st
}

func (s *mastoServer) serve(w http.ResponseWriter, r *http.Request) {
	if r.Header.Get("Authorization") != "Bearer tok-123" {
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusUnauthorized)
		w.Write([]byte(`{"error":"The access token is invalid"}`))
		return
	}
	switch {
	case r.URL.Path == "/api/v1/streaming/hashtag" && r.URL.Query().Get("tag") == "5G":
		s.stream(w, r)
	case r.URL.Path == "/api/v1/timelines/tag/5G":
		minID := r.URL.Query().Get("min_id")
		s.mu.Lock()
		s.rest = append(s.rest, minID)
		var page []map[string]any
		for _, st := range s.statuses {
			if laterID(st["id"].(string), minID) && len(page) < 40 {
				page = append(page, st)
			}
		}
		s.mu.Unlock()
		slices.Reverse(page) // newest first, as Mastodon answers
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(page)
	default:
		http.NotFound(w, r)
	}
}

func (s *mastoServer) stream(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	n := s.conns
	s.conns++
	live := -1
	if len(s.live) > 0 {
		live = s.live[min(n, len(s.live)-1)]
	}
	// This connection streams what is posted from now: the statuses
	// after the first `posted` ones.
	start := n * 10
	s.mu.Unlock()
	w.Header().Set("Content-Type", "text/event-stream")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(http.StatusOK)
	fl := w.(http.Flusher)
	fmt.Fprint(w, ":)\n")
	fl.Flush()
	sent := 0
	for i := start; i < len(s.statuses); i++ {
		if live >= 0 && sent == live {
			return // cut mid-stream
		}
		b, _ := json.Marshal(s.statuses[i])
		fmt.Fprint(w, ":thump\n")
		fmt.Fprint(w, "event: delete\ndata: 111985453312760000\n\n")
		fmt.Fprint(w, "event: update\ndata: {\"id\": \"not a status\n\n")
		fmt.Fprintf(w, "event: update\r\ndata: %s\r\n\r\n", b)
		fl.Flush()
		sent++
	}
	<-r.Context().Done()
}

func TestMastodonStreamsAHashtag(t *testing.T) {
	srv := newMastoServer(t, 5)
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "#5G", Token: "tok-123"}
	got, cursors := collect(t, m, "", 5)
	if len(cursors) != 5 {
		t.Errorf("%d deliveries for 5 statuses", len(cursors))
	}
	p := got[0]
	if p.Cursor != "111985453312768311" || p.ID != "https://mastodon.example/@healthwatch/111985453312768311" ||
		p.Post.Text != "Status 0: 5G masts cause headaches #5G" || p.Post.Handle != "@healthwatch@127.0.0.1" ||
		!slices.Equal(p.Langs, []string{"en"}) || len(p.ImageKeys) != 2 || p.ImageKeys[0] != "UFO|~2ay~qt7%MfQt7fQ~qj[IUj[t7fQayfQ" {
		t.Errorf("first status read as %+v %+v", p, p.Post)
	}
	st := m.Snapshot()
	if st.Heartbeats < 5 || st.Malformed < 4 {
		t.Errorf("stats %+v: want the heartbeats and the malformed events counted", st)
	}
}

func TestMastodonBackfillsAfterACut(t *testing.T) {
	// 35 statuses; each connection streams from status 10×n and is cut
	// after 3: the statuses in between are read from the timeline.
	srv := newMastoServer(t, 35, 3)
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123",
		Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	got, _ := collect(t, m, "", 35)
	for i, p := range got {
		if want := strconv.FormatInt(111985453312768311+int64(i), 10); p.Cursor != want {
			t.Fatalf("status %d has ID %s, want %s: lost, repeated or out of order", i, p.Cursor, want)
		}
	}
	if len(srv.rest) == 0 || srv.rest[0] != "111985453312768313" {
		t.Errorf("timeline asked with min_id %q, want after the third status", srv.rest)
	}
}

func TestMastodonResumesFromACursor(t *testing.T) {
	srv := newMastoServer(t, 50, -1)
	srv.conns = 5 // the stream now sends from status 50: nothing new
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123"}
	got, _ := collect(t, m, "111985453312768331", 29) // after status 20
	if got[0].Cursor != "111985453312768332" || got[28].Cursor != "111985453312768360" {
		t.Errorf("resumed with %s … %s, want statuses 21 to 49", got[0].Cursor, got[28].Cursor)
	}
}

func TestMastodonRefusedTokenIsFinal(t *testing.T) {
	srv := newMastoServer(t, 1)
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "wrong"}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	err := m.Run(ctx, "", func(Post) error { return nil })
	if !errors.Is(err, ErrPermanent) || !strings.Contains(err.Error(), "401") {
		t.Errorf("a refused token: %v, want a final error naming the 401", err)
	}
	for _, bad := range []*Mastodon{{Instance: srv.URL, Timeline: "list"}, {Instance: srv.URL, Timeline: "hashtag"},
		{Instance: "mastodon.social", Timeline: "public"}, {Instance: srv.URL, Timeline: "home"}} {
		if err := bad.Run(ctx, "", nil); err == nil {
			t.Errorf("%+v accepted", bad)
		}
	}
}

// A stream that stops sending, heartbeats too, is taken for dead and made
// again.
func TestMastodonSilentStreamIsMadeAgain(t *testing.T) {
	tpl := newMastoServer(t, 1)
	b, _ := json.Marshal(tpl.statuses[0])
	var mu sync.Mutex
	conns := 0
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		mu.Lock()
		conns++
		n := conns
		mu.Unlock()
		w.Header().Set("Content-Type", "text/event-stream")
		w.WriteHeader(http.StatusOK)
		w.(http.Flusher).Flush()
		if n > 1 {
			fmt.Fprintf(w, "event: update\ndata: %s\n\n", b)
			w.(http.Flusher).Flush()
		}
		<-r.Context().Done() // the first connection stays silent
	}))
	defer srv.Close()
	m := &Mastodon{Instance: srv.URL, Timeline: "public", Idle: 200 * time.Millisecond,
		Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	got, _ := collect(t, m, "", 1)
	if st := m.Snapshot(); st.Connects != 2 || got[0].Cursor != "111985453312768311" {
		t.Errorf("stats %+v, cursor %s: want the status from a second connection after the silence", st, got[0].Cursor)
	}
}
