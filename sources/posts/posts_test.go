package posts

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/fetch"
)

func fixture(t *testing.T, name string) []byte {
	t.Helper()
	b, err := os.ReadFile(filepath.Join("testdata", name))
	if err != nil {
		t.Fatal(err)
	}
	return b
}

// platform is one loopback server speaking every platform's API; routes
// maps "METHOD /path" (query ignored) to a handler, and seen records the
// requests.
type platform struct {
	srv  *httptest.Server
	seen []*http.Request
}

func newPlatform(t *testing.T, routes map[string]http.HandlerFunc) *platform {
	t.Helper()
	p := &platform{}
	p.srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.seen = append(p.seen, r)
		if h, ok := routes[r.URL.Path]; ok {
			h(w, r)
			return
		}
		http.NotFound(w, r)
	}))
	t.Cleanup(p.srv.Close)
	return p
}

func (p *platform) opts() Options {
	return Options{
		AllowPrivate:          true,
		BlueskyURL:            p.srv.URL,
		TwitterSyndicationURL: p.srv.URL + "/syndication",
		TwitterOEmbedURL:      p.srv.URL + "/publish",
		Pages:                 fetch.New(fetch.Options{AllowPrivate: true, IgnoreRobots: true}),
	}
}

func jsonFile(t *testing.T, name string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.Write(body)
	}
}

func jsonStatus(status int, body string, headers ...string) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		for i := 0; i+1 < len(headers); i += 2 {
			w.Header().Set(headers[i], headers[i+1])
		}
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(status)
		w.Write([]byte(body))
	}
}

func htmlFile(t *testing.T, name string) http.HandlerFunc {
	body := fixture(t, name)
	return func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write(body)
	}
}

func ts(s string) time.Time {
	t, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		panic(err)
	}
	return t
}

func TestRecognize(t *testing.T) {
	for raw, want := range map[string]string{
		"https://bsky.app/profile/newsfan.bsky.social/post/3kq7xvhzqg22x":         Bluesky,
		"https://bsky.app/profile/did:plc:4llrhdclvdlmmynkwsmg5tdc/post/3kq7xvhz": Bluesky,
		"at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kq7xvhzqg22x":  Bluesky,
		"https://x.com/rumourmill/status/1255542774432063488":                     X,
		"https://twitter.com/rumourmill/status/1255542774432063488/photo/1":       X,
		"https://mobile.twitter.com/i/web/status/1255542774432063488":             X,
		"https://fxtwitter.com/rumourmill/status/1255542774432063488":             X,
		"https://mastodon.social/@Gargron/111985453312768311":                     Mastodon,
		"https://fosstodon.org/@alice@mastodon.example/111985453312768311":        Mastodon,
		"https://mastodon.example/users/healthwatch/statuses/111985453312768311":  Mastodon,
		"https://www.example-daily.com/news/shark-highway-fake":                   Web,
		"https://x.com/rumourmill":                                                Web,
		"https://bsky.app/profile/newsfan.bsky.social":                            Web,
	} {
		if got, ok := Recognize(raw); !ok || got != want {
			t.Errorf("Recognize(%s) = %q, %v; want %q", raw, got, ok, want)
		}
	}
	for _, raw := range []string{"", "5G towers spread the virus", "ftp://example.org/x", "www.example.com/page", "https://"} {
		if got, ok := Recognize(raw); ok {
			t.Errorf("Recognize(%q) = %q, want not a URL", raw, got)
		}
	}
}

