package posts

import "testing"

func TestSamePost(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		same bool
	}{
		{"https://x.com/cityrumours/status/1770000000000000001", "https://twitter.com/cityrumours/status/1770000000000000001?ref_src=twsrc%5Etfw", true},
		{"https://x.com/cityrumours/status/1770000000000000001", "https://mobile.twitter.com/i/web/status/1770000000000000001", true},
		{"https://x.com/cityrumours/status/1770000000000000001", "https://x.com/cityrumours/status/1770000000000000002", false},
		{"https://x.com/cityrumours/status/1770000000000000001", "https://www.reuters.com/x.com/cityrumours/status/1770000000000000001", false},
		{"https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyz", "at://did:plc:abc123/app.bsky.feed.post/3kabc2xyz", true},
		{"https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyz", "https://bsky.app/profile/other.bsky.social/post/3kabc2xyz", false},
		{"https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyz", "https://bsky.app/profile/rumours.bsky.social/post/3kabc2xyq", false},
		{"https://mastodon.social/@rumours/111222333444555666", "https://mastodon.social/@rumours/111222333444555666/embed", true},
		{"https://mastodon.social/@rumours/111222333444555666", "https://mstdn.example/@rumours/111222333444555666", false},
		{"https://x.com/cityrumours/status/1770000000000000001", "https://web.archive.org/web/20240310120000/https://twitter.com/cityrumours/status/1770000000000000001", true},
		{"https://x.com/cityrumours/status/1770000000000000001", "https://archive.ph/2024.03.10-120000/https://x.com/cityrumours/status/1770000000000000001", true},
		{"https://www.facebook.com/cityrumours/posts/12345", "https://facebook.com/cityrumours/posts/12345/?utm_source=share", true},
		{"https://www.facebook.com/cityrumours/posts/12345", "https://www.facebook.com/cityrumours/posts/12346", false},
		{"not a url", "not a url", false},
	} {
		if got := SamePost(tc.a, tc.b); got != tc.same {
			t.Errorf("SamePost(%q, %q) = %t, want %t", tc.a, tc.b, got, tc.same)
		}
		if got := SamePost(tc.b, tc.a); got != tc.same {
			t.Errorf("SamePost(%q, %q) = %t, want %t", tc.b, tc.a, got, tc.same)
		}
	}
}
