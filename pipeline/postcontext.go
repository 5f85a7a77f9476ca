package pipeline

import (
	"cmp"
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/musecheck/muse/prompts"
	"github.com/musecheck/muse/sources/posts"
)

// What a post points at — the page its link card shares, the post it
// quotes, the posts it replies to — is read with it as context: shown and
// searched beside the author's own words, never as them. The checker may
// leave out an item that has nothing to do with the claim.

// Context item kinds (ContextItem.Kind).
const (
	ContextLink   = "link"   // the page the post shares, as its card shows it
	ContextQuote  = "quote"  // the post it quotes
	ContextParent = "parent" // a post it replies to, the thread's first post first
)

// ContextItem is one thing the post points at.
type ContextItem struct {
	Kind        string    `json:"kind"` // link|quote|parent
	URL         string    `json:"url,omitempty"`
	Title       string    `json:"title,omitempty"`       // a link's
	Description string    `json:"description,omitempty"` // a link's, as its card gives it
	Site        string    `json:"site,omitempty"`        // a link's publisher or host
	Image       string    `json:"image,omitempty"`       // a link's card image
	Text        string    `json:"text,omitempty"`        // a post's text; a link's article lead when read (TextFrom)
	TextFrom    string    `json:"text_from,omitempty"`   // "article": Text was read from the linked page, its card saying too little
	Author      string    `json:"author,omitempty"`
	Handle      string    `json:"handle,omitempty"`
	PostedAt    time.Time `json:"posted_at,omitzero"`
	// Root marks a parent that is the thread's first post, read above
	// the nearest parents when the thread is longer than they are.
	Root bool `json:"root,omitempty"`
	// Excluded: the checker left the item out; the queries and the
	// correction do not see it.
	Excluded bool `json:"excluded,omitempty"`
}

// thinCardWords: a card whose description has fewer words carries too
// little of the article to check; the article itself is read.
const thinCardWords = 20

// maxContextChars caps one context item's text in the prompts (and a thin
// card's article lead); the posts further up a thread than the one replied
// to get maxUpThreadChars each, so that a long thread does not crowd the
// page text out of every evidence prompt.
const (
	maxContextChars  = 1200
	maxUpThreadChars = 400
)

// Label names the item as the prompts and the app show it: "The article
// this post shares", "The post this replies to"…
func (it ContextItem) Label(nearest bool) string {
	switch it.Kind {
	case ContextLink:
		return "The article this post shares"
	case ContextQuote:
		return "The post this one quotes"
	case ContextParent:
		switch {
		case nearest:
			return "The post this replies to"
		case it.Root:
			return "The thread's first post"
		}
		return "An earlier post in the thread"
	}
	return "Context"
}

// Body is what the item says: a link's title and description (or the
// article's lead), a post's text.
func (it ContextItem) Body() string {
	if it.Kind != ContextLink {
		return strings.TrimSpace(it.Text)
	}
	desc := cmp.Or(strings.TrimSpace(it.Text), strings.TrimSpace(it.Description))
	return strings.TrimSpace(strings.Join(nonEmpty(it.Title, desc), "\n"))
}

// Who is the item's author as one line: "City Rumours (@cityrumours)", or
// a link's site.
func (it ContextItem) Who() string {
	if it.Kind == ContextLink {
		return it.Site
	}
	switch {
	case it.Author != "" && it.Handle != "":
		return it.Author + " (" + it.Handle + ")"
	}
	return cmp.Or(it.Author, it.Handle)
}

// nearestParent is the index of the post the post replies to, -1 when none.
func nearestParent(items []ContextItem) int {
	n := -1
	for i, it := range items {
		if it.Kind == ContextParent {
			n = i
		}
	}
	return n
}

// ItemLabel is Label for item i of the post's context.
func (p Post) ItemLabel(i int) string {
	return p.Context[i].Label(i == nearestParent(p.Context))
}