func TestBlueskyPostWithImages(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{
		"/xrpc/com.atproto.identity.resolveHandle": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("handle") != "newsfan.bsky.social" {
				t.Errorf("resolveHandle handle = %q", r.URL.Query().Get("handle"))
			}
			jsonFile(t, "bsky_resolve.json")(w, r)
		},
		"/xrpc/app.bsky.feed.getPostThread": func(w http.ResponseWriter, r *http.Request) {
			if got := r.URL.Query().Get("uri"); got != "at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kq7xvhzqg22x" {
				t.Errorf("getPostThread uri = %q", got)
			}
			if r.URL.Query().Get("depth") != "0" {
				t.Errorf("depth = %q, want 0: replies are not needed", r.URL.Query().Get("depth"))
			}
			jsonFile(t, "bsky_thread_images.json")(w, r)
		},
		"/xrpc/app.bsky.actor.getProfile": func(w http.ResponseWriter, r *http.Request) {
			if r.URL.Query().Get("actor") != "did:plc:4llrhdclvdlmmynkwsmg5tdc" {
				t.Errorf("getProfile actor = %q", r.URL.Query().Get("actor"))
			}
			jsonFile(t, "bsky_profile.json")(w, r)
		},
	})
	url := "https://bsky.app/profile/newsfan.bsky.social/post/3kq7xvhzqg22x"
	post, err := Fetch(context.Background(), url, p.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "They don't want you to know the water is poisoned 💧 Read it yourself: https://www.example-news.com/2024/03/11/city-water-supply-safe-officials-say #breaking"
	if post.Text != wantText {
		t.Errorf("text = %q\nwant   %q (link facet expanded)", post.Text, wantText)
	}
	if post.Platform != Bluesky || post.URL != url || post.Author != "News Fan 📰" || post.Handle != "@newsfan.bsky.social" ||
		!post.PostedAt.Equal(ts("2024-03-12T08:15:02.345Z")) {
		t.Errorf("post = %+v", post)
	}
	if post.AuthorDescription != "Asking the questions the media won't.\nDMs open." {
		t.Errorf("author description = %q", post.AuthorDescription)
	}
	if len(post.Images) != 2 || !strings.Contains(post.Images[0].URL, "/feed_fullsize/") ||
		post.Images[0].Alt != `Screenshot of a headline: "City water supply contaminated"` || post.Images[1].Alt != "" {
		t.Errorf("images = %+v", post.Images)
	}
	if len(post.Notes) != 0 || post.Quote != nil {
		t.Errorf("notes %v, quote %v", post.Notes, post.Quote)
	}
}

func TestBlueskyQuoteWithVideo(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{
		"/xrpc/app.bsky.feed.getPostThread": jsonFile(t, "bsky_thread_quote.json"),
		// The profile lookup failing costs the description only.
		"/xrpc/app.bsky.actor.getProfile": jsonStatus(502, `{"error":"UpstreamFailure","message":"Upstream Failure"}`),
	})
	// A DID in the URL needs no handle resolution.
	post, err := Fetch(context.Background(), "at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kqa2b7c4dd2y", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range p.seen {
		if strings.Contains(r.URL.Path, "resolveHandle") {
			t.Error("resolved a handle for a DID")
		}
	}
	if len(post.Images) != 1 || !strings.HasSuffix(post.Images[0].URL, "/thumbnail.jpg") || post.Images[0].Alt != "Video of water pouring down station stairs" {
		t.Errorf("images = %+v, want the video thumbnail", post.Images)
	}
	if len(post.Videos) != 1 || !strings.HasSuffix(post.Videos[0].URL, "/playlist.m3u8") || post.Videos[0].Poster != post.Images[0].URL ||
		post.Videos[0].Alt != "Video of water pouring down station stairs" || !slices.Contains(post.Notes, post.Videos[0].Note) {
		t.Errorf("videos = %+v, want the HLS playlist", post.Videos)
	}
	q := post.Quote
	if q == nil || q.Text != "Subway station underwater this morning" || q.Handle != "@floodwatch.bsky.social" ||
		q.URL != "https://bsky.app/profile/floodwatch.bsky.social/post/3kq5lp3hk2k2a" || len(q.Images) != 1 ||
		q.Images[0].Alt != "Flooded subway platform with water up to the stairs" || !q.PostedAt.Equal(ts("2024-03-10T06:02:44.512Z")) {
		t.Errorf("quote = %+v", q)
	}
	notes := strings.Join(post.Notes, " | ")
	if !strings.Contains(notes, "video") || !strings.Contains(notes, "author description unavailable") || !strings.Contains(notes, "Upstream Failure") {
		t.Errorf("notes = %q", notes)
	}
	if post.AuthorDescription != "" {
		t.Errorf("description = %q", post.AuthorDescription)
	}
}

func TestBlueskyFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		routes  map[string]http.HandlerFunc
		url     string
		want    error
		message string
	}{
		{"deleted post", map[string]http.HandlerFunc{
			"/xrpc/app.bsky.feed.getPostThread": jsonStatus(400, `{"error":"NotFound","message":"Post not found: at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kzzzzzzzzz2a"}`),
		}, "at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kzzzzzzzzz2a", ErrNotFound, "Post not found"},
		{"not found thread", map[string]http.HandlerFunc{
			"/xrpc/app.bsky.feed.getPostThread": jsonFile(t, "bsky_thread_notfound.json"),
		}, "at://did:plc:4llrhdclvdlmmynkwsmg5tdc/app.bsky.feed.post/3kzzzzzzzzz2a", ErrNotFound, "3kzzzzzzzzz2a"},
		{"blocked", map[string]http.HandlerFunc{
			"/xrpc/app.bsky.feed.getPostThread": jsonStatus(200, `{"thread":{"$type":"app.bsky.feed.defs#blockedPost","uri":"at://did:plc:x/app.bsky.feed.post/3k","blocked":true,"author":{"did":"did:plc:x"}}}`),
		}, "at://did:plc:x/app.bsky.feed.post/3k", ErrRefused, "blocks"},
		{"unknown handle", map[string]http.HandlerFunc{
			"/xrpc/com.atproto.identity.resolveHandle": jsonStatus(400, `{"error":"InvalidRequest","message":"Unable to resolve handle"}`),
		}, "https://bsky.app/profile/nobody.example/post/3kq7xvhzqg22x", ErrNotFound, "no account has the handle @nobody.example"},
		{"rate limited", map[string]http.HandlerFunc{
			"/xrpc/app.bsky.feed.getPostThread": jsonStatus(429, `{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}`, "Retry-After", "30"),
		}, "at://did:plc:x/app.bsky.feed.post/3k", ErrRateLimited, "try again in 30s"},
		// Too many seconds for a Duration once wrapped into a negative wait and
		// the hint vanished; the wait is capped at a day instead.
		{"rate limited for ages", map[string]http.HandlerFunc{
			"/xrpc/app.bsky.feed.getPostThread": jsonStatus(429, `{"error":"RateLimitExceeded","message":"Rate Limit Exceeded"}`, "Retry-After", "10000000000"),
		}, "at://did:plc:x/app.bsky.feed.post/3k", ErrRateLimited, "try again in 24h0m0s"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlatform(t, tc.routes)
			_, err := Fetch(context.Background(), tc.url, p.opts())
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), "Bluesky") {
				t.Errorf("err = %v\nwant %v saying %q", err, tc.want, tc.message)
			}
		})
	}
}

