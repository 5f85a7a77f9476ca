package posts

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net/url"
	"strings"

	"github.com/PuerkitoBio/goquery"
	"github.com/musecheck/muse/sources"

	"github.com/musecheck/muse/sources/fetch"
)

// fetchWeb reads any page through the safe fetcher and builds a post from
// its Open Graph, Twitter card and plain HTML metadata.
func fetchWeb(ctx context.Context, raw string, opts Options) (*Post, error) {
	page, err := opts.Pages.Fetch(ctx, raw)
	if err != nil {
		var se *fetch.StatusError
		if errors.As(err, &se) {
			switch se.Code {
			case 404, 410:
				return nil, fmt.Errorf("web page: %w: %w", ErrNotFound, err)
			case 401, 403:
				return nil, fmt.Errorf("web page: %w: %w", ErrRefused, err)
			case 429:
				return nil, fmt.Errorf("web page: %w: %w", ErrRateLimited, err)
			}
		}
		return nil, fmt.Errorf("web page: %w", err)
	}
	doc, err := goquery.NewDocumentFromReader(bytes.NewReader(page.Body))
	if err != nil {
		return nil, fmt.Errorf("web page: parse HTML: %w", err)
	}
	base, _ := url.Parse(page.FinalURL)
	if base == nil {
		base, _ = url.Parse(raw)
	}
	m := metaTags(doc)
	title := firstOf(m.get("og:title"), m.get("twitter:title"), oneLine(doc.Find("title").First().Text()))
	desc := firstOf(m.get("og:description"), m.get("twitter:description"), m.get("description"))
	p := &Post{Platform: Web, Text: joinTitle(title, desc), Site: m.get("og:site_name")}
	if p.Text == "" {
		return nil, fmt.Errorf("web page %s: %w (no Open Graph or Twitter card tags, title or description)", page.FinalURL, ErrNoContent)
	}
	p.Author = firstOf(m.get("author"), nonURL(m.get("article:author")), m.get("parsely-author"), m.get("sailthru.author"))
	if c := m.get("twitter:creator"); strings.HasPrefix(c, "@") && len(c) > 1 {
		p.Handle = c
	}
	for _, k := range []string{"article:published_time", "og:article:published_time", "datepublished", "date", "pubdate", "dc.date", "dcterms.created"} {
		if t := sources.ParseDate(m.get(k)); !t.IsZero() {
			p.PostedAt = t
			break
		}
	}
	p.Images = pageImages(m, base)
	p.Notes = append(p.Notes, page.Notes...)
	return p, nil
}

// metas holds a page's meta tags by lower-cased property, name or itemprop,
// in document order; og:image:alt values are kept beside the og:image they
// follow.
type metas struct {
	values map[string][]string
	images []ImageRef // og:image, each with the og:image:alt after it
}

func (m *metas) get(k string) string {
	for _, v := range m.values[k] {
		if v = strings.TrimSpace(v); v != "" {
			return oneLine(v)
		}
	}
	return ""
}

func metaTags(doc *goquery.Document) *metas {
	m := &metas{values: map[string][]string{}}
	doc.Find("meta").Each(func(_ int, s *goquery.Selection) {
		content, ok := s.Attr("content")
		if !ok {
			return
		}
		// Sites mix property= and name= for Open Graph tags.
		for _, attr := range []string{"property", "name", "itemprop"} {
			k, ok := s.Attr(attr)
			if !ok {
				continue
			}
			k = strings.ToLower(strings.TrimSpace(k))
			m.values[k] = append(m.values[k], content)
			switch k {
			case "og:image", "og:image:url", "og:image:secure_url":
				if k == "og:image" || len(m.images) == 0 {
					m.images = append(m.images, ImageRef{URL: strings.TrimSpace(content)})
				}
			case "og:image:alt":
				if n := len(m.images); n > 0 && m.images[n-1].Alt == "" {
					m.images[n-1].Alt = oneLine(content)
				}
			}
		}
	})
	return m
}

// pageImages resolves the page's card images against its URL, dropping
// duplicates and anything not http(s). Twitter card images count only when
// there is no Open Graph image, as they are usually the same picture.
func pageImages(m *metas, base *url.URL) []ImageRef {
	refs := m.images
	if len(refs) == 0 {
		for _, k := range []string{"twitter:image", "twitter:image:src"} {
			if v := m.get(k); v != "" {
				refs = append(refs, ImageRef{URL: v, Alt: m.get("twitter:image:alt")})
				break
			}
		}
	}
	seen := map[string]bool{}
	var out []ImageRef
	for _, r := range refs {
		u, err := url.Parse(r.URL)
		if err != nil || r.URL == "" {
			continue
		}
		if base != nil {
			u = base.ResolveReference(u)
		}
		if (u.Scheme != "http" && u.Scheme != "https") || seen[u.String()] {
			continue
		}
		seen[u.String()] = true
		out = append(out, ImageRef{URL: u.String(), Alt: r.Alt})
	}
	return out
}

// joinTitle gives title and description as the post text, once each: many
// pages repeat the title at the start of the description.
func joinTitle(title, desc string) string {
	switch {
	case desc == "":
		return title
	case title == "" || strings.HasPrefix(desc, title):
		return desc
	case strings.HasPrefix(title, desc):
		return title
	}
	return title + "\n\n" + desc
}

func nonURL(s string) string {
	if strings.HasPrefix(s, "http://") || strings.HasPrefix(s, "https://") {
		return ""
	}
	return s
}
