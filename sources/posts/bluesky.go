package posts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"sort"
	"strings"
	"time"
)

// bskyRef names a post: the author (a handle or a DID) and the record key.
type bskyRef struct{ actor, rkey string }

var (
	bskyPath = regexp.MustCompile(`^/profile/([^/]+)/post/([A-Za-z0-9._:~-]+)/?$`)
	atPath   = regexp.MustCompile(`^/app\.bsky\.feed\.post/([A-Za-z0-9._:~-]+)$`)
)

// blueskyPost recognises https://bsky.app/profile/HANDLE/post/RKEY (also
// with a DID) and at://DID/app.bsky.feed.post/RKEY.
func blueskyPost(u *url.URL) *bskyRef {
	switch u.Scheme {
	case "at":
		if m := atPath.FindStringSubmatch(u.Path); m != nil {
			return &bskyRef{actor: u.Host, rkey: m[1]}
		}
	case "http", "https":
		h := strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")
		if h != "bsky.app" && h != "staging.bsky.app" {
			return nil
		}
		if m := bskyPath.FindStringSubmatch(u.Path); m != nil {
			return &bskyRef{actor: m[1], rkey: m[2]}
		}
	}
	return nil
}

type bskyAuthor struct {
	DID         string `json:"did"`
	Handle      string `json:"handle"`
	DisplayName string `json:"displayName"`
}

type bskyRecord struct {
	Text      string    `json:"text"`
	CreatedAt time.Time `json:"createdAt"`
	Facets    []struct {
		Index struct {
			ByteStart int `json:"byteStart"`
			ByteEnd   int `json:"byteEnd"`
		} `json:"index"`
		Features []struct {
			Type string `json:"$type"`
			URI  string `json:"uri"`
		} `json:"features"`
	} `json:"facets"`
}

// bskyEmbed is any embed view the AppView hydrates: images#view,
// video#view, external#view, record#view and recordWithMedia#view.
type bskyEmbed struct {
	Type   string `json:"$type"`
	Images []struct {
		Fullsize string `json:"fullsize"`
		Thumb    string `json:"thumb"`
		Alt      string `json:"alt"`
	} `json:"images"`
	Thumbnail string          `json:"thumbnail"` // video#view
	Alt       string          `json:"alt"`       // video#view
	Record    json.RawMessage `json:"record"`    // record#view: a viewRecord; recordWithMedia#view: a record#view
	Media     *bskyEmbed      `json:"media"`     // recordWithMedia#view
}

// bskyViewRecord is an embedded (quoted) post, or a #viewNotFound /
// #viewBlocked / #viewDetached stand-in for one.
type bskyViewRecord struct {
	Type   string      `json:"$type"`
	URI    string      `json:"uri"`
	Author bskyAuthor  `json:"author"`
	Value  bskyRecord  `json:"value"`
	Embeds []bskyEmbed `json:"embeds"`
}

type bskyThread struct {
	Thread struct {
		Type string `json:"$type"`
		Post struct {
			URI    string     `json:"uri"`
			Author bskyAuthor `json:"author"`
			Record bskyRecord `json:"record"`
			Embed  *bskyEmbed `json:"embed"`
		} `json:"post"`
	} `json:"thread"`
}

func fetchBluesky(ctx context.Context, ref *bskyRef, opts Options) (*Post, error) {
	did := ref.actor
	if !strings.HasPrefix(did, "did:") {
		var res struct {
			DID string `json:"did"`
		}
		q := url.Values{"handle": {ref.actor}}
		what := "Bluesky: resolve handle @" + ref.actor
		if _, err := getJSON(ctx, opts, what, join(opts.BlueskyURL, "/xrpc/com.atproto.identity.resolveHandle")+"?"+q.Encode(), &res, jsonMessage); err != nil {
			return nil, bskyNotFound(err, "no account has the handle @"+ref.actor)
		}
		if res.DID == "" {
			return nil, fmt.Errorf("%s: answer has no DID", what)
		}
		did = res.DID
	}
	uri := "at://" + did + "/app.bsky.feed.post/" + ref.rkey
	q := url.Values{"uri": {uri}, "depth": {"0"}, "parentHeight": {"0"}}
	var th bskyThread
	if _, err := getJSON(ctx, opts, "Bluesky: get post "+uri, join(opts.BlueskyURL, "/xrpc/app.bsky.feed.getPostThread")+"?"+q.Encode(), &th, jsonMessage); err != nil {
		return nil, bskyNotFound(err, "")
	}
	switch th.Thread.Type {
	case "app.bsky.feed.defs#notFoundPost":
		return nil, fmt.Errorf("Bluesky: %s: %w", uri, ErrNotFound)
	case "app.bsky.feed.defs#blockedPost":
		return nil, fmt.Errorf("Bluesky: %s: %w (the author blocks viewers or is blocked)", uri, ErrRefused)
	}
	post := th.Thread.Post
	if post.URI == "" {
		return nil, fmt.Errorf("Bluesky: get post %s: answer has no post (thread type %q)", uri, th.Thread.Type)
	}
	p := &Post{
		Platform: Bluesky,
		Text:     bskyText(post.Record),
		Author:   strings.TrimSpace(post.Author.DisplayName),
		Handle:   "@" + post.Author.Handle,
		PostedAt: post.Record.CreatedAt,
	}
	if post.Embed != nil {
		addBskyEmbed(p, post.Embed)
	}
	// getPostThread's author view has no profile text; getProfile does.
	var prof struct {
		Description string `json:"description"`
	}
	q = url.Values{"actor": {post.Author.DID}}
	if _, err := getJSON(ctx, opts, "Bluesky: get profile", join(opts.BlueskyURL, "/xrpc/app.bsky.actor.getProfile")+"?"+q.Encode(), &prof, jsonMessage); err != nil {
		p.Notes = append(p.Notes, "author description unavailable: "+err.Error())
	} else {
		p.AuthorDescription = strings.TrimSpace(prof.Description)
	}
	return p, nil
}