func TestMastodonStatus(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/api/v1/statuses/111985453312768311": jsonFile(t, "mastodon_status.json")})
	url := p.srv.URL + "/@healthwatch/111985453312768311"
	post, err := Fetch(context.Background(), url, p.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Doctors are now saying that 5G masts cause headaches & nosebleeds. #5G\n\nSource: https://www.example-health.net/articles/2024/02/5g-symptoms-report\nShare widely!"
	if post.Text != wantText {
		t.Errorf("text = %q\nwant   %q", post.Text, wantText)
	}
	host := strings.TrimPrefix(p.srv.URL, "http://")
	host = host[:strings.LastIndex(host, ":")]
	if post.Platform != Mastodon || post.Author != "Health Watch" || post.Handle != "@healthwatch@"+host ||
		post.AuthorDescription != "Independent health news.\nNot medical advice." || !post.PostedAt.Equal(ts("2024-02-23T16:04:11Z")) {
		t.Errorf("post = %+v", post)
	}
	if len(post.Images) != 2 || !strings.HasSuffix(post.Images[0].URL, "/original/9f8e7d6c5b4a.jpg") ||
		!strings.HasPrefix(post.Images[0].Alt, "Chart titled") || !strings.HasSuffix(post.Images[1].URL, "/small/b1.png") {
		t.Errorf("images = %+v", post.Images)
	}
	if len(post.Notes) != 1 || !strings.Contains(post.Notes[0], "gifv") {
		t.Errorf("notes = %v", post.Notes)
	}
	if len(post.Videos) != 1 || !strings.HasSuffix(post.Videos[0].URL, "/original/b1.mp4") || post.Videos[0].Poster != post.Images[1].URL ||
		post.Videos[0].Note != post.Notes[0] {
		t.Errorf("videos = %+v, want the gifv's MP4", post.Videos)
	}
}

func TestMastodonFailures(t *testing.T) {
	for _, tc := range []struct {
		name    string
		handler http.HandlerFunc
		want    error
		message string
	}{
		{"deleted", jsonStatus(404, `{"error":"Record not found"}`), ErrNotFound, "Record not found"},
		{"sign-in required", jsonStatus(401, `{"error":"This API requires an authenticated user"}`), ErrRefused, "only signed-in users"},
		{"rate limited", jsonStatus(429, `{"error":"Too many requests"}`, "X-RateLimit-Reset", time.Now().Add(90*time.Second).UTC().Format(time.RFC3339)), ErrRateLimited, "try again in 1m"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlatform(t, map[string]http.HandlerFunc{"/api/v1/statuses/42": tc.handler})
			_, err := Fetch(context.Background(), p.srv.URL+"/@someone/42", p.opts())
			if !errors.Is(err, tc.want) || !strings.Contains(err.Error(), tc.message) || !strings.Contains(err.Error(), "Mastodon") {
				t.Errorf("err = %v\nwant %v saying %q", err, tc.want, tc.message)
			}
		})
	}
}

