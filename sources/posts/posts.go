// Package posts reads a social-media post from its URL: Bluesky through
// the public AppView, Mastodon through the instance's public status API, X
// through the public embed endpoints (syndication, then oEmbed), and any
// other page through its Open Graph and Twitter card tags.
//
// Nothing here needs an account or a key. Each platform's refusal is
// reported as what it means for the user: a deleted or private post
// (ErrNotFound), a refusal (ErrRefused), a rate limit (ErrRateLimited).
package posts

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
)

// Platforms, as they appear in Post.Platform.
const (
	Bluesky  = "bluesky"
	Mastodon = "mastodon"
	X        = "x"
	Web      = "web"
)

// Default API roots; tests point Options at loopback servers instead.
const (
	DefaultBlueskyURL            = "https://public.api.bsky.app"
	DefaultTwitterSyndicationURL = "https://cdn.syndication.twimg.com"
	DefaultTwitterOEmbedURL      = "https://publish.twitter.com"
)

// Errors a Fetch can return, wrapped with the platform, the HTTP status and
// the platform's own message, so callers can tell why with errors.Is and
// still print err as a one-line reason.
var (
	// ErrNotFound: the post does not exist any more, never did, or is
	// visible only to some (deleted, private, protected, suspended account).
	ErrNotFound = errors.New("post not found (deleted, private or never existed)")
	// ErrRefused: the platform refused to serve the post to an anonymous
	// reader (401/403, a block, an instance that requires sign-in).
	ErrRefused = errors.New("the platform refused to serve the post")
	// ErrRateLimited: the platform asks us to slow down; try again later.
	ErrRateLimited = errors.New("rate limited by the platform")
	// ErrNoContent: the page was read but holds no post text, title or
	// description to check.
	ErrNoContent = errors.New("no post text found")
)

// Post is one post as read from its platform.
type Post struct {
	Text              string     `json:"text"`
	Author            string     `json:"author,omitempty"`             // display name
	Handle            string     `json:"handle,omitempty"`             // e.g. "@alice.bsky.social", "@bob@mastodon.social", "@jack"
	AuthorDescription string     `json:"author_description,omitempty"` // the author's profile text, when the platform gives it
	PostedAt          time.Time  `json:"posted_at,omitzero"`
	URL               string     `json:"url"`              // the URL asked for
	Platform          string     `json:"platform"`         // Bluesky, Mastodon, X or Web
	Site              string     `json:"site,omitempty"`   // og:site_name of a web page
	Images            []ImageRef `json:"images,omitempty"` // in the order the post shows them
	// Videos are the post's videos (and GIFs, which platforms serve as
	// videos); each poster image is in Images too, with a note that only
	// it is read, for a reader that cannot read the video itself.
	Videos []VideoRef `json:"videos,omitempty"`
	Quote  *Post      `json:"quote,omitempty"` // the post this one quotes, when it does
	// Card is the link card the post shows under its text: the page it
	// shares, as the platform previewed it.
	Card *Card `json:"card,omitempty"`
	// Parents are the posts this one replies to, the thread's first post
	// first and the one it answers last: at most MaxParents nearest ones,
	// with the thread's first post before them when the thread is longer
	// (a note then says how many in between were not read).
	Parents []Post   `json:"parents,omitempty"`
	Notes   []string `json:"notes,omitempty"` // what went less than right without failing, and what could not be read
}

// Card is a link card: the page a post shares as the platform previewed it.
type Card struct {
	URL         string `json:"url"`
	Title       string `json:"title,omitempty"`
	Description string `json:"description,omitempty"`
	Site        string `json:"site,omitempty"` // the publisher's name, or the page's host
	Image       string `json:"image,omitempty"`
}

// MaxParents bounds the posts above a reply that are read: the nearest
// ones, and the thread's first post besides when the thread is longer.
const MaxParents = 5

// contextNotes moves the notes of a post read as context (a parent, a
// quote) to the post under check, saying which one they are about.
func contextNotes(c *Post, what string) []string {
	var out []string
	for _, n := range c.Notes {
		out = append(out, what+": "+n)
	}
	c.Notes = nil
	return out
}

