package posts

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"testing"
	"time"
)

// What a post points at — its link card, the post it quotes, the posts it
// replies to — read on every platform from loopback copies of the real
// APIs, and what could not be read said as a note.

const bskyDID = "did:plc:4llrhdclvdlmmynkwsmg5tdc"

func bskyURI(i int) string { return fmt.Sprintf("at://%s/app.bsky.feed.post/3kthread%03d", bskyDID, i) }

// bskyThreadPost is post i of a thread on a loopback AppView: a postView
// as getPostThread hydrates it, a reply to post i-1 under post 0.
func bskyThreadPost(i int, embed map[string]any) map[string]any {
	rec := map[string]any{"$type": "app.bsky.feed.post", "createdAt": time.Date(2024, 3, 1, 8, i, 0, 0, time.UTC).Format(time.RFC3339Nano),
		"langs": []string{"en"}, "text": fmt.Sprintf("Thread post %d about the Springfield bicycle rumour", i)}
	if i > 0 {
		rec["reply"] = map[string]any{"root": map[string]string{"uri": bskyURI(0), "cid": "bafyreiroot"},
			"parent": map[string]string{"uri": bskyURI(i - 1), "cid": "bafyreiparent"}}
	}
	p := map[string]any{"uri": bskyURI(i), "cid": fmt.Sprintf("bafyrei%03d", i),
		"author":     map[string]any{"did": bskyDID, "handle": "thread.bsky.social", "displayName": "Thread Writer", "labels": []any{}},
		"record":     rec,
		"replyCount": 1, "repostCount": 0, "likeCount": 2, "quoteCount": 0, "indexedAt": "2024-03-01T09:00:00.000Z", "labels": []any{}}
	if embed != nil {
		p["embed"] = embed
	}
	return p
}

// bskyThreadServer answers getPostThread for a thread of depth posts
// (0 … depth-1), honouring parentHeight; broken replaces the node of
// one post with a notFoundPost or blockedPost; embeds gives posts embeds.
type bskyThreadServer struct {
	depth   int
	broken  map[int]string
	embeds  map[int]map[string]any
	heights []string
}

func (s *bskyThreadServer) node(i, height int) map[string]any {
	switch s.broken[i] {
	case "notFound":
		return map[string]any{"$type": "app.bsky.feed.defs#notFoundPost", "uri": bskyURI(i), "notFound": true}
	case "blocked":
		return map[string]any{"$type": "app.bsky.feed.defs#blockedPost", "uri": bskyURI(i), "blocked": true,
			"author": map[string]any{"did": "did:plc:blocker", "viewer": map[string]any{"blockedBy": true}}}
	}
	n := map[string]any{"$type": "app.bsky.feed.defs#threadViewPost", "post": bskyThreadPost(i, s.embeds[i])}
	if i > 0 && height > 0 {
		n["parent"] = s.node(i-1, height-1)
	}
	return n
}

func (s *bskyThreadServer) routes() map[string]http.HandlerFunc {
	return map[string]http.HandlerFunc{
		"/xrpc/com.atproto.identity.resolveHandle": jsonStatus(200, `{"did":"`+bskyDID+`"}`),
		"/xrpc/app.bsky.actor.getProfile":          jsonStatus(200, `{"did":"`+bskyDID+`","handle":"thread.bsky.social","description":"Threads."}`),
		"/xrpc/app.bsky.feed.getPostThread": func(w http.ResponseWriter, r *http.Request) {
			uri := r.URL.Query().Get("uri")
			h, err := strconv.Atoi(r.URL.Query().Get("parentHeight"))
			if err != nil {
				h = 80 // the AppView's default
			}
			s.heights = append(s.heights, r.URL.Query().Get("parentHeight"))
			i, err := strconv.Atoi(strings.TrimPrefix(uri, "at://"+bskyDID+"/app.bsky.feed.post/3kthread"))
			if err != nil || i >= s.depth {
				jsonStatus(400, `{"error":"NotFound","message":"Post not found: `+uri+`"}`)(w, r)
				return
			}
			b, _ := json.Marshal(map[string]any{"thread": s.node(i, h)})
			w.Header().Set("Content-Type", "application/json; charset=utf-8")
			w.Write(b)
		},
	}
}

func externalView(uri, title, desc string) map[string]any {
	return map[string]any{"$type": "app.bsky.embed.external#view", "external": map[string]any{
		"uri": uri, "title": title, "description": desc,
		"thumb": "https://cdn.bsky.app/img/feed_thumbnail/plain/" + bskyDID + "/bafkreithumb@jpeg"}}
}

