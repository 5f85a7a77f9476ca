package feeds

import (
	"bufio"
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"time"

	"github.com/musecheck/muse/sources/posts"
)

// Mastodon reads a timeline of a Mastodon instance through its streaming
// API (GET /api/v1/streaming/public, /hashtag?tag=, /list?list=: server-
// sent events, "event: update" with a Status as data, ":thump" comments as
// heartbeats) with an access token. The stream has no cursor of its own:
// the feed's cursor is the highest status ID read, and after a reconnect
// or a restart the statuses posted in between are read first from the
// timeline's REST endpoint (/api/v1/timelines/public, /tag/:tag,
// /list/:id with min_id), up to BackfillPages pages of 40.
//
// Status IDs hold the time a status was posted (Mastodon's snowflakes,
// GoToSocial's ULIDs, Pleroma's and Akkoma's FlakeIds: see compareIDs),
// and a status from another instance can reach this one late, with an ID
// below the cursor: so the catch-up also reads again the Lookback before
// the cursor (since_id and max_id, newest first, up to lookbackPages
// pages), and the stream delivers such a status whatever its ID. An ID
// whose time cannot be read has no lookback: the catch-up reads only
// what came after the cursor. A status read
// twice (the catch-up and the stream overlap) is dropped by its ID while
// Run runs; after a restart the window's statuses come again with the
// IDs they had, for the consumer to drop.
type Mastodon struct {
	// Instance is the instance's address (https://mastodon.social).
	Instance string
	// Streaming is the streaming server's address when it is not the
	// instance's (the instance's /api/v1/instance says so); "" is Instance.
	Streaming string
	// Timeline is "public", "public:local", "hashtag" or "list".
	Timeline string
	Tag      string // the hashtag, without '#', for "hashtag"
	List     string // the list's ID, for "list"
	// Keywords keep only statuses whose text holds one of them, any case.
	Keywords []string
	// Token is the access token (Bearer); a list needs one, and many
	// instances ask one for the public timelines.
	Token         string
	Backoff       Backoff
	HTTPClient    *http.Client
	BackfillPages int // 0: 10
	// Lookback is how long before the cursor the catch-up reads again for
	// statuses that arrived late (0: DefaultLookback).
	Lookback time.Duration
	// Idle is how long the stream may stay silent, heartbeats included,
	// before the connection is taken for dead (0: 90 s; Mastodon sends a
	// heartbeat every 15 s or so).
	Idle time.Duration
	counted
}

// Name is the feed's identity: the instance and the timeline.
func (m *Mastodon) Name() string {
	s := "mastodon " + strings.TrimRight(m.Instance, "/") + " " + m.Timeline
	switch m.Timeline {
	case "hashtag":
		s += " #" + m.Tag
	case "list":
		s += " " + m.List
	}
	if len(m.Keywords) > 0 {
		s += " keywords=" + strings.Join(m.Keywords, ",")
	}
	return s
}

func (m *Mastodon) client() *http.Client { return cmp.Or(m.HTTPClient, http.DefaultClient) }

// paths are the streaming and REST addresses of the timeline.
func (m *Mastodon) paths() (stream, rest string, err error) {
	base := strings.TrimRight(m.Instance, "/")
	sbase := strings.TrimRight(cmp.Or(m.Streaming, m.Instance), "/")
	for _, b := range []string{base, sbase} {
		if u, err := url.Parse(b); err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
			return "", "", fmt.Errorf("mastodon: %q is not an instance's http(s) address", b)
		}
	}
	switch m.Timeline {
	case "public", "":
		return sbase + "/api/v1/streaming/public", base + "/api/v1/timelines/public?", nil
	case "public:local":
		return sbase + "/api/v1/streaming/public/local", base + "/api/v1/timelines/public?local=true&", nil
	case "hashtag":
		tag := strings.TrimPrefix(strings.TrimSpace(m.Tag), "#")
		if tag == "" {
			return "", "", errors.New("mastodon: a hashtag timeline needs a tag")
		}
		return sbase + "/api/v1/streaming/hashtag?tag=" + url.QueryEscape(tag),
			base + "/api/v1/timelines/tag/" + url.PathEscape(tag) + "?", nil
	case "list":
		if strings.TrimSpace(m.List) == "" {
			return "", "", errors.New("mastodon: a list timeline needs the list's ID")
		}
		return sbase + "/api/v1/streaming/list?list=" + url.QueryEscape(m.List),
			base + "/api/v1/timelines/list/" + url.PathEscape(m.List) + "?", nil
	}
	return "", "", fmt.Errorf("mastodon: unknown timeline %q (public, public:local, hashtag or list)", m.Timeline)
}

