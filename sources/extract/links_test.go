package extract

import (
	"slices"
	"testing"
)

func TestLinks(t *testing.T) {
	page := `<!doctype html><html><head><link rel="canonical" href="https://www.reuters.com/fact-check/a"></head><body>
<article><p>A post on X <a href="https://twitter.com/cityrumours/status/1770000000000000001?ref_src=twsrc%5Etfw">claimed</a> the bridge closed.</p>
<blockquote class="twitter-tweet"><p lang="en">The bridge is closed!</p>&mdash; City Rumours (@cityrumours)
<a href="https://twitter.com/cityrumours/status/1770000000000000001">March 10, 2024</a></blockquote>
<blockquote class="bluesky-embed" data-bluesky-uri="at://did:plc:abc123/app.bsky.feed.post/3kabc2xyz"><p>Bridge!</p></blockquote>
<iframe src="https://mastodon.social/@rumours/111222333444555666/embed"></iframe>
<a href="/world/other">Related</a> <a href="#top">top</a></article></body></html>`
	got := Links([]byte(page), "https://www.reuters.com/fact-check/a")
	for _, want := range []string{
		"https://twitter.com/cityrumours/status/1770000000000000001?ref_src=twsrc%5Etfw",
		"https://twitter.com/cityrumours/status/1770000000000000001",
		"at://did:plc:abc123/app.bsky.feed.post/3kabc2xyz",
		"https://mastodon.social/@rumours/111222333444555666/embed",
		"https://www.reuters.com/world/other",
	} {
		if !slices.Contains(got, want) {
			t.Errorf("Links lacks %q: %q", want, got)
		}
	}
	if slices.Contains(got, "#top") || slices.Contains(got, "https://www.reuters.com/fact-check/a#top") {
		t.Errorf("a fragment is not a link to another page: %q", got)
	}
	if n := len(got); n != len(slices.Compact(slices.Clone(got))) {
		t.Errorf("a link listed twice: %q", got)
	}
}
