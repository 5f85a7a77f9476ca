package posts

import (
	"strings"
	"testing"
	"unicode/utf8"
)

// Post URLs are pasted by people and found in other posts: anything may
// arrive. Recognizing one never panics and agrees with what Fetch would do;
// the IDs taken from it are the digits the platform APIs expect.

func FuzzRecognize(f *testing.F) {
	for _, s := range []string{
		"https://x.com/jack/status/20", "https://twitter.com/i/web/status/1790000000000000000?s=20",
		"https://bsky.app/profile/did:plc:abc123/post/3kabc", "at://did:plc:abc123/app.bsky.feed.post/3kabc",
		"https://mastodon.social/@alice/111222333444555666", "https://news.example/2024/story.html",
		"at://", "at:///x", "http://", "https://x.com/a/status/", "javascript:alert(1)", "text with spaces",
		"HTTPS://WWW.X.COM/A/STATUS/99999999999999999999999", "https://[::1]:99999/@a/1", "%", "https://bsky.app/profile//post/",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, raw string) {
		platform, ok := Recognize(raw)
		u, err := parseURL(raw)
		// An at:// URI that names no post parses but is not a post.
		if ok && err != nil || !ok && err == nil && u.Scheme != "at" {
			t.Fatalf("Recognize ok=%v but parseURL err=%v", ok, err)
		}
		if !ok {
			if platform != "" {
				t.Fatalf("platform %q without ok", platform)
			}
			return
		}
		switch platform {
		case X:
			id := tweetID(u)
			if id == "" || strings.Trim(id, "0123456789") != "" {
				t.Fatalf("tweet ID %q from %q", id, raw)
			}
			_ = syndicationToken(id)
			_ = snowflakeTime(id)
		case Bluesky:
			ref := blueskyPost(u)
			if ref == nil || ref.actor == "" || ref.rkey == "" {
				t.Fatalf("bluesky ref %+v from %q", ref, raw)
			}
		case Mastodon:
			if mastodonStatus(u) == "" {
				t.Fatalf("mastodon status from %q", raw)
			}
		case Web:
			if u.Scheme != "http" && u.Scheme != "https" {
				t.Fatalf("web post with scheme %q", u.Scheme)
			}
		default:
			t.Fatalf("unknown platform %q", platform)
		}
	})
}

// FuzzHTMLText: Mastodon sends a post's text as HTML written by its author.
func FuzzHTMLText(f *testing.F) {
	for _, s := range []string{
		`<p>Springfield <a href="https://x.example/tags/bikes" class="mention hashtag">#<span>bikes</span></a></p><p>second<br>line</p>`,
		"<p>unclosed <b>bold", "&amp;&lt;&#x1F600;&bogus;", "<script>alert(1)</script>text", "<p></p><p></p>", "plain text",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		out := htmlText(s)
		if utf8.ValidString(s) && !utf8.ValidString(out) {
			t.Fatalf("htmlText(%q) = %q: invalid UTF-8 from valid input", s, out)
		}
		if strings.Contains(strings.ToLower(out), "<script") && !strings.Contains(strings.ToLower(s), "&lt;script") {
			t.Fatalf("htmlText(%q) kept a script tag: %q", s, out)
		}
	})
}