func (m *Mastodon) get(ctx context.Context, u, accept string) (*http.Response, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", accept)
	if m.Token != "" {
		req.Header.Set("Authorization", "Bearer "+m.Token)
	}
	resp, err := m.client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("mastodon: %w", err)
	}
	if resp.StatusCode != http.StatusOK {
		resp.Body.Close()
		return nil, statusErr("mastodon "+req.URL.Path, resp.StatusCode, resp.Status)
	}
	return resp, nil
}

// DefaultLookback is how far before the cursor a catch-up looks for
// statuses that arrived late: federation delivers most statuses within
// seconds; one whose delivery failed is retried later, at times hours
// later, which no window catches whole.
const DefaultLookback = 15 * time.Minute

// lookbackPages bounds the read of the lookback window, in pages of 40.
const lookbackPages = 5

// Run reads the timeline, after cursor (a status ID) when one is given.
func (m *Mastodon) Run(ctx context.Context, cursor string, emit func(Post) error) error {
	streamURL, restURL, err := m.paths()
	if err != nil {
		return err
	}
	seen := newSeenIDs(cmp.Or(m.Lookback, DefaultLookback))
	if cursor != "" {
		if !validID(cursor) {
			return fmt.Errorf("mastodon cursor %q: not a status ID", cursor)
		}
		seen.high = cursor
	}
	host := ""
	if u, err := url.Parse(m.Instance); err == nil {
		host = u.Hostname()
	}
	keywords := make([]string, 0, len(m.Keywords))
	for _, k := range m.Keywords {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			keywords = append(keywords, k)
		}
	}
	deliver := func(data []byte) error {
		st, err := posts.FromMastodonStatus(data, host)
		if err != nil {
			m.malformed()
			return nil
		}
		if !validID(st.ID) {
			m.malformed()
			return nil
		}
		if !seen.add(st.ID) {
			return nil // read already (the catch-up and the stream overlap)
		}
		// The cursor is the highest ID read: a late status below it does
		// not move it back.
		p := Post{ID: st.Post.URL, Cursor: seen.high, Post: st.Post, ImageKeys: st.Blurhashes, Boost: st.Boost}
		if p.ID == "" {
			p.ID = strings.TrimRight(m.Instance, "/") + "/statuses/" + st.ID
		}
		var l struct {
			Language string `json:"language"`
			Reblog   *struct {
				Language string `json:"language"`
			} `json:"reblog"`
		}
		_ = json.Unmarshal(data, &l)
		if l.Reblog != nil {
			l.Language = l.Reblog.Language
		}
		if l.Language != "" {
			p.Langs = []string{l.Language}
		}
		if len(keywords) > 0 && !hasKeyword(p.Post.Text, keywords) {
			p.Post, p.ID, p.Langs, p.ImageKeys = nil, "", nil, nil
		}
		if err := emit(p); err != nil {
			return &emitErr{err}
		}
		return nil
	}
	return reconnect(ctx, m.Backoff, &m.counted, func(ctx context.Context, progressed func()) error {
		ctx, cancel := context.WithCancel(ctx)
		defer cancel()
		resp, err := m.get(ctx, streamURL, "text/event-stream")
		if err != nil {
			return err
		}
		defer resp.Body.Close()
		if seen.high != "" {
			if err := m.catchUp(ctx, restURL, seen, deliver); err != nil {
				return err
			}
		}
		// A silent connection is cut: every line read puts the cut off.
		idle := cmp.Or(m.Idle, 90*time.Second)
		watchdog := time.AfterFunc(idle, cancel)
		defer watchdog.Stop()
		return m.read(resp.Body, func() { watchdog.Reset(idle) }, func(event string, data []byte) error {
			progressed()
			if event != "update" {
				return nil // delete, status.update, notification…
			}
			return deliver(data)
		})
	})
}

// catchUp reads from the REST timeline what the stream did not bring
// while it was away: first the lookback window before the cursor, newest
// first down to its start or for lookbackPages pages (the late statuses),
// then the statuses after the cursor, oldest first, up to BackfillPages
// pages; each part is delivered oldest first.
func (m *Mastodon) catchUp(ctx context.Context, restURL string, seen *seenIDs, deliver func([]byte) error) error {
	cursor := seen.high
	var window []status
	since, ok := seen.low()
	for i, maxID := 0, cursor; ok && i < lookbackPages; i++ {
		page, err := m.page(ctx, restURL+"limit=40&since_id="+url.QueryEscape(since)+"&max_id="+url.QueryEscape(maxID))
		if err != nil {
			return err
		}
		if len(page) == 0 {
			break
		}
		window = append(window, page...)
		maxID = page[0].id // the page's oldest
	}
	slices.SortFunc(window, func(a, b status) int { return compareIDs(a.id, b.id) })
	for _, s := range window {
		if err := deliver(s.raw); err != nil {
			return err
		}
	}
	minID := cursor
	for range cmp.Or(m.BackfillPages, 10) {
		page, err := m.page(ctx, restURL+"limit=40&min_id="+url.QueryEscape(minID))
		if err != nil {
			return err
		}
		if len(page) == 0 {
			return nil
		}
		for _, s := range page {
			if err := deliver(s.raw); err != nil {
				return err
			}
		}
		minID = page[len(page)-1].id
	}
	return nil
}