// parentsNote is the note for posts above the ones read: n of them, or an
// unknown number when n < 0.
func parentsNote(n int) string {
	switch {
	case n < 0:
		return "more posts above were not read (the thread is longer than " + strconv.Itoa(MaxParents) + " posts; its first post is read)"
	case n == 1:
		return "1 more post above was not read"
	}
	return strconv.Itoa(n) + " more posts above were not read"
}

// ImageRef is an image attached to a post: where to download it and the
// description its author gave (alt text), if any.
type ImageRef struct {
	URL string `json:"url"`
	Alt string `json:"alt,omitempty"`
}

// VideoRef is one video of a post: where to get it (an MP4, or an HLS
// playlist for Bluesky), its poster image, its alt text, and the note
// added to Post.Notes saying that only the poster is read.
type VideoRef struct {
	URL    string `json:"url"`
	Poster string `json:"poster,omitempty"`
	Alt    string `json:"alt,omitempty"`
	Note   string `json:"note,omitempty"`
}

// PageFetcher fetches an HTML page; *fetch.Fetcher implements it.
type PageFetcher interface {
	Fetch(ctx context.Context, rawURL string) (*fetch.Page, error)
}

// Options configures Fetch. The zero value works against the real
// services; pipeline/config fills AllowPrivate and may share a Fetcher.
type Options struct {
	// Client sends the platform API requests. Nil means the Client of
	// Pages when Pages is a *fetch.Fetcher, else of a new one; either
	// dials public addresses only unless AllowPrivate (a Mastodon instance
	// is whatever host the pasted URL names), honours
	// HTTP_PROXY/HTTPS_PROXY/NO_PROXY and times out after 20s.
	Client *http.Client
	// Pages fetches web pages for Open Graph tags. Nil means
	// fetch.New(fetch.Options{AllowPrivate: AllowPrivate}).
	Pages PageFetcher
	// AllowPrivate lets requests reach loopback and private addresses
	// (tests, self-hosted instances): --allow-private-addresses or
	// MUSE_ALLOW_PRIVATE_ADDRESSES=1.
	AllowPrivate bool
	// BlueskyURL overrides DefaultBlueskyURL, the AppView that serves
	// app.bsky.* and com.atproto.identity.resolveHandle.
	BlueskyURL string
	// TwitterSyndicationURL overrides DefaultTwitterSyndicationURL
	// ("/tweet-result" is appended).
	TwitterSyndicationURL string
	// TwitterOEmbedURL overrides DefaultTwitterOEmbedURL ("/oembed" is appended).
	TwitterOEmbedURL string
	// UserAgent is sent with API requests. Default fetch.DefaultUserAgent().
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.Pages == nil {
		o.Pages = fetch.New(fetch.Options{AllowPrivate: o.AllowPrivate})
	}
	if o.Client == nil {
		f, ok := o.Pages.(*fetch.Fetcher)
		if !ok {
			f = fetch.New(fetch.Options{AllowPrivate: o.AllowPrivate})
		}
		o.Client = f.Client()
	}
	if o.BlueskyURL == "" {
		o.BlueskyURL = DefaultBlueskyURL
	}
	if o.TwitterSyndicationURL == "" {
		o.TwitterSyndicationURL = DefaultTwitterSyndicationURL
	}
	if o.TwitterOEmbedURL == "" {
		o.TwitterOEmbedURL = DefaultTwitterOEmbedURL
	}
	if strings.TrimSpace(o.UserAgent) == "" {
		o.UserAgent = fetch.DefaultUserAgent()
	}
	return o
}

// Recognize says which platform Fetch would read rawURL as: Bluesky, X,
// Mastodon (a path of the /@user/123 kind on any host; confirmed only by
// asking the host), or Web. ok is false when rawURL is not an http(s) URL
// (nor an at:// URI of a Bluesky post), e.g. when the user pasted text.
func Recognize(rawURL string) (platform string, ok bool) {
	u, err := parseURL(rawURL)
	if err != nil {
		return "", false
	}
	switch {
	case blueskyPost(u) != nil:
		return Bluesky, true
	case tweetID(u) != "":
		return X, true
	case mastodonStatus(u) != "":
		return Mastodon, true
	case u.Scheme == "http" || u.Scheme == "https":
		return Web, true
	}
	return "", false
}

