package feeds

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/coder/websocket"

	"github.com/musecheck/muse/sources/posts"
)

// DefaultJetstream is one of Bluesky's public Jetstream instances.
const DefaultJetstream = "wss://jetstream2.us-east.bsky.network/subscribe"

// PostCollection is the collection of Bluesky posts.
const PostCollection = "app.bsky.feed.post"

// Jetstream reads Bluesky's firehose through a Jetstream instance
// (github.com/bluesky-social/jetstream): a WebSocket of JSON events
// {did, time_us, kind, commit{operation, collection, rkey, record}}, asked
// for with the query parameters wantedCollections, wantedDids and cursor (a
// time_us: the instance replays from it). Keywords are matched here, on the
// post's text: Jetstream has no such filter.
type Jetstream struct {
	// URL is the instance's /subscribe endpoint (DefaultJetstream when "").
	URL         string
	Collections []string // wantedCollections; none means PostCollection
	DIDs        []string // wantedDids: only these accounts' posts
	// Keywords keep only the posts whose text holds one of them, any case;
	// none keeps every post.
	Keywords []string
	Backoff  Backoff
	// HTTPClient makes the WebSocket handshake (http.DefaultClient when nil).
	HTTPClient *http.Client
	// Idle is how long a connection may stay silent before it is taken for
	// dead and made again (0: 2 minutes; the firehose is never silent).
	Idle time.Duration
	// Rewind is how far before the cursor a resumed stream asks to be
	// replayed from (0: DefaultRewind; negative: not at all). Jetstream's
	// own advice: its time_us is not strictly in order across the
	// network's hosts, so resuming at the cursor exactly can miss an event;
	// what comes twice carries the same ID, for the consumer to drop.
	Rewind time.Duration
	counted
}

// DefaultRewind is how far before its cursor a Jetstream resumes.
const DefaultRewind = 5 * time.Second

// Name is the feed's identity: its instance and filters.
func (j *Jetstream) Name() string {
	u, _ := j.subscribeURL("")
	if len(j.Keywords) > 0 {
		u += " keywords=" + strings.Join(j.Keywords, ",")
	}
	return "jetstream " + u
}

func (j *Jetstream) subscribeURL(cursor string) (string, error) {
	base := j.URL
	if base == "" {
		base = DefaultJetstream
	}
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "ws" && u.Scheme != "wss") {
		return base, fmt.Errorf("jetstream: %q is not a ws:// or wss:// URL", base)
	}
	q := u.Query()
	cols := j.Collections
	if len(cols) == 0 {
		cols = []string{PostCollection}
	}
	q["wantedCollections"] = cols
	if len(j.DIDs) > 0 {
		q["wantedDids"] = j.DIDs
	}
	q.Del("cursor")
	if cursor != "" {
		q.Set("cursor", cursor)
	}
	u.RawQuery = q.Encode()
	return u.String(), nil
}

// jetEvent is one Jetstream event.
type jetEvent struct {
	DID    string `json:"did"`
	TimeUS int64  `json:"time_us"`
	Kind   string `json:"kind"`
	Commit *struct {
		Operation  string          `json:"operation"`
		Collection string          `json:"collection"`
		RKey       string          `json:"rkey"`
		Record     json.RawMessage `json:"record"`
		CID        string          `json:"cid"`
	} `json:"commit"`
}

// postRecordLangs is the one field of a post record Jetstream's reader
// needs beside what posts.FromBlueskyRecord reads.
type postRecordLangs struct {
	Langs []string `json:"langs"`
}