// A site whose URLs merely look like Mastodon's is read as a web page.
func TestMastodonShapedWebPage(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/@writer/20240830": htmlFile(t, "article.html")})
	post, err := Fetch(context.Background(), p.srv.URL+"/@writer/20240830", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if post.Platform != Web || !strings.HasPrefix(post.Text, "Viral photo of shark") {
		t.Errorf("post = %+v", post)
	}
}

func TestXSyndication(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{
		"/syndication/tweet-result": func(w http.ResponseWriter, r *http.Request) {
			q := r.URL.Query()
			if q.Get("id") != "1255542774432063488" || q.Get("token") != "31kejizo785" {
				t.Errorf("query = %s, want the id and its token", r.URL.RawQuery)
			}
			jsonFile(t, "x_syndication.json")(w, r)
		},
	})
	post, err := Fetch(context.Background(), "https://x.com/rumourmill/status/1255542774432063488?s=20", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Garlic water cures coronavirus in 24 hours 🧄 — Chinese doctors confirm. Forward to everyone! https://www.who.int/news-room/q-a-detail/coronavirus"
	if post.Text != wantText {
		t.Errorf("text = %q\nwant   %q", post.Text, wantText)
	}
	if post.Platform != X || post.Author != "Rumour Mill" || post.Handle != "@rumourmill" || !post.PostedAt.Equal(ts("2020-04-29T17:01:38Z")) ||
		post.URL != "https://x.com/rumourmill/status/1255542774432063488?s=20" {
		t.Errorf("post = %+v", post)
	}
	if len(post.Images) != 1 || post.Images[0].URL != "https://pbs.twimg.com/media/EWx3b9kXgAE1pQz.jpg" || post.Images[0].Alt != "A glass of water with garlic cloves" {
		t.Errorf("images = %+v", post.Images)
	}
	if post.Quote == nil || post.Quote.Text != "Is it true that garlic protects from corona?" || post.Quote.Handle != "@curiouscat" ||
		post.Quote.URL != "https://x.com/curiouscat/status/1255059999999999999" {
		t.Errorf("quote = %+v", post.Quote)
	}
	for _, r := range p.seen {
		if strings.HasPrefix(r.URL.Path, "/publish") {
			t.Error("oEmbed asked although syndication answered")
		}
	}
}

// A post on X with a video: its MP4 variant of at most 720p (X's
// syndication lists several, and an HLS playlist) and its poster.
func TestXSyndicationVideo(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/syndication/tweet-result": jsonFile(t, "x_syndication_video.json")})
	post, err := Fetch(context.Background(), "https://x.com/viralclips/status/1785956123456789012", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	want := "https://video.twimg.com/ext_tw_video/1785955987654321098/pu/vid/avc1/1280x720/AbCdEfGh12345678.mp4?tag=12"
	if len(post.Videos) != 1 || post.Videos[0].URL != want || !strings.HasSuffix(post.Videos[0].Poster, "/aBcDeFgHiJkLmNoP.jpg") {
		t.Fatalf("videos = %+v", post.Videos)
	}
	if len(post.Images) != 1 || post.Images[0].URL != post.Videos[0].Poster || len(post.Notes) != 1 || post.Notes[0] != post.Videos[0].Note {
		t.Errorf("images %+v, notes %v", post.Images, post.Notes)
	}
}

func TestXFallsBackToOEmbed(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{
		"/syndication/tweet-result": jsonStatus(403, `{"error":"Forbidden"}`),
		"/publish/oembed": func(w http.ResponseWriter, r *http.Request) {
			if got := r.URL.Query().Get("url"); got != "https://twitter.com/rumourmill/status/1255542774432063488" {
				t.Errorf("oEmbed url = %q", got)
			}
			jsonFile(t, "x_oembed.json")(w, r)
		},
	})
	post, err := Fetch(context.Background(), "https://twitter.com/rumourmill/status/1255542774432063488", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Garlic water cures coronavirus in 24 hours 🧄 — Chinese doctors confirm.\nForward to everyone! https://t.co/Ab3dEfGhIj"
	if post.Text != wantText {
		t.Errorf("text = %q\nwant   %q", post.Text, wantText)
	}
	// The time comes from the ID (to the millisecond), not the embed's date.
	if post.Handle != "@rumourmill" || post.Author != "Rumour Mill" || !post.PostedAt.Equal(ts("2020-04-29T17:01:38.938Z")) {
		t.Errorf("post = %+v (posted %s)", post, post.PostedAt)
	}
	notes := strings.Join(post.Notes, " | ")
	if len(post.Images) != 0 || !strings.Contains(notes, "oEmbed") || !strings.Contains(notes, "HTTP 403") || !strings.Contains(notes, "media (1 link)") {
		t.Errorf("images %v, notes %q", post.Images, notes)
	}
}

func TestXFailures(t *testing.T) {
	for _, tc := range []struct {
		name        string
		syndication http.HandlerFunc
		oembed      http.HandlerFunc
		want        error
		message     []string
	}{
		{"deleted", jsonFile(t, "x_tombstone.json"), jsonStatus(404, `{"error":"not found"}`), ErrNotFound,
			[]string{"This Post was deleted by the Post author", "oEmbed", "HTTP 404"}},
		{"empty answer", func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(200) }, jsonStatus(404, ""), ErrNotFound,
			[]string{"empty answer"}},
		{"protected", jsonStatus(404, ""), jsonStatus(403, `{"error":"Forbidden"}`), ErrRefused,
			[]string{"protected or suspended", "both public endpoints"}},
		{"rate limited", jsonStatus(429, "", "X-RateLimit-Reset", "4102444800"), jsonStatus(429, ""), ErrRateLimited,
			[]string{"rate limited"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			p := newPlatform(t, map[string]http.HandlerFunc{"/syndication/tweet-result": tc.syndication, "/publish/oembed": tc.oembed})
			_, err := Fetch(context.Background(), "https://x.com/someone/status/1255542774432063488", p.opts())
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			for _, m := range tc.message {
				if !strings.Contains(err.Error(), m) {
					t.Errorf("err = %v\nlacks %q", err, m)
				}
			}
		})
	}
}

func TestWebPageOpenGraph(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/news/shark-highway-fake": htmlFile(t, "article.html")})
	url := p.srv.URL + "/news/shark-highway-fake"
	post, err := Fetch(context.Background(), url, p.opts())
	if err != nil {
		t.Fatal(err)
	}
	wantText := "Viral photo of shark on flooded highway is fake\n\nA picture shared after the storm shows a shark swimming on a highway. It has circulated since 2011."
	if post.Text != wantText {
		t.Errorf("text = %q", post.Text)
	}
	if post.Platform != Web || post.Site != "Example Daily" || post.Author != "Jane Doe" || post.Handle != "@jdoe_reports" ||
		!post.PostedAt.Equal(ts("2024-08-30T12:05:00Z")) || post.URL != url {
		t.Errorf("post = %+v", post)
	}
	want := []ImageRef{
		{URL: p.srv.URL + "/img/2024/shark-highway.jpg", Alt: "A shark fin in floodwater next to a car"},
		{URL: "https://cdn.example-daily.com/img/2024/shark-original-2011.jpg"},
	}
	if len(post.Images) != 2 || post.Images[0] != want[0] || post.Images[1] != want[1] {
		t.Errorf("images = %+v\nwant %+v", post.Images, want)
	}
}

func TestWebPageTwitterCard(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{"/cards/quote": htmlFile(t, "twittercard.html")})
	post, err := Fetch(context.Background(), p.srv.URL+"/cards/quote", p.opts())
	if err != nil {
		t.Fatal(err)
	}
	if post.Text != "\"I never said that\" — quote card\n\nA quote card attributed to the minister." ||
		!post.PostedAt.Equal(ts("2023-05-02T00:00:00Z")) || len(post.Images) != 1 ||
		post.Images[0].URL != p.srv.URL+"/cards/images/card.png" || post.Images[0].Alt != "White text on red: a quote" {
		t.Errorf("post = %+v", post)
	}
}