// Fetch reads the post at rawURL. A URL of no known platform is read as a
// web page. A Mastodon-shaped URL whose host turns out not to speak the
// Mastodon API is read as a web page too.
func Fetch(ctx context.Context, rawURL string, opts Options) (*Post, error) {
	opts = opts.withDefaults()
	raw := strings.TrimSpace(rawURL)
	u, err := parseURL(raw)
	if err != nil {
		return nil, fmt.Errorf("fetch post %q: %w", rawURL, err)
	}
	var p *Post
	switch {
	case blueskyPost(u) != nil:
		p, err = fetchBluesky(ctx, blueskyPost(u), opts)
	case tweetID(u) != "":
		p, err = fetchTweet(ctx, u, tweetID(u), opts)
	case mastodonStatus(u) != "":
		p, err = fetchMastodon(ctx, u, mastodonStatus(u), opts)
		if errors.Is(err, errNotMastodon) {
			p, err = fetchWeb(ctx, raw, opts)
		}
	case u.Scheme == "http" || u.Scheme == "https":
		p, err = fetchWeb(ctx, raw, opts)
	default:
		err = fmt.Errorf("%w: scheme %q", fetch.ErrBadURL, u.Scheme)
	}
	if err != nil {
		return nil, fmt.Errorf("fetch post %s: %w", raw, err)
	}
	p.URL = raw
	return p, nil
}

func parseURL(raw string) (*url.URL, error) {
	raw = strings.TrimSpace(raw)
	if raw == "" || strings.ContainsAny(raw, " \n\t") {
		return nil, fmt.Errorf("%w: not a URL", fetch.ErrBadURL)
	}
	// at://did:plc:…/… is not a valid URL to net/url (the DID's colons
	// read as a port), so its authority is split off by hand.
	if len(raw) > 5 && strings.EqualFold(raw[:5], "at://") {
		actor, path, _ := strings.Cut(raw[5:], "/")
		if actor == "" {
			return nil, fmt.Errorf("%w: at:// URI without an author", fetch.ErrBadURL)
		}
		return &url.URL{Scheme: "at", Host: actor, Path: "/" + path}, nil
	}
	u, err := url.Parse(raw)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", fetch.ErrBadURL, err)
	}
	u.Scheme = strings.ToLower(u.Scheme)
	if u.Scheme != "http" && u.Scheme != "https" && u.Scheme != "at" {
		return nil, fmt.Errorf("%w: scheme %q", fetch.ErrBadURL, u.Scheme)
	}
	if u.Host == "" {
		return nil, fmt.Errorf("%w: no host", fetch.ErrBadURL)
	}
	return u, nil
}

// apiError is a refused API request: the platform, the status and what the
// platform said, matching one of the Err… values where one fits.
type apiError struct {
	what    string // e.g. "Mastodon API GET https://mastodon.social/api/v1/statuses/1"
	status  int
	message string
	kind    error // ErrNotFound, ErrRefused, ErrRateLimited or nil
	wait    time.Duration
	json    bool // the error body was JSON, as the platform's own errors are
}

func (e *apiError) Error() string {
	s := fmt.Sprintf("%s: HTTP %d %s", e.what, e.status, http.StatusText(e.status))
	if e.message != "" {
		s += ": " + e.message
	}
	if e.kind != nil {
		s += " — " + e.kind.Error()
	}
	if e.wait > 0 {
		s += fmt.Sprintf(" (try again in %s)", e.wait.Round(time.Second))
	}
	return s
}

func (e *apiError) Unwrap() error { return e.kind }

// maxAPIBody caps an API answer; a post and its author are a few kilobytes.
const maxAPIBody = 4 << 20

