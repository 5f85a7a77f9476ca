package feeds

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/big"
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

	"github.com/oklog/ulid/v2"
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
	ids        idKind
}

// idKind is how a server writes its status IDs and compares those a
// client hands back, as the real server does.
type idKind struct {
	name string
	// at is the ID of a status posted at ms (milliseconds since 1970),
	// the seq-th of that millisecond.
	at func(ms int64, seq int) string
	// cmp compares two IDs; ok is false when the server cannot read one
	// (then it leaves the parameter out).
	cmp func(a, b string) (c int, ok bool)
}

// firstMS is the time of status 0.
const firstMS = firstID >> 16

// Mastodon: a decimal snowflake, compared as a number (Mastodon casts the
// parameter to a bigint).
var snowflakeIDs = idKind{"Mastodon snowflakes",
	func(ms int64, seq int) string { return strconv.FormatUint(uint64(ms)<<16|uint64(seq), 10) },
	func(a, b string) (int, bool) {
		x, err1 := strconv.ParseUint(a, 10, 64)
		y, err2 := strconv.ParseUint(b, 10, 64)
		return cmp.Compare(x, y), err1 == nil && err2 == nil
	}}

// GoToSocial: a ULID, compared as a string (its database compares the
// text column).
var ulidIDs = idKind{"GoToSocial ULIDs",
	func(ms int64, seq int) string {
		var u ulid.ULID
		if err := u.SetTime(uint64(ms)); err != nil {
			panic(err)
		}
		// the random part: any bytes (here the sequence, spread out)
		copy(u[6:], fmt.Appendf(nil, "%010d", seq*7919))
		return u.String()
	},
	func(a, b string) (int, bool) { return strings.Compare(a, b), len(a) == 26 && len(b) == 26 }}

// Pleroma and Akkoma: a FlakeId (64 bits of milliseconds, a 48-bit
// worker, a 16-bit sequence) in base 62 with the digits 0-9A-Za-z,
// compared as the 128-bit number it decodes to; FlakeId reads no string
// shorter than 18 characters.
var flakeIDs = idKind{"Akkoma FlakeIds",
	func(ms int64, seq int) string { return flakeAt(ms, 0x2a1b3c4d5e6f, seq) },
	func(a, b string) (int, bool) {
		x, ok1 := new(big.Int).SetString(swapCase(a), 62)
		y, ok2 := new(big.Int).SetString(swapCase(b), 62)
		if !ok1 || !ok2 || len(a) < 18 || len(b) < 18 {
			return 0, false
		}
		return x.Cmp(y), true
	}}

func flakeAt(ms, worker int64, seq int) string {
	n := new(big.Int).Lsh(big.NewInt(ms), 64)
	n.Or(n, new(big.Int).Lsh(big.NewInt(worker), 16)).Or(n, big.NewInt(int64(seq)))
	s := swapCase(n.Text(62)) // Go's base 62 is 0-9a-zA-Z
	return strings.Repeat("0", max(0, 18-len(s))) + s
}

func swapCase(s string) string {
	return strings.Map(func(r rune) rune {
		switch {
		case 'a' <= r && r <= 'z':
			return r - 'a' + 'A'
		case 'A' <= r && r <= 'Z':
			return r - 'A' + 'a'
		}
		return r
	}, s)
}

func newMastoServer(t *testing.T, n int, live ...int) *mastoServer {
	return newMastoServerOf(t, snowflakeIDs, n, live...)
}

