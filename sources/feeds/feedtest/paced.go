package feedtest

import (
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/coder/websocket"
)

// Paced is a loopback Jetstream for long replays: its log is not held but
// made on demand, event i by event(i, timeUS) with time_us = Start +
// i×Step, and a connection sends it at rate events a second (a firehose's
// pace, not a flood), from the cursor a client asks for, as Jetstream
// replays. The log has no end: a replay stops when its client leaves.
type Paced struct {
	*httptest.Server
	Start, Step int64 // time_us of event 0, and between two events
	rate        float64
	event       func(i int64, timeUS int64) []byte
	sent        atomic.Int64
}

// NewPaced starts a paced Jetstream sending rate events a second.
func NewPaced(t testing.TB, rate float64, event func(i, timeUS int64) []byte) *Paced {
	t.Helper()
	s := &Paced{Start: 1725911162000000, Step: max(int64(1e6/rate), 1), rate: rate, event: event}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// URL is the instance's subscribe endpoint (ws://…/subscribe).
func (s *Paced) URL() string {
	return "ws" + strings.TrimPrefix(s.Server.URL, "http") + "/subscribe"
}

// Sent is how many events the connections have sent.
func (s *Paced) Sent() int64 { return s.sent.Load() }

func (s *Paced) serve(w http.ResponseWriter, r *http.Request) {
	if r.URL.Path != "/subscribe" {
		http.NotFound(w, r)
		return
	}
	var i int64
	if c := r.URL.Query().Get("cursor"); c != "" {
		cursor, err := strconv.ParseInt(c, 10, 64)
		if err != nil {
			http.Error(w, "bad cursor", http.StatusBadRequest)
			return
		}
		i = max(0, (cursor-s.Start+s.Step-1)/s.Step) // the cursor's event included
	}
	conn, err := websocket.Accept(w, r, nil)
	if err != nil {
		return
	}
	defer conn.CloseNow()
	// Sent in ticks of 10 ms, each the events due by then: the pace holds
	// over time whatever a tick's delay.
	tick := time.NewTicker(10 * time.Millisecond)
	defer tick.Stop()
	began, first := time.Now(), i
	for {
		select {
		case <-r.Context().Done():
			return
		case <-tick.C:
		}
		due := first + int64(time.Since(began).Seconds()*s.rate)
		for ; i < due; i++ {
			if err := conn.Write(r.Context(), websocket.MessageText, s.event(i, s.Start+i*s.Step)); err != nil {
				return
			}
			s.sent.Add(1)
		}
	}
}
