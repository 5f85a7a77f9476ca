package posts

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"regexp"
	"strconv"
	"strings"
	"time"
	"unicode/utf16"

	"github.com/PuerkitoBio/goquery"
	"github.com/musecheck/muse/sources"
)

var tweetPath = regexp.MustCompile(`^/(?:[A-Za-z0-9_]{1,15}|i/web|i)/status(?:es)?/(\d{1,20})(?:/.*)?$`)

// xHosts are X's own hosts and the embed-fixing mirrors people paste.
var xHosts = map[string]bool{
	"x.com": true, "twitter.com": true, "mobile.twitter.com": true, "mobile.x.com": true,
	"fxtwitter.com": true, "vxtwitter.com": true, "fixupx.com": true, "fixvx.com": true,
}

// tweetID returns the status ID of an X/Twitter post URL, "" otherwise.
func tweetID(u *url.URL) string {
	if u.Scheme != "http" && u.Scheme != "https" {
		return ""
	}
	if !xHosts[strings.TrimPrefix(strings.ToLower(u.Hostname()), "www.")] {
		return ""
	}
	if m := tweetPath.FindStringSubmatch(u.Path); m != nil {
		return m[1]
	}
	return ""
}

// tweet is the shape cdn.syndication.twimg.com/tweet-result answers, the
// data behind the public embed.
type tweet struct {
	Typename         string    `json:"__typename"`
	IDStr            string    `json:"id_str"`
	Text             string    `json:"text"`
	CreatedAt        time.Time `json:"created_at"`
	DisplayTextRange []int     `json:"display_text_range"`
	Entities         struct {
		URLs []struct {
			URL         string `json:"url"`
			ExpandedURL string `json:"expanded_url"`
		} `json:"urls"`
		Media []struct {
			URL string `json:"url"`
		} `json:"media"`
	} `json:"entities"`
	User struct {
		Name       string `json:"name"`
		ScreenName string `json:"screen_name"`
	} `json:"user"`
	MediaDetails []struct {
		Type          string `json:"type"` // photo, video, animated_gif
		MediaURLHTTPS string `json:"media_url_https"`
		ExtAltText    string `json:"ext_alt_text"`
		VideoInfo     struct {
			Variants []xVariant `json:"variants"`
		} `json:"video_info"`
	} `json:"mediaDetails"`
	Photos []struct {
		URL string `json:"url"`
	} `json:"photos"`
	QuotedTweet *tweet `json:"quoted_tweet"`
	// Parent is the post this one replies to, which the embed data gives
	// (without its own parent).
	Parent               *tweet `json:"parent"`
	InReplyToStatusIDStr string `json:"in_reply_to_status_id_str"`
	InReplyToScreenName  string `json:"in_reply_to_screen_name"`
	// Card is the link card: its short t.co URL and its binding values
	// (title, description, domain, vanity_url, thumbnail_image…).
	Card *struct {
		Name          string `json:"name"`
		URL           string `json:"url"`
		BindingValues map[string]struct {
			StringValue string `json:"string_value"`
			ImageValue  *struct {
				URL string `json:"url"`
			} `json:"image_value"`
		} `json:"binding_values"`
	} `json:"card"`
	Tombstone *struct {
		Text struct {
			Text string `json:"text"`
		} `json:"text"`
	} `json:"tombstone"`
}

// fetchTweet reads a post from the syndication endpoint and, when that
// fails, from oEmbed, which gives the text and author but no images.
func fetchTweet(ctx context.Context, u *url.URL, id string, opts Options) (*Post, error) {
	p, synErr := fetchSyndication(ctx, id, opts)
	if synErr == nil {
		return p, nil
	}
	if ctx.Err() != nil {
		return nil, synErr
	}
	p, oeErr := fetchOEmbed(ctx, u, id, opts)
	if oeErr != nil {
		return nil, fmt.Errorf("X refused both public endpoints: %w; %w", synErr, oeErr)
	}
	p.Notes = append(p.Notes, "read through X's oEmbed endpoint after the syndication endpoint failed ("+synErr.Error()+"); images and the author's profile are not available this way")
	return p, nil
}

func fetchSyndication(ctx context.Context, id string, opts Options) (*Post, error) {
	q := url.Values{"id": {id}, "lang": {"en"}, "token": {syndicationToken(id)}}
	var t tweet
	_, err := getJSON(ctx, opts, "X syndication: get post "+id, join(opts.TwitterSyndicationURL, "/tweet-result")+"?"+q.Encode(), &t, jsonMessage)
	if err != nil {
		var nj *notJSONError
		if errors.As(err, &nj) && nj.size == 0 {
			// An empty 200 is how the endpoint says the post is unavailable.
			return nil, fmt.Errorf("X syndication: post %s: %w (empty answer)", id, ErrNotFound)
		}
		return nil, err
	}
	if t.Typename == "TweetTombstone" || t.Tombstone != nil {
		return nil, fmt.Errorf("X syndication: post %s: %w: %s", id, ErrNotFound, tombstoneText(&t))
	}
	if t.IDStr == "" && t.Text == "" {
		return nil, fmt.Errorf("X syndication: post %s: %w (answer has no post)", id, ErrNotFound)
	}
	return tweetPost(&t), nil
}

