package feeds

import (
	"context"
	"io"
	"strings"
	"testing"
)

func TestURLsResumeAfterTheLastLine(t *testing.T) {
	list := "https://bsky.app/profile/a.bsky.social/post/3l3qo2vutsw2b\n\n# from the tip line\nhttps://mastodon.social/@x/111985453312768311\nhttps://x.com/y/status/1790000000000000000\n"
	u := &URLs{Source: "tips.txt", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(list)), nil }}
	var got []string
	var last string
	err := u.Run(context.Background(), "", func(p Post) error {
		if p.Post != nil {
			got = append(got, p.ID)
		}
		last = p.Cursor
		return nil
	})
	if err != nil || len(got) != 3 || last != "5" || got[1] != "https://mastodon.social/@x/111985453312768311" {
		t.Fatalf("read %q to line %s (%v)", got, last, err)
	}
	got = nil
	if err := u.Run(context.Background(), "4", func(p Post) error {
		if p.Post != nil {
			got = append(got, p.ID)
		}
		return nil
	}); err != nil || len(got) != 1 || got[0] != "https://x.com/y/status/1790000000000000000" {
		t.Errorf("from line 4: %q (%v), want the last URL alone", got, err)
	}
	bad := &URLs{Source: "-", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader("not a url\n")), nil }}
	if err := bad.Run(context.Background(), "", func(Post) error { return nil }); err == nil || !strings.Contains(err.Error(), "line 1") {
		t.Errorf("a line that is not a URL: %v", err)
	}
}