// bskyNotFound turns the AppView's 400 answers for a missing post or
// account (XRPC errors NotFound, InvalidRequest "Unable to resolve
// handle"…) into ErrNotFound; other failures pass through.
func bskyNotFound(err error, why string) error {
	ae, ok := err.(*apiError)
	if !ok || ae.status != 400 {
		return err
	}
	m := strings.ToLower(ae.message)
	if strings.Contains(m, "notfound") || strings.Contains(m, "not found") || strings.Contains(m, "unable to resolve") ||
		strings.Contains(m, "could not find") {
		ae.kind = ErrNotFound
		if why != "" {
			ae.message += " (" + why + ")"
		}
	}
	return ae
}

// bskyText is the post text with link facets restored: the app shortens
// long links in the text ("example.com/some-artic…") and keeps the full URI
// in a facet over those bytes.
func bskyText(r bskyRecord) string {
	b := []byte(r.Text)
	type cut struct {
		start, end int
		uri        string
	}
	var cuts []cut
	for _, f := range r.Facets {
		for _, feat := range f.Features {
			s, e := f.Index.ByteStart, f.Index.ByteEnd
			if feat.Type == "app.bsky.richtext.facet#link" && feat.URI != "" && 0 <= s && s < e && e <= len(b) {
				cuts = append(cuts, cut{s, e, feat.URI})
			}
		}
	}
	sort.Slice(cuts, func(i, j int) bool { return cuts[i].start > cuts[j].start })
	last := len(b) + 1
	for _, c := range cuts {
		if c.end > last {
			continue // overlapping facets: keep the text as written
		}
		b = append(b[:c.start:c.start], append([]byte(c.uri), b[c.end:]...)...)
		last = c.start
	}
	return strings.TrimSpace(string(b))
}

func addBskyEmbed(p *Post, e *bskyEmbed) {
	switch strings.TrimSuffix(e.Type, "#view") {
	case "app.bsky.embed.images":
		for _, img := range e.Images {
			u := img.Fullsize
			if u == "" {
				u = img.Thumb
			}
			if u != "" {
				p.Images = append(p.Images, ImageRef{URL: u, Alt: strings.TrimSpace(img.Alt)})
			}
		}
	case "app.bsky.embed.video":
		if e.Thumbnail != "" {
			p.Images = append(p.Images, ImageRef{URL: e.Thumbnail, Alt: strings.TrimSpace(e.Alt)})
			p.Notes = append(p.Notes, "the post has a video; only its thumbnail is read")
		}
	case "app.bsky.embed.record":
		p.Quote = bskyQuote(e.Record, p)
	case "app.bsky.embed.recordWithMedia":
		if e.Media != nil {
			addBskyEmbed(p, e.Media)
		}
		var inner struct {
			Record json.RawMessage `json:"record"`
		}
		if json.Unmarshal(e.Record, &inner) == nil {
			p.Quote = bskyQuote(inner.Record, p)
		}
	}
}

// bskyQuote reads a quoted post; a quote that cannot be shown is a note.
func bskyQuote(raw json.RawMessage, p *Post) *Post {
	var r bskyViewRecord
	if len(raw) == 0 || json.Unmarshal(raw, &r) != nil {
		return nil
	}
	switch r.Type {
	case "app.bsky.embed.record#viewRecord":
	case "app.bsky.embed.record#viewNotFound":
		p.Notes = append(p.Notes, "the quoted post was deleted")
		return nil
	case "app.bsky.embed.record#viewBlocked", "app.bsky.embed.record#viewDetached":
		p.Notes = append(p.Notes, "the quoted post is not shown to anonymous readers")
		return nil
	default:
		return nil // a quoted feed, list or starter pack: not a post
	}
	q := &Post{
		Platform: Bluesky,
		Text:     bskyText(r.Value),
		Author:   strings.TrimSpace(r.Author.DisplayName),
		Handle:   "@" + r.Author.Handle,
		PostedAt: r.Value.CreatedAt,
		URL:      bskyWebURL(r.URI, r.Author.Handle),
	}
	for i := range r.Embeds {
		addBskyEmbed(q, &r.Embeds[i])
	}
	return q
}

// bskyWebURL turns at://DID/app.bsky.feed.post/RKEY into the bsky.app link.
func bskyWebURL(uri, handle string) string {
	u, err := parseURL(uri)
	if err != nil || u.Scheme != "at" {
		return uri
	}
	m := atPath.FindStringSubmatch(u.Path)
	if m == nil {
		return uri
	}
	actor := u.Host
	if handle != "" && handle != "handle.invalid" {
		actor = handle
	}
	return "https://bsky.app/profile/" + actor + "/post/" + m[1]
}