func tweetPost(t *tweet) *Post {
	p := &Post{
		Platform: X,
		Text:     tweetText(t),
		Author:   strings.TrimSpace(t.User.Name),
		Handle:   "@" + t.User.ScreenName,
		PostedAt: t.CreatedAt,
	}
	if t.IDStr != "" && t.User.ScreenName != "" {
		p.URL = "https://x.com/" + t.User.ScreenName + "/status/" + t.IDStr
	}
	for _, m := range t.MediaDetails {
		switch m.Type {
		case "photo":
			p.Images = append(p.Images, ImageRef{URL: m.MediaURLHTTPS, Alt: strings.TrimSpace(m.ExtAltText)})
		case "video", "animated_gif":
			note := "the post has a " + strings.ReplaceAll(m.Type, "_", " ") + "; only its poster image is read"
			if m.MediaURLHTTPS != "" {
				p.Images = append(p.Images, ImageRef{URL: m.MediaURLHTTPS, Alt: strings.TrimSpace(m.ExtAltText)})
				p.Notes = append(p.Notes, note)
			} else {
				note = ""
			}
			if u := chooseMP4(m.VideoInfo.Variants); u != "" {
				p.Videos = append(p.Videos, VideoRef{URL: u, Poster: m.MediaURLHTTPS, Alt: strings.TrimSpace(m.ExtAltText), Note: note})
			}
		}
	}
	if len(t.MediaDetails) == 0 {
		for _, ph := range t.Photos {
			p.Images = append(p.Images, ImageRef{URL: ph.URL})
		}
	}
	if q := t.QuotedTweet; q != nil {
		if q.Typename == "TweetTombstone" || q.Tombstone != nil {
			p.Notes = append(p.Notes, "the quoted post is not shown: "+tombstoneText(q))
		} else {
			p.Quote = tweetPost(q)
			p.Notes = append(p.Notes, contextNotes(p.Quote, "the quoted post")...)
		}
	}
	p.Card = tweetCard(t)
	if t.InReplyToStatusIDStr != "" {
		switch par := t.Parent; {
		case par == nil:
			p.Notes = append(p.Notes, "the post this replies to is not in X's public embed data and was not read")
		case par.Typename == "TweetTombstone" || par.Tombstone != nil:
			p.Notes = append(p.Notes, "the post this replies to is not shown: "+tombstoneText(par))
		default:
			pp := tweetPost(par)
			p.Notes = append(p.Notes, contextNotes(pp, "the post this replies to")...)
			p.Parents = []Post{*pp}
			if par.InReplyToStatusIDStr != "" {
				p.Notes = append(p.Notes, "the post this replies to is itself a reply; the posts above it were not read")
			}
		}
	}
	return p
}

func tombstoneText(t *tweet) string {
	if t.Tombstone == nil || strings.TrimSpace(t.Tombstone.Text.Text) == "" {
		return "deleted, protected or withheld"
	}
	return strings.TrimSuffix(oneLine(t.Tombstone.Text.Text), " Learn more")
}

// tweetCard is a post's link card, its t.co address replaced by the one it
// stands for.
func tweetCard(t *tweet) *Card {
	c := t.Card
	if c == nil {
		return nil
	}
	bv := func(k string) string { return oneLine(c.BindingValues[k].StringValue) }
	u := firstOf(bv("card_url"), c.URL)
	for _, e := range t.Entities.URLs {
		if e.URL == u && e.ExpandedURL != "" {
			u = e.ExpandedURL
		}
	}
	if u == "" || strings.HasPrefix(c.Name, "poll") {
		return nil
	}
	card := &Card{URL: u, Title: bv("title"), Description: strings.TrimSpace(c.BindingValues["description"].StringValue),
		Site: firstOf(bv("vanity_url"), bv("domain"), sources.HostOf(u))}
	for _, k := range []string{"thumbnail_image_large", "thumbnail_image", "summary_photo_image_large", "photo_image_full_size_large"} {
		if iv := c.BindingValues[k].ImageValue; iv != nil && iv.URL != "" {
			card.Image = iv.URL
			break
		}
	}
	return card
}