func newMastoServerOf(t *testing.T, ids idKind, n int, live ...int) *mastoServer {
	t.Helper()
	b, err := os.ReadFile("testdata/mastodon_status.json")
	if err != nil {
		t.Fatal(err)
	}
	s := &mastoServer{t: t, live: live, streamLate: map[int]map[string]any{}, ids: ids}
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

// status is status i, posted in the same millisecond as the ones before
// (a snowflake one above the one before).
func (s *mastoServer) status(i int) map[string]any {
	return s.statusWithID(s.ids.at(firstMS, int(firstID&0xffff)+i), fmt.Sprintf("Status %d: 5G masts cause headaches", i))
}

// lateStatus is a status written ago before status 0 and delivered late:
// its ID is of the time it was written.
func (s *mastoServer) lateStatus(ago time.Duration) map[string]any {
	return s.statusWithID(s.ids.at(firstMS-ago.Milliseconds(), int(firstID&0xffff)), "Late: 5G masts cause nosebleeds")
}

func (s *mastoServer) statusWithID(id, text string) map[string]any {
	st := map[string]any{}
	for k, v := range s.template {
		st[k] = v
	}
	st["id"], st["url"] = id, "https://mastodon.example/@healthwatch/"+id
	st["uri"] = "https://mastodon.example/users/healthwatch/statuses/" + id
	st["content"] = "<p>" + text + " <a href=\"https://mastodon.example/tags/5G\" class=\"mention hashtag\" rel=\"tag\">#<span>5G</span></a></p>"
	return st
}

func idOf(st map[string]any) string { return st["id"].(string) }

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
		// after says whether id is after the parameter k (true when it
		// is not given or not an ID the server reads).
		after := func(id, k string, sign int) bool {
			c, ok := s.ids.cmp(id, q.Get(k))
			return !q.Has(k) || !ok || c*sign > 0
		}
		limit := 20
		if l, err := strconv.Atoi(q.Get("limit")); err == nil {
			limit = min(l, 40)
		}
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
			if id := idOf(st); after(id, "since_id", 1) && after(id, "min_id", 1) && after(id, "max_id", -1) {
				page = append(page, st)
			}
		}
		slices.SortFunc(page, func(a, b map[string]any) int {
			c, _ := s.ids.cmp(idOf(b), idOf(a))
			return c
		})
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
// the catch-up, once; the cursor never moves back. So for each kind of
// ID, each server comparing them its own way.
func TestMastodonReadsLateStatusesMissedWhileAway(t *testing.T) {
	for _, ids := range []idKind{snowflakeIDs, ulidIDs, flakeIDs} {
		t.Run(ids.name, func(t *testing.T) {
			srv := newMastoServerOf(t, ids, 35, 3)
			late := srv.lateStatus(2 * time.Minute)
			srv.away = append(srv.away, late, srv.lateStatus(time.Hour)) // the second beyond the lookback
			m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123",
				Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
			got, cursors := collect(t, m, "", 36)
			n, ids2 := 0, map[string]int{}
			for _, p := range got {
				ids2[statusID(p)]++
				if statusID(p) == late["id"] {
					n++
				}
			}
			if n != 1 || len(ids2) != 36 {
				t.Errorf("the late status read %d times; %d distinct statuses of %d deliveries, want 36", n, len(ids2), len(got))
			}
			if !slices.IsSortedFunc(cursors, func(a, b string) int { c, _ := ids.cmp(a, b); return c }) {
				t.Errorf("the cursor moved back: %v", cursors)
			}
		})
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
// ULIDs, Akkoma's FlakeIds) has its statuses streamed, the cursor the
// highest ID as the server orders them; after a cut the catch-up asks for
// the lookback window from the ID a status of 15 minutes before the
// cursor would have, then the statuses after the cursor, and nothing is
// lost, repeated or out of order.
func TestMastodonCatchesUpWithOtherKindsOfID(t *testing.T) {
	for _, tc := range []struct {
		ids  idKind
		from string // the lookback's start before the third status
	}{
		{ulidIDs, func() string {
			var u ulid.ULID
			u.SetTime(uint64(firstMS - DefaultLookback.Milliseconds()))
			return u.String()
		}()},
		{flakeIDs, flakeAt(firstMS-DefaultLookback.Milliseconds(), 0, 0)},
	} {
		t.Run(tc.ids.name, func(t *testing.T) {
			srv := newMastoServerOf(t, tc.ids, 35, 3)
			m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123",
				Backoff: Backoff{Initial: time.Millisecond, Max: 5 * time.Millisecond}}
			got, _ := collect(t, m, "", 35)
			for i, p := range got {
				if want := idOf(srv.statuses[i]); statusID(p) != want || p.Cursor != want {
					t.Fatalf("delivery %d: %s (cursor %s), want %s: lost, repeated or out of order", i, statusID(p), p.Cursor, want)
				}
			}
			third := idOf(srv.statuses[2])
			if c, ok := tc.ids.cmp(tc.from, third); !ok || c >= 0 {
				t.Fatalf("the test's lookback start %s is not an ID below %s to the server", tc.from, third)
			}
			back := 0
			for back < len(srv.rest) && srv.rest[back].Has("max_id") {
				back++
			}
			if back == 0 || back == len(srv.rest) || srv.rest[0].Get("max_id") != third ||
				srv.rest[0].Get("since_id") != tc.from || srv.rest[back].Get("min_id") != third {
				t.Errorf("timeline asked with %v, want since_id %s max_id %s, then min_id %s", srv.rest, tc.from, third, third)
			}
		})
	}
}

// After a restart from a cursor of each kind, the status that arrived
// late below it comes first, then the lookback window again, then what
// came after the cursor.
func TestMastodonResumesFromACursorOfEachKind(t *testing.T) {
	for _, ids := range []idKind{snowflakeIDs, ulidIDs, flakeIDs} {
		t.Run(ids.name, func(t *testing.T) {
			srv := newMastoServerOf(t, ids, 50, -1)
			srv.conns = 5 // the stream now sends from status 50: nothing new
			late := srv.lateStatus(time.Minute)
			srv.away = append(srv.away, late)
			m := &Mastodon{Instance: srv.URL, Timeline: "hashtag", Tag: "5G", Token: "tok-123"}
			cursor := idOf(srv.statuses[20])
			got, _ := collect(t, m, cursor, 1+20+29)
			if statusID(got[0]) != late["id"] || got[0].Cursor != cursor {
				t.Errorf("resumed with %s (cursor %s), want the late status first, the cursor kept", statusID(got[0]), got[0].Cursor)
			}
			for i, p := range got[1:] {
				want := idOf(srv.statuses[i])
				if i >= 20 {
					want = idOf(srv.statuses[i+1])
				}
				if statusID(p) != want {
					t.Fatalf("delivery %d: %s, want %s", i+1, statusID(p), want)
				}
			}
		})
	}
}

// An ID muse cannot read a time from (no known kind) has no lookback
// window: the catch-up reads only what came after the cursor.
func TestMastodonIDWithoutATimeHasNoLookback(t *testing.T) {
	for _, id := range []string{"abc", "status-17", "01HV3T9Z6Q4K2M8X7N5B1C0D9E"[:20]} {
		if from, ok := lookbackStart(id, time.Minute); ok {
			t.Errorf("%s: lookback from %s, want none", id, from)
		}
	}
	// A FlakeId of Pleroma's documentation, 2019-09-18T08:28:47Z, and a
	// ULID of the same time.
	if from, ok := lookbackStart("9n2ciuz1wdesFnrGJU", time.Minute); !ok || !(from < "9n2ciuz1wdesFnrGJU") || len(from) != 18 {
		t.Errorf("FlakeId: lookback from %q", from)
	}
	var u ulid.ULID
	u.SetTime(1568795327357)
	if from, ok := lookbackStart(u.String(), time.Minute); !ok || from != ulid.MustNew(1568795327357-60_000, zeroReader{}).String() {
		t.Errorf("ULID %s: lookback from %q", u, from)
	}
}

type zeroReader struct{}

func (zeroReader) Read(p []byte) (int, error) { clear(p); return len(p), nil }

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
	for _, ids := range []idKind{snowflakeIDs, ulidIDs, flakeIDs} {
		s := newSeenIDs(time.Minute)
		at := func(i int) string { return ids.at(firstMS+int64(i)*100, 0) } // a status every 100 ms
		const n = 100_000                                                   // close to 3 hours
		for i := range n {
			if !s.add(at(i)) {
				t.Fatalf("%s: %s taken for read already", ids.name, at(i))
			}
		}
		if s.add(at(n-1)) || s.add(at(n-100)) {
			t.Errorf("%s: a status of the last minute read again was not dropped", ids.name)
		}
		if n := len(s.ids); n > 2*600+1024 {
			t.Errorf("%s: %d IDs kept, want about the 600 of the last minute", ids.name, n)
		}
		if !s.add(at(n - 10_000)) {
			t.Errorf("%s: the ID of a status read before the lookback is still kept", ids.name)
		}
	}
}
