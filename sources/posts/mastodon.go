package posts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

// mastodonPath matches the status URLs Mastodon serves: /@user/ID,
// /@user@remote.host/ID (a remote post seen from this instance; ID is
// this instance's) and /users/user/statuses/ID.
var mastodonPath = regexp.MustCompile(`^/(?:@[A-Za-z0-9_.-]+(?:@[A-Za-z0-9.-]+)?|users/[A-Za-z0-9_.-]+/statuses)/(\d{1,20})/?$`)

// mastodonStatus returns the status ID of a Mastodon-shaped URL, "" otherwise.
func mastodonStatus(u *url.URL) string {
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	if m := mastodonPath.FindStringSubmatch(u.Path); m != nil {
		return m[1]
	}
	return ""
}

// errNotMastodon: the host answered, but not as a Mastodon server.
var errNotMastodon = errors.New("not a Mastodon server")

type mastodonStatusJSON struct {
	ID          string    `json:"id"`
	CreatedAt   time.Time `json:"created_at"`
	Content     string    `json:"content"`
	SpoilerText string    `json:"spoiler_text"`
	URL         string    `json:"url"`
	Account     struct {
		Acct        string `json:"acct"`
		DisplayName string `json:"display_name"`
		Note        string `json:"note"`
	} `json:"account"`
	MediaAttachments []struct {
		Type        string `json:"type"` // image, gifv, video, audio, unknown
		URL         string `json:"url"`
		PreviewURL  string `json:"preview_url"`
		RemoteURL   string `json:"remote_url"`
		Description string `json:"description"`
		Blurhash    string `json:"blurhash"`
	} `json:"media_attachments"`
	Reblog      *mastodonStatusJSON `json:"reblog"`
	InReplyToID *string             `json:"in_reply_to_id"`
	Card        *struct {
		URL          string `json:"url"`
		Title        string `json:"title"`
		Description  string `json:"description"`
		ProviderName string `json:"provider_name"`
		Image        string `json:"image"`
	} `json:"card"`
	// Quote is Mastodon 4.4's quote: its state and, when it may be shown,
	// the quoted status (a ShallowQuote names only its id).
	Quote *struct {
		State          string              `json:"state"`
		QuotedStatus   *mastodonStatusJSON `json:"quoted_status"`
		QuotedStatusID *string             `json:"quoted_status_id"`
	} `json:"quote"`
}

// mastodonQuoteNote says why a quote in state is not shown ("" for one
// that is).
func mastodonQuoteNote(state string) string {
	switch state {
	case "accepted", "":
		return ""
	case "pending":
		return "the quoted post is not shown: its author has not yet approved the quote"
	case "rejected", "revoked":
		return "the quoted post is not shown: its author " + map[string]string{"rejected": "refused", "revoked": "withdrew"}[state] + " permission to quote it"
	case "deleted":
		return "the quoted post was deleted"
	case "unauthorized":
		return "the quoted post is not shown to anonymous readers"
	}
	return "the quoted post is not shown (quote state " + state + ")"
}

func fetchMastodon(ctx context.Context, u *url.URL, id string, opts Options) (*Post, error) {
	instance := u.Scheme + "://" + u.Host
	what := "Mastodon: get status " + id + " from " + u.Host
	var st mastodonStatusJSON
	status, err := getJSON(ctx, opts, what, instance+"/api/v1/statuses/"+id, &st, jsonMessage)
	if err != nil {
		var nj *notJSONError
		var ae *apiError
		switch {
		case errors.As(err, &nj):
			return nil, fmt.Errorf("%w: %w", errNotMastodon, err)
		case errors.As(err, &ae) && !ae.json && (status == 404 || status == 405):
			// Mastodon answers JSON {"error": …} to a missing status; a
			// 404 page that is not JSON means there is no such API here.
			return nil, fmt.Errorf("%w: %w", errNotMastodon, err)
		case errors.As(err, &ae) && ae.kind == ErrRefused:
			ae.message += " (the instance lets only signed-in users read its API)"
		}
		return nil, err
	}
	if st.ID == "" {
		return nil, fmt.Errorf("%w: %s: answer is not a status", errNotMastodon, what)
	}
	p := &Post{Platform: Mastodon}
	if st.Reblog != nil {
		p.Notes = append(p.Notes, "the URL is a boost by @"+st.Account.Acct+"; the boosted post is read")
		st = *st.Reblog
	}
	mastodonPost(p, &st, u.Hostname())
	if st.Quote != nil {
		switch note := mastodonQuoteNote(st.Quote.State); {
		case note != "":
			p.Notes = append(p.Notes, note)
		case st.Quote.QuotedStatus != nil:
			q := &Post{Platform: Mastodon}
			mastodonPost(q, st.Quote.QuotedStatus, u.Hostname())
			p.Notes = append(p.Notes, contextNotes(q, "the quoted post")...)
			p.Quote = q
		default:
			p.Notes = append(p.Notes, "the quoted post is not shown to anonymous readers")
		}
	}
	if st.InReplyToID != nil && *st.InReplyToID != "" {
		mastodonParents(ctx, opts, p, instance, u.Hostname(), st.ID)
	}
	return p, nil
}

