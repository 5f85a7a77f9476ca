package feeds

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/posts"
)

// EligibleLister is what XEligible asks: X's AI Note Writer API's posts
// eligible for notes (notewriter.Client.Eligible).
type EligibleLister interface {
	Eligible(ctx context.Context, o notewriter.EligibleOptions) ([]notewriter.EligiblePost, string, error)
}

// XEligible is the feed of posts people asked Community Notes for, as X's
// AI Note Writer API offers them (GET /2/notes/search/posts_eligible_for_notes,
// in test mode): it asks every Every, reads up to MaxPages pages, and
// delivers each post. The API has no cursor; a post offered again carries
// the same ID, which the consumer drops (muse watch remembers it for as
// long as it is offered, however long that is). Its cursor is the time of the
// last poll, kept for the record. A refused enrolment (403
// client-not-enrolled) or keys X refuses end the feed; other failures are
// tried again at the next poll.
type XEligible struct {
	Client EligibleLister
	// Lang is the feed's language (an ISO 639-1 code or "all"; "" is X's
	// default, English).
	Lang string
	// Every is the time between polls; 0 means 5 minutes (X allows 90
	// requests per 15 minutes to a writer, shared with its other calls).
	Every time.Duration
	// MaxPages bounds the pages read a poll; 0 means 3 (300 posts).
	MaxPages int
	// Now is the clock of the cursor; nil is time.Now.
	Now func() time.Time
	// Errors receives the failures a later poll may get over; nil drops
	// them.
	Errors func(error)
}

// Name is the feed's identity.
func (x *XEligible) Name() string {
	if x.Lang == "" {
		return "x-eligible"
	}
	return "x-eligible " + x.Lang
}

// Run polls until ctx is done, emit fails or X refuses the writer.
func (x *XEligible) Run(ctx context.Context, _ string, emit func(Post) error) error {
	every := x.Every
	if every <= 0 {
		every = 5 * time.Minute
	}
	pages := x.MaxPages
	if pages <= 0 {
		pages = 3
	}
	now := time.Now
	if x.Now != nil {
		now = x.Now
	}
	for {
		stop, err := x.poll(ctx, pages, now, emit)
		var api *notewriter.APIError
		switch {
		case stop != nil:
			return stop
		case ctx.Err() != nil:
			return ctx.Err()
		case errors.Is(err, notewriter.ErrNotEnrolled), errors.As(err, &api) && (api.Status == 401 || api.Status == 403):
			return fmt.Errorf("x-eligible: %w", err)
		case err != nil && x.Errors != nil:
			x.Errors(fmt.Errorf("x-eligible: %w (asked again in %s)", err, every))
		}
		t := time.NewTimer(every)
		select {
		case <-ctx.Done():
			t.Stop()
			return ctx.Err()
		case <-t.C:
		}
	}
}

// poll reads up to pages pages of eligible posts and emits each; stop is
// emit's error, which ends Run, err the API's.
func (x *XEligible) poll(ctx context.Context, pages int, now func() time.Time, emit func(Post) error) (stop, err error) {
	next := ""
	for range pages {
		ps, tok, err := x.Client.Eligible(ctx, notewriter.EligibleOptions{Max: 100, Lang: x.Lang, Next: next})
		if err != nil {
			return nil, err
		}
		cursor := now().UTC().Format(time.RFC3339)
		for _, p := range ps {
			if err := emit(eligiblePost(p, cursor)); err != nil {
				return err, nil
			}
		}
		if tok == "" {
			return nil, nil
		}
		next = tok
	}
	return nil, nil
}

// eligiblePost is an eligible post as a feed delivers it: its text, time,
// address and photos, the language X detected.
func eligiblePost(p notewriter.EligiblePost, cursor string) Post {
	pp := &posts.Post{Text: p.Text, URL: p.URL(), Platform: posts.X, PostedAt: p.CreatedAt}
	var keys []string
	for _, m := range p.Media {
		switch {
		case m.Type == "photo" && m.URL != "":
			pp.Images = append(pp.Images, posts.ImageRef{URL: m.URL, Alt: m.AltText})
			keys = append(keys, "x-media:"+m.Key)
		case m.Preview != "":
			pp.Images = append(pp.Images, posts.ImageRef{URL: m.Preview, Alt: m.AltText})
			keys = append(keys, "x-media:"+m.Key)
		}
	}
	out := Post{ID: p.URL(), Cursor: cursor, Post: pp, ImageKeys: keys}
	if p.Lang != "" && p.Lang != "und" {
		out.Langs = []string{p.Lang}
	}
	return out
}