func TestBlueskyDeepThreadAndCard(t *testing.T) {
	s := &bskyThreadServer{depth: 50, embeds: map[int]map[string]any{
		49: externalView("https://www.rumours.example/springfield-bans-bikes", "Springfield BANS bicycles!",
			"Insiders say the council banned all bicycles from Main Street."),
	}}
	p := newPlatform(t, s.routes())
	post, err := Fetch(t.Context(), "https://bsky.app/profile/thread.bsky.social/post/3kthread049", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if c := post.Card; c == nil || c.URL != "https://www.rumours.example/springfield-bans-bikes" || c.Title != "Springfield BANS bicycles!" ||
		!strings.Contains(c.Description, "banned all bicycles") || c.Site != "rumours.example" || !strings.HasSuffix(c.Image, "@jpeg") {
		t.Errorf("card %+v", post.Card)
	}
	// The root, then the five nearest parents (43 … 48), oldest first.
	var got []string
	for _, pp := range post.Parents {
		got = append(got, strings.Fields(pp.Text)[2])
		if pp.Handle != "@thread.bsky.social" || pp.PostedAt.IsZero() || !strings.HasPrefix(pp.URL, "https://bsky.app/profile/thread.bsky.social/post/") {
			t.Errorf("parent %+v", pp)
		}
	}
	if strings.Join(got, ",") != "0,44,45,46,47,48" {
		t.Errorf("parents %v, want the root and the five nearest", got)
	}
	if !containsNote(post.Notes, "more posts above were not read") {
		t.Errorf("notes %q: the unread middle of the thread is not said", post.Notes)
	}
	// Bounded: resolve, the thread with five parents, its first post, the profile.
	if len(p.seen) != 4 || strings.Join(s.heights, ",") != "5,0" {
		t.Errorf("%d requests, parentHeight %v", len(p.seen), s.heights)
	}
}

func TestBlueskyShortThreadReadWhole(t *testing.T) {
	s := &bskyThreadServer{depth: 4}
	p := newPlatform(t, s.routes())
	post, err := Fetch(t.Context(), "https://bsky.app/profile/thread.bsky.social/post/3kthread003", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(post.Parents) != 3 || !strings.HasPrefix(post.Parents[0].Text, "Thread post 0") || !strings.HasPrefix(post.Parents[2].Text, "Thread post 2") {
		t.Errorf("parents %+v", post.Parents)
	}
	if len(post.Notes) != 0 || len(p.seen) != 3 {
		t.Errorf("notes %q after %d requests", post.Notes, len(p.seen))
	}
	// Exactly MaxParents+1 deep: the fifth parent's own parent is the
	// root, read with one more call and nothing left unread.
	s = &bskyThreadServer{depth: MaxParents + 2}
	p = newPlatform(t, s.routes())
	post, err = Fetch(t.Context(), "https://bsky.app/profile/thread.bsky.social/post/"+strings.TrimPrefix(bskyURI(MaxParents+1), "at://"+bskyDID+"/app.bsky.feed.post/"), p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if len(post.Parents) != MaxParents+1 || len(post.Notes) != 0 {
		t.Errorf("%d parents, notes %q", len(post.Parents), post.Notes)
	}
}

func TestBlueskyUnreadableParentsAndQuotes(t *testing.T) {
	for _, tc := range []struct {
		name   string
		broken map[int]string
		embed  map[string]any
		want   string
	}{
		{"deleted parent", map[int]string{2: "notFound"}, nil, "the post this replies to was deleted"},
		{"blocked parent", map[int]string{2: "blocked"}, nil, "the post this replies to is not shown to anonymous readers"},
		{"deleted grandparent", map[int]string{1: "notFound"}, nil, "a post above in the thread was deleted"},
		{"deleted quote", nil, map[string]any{"$type": "app.bsky.embed.record#view", "record": map[string]any{
			"$type": "app.bsky.embed.record#viewNotFound", "uri": bskyURI(40), "notFound": true}}, "the quoted post was deleted"},
		{"blocked quote in recordWithMedia", nil, map[string]any{"$type": "app.bsky.embed.recordWithMedia#view",
			"media": map[string]any{"$type": "app.bsky.embed.images#view", "images": []any{}},
			"record": map[string]any{"record": map[string]any{"$type": "app.bsky.embed.record#viewBlocked", "uri": bskyURI(40), "blocked": true,
				"author": map[string]any{"did": "did:plc:blocker"}}}}, "the quoted post is not shown to anonymous readers"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			s := &bskyThreadServer{depth: 4, broken: tc.broken, embeds: map[int]map[string]any{3: tc.embed}}
			p := newPlatform(t, s.routes())
			post, err := Fetch(t.Context(), "https://bsky.app/profile/thread.bsky.social/post/3kthread003", p.opts())
			if err != nil {
				t.Fatal(err)
			}
			if !containsNote(post.Notes, tc.want) {
				t.Errorf("notes %q, want %q", post.Notes, tc.want)
			}
			if post.Quote != nil {
				t.Errorf("an unreadable quote read as %+v", post.Quote)
			}
			for _, pp := range post.Parents {
				if tc.broken[0] == "" && strings.Contains(pp.Text, "post 2") && tc.broken[2] != "" {
					t.Errorf("a broken parent read: %+v", pp)
				}
			}
		})
	}
}

func containsNote(notes []string, want string) bool {
	for _, n := range notes {
		if strings.Contains(n, want) {
			return true
		}
	}
	return false
}

// mastodonStatusAt is a status as /api/v1/statuses/:id serves it.
func mastodonStatusAt(id int, host string, extra map[string]any) map[string]any {
	st := map[string]any{"id": strconv.Itoa(id), "created_at": time.Date(2024, 3, 2, 7, id%60, 0, 0, time.UTC).Format("2006-01-02T15:04:05.000Z"),
		"in_reply_to_id": nil, "in_reply_to_account_id": nil, "sensitive": false, "spoiler_text": "", "visibility": "public", "language": "en",
		"uri": fmt.Sprintf("https://%s/users/thread/statuses/%d", host, id), "url": fmt.Sprintf("https://%s/@thread/%d", host, id),
		"replies_count": 1, "reblogs_count": 0, "favourites_count": 3, "content": fmt.Sprintf("<p>Thread status %d about Springfield</p>", id),
		"reblog": nil, "account": map[string]any{"id": "1", "username": "thread", "acct": "thread", "display_name": "Thread Writer", "note": "<p>Threads.</p>"},
		"media_attachments": []any{}, "mentions": []any{}, "tags": []any{}, "emojis": []any{}, "card": nil, "poll": nil}
	if id > 1 {
		st["in_reply_to_id"] = strconv.Itoa(id - 1)
	}
	for k, v := range extra {
		st[k] = v
	}
	return st
}

func jsonValue(v any) http.HandlerFunc {
	b, _ := json.Marshal(v)
	return jsonStatus(200, string(b))
}

func TestMastodonCardQuoteAndLongThread(t *testing.T) {
	var p *platform
	host := func() string { return strings.TrimPrefix(p.srv.URL, "http://") }
	routes := map[string]http.HandlerFunc{}
	p = newPlatform(t, routes)
	quoted := mastodonStatusAt(7, host(), map[string]any{"in_reply_to_id": nil,
		"content": "<p>The council banned all bicycles from Main Street.</p>"})
	routes["/api/v1/statuses/51"] = jsonValue(mastodonStatusAt(51, host(), map[string]any{
		"card": map[string]any{"url": "https://www.rumours.example/springfield-bans-bikes", "title": "Springfield BANS bicycles!",
			"description": "Insiders say so.", "type": "link", "author_name": "", "provider_name": "Rumours Daily", "provider_url": "",
			"html": "", "width": 400, "height": 200, "image": "https://files.example/cards/1.jpg", "embed_url": "", "blurhash": nil},
		"quote": map[string]any{"state": "accepted", "quoted_status": quoted},
	}))
	var ancestors []any
	for i := 1; i <= 50; i++ {
		ancestors = append(ancestors, mastodonStatusAt(i, host(), nil))
	}
	routes["/api/v1/statuses/51/context"] = jsonValue(map[string]any{"ancestors": ancestors, "descendants": []any{}})
	post, err := Fetch(t.Context(), p.srv.URL+"/@thread/51", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if c := post.Card; c == nil || c.Site != "Rumours Daily" || c.Title != "Springfield BANS bicycles!" || c.Image == "" {
		t.Errorf("card %+v", post.Card)
	}
	if q := post.Quote; q == nil || q.Text != "The council banned all bicycles from Main Street." || !strings.HasPrefix(q.Handle, "@thread@") {
		t.Errorf("quote %+v", post.Quote)
	}
	var got []string
	for _, pp := range post.Parents {
		got = append(got, strings.Fields(pp.Text)[2])
	}
	if strings.Join(got, ",") != "1,46,47,48,49,50" {
		t.Errorf("parents %v, want the first and the five nearest", got)
	}
	if !containsNote(post.Notes, "44 more posts above were not read") {
		t.Errorf("notes %q", post.Notes)
	}
	if len(p.seen) != 2 {
		t.Errorf("%d requests for one post, want the status and its context", len(p.seen))
	}
}

func TestMastodonUnreadableQuotesAndParents(t *testing.T) {
	for state, want := range map[string]string{
		"pending":      "not yet approved the quote",
		"revoked":      "withdrew permission",
		"rejected":     "refused permission",
		"deleted":      "the quoted post was deleted",
		"unauthorized": "not shown to anonymous readers",
	} {
		t.Run(state, func(t *testing.T) {
			routes := map[string]http.HandlerFunc{}
			p := newPlatform(t, routes)
			routes["/api/v1/statuses/9"] = jsonValue(mastodonStatusAt(9, "m.example", map[string]any{
				"quote": map[string]any{"state": state, "quoted_status": nil}}))
			// The parent is private or deleted: the context has no ancestors.
			routes["/api/v1/statuses/9/context"] = jsonValue(map[string]any{"ancestors": []any{}, "descendants": []any{}})
			post, err := Fetch(t.Context(), p.srv.URL+"/@thread/9", p.opts())
			if err != nil {
				t.Fatal(err)
			}
			if post.Quote != nil || !containsNote(post.Notes, want) {
				t.Errorf("quote %+v, notes %q, want %q", post.Quote, post.Notes, want)
			}
			if len(post.Parents) != 0 || !containsNote(post.Notes, "the post this replies to is not shown") {
				t.Errorf("parents %+v, notes %q", post.Parents, post.Notes)
			}
		})
	}
	// A thread whose first post is gone starts at a reply; a context the
	// instance refuses is a note, not a failure.
	routes := map[string]http.HandlerFunc{}
	p := newPlatform(t, routes)
	routes["/api/v1/statuses/5"] = jsonValue(mastodonStatusAt(5, "m.example", nil))
	routes["/api/v1/statuses/5/context"] = jsonValue(map[string]any{"ancestors": []any{mastodonStatusAt(3, "m.example", nil), mastodonStatusAt(4, "m.example", nil)}})
	routes["/api/v1/statuses/6"] = jsonValue(mastodonStatusAt(6, "m.example", nil))
	routes["/api/v1/statuses/6/context"] = jsonStatus(401, `{"error":"This API requires an authenticated user"}`)
	post, err := Fetch(t.Context(), p.srv.URL+"/@thread/5", p.opts())
	if err != nil || len(post.Parents) != 2 || !containsNote(post.Notes, "the thread's first post is not shown") {
		t.Errorf("headless thread: %+v, %v", post, err)
	}
	post, err = Fetch(t.Context(), p.srv.URL+"/@thread/6", p.opts())
	if err != nil || len(post.Parents) != 0 || !containsNote(post.Notes, "the post this replies to could not be read") {
		t.Errorf("refused context: %+v, %v", post, err)
	}
}

func TestXCardParentAndGoneQuote(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/syndication/tweet-result": jsonFile(t, "x_syndication_reply_card.json")})
	post, err := Fetch(t.Context(), "https://x.com/angrycyclist/status/1750811234567890123", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if post.Text != "Exactly, and it's ten times worse. Read this https://www.rumours.example/springfield-bans-bikes" {
		t.Errorf("text %q", post.Text)
	}
	if c := post.Card; c == nil || c.URL != "https://www.rumours.example/springfield-bans-bikes" || c.Title != "Springfield BANS bicycles!" ||
		c.Site != "rumours.example" || !strings.Contains(c.Description, "banned all bicycles") || !strings.HasPrefix(c.Image, "https://pbs.twimg.com/card_img/") {
		t.Errorf("card %+v", post.Card)
	}
	if len(post.Parents) != 1 || post.Parents[0].Handle != "@cityrumours" || !strings.Contains(post.Parents[0].Text, "banned all bicycles") ||
		post.Parents[0].URL != "https://x.com/cityrumours/status/1750800000000000001" || post.Parents[0].PostedAt.IsZero() {
		t.Errorf("parents %+v", post.Parents)
	}
	for _, want := range []string{"the quoted post is not shown: This Post is from an account that no longer exists.",
		"the post this replies to is itself a reply; the posts above it were not read"} {
		if !containsNote(post.Notes, want) {
			t.Errorf("notes %q, want %q", post.Notes, want)
		}
	}
	if post.Quote != nil || len(p.seen) != 1 {
		t.Errorf("quote %+v after %d requests", post.Quote, len(p.seen))
	}
}