// status is a status of a timeline page, its ID read.
type status struct {
	id  string
	raw json.RawMessage
}

// page reads one page of the REST timeline, oldest first.
func (m *Mastodon) page(ctx context.Context, u string) ([]status, error) {
	resp, err := m.get(ctx, u, "application/json")
	if err != nil {
		return nil, err
	}
	var page []json.RawMessage
	err = json.NewDecoder(io.LimitReader(resp.Body, 32<<20)).Decode(&page)
	resp.Body.Close()
	if err != nil {
		return nil, fmt.Errorf("mastodon timeline: %w", err)
	}
	var out []status
	for _, raw := range page {
		var s struct {
			ID string `json:"id"`
		}
		if err := json.Unmarshal(raw, &s); err != nil || !validID(s.ID) {
			m.malformed()
			continue
		}
		out = append(out, status{s.ID, raw})
	}
	slices.SortFunc(out, func(a, b status) int { return compareIDs(a.id, b.id) })
	return out, nil
}

// seenIDs are the IDs of the statuses delivered lately, to drop one read
// twice: those within the lookback before the highest (by the time the
// IDs hold), at most maxSeen of them.
type seenIDs struct {
	lookback time.Duration
	high     string // the highest ID read (or the cursor)
	ids      map[string]struct{}
	next     int // the size at which the old IDs are dropped
}

// maxSeen bounds the IDs kept: a flood beyond it forgets them all, and
// the consumer drops by ID what comes twice.
const maxSeen = 100_000

func newSeenIDs(lookback time.Duration) *seenIDs {
	return &seenIDs{lookback: lookback, ids: map[string]struct{}{}, next: 1024}
}

// low is the ID the lookback starts after; false when the highest ID
// holds no time to count back from.
func (s *seenIDs) low() (string, bool) { return lookbackStart(s.high, s.lookback) }

// add records id; false when it was recorded already.
func (s *seenIDs) add(id string) bool {
	if _, ok := s.ids[id]; ok {
		return false
	}
	s.ids[id] = struct{}{}
	if compareIDs(id, s.high) > 0 {
		s.high = id
	}
	if len(s.ids) >= s.next {
		if low, ok := s.low(); ok {
			for k := range s.ids {
				if compareIDs(k, low) <= 0 {
					delete(s.ids, k)
				}
			}
		}
		if len(s.ids) > maxSeen {
			clear(s.ids)
		}
		s.next = max(1024, 2*len(s.ids))
	}
	return true
}

// validID says whether id can be a status ID: letters, digits, '-' or
// '_' (a cursor handed back in a query), at most 64 of them.
func validID(id string) bool {
	if id == "" || len(id) > 64 {
		return false
	}
	for i := range len(id) {
		c := id[i]
		if !('0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || c == '-' || c == '_') {
			return false
		}
	}
	return true
}

// read parses a server-sent event stream (the WHATWG format: "field:
// value" lines, an event ended by a blank line, lines starting with ':'
// are comments) and calls on for each event; alive is called for each line.
func (m *Mastodon) read(r io.Reader, alive func(), on func(event string, data []byte) error) error {
	br := bufio.NewReaderSize(r, 64<<10)
	var event string
	var data []byte
	hasData := false
	for {
		line, err := br.ReadSlice('\n')
		if errors.Is(err, bufio.ErrBufferFull) {
			// A line longer than the buffer: read it whole, bounded.
			long := append([]byte(nil), line...)
			for errors.Is(err, bufio.ErrBufferFull) && len(long) < 16<<20 {
				line, err = br.ReadSlice('\n')
				long = append(long, line...)
			}
			line = long
		}
		if err != nil {
			if errors.Is(err, io.EOF) {
				return errors.New("mastodon: the stream ended")
			}
			return fmt.Errorf("mastodon stream: %w", err)
		}
		alive()
		line = trimEOL(line)
		switch {
		case len(line) == 0:
			if hasData {
				if err := on(cmp.Or(event, "message"), data); err != nil {
					return err
				}
			}
			event, data, hasData = "", data[:0], false
		case line[0] == ':':
			m.update(func(s *Stats) { s.Heartbeats++ })
		default:
			field, value, _ := strings.Cut(string(line), ":")
			value = strings.TrimPrefix(value, " ")
			switch field {
			case "event":
				event = value
			case "data":
				if hasData {
					data = append(data, '\n')
				}
				data, hasData = append(data, value...), true
			}
		}
	}
}

func trimEOL(b []byte) []byte {
	b = b[:len(b)-1]
	if len(b) > 0 && b[len(b)-1] == '\r' {
		b = b[:len(b)-1]
	}
	return b
}
