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
	if err != nil || len(got) != 3 || !strings.HasPrefix(last, "5:") || got[1] != "https://mastodon.social/@x/111985453312768311" {
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

// A list read again goes on after the cursor when it begins with the lines
// read before (a file appended to), and is read whole when it does not:
// another list on standard input, a file written anew, a shorter one. The
// new list's lines are not skipped for their number.
func TestURLsAnotherListIsNotSkipped(t *testing.T) {
	read := func(list, cursor string) (ids []string, last string) {
		t.Helper()
		u := &URLs{Source: "-", Open: func() (io.ReadCloser, error) { return io.NopCloser(strings.NewReader(list)), nil }}
		if err := u.Run(context.Background(), cursor, func(p Post) error {
			if p.Post != nil {
				ids = append(ids, p.ID)
			}
			last = p.Cursor
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		return ids, last
	}
	monday := "https://mastodon.social/@a/111985453312768311\nhttps://mastodon.social/@b/111985453312768312\n"
	_, cursor := read(monday, "")
	if got, _ := read(monday+"https://x.com/y/status/1790000000000000000\n", cursor); len(got) != 1 || got[0] != "https://x.com/y/status/1790000000000000000" {
		t.Errorf("the list appended to: read %q, want the new line alone", got)
	}
	tuesday := "https://bsky.app/profile/c.bsky.social/post/3l3qo2vutsw2b\nhttps://mastodon.social/@d/111985453312768399\nhttps://x.com/e/status/1790000000000000001\n"
	got, last := read(tuesday, cursor)
	if len(got) != 3 || got[0] != "https://bsky.app/profile/c.bsky.social/post/3l3qo2vutsw2b" || !strings.HasPrefix(last, "3:") {
		t.Errorf("another list after a cursor of line 2: read %q to %s, want all three", got, last)
	}
	if got, _ := read("https://x.com/f/status/1790000000000000002\n", cursor); len(got) != 1 {
		t.Errorf("a shorter list: read %q, want its one line", got)
	}
	if got, _ := read(tuesday, last); len(got) != 0 {
		t.Errorf("the same list again: read %q, want nothing", got)
	}
}
