package posts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strings"
	"time"
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
	} `json:"media_attachments"`
	Reblog *mastodonStatusJSON `json:"reblog"`
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
	p.Text = htmlText(st.Content)
	if cw := strings.TrimSpace(st.SpoilerText); cw != "" {
		p.Text = "CW: " + cw + "\n\n" + p.Text
	}
	p.Author = strings.TrimSpace(st.Account.DisplayName)
	p.Handle = "@" + st.Account.Acct
	if !strings.Contains(st.Account.Acct, "@") {
		p.Handle += "@" + u.Hostname() // a local account's acct has no domain
	}
	p.AuthorDescription = htmlText(st.Account.Note)
	p.PostedAt = st.CreatedAt
	for _, m := range st.MediaAttachments {
		switch m.Type {
		case "image":
			if src := firstOf(m.URL, m.RemoteURL, m.PreviewURL); src != "" {
				p.Images = append(p.Images, ImageRef{URL: src, Alt: strings.TrimSpace(m.Description)})
			}
		case "gifv", "video":
			if m.PreviewURL != "" {
				p.Images = append(p.Images, ImageRef{URL: m.PreviewURL, Alt: strings.TrimSpace(m.Description)})
				p.Notes = append(p.Notes, "the post has a "+m.Type+"; only its preview image is read")
			}
		default:
			p.Notes = append(p.Notes, "an attachment of type "+m.Type+" is not read")
		}
	}
	return p, nil
}

func firstOf(s ...string) string {
	for _, v := range s {
		if v != "" {
			return v
		}
	}
	return ""
}