// getJSON GETs u and decodes a JSON answer into out. Statuses become
// apiErrors with the platform's message (msg pulls it out of the body);
// a body that is not JSON is reported as such.
func getJSON(ctx context.Context, opts Options, what, u string, out any, msg func([]byte) string) (int, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	req.Header.Set("Accept", "application/json")
	req.Header.Set("User-Agent", opts.UserAgent)
	resp, err := opts.Client.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, fmt.Errorf("%s: %w", what, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAPIBody))
	if err != nil {
		return resp.StatusCode, fmt.Errorf("%s: read answer: %w", what, err)
	}
	if resp.StatusCode < 200 || resp.StatusCode > 299 {
		e := &apiError{what: what, status: resp.StatusCode, message: clip(oneLine(msg(body)), 200), json: isJSON(resp.Header.Get("Content-Type"), body)}
		switch {
		case resp.StatusCode == http.StatusNotFound || resp.StatusCode == http.StatusGone:
			e.kind = ErrNotFound
		case resp.StatusCode == http.StatusUnauthorized || resp.StatusCode == http.StatusForbidden:
			e.kind = ErrRefused
		case resp.StatusCode == http.StatusTooManyRequests:
			e.kind, e.wait = ErrRateLimited, retryAfter(resp.Header, time.Now())
		}
		return resp.StatusCode, e
	}
	if !isJSON(resp.Header.Get("Content-Type"), body) {
		return resp.StatusCode, &notJSONError{what: what, contentType: resp.Header.Get("Content-Type"), size: len(body)}
	}
	if err := json.Unmarshal(body, out); err != nil {
		return resp.StatusCode, fmt.Errorf("%s: decode answer: %w", what, err)
	}
	return resp.StatusCode, nil
}

// notJSONError is a 2xx answer that is not JSON: a login wall, a proxy
// page, or a host that is not the platform at all.
type notJSONError struct {
	what, contentType string
	size              int
}

func (e *notJSONError) Error() string {
	ct := e.contentType
	if ct == "" {
		ct = "no content type"
	}
	if e.size == 0 {
		return e.what + ": empty answer"
	}
	return fmt.Sprintf("%s: answered %s (%d bytes), not JSON", e.what, ct, e.size)
}

func isJSON(contentType string, body []byte) bool {
	mt, _, _ := mime.ParseMediaType(contentType)
	b := strings.TrimSpace(string(body[:min(len(body), 64)]))
	if b == "" {
		return false
	}
	if mt == "application/json" || strings.HasSuffix(mt, "+json") {
		return true
	}
	return (mt == "" || mt == "text/plain" || mt == "application/octet-stream") && (b[0] == '{' || b[0] == '[')
}

// retryAfter reads Retry-After (seconds or an HTTP date) or the
// X-RateLimit-Reset that Mastodon (an ISO 8601 time) and X (epoch seconds) send.
func retryAfter(h http.Header, now time.Time) time.Duration {
	if d, ok := sources.RetryAfter(h, now); ok {
		return d
	}
	if v := strings.TrimSpace(h.Get("X-RateLimit-Reset")); v != "" {
		if t, err := time.Parse(time.RFC3339Nano, v); err == nil {
			return max(0, t.Sub(now))
		}
		if s, err := strconv.ParseInt(v, 10, 64); err == nil && s > 1e9 {
			return max(0, time.Unix(s, 0).Sub(now))
		}
	}
	return 0
}

// jsonMessage pulls the message out of the error shapes these APIs use:
// XRPC {"error","message"}, Mastodon {"error"}, and others' {"message"}.
func jsonMessage(body []byte) string {
	var v struct {
		Error   any    `json:"error"`
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &v) != nil {
		if isJSON("", body) {
			return ""
		}
		s := strings.TrimSpace(string(body))
		if strings.HasPrefix(s, "<") {
			return ""
		}
		return s
	}
	e, _ := v.Error.(string)
	switch {
	case e != "" && v.Message != "":
		return e + ": " + v.Message
	case v.Message != "":
		return v.Message
	}
	return e
}

func oneLine(s string) string { return strings.Join(strings.Fields(s), " ") }

func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n]) + "…"
}

// join appends an API path to a configured root, tolerating a trailing slash.
func join(base, path string) string {
	return strings.TrimRight(base, "/") + path
}