// tweetText keeps the part of the text the post shows (display_text_range
// leaves out the leading @replies and the trailing media link, counted in
// UTF-16 units as in JavaScript) and puts the real URLs back for t.co links.
func tweetText(t *tweet) string {
	text := t.Text
	if r := t.DisplayTextRange; len(r) == 2 {
		units := utf16.Encode([]rune(text))
		if 0 <= r[0] && r[0] <= r[1] && r[1] <= len(units) {
			text = string(utf16.Decode(units[r[0]:r[1]]))
		}
	}
	for _, u := range t.Entities.URLs {
		if u.URL != "" && u.ExpandedURL != "" {
			text = strings.ReplaceAll(text, u.URL, u.ExpandedURL)
		}
	}
	for _, m := range t.Entities.Media {
		if m.URL != "" {
			text = strings.ReplaceAll(text, m.URL, "")
		}
	}
	return strings.TrimSpace(strings.ReplaceAll(strings.ReplaceAll(text, "&amp;", "&"), "&lt;", "<"))
}

type oembedAnswer struct {
	URL        string `json:"url"`
	AuthorName string `json:"author_name"`
	AuthorURL  string `json:"author_url"`
	HTML       string `json:"html"`
}

func fetchOEmbed(ctx context.Context, u *url.URL, id string, opts Options) (*Post, error) {
	postURL := "https://twitter.com/" + tweetUser(u) + "/status/" + id
	q := url.Values{"url": {postURL}, "omit_script": {"1"}, "dnt": {"true"}}
	var ans oembedAnswer
	if _, err := getJSON(ctx, opts, "X oEmbed: get post "+id, join(opts.TwitterOEmbedURL, "/oembed")+"?"+q.Encode(), &ans, jsonMessage); err != nil {
		var ae *apiError
		if errors.As(err, &ae) && ae.status == 403 {
			ae.message = strings.TrimSpace(ae.message + " (the account is protected or suspended)")
		}
		return nil, err
	}
	doc, err := goquery.NewDocumentFromReader(strings.NewReader(ans.HTML))
	if err != nil {
		return nil, fmt.Errorf("X oEmbed: parse embed HTML: %w", err)
	}
	para := doc.Find("blockquote p").First()
	media := 0
	para.Find("a").Each(func(_ int, a *goquery.Selection) {
		if strings.HasPrefix(strings.TrimSpace(a.Text()), "pic.twitter.com/") {
			media++
			a.Remove()
		}
	})
	h, _ := para.Html()
	p := &Post{Platform: X, Text: htmlText(h), Author: strings.TrimSpace(ans.AuthorName)}
	if p.Text == "" {
		return nil, fmt.Errorf("X oEmbed: post %s: %w (embed HTML has no text)", id, ErrNoContent)
	}
	if au, err := url.Parse(ans.AuthorURL); err == nil && strings.Trim(au.Path, "/") != "" {
		p.Handle = "@" + strings.Trim(au.Path, "/")
	}
	p.PostedAt = snowflakeTime(id)
	if p.PostedAt.IsZero() {
		date := strings.TrimSpace(doc.Find("blockquote > a").Last().Text())
		p.PostedAt = sources.ParseDate(date)
	}
	if media > 0 {
		p.Notes = append(p.Notes, fmt.Sprintf("the post has media (%d link) that oEmbed does not give; open the post to see them", media))
	}
	return p, nil
}

func tweetUser(u *url.URL) string {
	first, _, _ := strings.Cut(strings.TrimPrefix(u.Path, "/"), "/")
	if first == "" || first == "i" {
		return "i/web"
	}
	return first
}

// snowflakeTime reads the creation time X encodes in post IDs since
// November 2010: the milliseconds since its epoch, in the bits above 22.
func snowflakeTime(id string) time.Time {
	n, err := strconv.ParseUint(id, 10, 64)
	if err != nil || n < 1e15 { // older IDs were sequential
		return time.Time{}
	}
	return time.UnixMilli(int64(n>>22) + 1288834974657).UTC()
}

// TweetID returns the status ID of an X/Twitter post URL, "" otherwise.
func TweetID(raw string) string {
	u, err := url.Parse(strings.TrimSpace(raw))
	if err != nil {
		return ""
	}
	return tweetID(u)
}

// xVariant is one encoding of an X video in its video_info: MP4s at
// several bitrates and an HLS playlist.
type xVariant struct {
	Bitrate     int    `json:"bitrate"`
	ContentType string `json:"content_type"`
	URL         string `json:"url"`
}

// chooseMP4 is the MP4 variant to read: the highest bitrate up to 2.5
// Mbit/s (X's 720p), else the lowest; "" when there is no MP4.
func chooseMP4(vs []xVariant) string {
	best, least := -1, -1
	for i, v := range vs {
		if v.ContentType != "video/mp4" || strings.TrimSpace(v.URL) == "" {
			continue
		}
		if least < 0 || v.Bitrate < vs[least].Bitrate {
			least = i
		}
		if v.Bitrate <= 2_500_000 && (best < 0 || v.Bitrate > vs[best].Bitrate) {
			best = i
		}
	}
	switch {
	case best >= 0:
		return vs[best].URL
	case least >= 0:
		return vs[least].URL
	}
	return ""
}
