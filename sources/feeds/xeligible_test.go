package feeds

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/musecheck/muse/sources/notewriter"
	"github.com/musecheck/muse/sources/notewriter/notewritertest"
)

// The eligible-posts feed, against a loopback AI Note Writer API that
// verifies OAuth 1.0a signatures: each post delivered with its text, time,
// address, photos and language, asked again at the next poll (the same IDs,
// for the consumer to drop); a writer X does not enrol ends the feed.
func TestXEligible(t *testing.T) {
	at := time.Date(2024, 1, 30, 9, 0, 0, 0, time.UTC)
	srv := notewritertest.New(t,
		notewritertest.Post{ID: "1901", Text: "Bikes banned from Main Street!", Lang: "en", CreatedAt: at,
			Photos: []string{"https://pbs.twimg.com/media/a.jpg"}},
		notewritertest.Post{ID: "1903", Text: "The council hid the vote", Lang: "en", CreatedAt: at.Add(time.Hour)},
	)
	c := notewriter.New(srv.URL, notewritertest.Keys, nil)
	f := &XEligible{Client: c, Every: 10 * time.Millisecond}
	var got []Post
	enough := errors.New("enough")
	err := f.Run(context.Background(), "", func(p Post) error {
		got = append(got, p)
		if len(got) == 4 { // two polls
			return enough
		}
		return nil
	})
	if !errors.Is(err, enough) {
		t.Fatalf("run: %v", err)
	}
	p := got[0]
	if p.ID != "https://x.com/i/status/1901" || p.Post == nil || p.Post.Text != "Bikes banned from Main Street!" || !p.Post.PostedAt.Equal(at) ||
		p.Post.Platform != "x" || len(p.Post.Images) != 1 || p.Post.Images[0].URL != "https://pbs.twimg.com/media/a.jpg" ||
		len(p.Langs) != 1 || p.Langs[0] != "en" || p.Cursor == "" {
		t.Errorf("first post: %+v %+v", p, p.Post)
	}
	if got[2].ID != got[0].ID || got[3].ID != got[1].ID {
		t.Errorf("the second poll delivers %s, %s", got[2].ID, got[3].ID)
	}
	if n := len(srv.Requests()); n != 2 {
		t.Errorf("%d requests for two polls", n)
	}

	srv.SetEnrolled(false)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	err = f.Run(ctx, "", func(Post) error { return nil })
	if !errors.Is(err, notewriter.ErrNotEnrolled) {
		t.Errorf("a writer not enrolled: %v", err)
	}
}