// Run reads the stream from cursor (a time_us; "" for now on).
func (j *Jetstream) Run(ctx context.Context, cursor string, emit func(Post) error) error {
	if cursor != "" {
		if _, err := strconv.ParseInt(cursor, 10, 64); err != nil {
			return fmt.Errorf("jetstream cursor %q: not a time in microseconds", cursor)
		}
	}
	if _, err := j.subscribeURL(cursor); err != nil {
		return err
	}
	keywords := make([]string, 0, len(j.Keywords))
	for _, k := range j.Keywords {
		if k = strings.ToLower(strings.TrimSpace(k)); k != "" {
			keywords = append(keywords, k)
		}
	}
	rewind := j.Rewind
	if rewind == 0 {
		rewind = DefaultRewind
	}
	rewoundAt := "" // the cursor last rewound from
	return reconnect(ctx, j.Backoff, &j.counted, func(ctx context.Context, progressed func()) error {
		// Rewound once for each cursor: a connection cut again before it
		// passes the cursor resumes at it, so cuts cannot keep the feed
		// replaying the same seconds.
		from := cursor
		if cursor != rewoundAt {
			from, rewoundAt = rewound(cursor, rewind), cursor
		}
		u, _ := j.subscribeURL(from)
		conn, resp, err := websocket.Dial(ctx, u, &websocket.DialOptions{HTTPClient: j.HTTPClient})
		if err != nil {
			if resp != nil {
				return statusErr("jetstream", resp.StatusCode, resp.Status)
			}
			return fmt.Errorf("jetstream: %w", err)
		}
		defer conn.CloseNow()
		conn.SetReadLimit(4 << 20)
		idle := j.Idle
		if idle <= 0 {
			idle = 2 * time.Minute
		}
		lastSaid := time.Now()
		for {
			rctx, cancel := context.WithTimeout(ctx, idle)
			typ, data, err := conn.Read(rctx)
			cancel()
			if err != nil {
				if ctx.Err() != nil {
					return ctx.Err()
				}
				return fmt.Errorf("jetstream read: %w", err)
			}
			if typ != websocket.MessageText {
				j.malformed()
				continue
			}
			p, ok := j.event(data, keywords)
			if !ok {
				continue
			}
			progressed()
			if later(cursor, p.Cursor) {
				p.Cursor = cursor // a replayed event does not move the cursor back
			}
			cursor = p.Cursor
			if p.Post == nil {
				// Say how far the feed has read now and then, so that a
				// restart does not replay a long run of skipped events.
				if time.Since(lastSaid) < time.Second {
					continue
				}
			}
			if err := emit(p); err != nil {
				return &emitErr{err}
			}
			lastSaid = time.Now()
		}
	})
}

// event reads one event: a post (kept or, without a keyword, skipped) or
// another event, which only moves the cursor; ok is false for an event
// that cannot be read.
func (j *Jetstream) event(data []byte, keywords []string) (Post, bool) {
	var ev jetEvent
	if err := json.Unmarshal(data, &ev); err != nil || ev.TimeUS <= 0 {
		j.malformed()
		return Post{}, false
	}
	out := Post{Cursor: strconv.FormatInt(ev.TimeUS, 10)}
	c := ev.Commit
	if ev.Kind != "commit" || c == nil || c.Collection != PostCollection || c.Operation != "create" {
		return out, true // a delete, a like, an identity or account event
	}
	p, cids, err := posts.FromBlueskyRecord(ev.DID, c.RKey, c.Record)
	if err != nil {
		j.malformed()
		return out, true
	}
	if len(keywords) > 0 && !hasKeyword(p.Text, keywords) {
		return out, true
	}
	var l postRecordLangs
	_ = json.Unmarshal(c.Record, &l)
	out.ID = "at://" + ev.DID + "/" + PostCollection + "/" + c.RKey
	out.Post, out.Langs, out.ImageKeys = p, l.Langs, cids
	return out, true
}

// rewound is cursor (a time_us) moved back by d, not below 1; "" stays "".
func rewound(cursor string, d time.Duration) string {
	us, err := strconv.ParseInt(cursor, 10, 64)
	if err != nil || d <= 0 {
		return cursor
	}
	return strconv.FormatInt(max(us-d.Microseconds(), 1), 10)
}

// later reports whether time_us cursor a is after b.
func later(a, b string) bool {
	x, errA := strconv.ParseInt(a, 10, 64)
	y, errB := strconv.ParseInt(b, 10, 64)
	return errA == nil && errB == nil && x > y
}

// hasKeyword: text holds one of keywords (lower case), any case.
func hasKeyword(text string, keywords []string) bool {
	t := strings.ToLower(text)
	for _, k := range keywords {
		if strings.Contains(t, k) {
			return true
		}
	}
	return false
}
