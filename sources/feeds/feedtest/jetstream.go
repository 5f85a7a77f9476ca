// Package feedtest holds loopback servers that speak the feeds'
// protocols, for tests and benchmarks.
package feedtest

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Jetstream is a loopback Jetstream instance: it holds a log of events in
// time_us order and, as Jetstream does, replays them from the cursor a
// client asks for (inclusive), keeping only wantedCollections and
// wantedDids. cut says after how many events it drops each connection
// (0: never).
type Jetstream struct {
	*httptest.Server
	mu      sync.Mutex
	events  [][]byte
	times   []int64
	cut     []int // per connection, in order; the last repeats
	queries []string
}

func NewJetstream(t testing.TB, events [][]byte, cut ...int) *Jetstream {
	t.Helper()
	s := &Jetstream{events: events, cut: cut}
	for _, e := range events {
		var ev struct {
			TimeUS int64 `json:"time_us"`
		}
		json.Unmarshal(e, &ev) // a malformed event keeps time 0: sent to every cursor
		s.times = append(s.times, ev.TimeUS)
	}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// Queries are the query strings of the connections made, in order.
func (s *Jetstream) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queries)
}

// PostEvent is a real-shaped Jetstream event: the creation of a post by
// did, under rkey, at timeUS, saying text.
func PostEvent(did, rkey string, timeUS int64, text string) []byte {
	rec, _ := json.Marshal(map[string]any{"$type": "app.bsky.feed.post", "createdAt": time.UnixMicro(timeUS).UTC().Format(time.RFC3339Nano),
		"langs": []string{"en"}, "text": text})
	b, _ := json.Marshal(map[string]any{"did": did, "time_us": timeUS, "kind": "commit", "commit": map[string]any{
		"rev": "3l3qo2vuowo2b", "operation": "create", "collection": "app.bsky.feed.post", "rkey": rkey,
		"record": json.RawMessage(rec), "cid": "bafyreidwaivazkwu67xztlmuobx35hs2lnfh3kolmgfmucldvhd3sgzcqi"}})
	return b
}

// URL is the instance's subscribe endpoint (ws://…/subscribe).
func (s *Jetstream) URL() string {
	return "ws" + strings.TrimPrefix(s.Server.URL, "http") + "/subscribe"
}

func (s *Jetstream) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/subscribe" {
		http.NotFound(w, r)
		return
	}
	s.mu.Lock()
	n := len(s.queries)
	s.queries = append(s.queries, r.URL.RawQuery)
	cut := 0
	if len(s.cut) > 0 {
		cut = s.cut[min(n, len(s.cut)-1)]
	}
	s.mu.Unlock()
	q := r.URL.Query()
	var cursor int64
	if c := q.Get("cursor"); c != "" {
		var err error
		if cursor, err = strconv.ParseInt(c, 10, 64); err != nil {
			http.Error(w, "bad cursor", http.StatusBadRequest)
			return
		}
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	sent := 0
	for i, e := range s.events {
		if s.times[i] != 0 && s.times[i] < cursor {
			continue
		}
		if !wanted(e, q["wantedCollections"], q["wantedDids"]) {
			continue
		}
		if cut > 0 && sent == cut {
			return // dropped without a close frame, as a dead link would
		}
		typ := websocket.MessageText
		if strings.HasPrefix(string(e), "\x00") {
			typ = websocket.MessageBinary
		}
		if err := conn.Write(r.Context(), typ, e); err != nil {
			return
		}
		sent++
	}
	// Then the stream goes quiet until the client leaves.
	conn.Read(r.Context())
}

func wanted(e []byte, cols, dids []string) bool {
	var ev struct {
		DID    string `json:"did"`
		Commit *struct {
			Collection string `json:"collection"`
		} `json:"commit"`
	}
	if json.Unmarshal(e, &ev) != nil {
		return true
	}
	if len(dids) > 0 && !slices.Contains(dids, ev.DID) {
		return false
	}
	if ev.Commit != nil && len(cols) > 0 && !slices.Contains(cols, ev.Commit.Collection) {
		return false
	}
	return true
}