// contextItems turns what the reader found into context items: the parents
// (the first post of the thread first), the quoted post, the link card.
func contextItems(fp *posts.Post) []ContextItem {
	var out []ContextItem
	post := func(kind string, q *posts.Post) ContextItem {
		return ContextItem{Kind: kind, URL: q.URL, Text: strings.TrimSpace(q.Text), Author: q.Author, Handle: q.Handle, PostedAt: q.PostedAt}
	}
	for i := range fp.Parents {
		it := post(ContextParent, &fp.Parents[i])
		it.Root = i == 0 && rootAbove(fp)
		out = append(out, it)
	}
	if q := fp.Quote; q != nil && (strings.TrimSpace(q.Text) != "" || q.Card != nil) {
		out = append(out, post(ContextQuote, q))
		if q.Card != nil && (fp.Card == nil || fp.Card.URL != q.Card.URL) {
			out = append(out, linkItem(q.Card))
		}
	}
	if fp.Card != nil {
		out = append(out, linkItem(fp.Card))
	}
	return out
}

// rootAbove says whether the first parent read is the thread's first post
// read above a gap (the thread is longer than the parents read).
func rootAbove(fp *posts.Post) bool {
	return len(fp.Parents) > posts.MaxParents
}

func linkItem(c *posts.Card) ContextItem {
	return ContextItem{Kind: ContextLink, URL: c.URL, Title: c.Title, Description: c.Description, Site: c.Site, Image: c.Image}
}

// readThinCards reads the article behind each link card whose description
// is too short to carry a claim, through the engine's fetcher (its address
// guard, proxy and archive): its title and lead become the card's text.
// An article that cannot be read is a note.
func (e *Engine) readThinCards(ctx context.Context, p *Post) {
	for i := range p.Context {
		it := &p.Context[i]
		if it.Kind != ContextLink || len(strings.Fields(it.Description)) >= thinCardWords {
			continue
		}
		body, final, err := e.deps.Fetcher.Fetch(ctx, it.URL)
		if err != nil {
			p.Notes = append(p.Notes, fmt.Sprintf("the shared article %s could not be read (%v); only its card is", it.URL, err))
			continue
		}
		a, err := e.deps.Extract(body, cmp.Or(final, it.URL))
		if err != nil || strings.TrimSpace(a.Text) == "" {
			p.Notes = append(p.Notes, "the shared article "+it.URL+" has no text to read; only its card is")
			continue
		}
		var lead []string
		n := 0
		for _, para := range a.Paragraphs {
			if n >= 600 {
				break
			}
			lead = append(lead, strings.TrimSpace(para))
			n += len(para)
		}
		if len(lead) == 0 {
			lead = []string{a.Text}
		}
		it.Text = cutAtSentence(strings.Join(lead, "\n"), maxContextChars)
		it.TextFrom = "article"
		it.Title = cmp.Or(it.Title, strings.TrimSpace(a.Title))
		it.Site = cmp.Or(it.Site, a.SiteName)
	}
}

// includedContext is the context the checker has not left out.
func (p Post) includedContext() []int {
	var out []int
	for i, it := range p.Context {
		if !it.Excluded && it.Body() != "" {
			out = append(out, i)
		}
	}
	return out
}

// contextForSearch is the text of the context the checker kept, for the
// extractive mode, the fallback query and the relevance of pages.
func (p Post) contextForSearch() string {
	var parts []string
	for _, i := range p.includedContext() {
		parts = append(parts, p.Context[i].Body())
	}
	return strings.Join(parts, "\n")
}

// promptContext is the context the checker kept, as the prompts show it.
func promptContext(p Post) []prompts.ContextItem {
	var out []prompts.ContextItem
	nearest := nearestParent(p.Context)
	for _, i := range p.includedContext() {
		it := p.Context[i]
		text := it.Body()
		limit := maxContextChars
		if it.Kind == ContextParent && i != nearest {
			limit = maxUpThreadChars
		}
		if len(text) > limit {
			text = cutAtSentence(text, limit) + " […]"
		}
		out = append(out, prompts.ContextItem{Label: p.ItemLabel(i), Who: it.Who(), URL: it.URL, PostedAt: it.PostedAt, Text: text})
	}
	return out
}

// SetContextIncluded ticks or unticks item i of the post's context. What
// the queries are written from changes, so they and every stage after
// them go stale, as with an edit of the post.
func (c *Check) SetContextIncluded(i int, include bool) error {
	if i < 0 || i >= len(c.Post.Context) {
		return fmt.Errorf("context item %d: %w", i+1, ErrNotInCheck)
	}
	it := &c.Post.Context[i]
	if it.Excluded == !include {
		return nil
	}
	it.Excluded = !include
	c.markStale(StageQueries)
	return nil
}