// mastodonParents reads the posts above a reply from the status's
// context (one call, which gives every ancestor the instance may show,
// the first post first) and keeps the nearest MaxParents, with the
// thread's first post when there are more.
func mastodonParents(ctx context.Context, opts Options, p *Post, instance, host, id string) {
	var tc struct {
		Ancestors []mastodonStatusJSON `json:"ancestors"`
	}
	what := "Mastodon: get the thread of status " + id + " from " + host
	if _, err := getJSON(ctx, opts, what, instance+"/api/v1/statuses/"+id+"/context", &tc, jsonMessage); err != nil {
		p.Notes = append(p.Notes, "the post this replies to could not be read: "+err.Error())
		return
	}
	anc := tc.Ancestors
	if len(anc) == 0 {
		p.Notes = append(p.Notes, "the post this replies to is not shown (deleted, private or from a blocked account)")
		return
	}
	if first := anc[0].InReplyToID; first != nil && *first != "" {
		// The instance shows the thread from a reply: what is above it
		// was deleted, is private, or never reached this instance.
		p.Notes = append(p.Notes, "the thread's first post is not shown (deleted, private or not known to this instance)")
	}
	skipped := 0
	if len(anc) > MaxParents+1 {
		skipped = len(anc) - MaxParents - 1
		anc = append(anc[:1:1], anc[len(anc)-MaxParents:]...)
	}
	for i := range anc {
		pp := &Post{Platform: Mastodon}
		mastodonPost(pp, &anc[i], host)
		what := "a post above in the thread"
		if i == len(anc)-1 {
			what = "the post this replies to"
		}
		p.Notes = append(p.Notes, contextNotes(pp, what)...)
		p.Parents = append(p.Parents, *pp)
	}
	if skipped > 0 {
		p.Notes = append(p.Notes, parentsNote(skipped))
	}
}

// mastodonPost fills p from a status: its text, author, time, media and card.
func mastodonPost(p *Post, st *mastodonStatusJSON, host string) {
	p.Text = htmlText(st.Content)
	if cw := strings.TrimSpace(st.SpoilerText); cw != "" {
		p.Text = "CW: " + cw + "\n\n" + p.Text
	}
	p.Author = strings.TrimSpace(st.Account.DisplayName)
	p.Handle = "@" + st.Account.Acct
	if !strings.Contains(st.Account.Acct, "@") {
		p.Handle += "@" + host // a local account's acct has no domain
	}
	p.AuthorDescription = htmlText(st.Account.Note)
	p.PostedAt = st.CreatedAt
	if p.URL == "" {
		p.URL = st.URL
	}
	for _, m := range st.MediaAttachments {
		switch m.Type {
		case "image":
			if src := firstOf(m.URL, m.RemoteURL, m.PreviewURL); src != "" {
				p.Images = append(p.Images, ImageRef{URL: src, Alt: strings.TrimSpace(m.Description)})
			}
		case "gifv", "video":
			note := "the post has a " + m.Type + "; only its preview image is read"
			if m.PreviewURL != "" {
				p.Images = append(p.Images, ImageRef{URL: m.PreviewURL, Alt: strings.TrimSpace(m.Description)})
				p.Notes = append(p.Notes, note)
			} else {
				note = ""
			}
			if src := firstOf(m.URL, m.RemoteURL); src != "" {
				p.Videos = append(p.Videos, VideoRef{URL: src, Poster: m.PreviewURL, Alt: strings.TrimSpace(m.Description), Note: note})
			}
		default:
			p.Notes = append(p.Notes, "an attachment of type "+m.Type+" is not read")
		}
	}
	if c := st.Card; c != nil && strings.TrimSpace(c.URL) != "" {
		p.Card = &Card{URL: strings.TrimSpace(c.URL), Title: oneLine(c.Title), Description: strings.TrimSpace(c.Description),
			Site: firstOf(oneLine(c.ProviderName), sources.HostOf(c.URL)), Image: c.Image}
	}
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
