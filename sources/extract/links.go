package extract

import (
	"bytes"
	"net/url"
	"strings"

	"golang.org/x/net/html"
)

// linkAttrs are the attributes through which a page links to or embeds
// another page: links, frames and media, quoted blocks, and the data
// attributes of the platforms' embed codes (Bluesky's data-bluesky-uri,
// Facebook's and others' data-href).
var linkAttrs = map[string]bool{
	"href": true, "src": true, "cite": true, "data-href": true, "data-url": true,
	"data-bluesky-uri": true, "data-embed-url": true,
}

// Links lists the addresses a page links to or embeds (a[href],
// iframe[src], blockquote[cite], embed codes' data attributes), resolved
// against pageURL, each once, in page order. It reads the HTML with the
// tokenizer alone, without building a tree.
func Links(htmlBytes []byte, pageURL string) []string {
	base, _ := url.Parse(pageURL)
	z := html.NewTokenizer(bytes.NewReader(htmlBytes))
	seen := map[string]bool{}
	var out []string
	for {
		tt := z.Next()
		if tt == html.ErrorToken {
			return out
		}
		if tt != html.StartTagToken && tt != html.SelfClosingTagToken {
			continue
		}
		_, more := z.TagName()
		for more {
			var k, v []byte
			k, v, more = z.TagAttr()
			if !linkAttrs[string(k)] {
				continue
			}
			u := strings.TrimSpace(string(v))
			if u == "" || strings.HasPrefix(u, "#") {
				continue
			}
			if ref, err := url.Parse(u); err == nil && base != nil && ref.Scheme == "" {
				u = base.ResolveReference(ref).String()
			}
			if !seen[u] {
				seen[u] = true
				out = append(out, u)
			}
		}
	}
}
