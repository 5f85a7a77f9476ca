package pipeline

import (
	"cmp"
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"unicode"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/posts"
)

// maxPostFromPage caps the main text of a web page taken as the post.
const maxPostFromPage = 5000

// PostFromURL reads the post at u: a Bluesky, Mastodon or X post through
// the platform's public API (text, author, handle, time, images with their
// alt text, and as context the post it quotes, the posts it replies to and
// its link card, with notes for what could not be read), or any other web page through its Open
// Graph tags and main text, read with the engine's fetcher. Each platform's
// failure comes back as one line saying what went wrong.
func (e *Engine) PostFromURL(ctx context.Context, u string) (Post, error) {
	u = strings.TrimSpace(u)
	if _, err := sources.ParseHTTP(u); err != nil {
		return Post{}, fmt.Errorf("read the post at %s: %w", u, err)
	}
	pages := &enginePages{f: e.deps.Fetcher}
	opts := e.opts.Posts
	opts.Pages = pages
	fp, err := posts.Fetch(ctx, u, opts)
	if err != nil {
		return Post{}, fmt.Errorf("read the post at %s: %w", u, err)
	}
	p := Post{Text: fp.Text, Author: fp.Author, Handle: fp.Handle, AuthorDescription: fp.AuthorDescription,
		PostedAt: fp.PostedAt, URL: u, Platform: fp.Platform}
	if fp.Platform == posts.Web {
		p.Platform = cmp.Or(fp.Site, sources.HostOf(cmp.Or(pages.finalURL(), u)))
		// The page's main text says more than its card; keep the card when
		// the page has none.
		if body, final := pages.last(); body != nil {
			if a, err := e.deps.Extract(body, final); err == nil {
				if text := strings.TrimSpace(cutAtSentence(strings.TrimSpace(a.Title+"\n\n"+a.Text), maxPostFromPage)); text != "" {
					p.Text = text
				}
				if p.Author == "" {
					p.Author = a.Author
				}
				if p.PostedAt.IsZero() {
					p.PostedAt = a.Published
				}
			}
		}
	}
	addImages(&p, fp.Images)
	// What the post points at is context, beside the author's words.
	p.Context = contextItems(fp)
	p.Notes = slices.Clone(fp.Notes)
	if q := fp.Quote; q != nil {
		addImages(&p, q.Images)
	}
	addVideos(&p, fp.Videos)
	if q := fp.Quote; q != nil {
		addVideos(&p, q.Videos)
	}
	e.readThinCards(ctx, &p)
	if strings.TrimSpace(p.Text) == "" && len(p.Images) == 0 && len(p.Videos) == 0 && len(p.includedContext()) == 0 {
		return Post{}, fmt.Errorf("read the post at %s: %w", u, errors.New("it has no text and no images"))
	}
	return p, nil
}

// PostFromArg is the post a person gave on the command line (muse TEXT|URL,
// muse check): a lone http(s) URL is the post's address, anything else its
// text.
func PostFromArg(arg string) Post {
	arg = strings.TrimSpace(arg)
	if lower := strings.ToLower(arg); !strings.ContainsFunc(arg, unicode.IsSpace) &&
		(strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://")) {
		return Post{URL: arg}
	}
	return Post{Text: arg}
}

// NeedsReading reports whether the post is given by its URL without its
// text (images given with it are added to the post's own), so that
// ReadPost reads it from there.
func (p Post) NeedsReading() bool {
	return strings.TrimSpace(p.Text) == "" && strings.TrimSpace(p.URL) != ""
}

// ReadPost is the post to check from what a person typed, the same for muse
// check, the app and muse batch: typed as it is, unless it is given by its
// URL without its text (NeedsReading); then the post is read from the URL
// (PostFromURL) and what was typed is laid over it (TypedOver).
func (e *Engine) ReadPost(ctx context.Context, typed Post) (Post, error) {
	if !typed.NeedsReading() {
		return typed, nil
	}
	read, err := e.PostFromURL(ctx, typed.URL)
	if err != nil {
		return Post{}, err
	}
	return TypedOver(read, typed), nil
}

// TypedOver is the post read from its URL with what the checker typed laid
// over it: the typed author, handle, posted time and language win over the
// platform's (the checker knows better, or corrects it); typed images are
// added after the post's own; the text, the author's description, the
// platform and the alt texts are the post's.
func TypedOver(read, typed Post) Post {
	p := read
	p.Author = cmp.Or(strings.TrimSpace(typed.Author), read.Author)
	p.Handle = cmp.Or(strings.TrimSpace(typed.Handle), read.Handle)
	p.Language = cmp.Or(typed.Language, read.Language)
	if !typed.PostedAt.IsZero() {
		p.PostedAt = typed.PostedAt
	}
	p.Images = append(slices.Clone(read.Images), typed.Images...)
	p.Videos = append(slices.Clone(read.Videos), typed.Videos...)
	return p
}

func addImages(p *Post, refs []posts.ImageRef) {
	for _, ref := range refs {
		if ref.URL == "" {
			continue
		}
		p.Images = append(p.Images, ref.URL)
		if alt := strings.TrimSpace(ref.Alt); alt != "" {
			if p.AltTexts == nil {
				p.AltTexts = map[string]string{}
			}
			p.AltTexts[ref.URL] = alt
		}
	}
}

func nonEmpty(ss ...string) []string {
	var out []string
	for _, s := range ss {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}

// enginePages lets sources/posts read web pages with the engine's fetcher
// (its address guard, proxy and archive), keeping the last page so its main
// text can be extracted without a second download.
type enginePages struct {
	f     Fetcher
	mu    sync.Mutex
	body  []byte
	final string
}

func (p *enginePages) Fetch(ctx context.Context, u string) (*fetch.Page, error) {
	body, final, err := p.f.Fetch(ctx, u)
	if err != nil {
		return nil, err
	}
	p.mu.Lock()
	p.body, p.final = body, final
	p.mu.Unlock()
	return &fetch.Page{URL: u, FinalURL: final, Status: 200, ContentType: "text/html", Body: body, Raw: body}, nil
}

func (p *enginePages) last() ([]byte, string) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.body, p.final
}

func (p *enginePages) finalURL() string {
	_, f := p.last()
	return f
}