func TestWebPageFailures(t *testing.T) {
	p := newPlatform(t, map[string]http.HandlerFunc{
		"/app":   htmlFile(t, "bare.html"),
		"/gone":  func(w http.ResponseWriter, r *http.Request) { http.Error(w, "gone", http.StatusGone) },
		"/login": func(w http.ResponseWriter, r *http.Request) { http.Error(w, "sign in", http.StatusForbidden) },
	})
	for path, want := range map[string]error{"/app": ErrNoContent, "/gone": ErrNotFound, "/login": ErrRefused} {
		_, err := Fetch(context.Background(), p.srv.URL+path, p.opts())
		if !errors.Is(err, want) || !strings.Contains(err.Error(), p.srv.URL+path) {
			t.Errorf("%s: err = %v, want %v", path, err, want)
		}
	}
	// Without AllowPrivate the safe fetcher refuses loopback.
	opts := p.opts()
	opts.AllowPrivate, opts.Pages = false, nil
	if _, err := Fetch(context.Background(), p.srv.URL+"/app", opts); !errors.Is(err, fetch.ErrPrivateAddress) {
		t.Errorf("private address: err = %v", err)
	}
	if _, err := Fetch(context.Background(), p.srv.URL+"/@x/1", opts); !errors.Is(err, fetch.ErrPrivateAddress) {
		t.Errorf("private Mastodon instance: err = %v", err)
	}
	if _, err := Fetch(context.Background(), "not a url", opts); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("text: err = %v", err)
	}
}

func TestHTMLText(t *testing.T) {
	for in, want := range map[string]string{
		"<p>One</p><p>Two<br>Three</p>":        "One\n\nTwo\nThree",
		"plain &amp; simple":                   "plain & simple",
		"<p>  spaced   out </p>\n\n\n<p>x</p>": "spaced out\n\nx",
		"<p>a<script>alert(1)</script>b</p>":   "ab",
		"":                                     "",
	} {
		if got := htmlText(in); got != want {
			t.Errorf("htmlText(%q) = %q, want %q", in, got, want)
		}
	}
}
