package posts

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// Posts as a live feed delivers them: a Bluesky record from Jetstream (the
// record as its author wrote it, not the AppView's hydrated view) and a
// Mastodon status from the streaming API (the same Status entity the REST
// API returns).

// bskyRawEmbed is a post record's embed as written: images are blobs
// named by their CID, not CDN URLs.
type bskyRawEmbed struct {
	Type   string `json:"$type"`
	Images []struct {
		Alt   string `json:"alt"`
		Image struct {
			Ref struct {
				Link string `json:"$link"`
			} `json:"ref"`
			MimeType string `json:"mimeType"`
		} `json:"image"`
	} `json:"images"`
	External *struct {
		URI         string `json:"uri"`
		Title       string `json:"title"`
		Description string `json:"description"`
	} `json:"external"`
	Media *bskyRawEmbed `json:"media"`
}

// FromBlueskyRecord is the app.bsky.feed.post record of the repository did
// under rkey as a Post (its web URL, text with links restored, images at
// Bluesky's CDN, link card), with the CIDs of its images: the same image
// posted twice has the same CID.
func FromBlueskyRecord(did, rkey string, record json.RawMessage) (*Post, []string, error) {
	if !isDID(did) || rkey == "" || strings.ContainsAny(rkey, "/?#") {
		return nil, nil, fmt.Errorf("not a post of a repository: did %q, rkey %q", did, rkey)
	}
	var r struct {
		bskyRecord
		Embed *bskyRawEmbed `json:"embed"`
	}
	if err := json.Unmarshal(record, &r); err != nil {
		return nil, nil, fmt.Errorf("post record: %w", err)
	}
	p := &Post{Text: bskyText(r.bskyRecord), PostedAt: r.CreatedAt, Platform: "Bluesky",
		URL: "https://bsky.app/profile/" + did + "/post/" + url.PathEscape(rkey)}
	var cids []string
	for e := r.Embed; e != nil; e = e.Media {
		for _, img := range e.Images {
			cid := img.Image.Ref.Link
			if cid == "" || strings.ContainsAny(cid, "/?#@") {
				continue
			}
			cids = append(cids, cid)
			p.Images = append(p.Images, ImageRef{URL: "https://cdn.bsky.app/img/feed_fullsize/plain/" + did + "/" + cid + "@jpeg",
				Alt: strings.TrimSpace(img.Alt)})
		}
		if x := e.External; x != nil && strings.TrimSpace(x.URI) != "" && p.Card == nil {
			p.Card = &Card{URL: strings.TrimSpace(x.URI), Title: oneLine(x.Title), Description: strings.TrimSpace(x.Description)}
		}
	}
	return p, cids, nil
}

// MastodonStatus is a status as the streaming API's update event carries
// it: the Post (a boost is the status it boosts), its ID on the instance
// (the boost's own, which is what timelines page by), the blurhashes of its
// images (a compact hash of what the image looks like) and whether it is a
// boost.
type MastodonStatus struct {
	Post       *Post
	ID         string
	Blurhashes []string
	Boost      bool
}

// FromMastodonStatus reads a Status entity of the instance at host.
func FromMastodonStatus(data []byte, host string) (MastodonStatus, error) {
	var st mastodonStatusJSON
	if err := json.Unmarshal(data, &st); err != nil {
		return MastodonStatus{}, fmt.Errorf("status: %w", err)
	}
	if st.ID == "" {
		return MastodonStatus{}, errors.New("status: no id")
	}
	out := MastodonStatus{ID: st.ID}
	shown := &st
	if st.Reblog != nil {
		shown, out.Boost = st.Reblog, true
	}
	p := &Post{Platform: "Mastodon"}
	mastodonPost(p, shown, host)
	out.Post = p
	for _, m := range shown.MediaAttachments {
		if m.Blurhash != "" {
			out.Blurhashes = append(out.Blurhashes, m.Blurhash)
		}
	}
	return out, nil
}
