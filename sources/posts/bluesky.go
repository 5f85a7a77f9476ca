package posts

import (
	"context"
	"encoding/json"
	"fmt"
	"net/url"
	"regexp"
	"slices"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
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
	Reply     *struct {
		Root   struct{ URI string } `json:"root"`
		Parent struct{ URI string } `json:"parent"`
	} `json:"reply"`
	Facets []struct {
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
	Thumbnail string `json:"thumbnail"` // video#view
	Playlist  string `json:"playlist"`  // video#view: the HLS playlist
	External  *struct {
		URI         string `json:"uri"`
		Title       string `json:"title"`
		Description string `json:"description"`
		Thumb       string `json:"thumb"`
	} `json:"external"` // external#view: a link card
	Alt    string          `json:"alt"`    // video#view
	Record json.RawMessage `json:"record"` // record#view: a viewRecord; recordWithMedia#view: a record#view
	Media  *bskyEmbed      `json:"media"`  // recordWithMedia#view
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

// bskyThread is getPostThread's answer: a threadViewPost whose parent is
// another, or a notFoundPost or blockedPost where the chain breaks.
type bskyThread struct {
	Thread bskyNode `json:"thread"`
}

type bskyNode struct {
	Type string `json:"$type"`
	URI  string `json:"uri"`
	Post struct {
		URI    string     `json:"uri"`
		Author bskyAuthor `json:"author"`
		Record bskyRecord `json:"record"`
		Embed  *bskyEmbed `json:"embed"`
	} `json:"post"`
	Parent *bskyNode `json:"parent"`
}

// getThread asks the AppView for the post at uri with parentHeight posts above it.
func getThread(ctx context.Context, opts Options, uri string, parentHeight int) (bskyNode, error) {
	q := url.Values{"uri": {uri}, "depth": {"0"}, "parentHeight": {strconv.Itoa(parentHeight)}}
	var th bskyThread
	_, err := getJSON(ctx, opts, "Bluesky: get post "+uri, join(opts.BlueskyURL, "/xrpc/app.bsky.feed.getPostThread")+"?"+q.Encode(), &th, jsonMessage)
	return th.Thread, err
}

// bskyPost is the post a thread node holds, with its embeds read.
func bskyPost(n *bskyNode) *Post {
	p := &Post{
		Platform: Bluesky,
		Text:     bskyText(n.Post.Record),
		Author:   strings.TrimSpace(n.Post.Author.DisplayName),
		Handle:   "@" + n.Post.Author.Handle,
		PostedAt: n.Post.Record.CreatedAt,
		URL:      bskyWebURL(n.Post.URI, n.Post.Author.Handle),
	}
	if n.Post.Embed != nil {
		addBskyEmbed(p, n.Post.Embed)
	}
	return p
}

// unreadNode is the note for a thread node that is not a post, "" for a post.
func unreadNode(n *bskyNode, what string) string {
	switch n.Type {
	case "app.bsky.feed.defs#notFoundPost":
		return what + " was deleted"
	case "app.bsky.feed.defs#blockedPost":
		return what + " is not shown to anonymous readers (its author blocks viewers or is blocked)"
	}
	if n.Post.URI == "" {
		return what + " could not be read"
	}
	return ""
}

// bskyParents reads the posts above a reply from its thread: the nearest
// MaxParents, then, when the thread goes on above them, its first post
// (one more call), with a note for what was not read.
func bskyParents(ctx context.Context, opts Options, p *Post, node *bskyNode) {
	var chain []Post // nearest first
	top := node
	for n := node.Parent; n != nil && len(chain) < MaxParents; n = n.Parent {
		what := "the post this replies to"
		if len(chain) > 0 {
			what = "a post above in the thread"
		}
		if note := unreadNode(n, what); note != "" {
			p.Notes = append(p.Notes, note)
			top = nil
			break
		}
		pp := bskyPost(n)
		p.Notes = append(p.Notes, contextNotes(pp, what)...)
		chain = append(chain, *pp)
		top = n
	}
	if node.Parent == nil && node.Post.Record.Reply != nil {
		p.Notes = append(p.Notes, "the post this replies to could not be read")
	}
	if top != nil && top != node && top.Post.Record.Reply != nil {
		// The thread goes on above the posts read: read its first post.
		rootURI, parentURI := top.Post.Record.Reply.Root.URI, top.Post.Record.Reply.Parent.URI
		root, err := getThread(ctx, opts, rootURI, 0)
		switch {
		case err != nil:
			p.Notes = append(p.Notes, "the thread's first post could not be read: "+err.Error())
		case unreadNode(&root, "the thread's first post") != "":
			p.Notes = append(p.Notes, unreadNode(&root, "the thread's first post"))
		default:
			chain = append(chain, *bskyPost(&root))
		}
		if parentURI != rootURI {
			p.Notes = append(p.Notes, parentsNote(-1))
		}
	}
	slices.Reverse(chain)
	p.Parents = chain
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
	node, err := getThread(ctx, opts, uri, MaxParents)
	if err != nil {
		return nil, bskyNotFound(err, "")
	}
	switch node.Type {
	case "app.bsky.feed.defs#notFoundPost":
		return nil, fmt.Errorf("Bluesky: %s: %w", uri, ErrNotFound)
	case "app.bsky.feed.defs#blockedPost":
		return nil, fmt.Errorf("Bluesky: %s: %w (the author blocks viewers or is blocked)", uri, ErrRefused)
	}
	post := node.Post
	if post.URI == "" {
		return nil, fmt.Errorf("Bluesky: get post %s: answer has no post (thread type %q)", uri, node.Type)
	}
	p := bskyPost(&node)
	bskyParents(ctx, opts, p, &node)
	var q url.Values
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
		const note = "the post has a video; only its thumbnail is read"
		if e.Thumbnail != "" {
			p.Images = append(p.Images, ImageRef{URL: e.Thumbnail, Alt: strings.TrimSpace(e.Alt)})
			p.Notes = append(p.Notes, note)
		}
		if u := strings.TrimSpace(e.Playlist); u != "" {
			v := VideoRef{URL: u, Poster: e.Thumbnail, Alt: strings.TrimSpace(e.Alt)}
			if e.Thumbnail != "" {
				v.Note = note
			}
			p.Videos = append(p.Videos, v)
		}
	case "app.bsky.embed.external":
		if x := e.External; x != nil && strings.TrimSpace(x.URI) != "" {
			p.Card = &Card{URL: strings.TrimSpace(x.URI), Title: oneLine(x.Title), Description: strings.TrimSpace(x.Description),
				Site: sources.HostOf(x.URI), Image: x.Thumb}
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
