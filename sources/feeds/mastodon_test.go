package feeds

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"net/http"
	"net/http/httptest"
	"net/url"
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
// (REST: since_id, max_id, min_id and limit as Mastodon reads them,
// newest first), behind a bearer token. Statuses are posted to it in
// order; each stream connection sends the statuses posted after it opened
// (and those given to it at once), with malformed events and heartbeats
// between, and is cut after cut events. A late status (from another
// instance, its ID of the time it was written) comes on the stream after
// the status it follows (streamLate), or only into the timeline, while no
// connection is open (away).
type mastoServer struct {
	*httptest.Server
	t          *testing.T
	mu         sync.Mutex
	statuses   []map[string]any // as posted
	streamLate map[int]map[string]any
	away       []map[string]any
	live       []int // per connection, how many statuses it streams before it is cut (-1: all, then quiet)
	conns      int
	rest       []url.Values // the query of each timeline request
	template   map[string]any
}

func newMastoServer(t *testing.T, n int, live ...int) *mastoServer {
	t.Helper()
	b, err := os.ReadFile("testdata/mastodon_status.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &mastoServer{t: t, live: live, streamLate: map[int]map[string]any{}}
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

const firstID = 111985453312768311

func (s *mastoServer) status(i int) map[string]any {
	return s.statusWithID(firstID+uint64(i), fmt.Sprintf("Status %d: 5G masts cause headaches", i))
}

// lateStatus is a status written ago before status 0 and delivered late:
// its snowflake ID is of the time it was written.
func (s *mastoServer) lateStatus(ago time.Duration) map[string]any {
	return s.statusWithID(firstID-uint64(ago.Milliseconds())<<16, "Late: 5G masts cause nosebleeds")
}

func (s *mastoServer) statusWithID(n uint64, text string) map[string]any {
	st := map[string]any{}
	for k, v := range s.template {
		st[k] = v
	}
	id := strconv.FormatUint(n, 10)
	st["id"], st["url"] = id, "https://mastodon.example/@healthwatch/"+id
	st["uri"] = "https://mastodon.example/users/healthwatch/statuses/" + id
	st["content"] = "<p>" + text + " <a href=\"https://mastodon.example/tags/5G\" class=\"mention hashtag\" rel=\"tag\">#<span>5G</span></a></p>"
	return st
}

func idOf(st map[string]any) uint64 {
	n, _ := strconv.ParseUint(st["id"].(string), 10, 64)
	return n
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
		q := r.URL.Query()
		param := func(k string, none uint64) uint64 {
			if v, err := strconv.ParseUint(q.Get(k), 10, 64); err == nil {
				return v
			}
			return none
		}
		since, maxID, minID := param("since_id", 0), param("max_id", math.MaxUint64), param("min_id", 0)
		limit := min(int(param("limit", 20)), 40)
		s.mu.Lock()
		s.rest = append(s.rest, q)
		var all []map[string]any
		all = append(all, s.statuses...)
		all = append(all, s.away...)
		for _, st := range s.streamLate {
			all = append(all, st)
		}
		s.mu.Unlock()
		var page []map[string]any
		for _, st := range all {
			if id := idOf(st); id > since && id > minID && id < maxID {
				page = append(page, st)
			}
		}
		slices.SortFunc(page, func(a, b map[string]any) int { return cmp.Compare(idOf(b), idOf(a)) })
		if len(page) > limit {
			if q.Has("min_id") {
				page = page[len(page)-limit:] // the oldest after min_id
			} else {
				page = page[:limit] // the newest
			}
		}
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
		if late, ok := s.streamLate[i]; ok {
			b, _ := json.Marshal(late)
			fmt.Fprintf(w, "event: update\ndata: %s\n\n", b)
		}
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
	// The catch-up after the first cut: the lookback window before the
	// third status (newest first), then the statuses after it.
	back := 0
	for back < len(srv.rest) && srv.rest[back].Has("max_id") {
		back++
	}
	if back == 0 || back == len(srv.rest) || srv.rest[0].Get("max_id") != "111985453312768313" ||
		srv.rest[0].Get("since_id") != strconv.FormatUint(111985453312768313-uint64(DefaultLookback.Milliseconds())<<16, 10) ||
		srv.rest[back].Get("min_id") != "111985453312768313" {
		t.Errorf("timeline asked with %v, want the lookback before the third status, then min_id after it", srv.rest)
	}
}

// statusID is the ID a post was delivered with (its URL ends with it).
func statusID(p Post) string { return p.ID[strings.LastIndexByte(p.ID, '/')+1:] }

// A status from another instance that arrives while the stream is away,
// with an ID below the cursor (of the time it was written), is read by
// the catch-up, once; the cursor never moves back.
func TestMastodonReadsLateStatusesMissedWhileAway(t *testing.T) {
	srv := newMastoServer(t, 35, 3)
	late := srv.lateStatus(2 * time.Minute)
	srv.away = append(srv.away, late, srv.lateStatus(time.Hour)) // the second beyond the lookback
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123",
		Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
	got, cursors := collect(t, m, "", 36)
	n, ids := 0, map[string]int{}
	for _, p := range got {
		ids[statusID(p)]++
		if statusID(p) == late["id"] {
			n++
		}
	}
	if n != 1 || len(ids) != 36 {
		t.Errorf("the late status read %d times; %d distinct statuses of %d deliveries, want 36", n, len(ids), len(got))
	}
	cs := make([]uint64, len(cursors))
	for i, c := range cursors {
		cs[i], _ = strconv.ParseUint(c, 10, 64)
	}
	if !slices.IsSorted(cs) {
		t.Errorf("the cursor moved back: %v", cursors)
	}
}

// A late status the stream brings is delivered though its ID is below the
// cursor.
func TestMastodonStreamsALateStatus(t *testing.T) {
	srv := newMastoServer(t, 5)
	late := srv.lateStatus(30 * time.Second)
	srv.streamLate[2] = late
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123"}
	got, _ := collect(t, m, "", 6)
	if statusID(got[3]) != late["id"] || got[3].Cursor != "111985453312768313" || got[3].Post.Text != "Late: 5G masts cause nosebleeds #5G" {
		t.Errorf("fourth delivery %s (cursor %s), want the late status %s with the cursor left at the third", statusID(got[3]), got[3].Cursor, late["id"])
	}
}

// A server whose status IDs are not decimal snowflakes (GoToSocial's
// ULIDs) has its statuses delivered; the cursor stays at the last
// snowflake read.
func TestMastodonStreamsAStatusWithAnotherKindOfID(t *testing.T) {
	srv := newMastoServer(t, 5)
	const ulid = "01HV3T9Z6Q4K2M8X7N5B1C0D9E"
	other := srv.lateStatus(0)
	other["id"], other["url"] = ulid, "https://gts.example/@healthwatch/statuses/"+ulid
	srv.streamLate[2] = other
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123"}
	got, _ := collect(t, m, "", 6)
	if statusID(got[3]) != ulid || got[3].Cursor != "111985453312768313" {
		t.Errorf("fourth delivery %s (cursor %s), want the ULID status with the cursor left at the third", statusID(got[3]), got[3].Cursor)
	}
}

// After a restart from a cursor, the lookback window is read again: a
// status that arrived late below the cursor comes, and the window's
// statuses come again with their IDs (the consumer keeps them by ID and
// drops them), the cursor not moved back.
func TestMastodonResumesFromACursor(t *testing.T) {
	srv := newMastoServer(t, 50, -1)
	srv.conns = 5 // the stream now sends from status 50: nothing new
	late := srv.lateStatus(time.Minute)
	srv.away = append(srv.away, late)
	m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123"}
	got, _ := collect(t, m, "111985453312768331", 1+20+29) // after status 20
	if statusID(got[0]) != late["id"] || got[0].Cursor != "111985453312768331" {
		t.Errorf("resumed with %s (cursor %s), want the late status first, the cursor kept", statusID(got[0]), got[0].Cursor)
	}
	for i, p := range got[1:21] {
		if want := strconv.Itoa(firstID + i); statusID(p) != want || p.Cursor != "111985453312768331" {
			t.Fatalf("window status %d: %s (cursor %s), want %s again with the cursor kept", i, statusID(p), p.Cursor, want)
		}
	}
	if got[21].Cursor != "111985453312768332" || got[49].Cursor != "111985453312768360" {
		t.Errorf("then %s … %s, want statuses 21 to 49", got[21].Cursor, got[49].Cursor)
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

// The IDs kept to drop a status read twice are those of the lookback
// before the highest: a long watch does not pile them up.
func TestMastodonSeenIDsStayBounded(t *testing.T) {
	s := newSeenIDs(time.Minute)
	const step = uint64(100) << 16 // a status every 100 ms
	id := uint64(firstID)
	for range 100_000 { // close to 3 hours
		id += step
		if !s.add(id) {
			t.Fatalf("%d taken for read already", id)
		}
	}
	if s.add(id) || s.add(id-step*100) {
		t.Error("a status of the last minute read again was not dropped")
	}
	if n := len(s.ids); n > 2*600+1024 {
		t.Errorf("%d IDs kept, want about the 600 of the last minute", n)
	}
	if !s.add(id - step*10_000) {
		t.Error("the ID of a status read before the lookback is still kept")
	}
}
