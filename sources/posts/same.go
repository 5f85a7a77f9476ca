package posts

import (
	"net/url"
	"regexp"
	"strings"

	"github.com/musecheck/muse/sources"
)

// archived finds the address an archive keeps a copy of:
// web.archive.org/web/20200401000000/https://x.com/…,
// archive.ph/2020.04.01-000000/https://…
var archived = regexp.MustCompile(`(?i)^https?://(?:web\.archive\.org/web|archive\.(?:ph|today|is|org|li|md|vn|fo))/[^/]*/(https?:/{1,2}.+)$`)

// SamePost reports whether the addresses a and b name the same post: the
// same X status on any of X's hosts, the same Bluesky post by its handle or
// DID (bsky.app or at://), the same Mastodon status on its instance, or
// else the same page (sources.Key). An archive's copy of a post
// (web.archive.org, archive.ph) names the post.
func SamePost(a, b string) bool {
	a, b = unarchive(a), unarchive(b)
	ua, errA := parseURL(a)
	ub, errB := parseURL(b)
	if errA != nil || errB != nil {
		return false
	}
	if ta, tb := tweetID(ua), tweetID(ub); ta != "" || tb != "" {
		return ta == tb
	}
	if ra, rb := blueskyPost(ua), blueskyPost(ub); ra != nil || rb != nil {
		if ra == nil || rb == nil || ra.rkey != rb.rkey {
			return false
		}
		// A handle and a DID may name the same account; the record key,
		// a timestamp, is then what tells posts apart.
		return strings.EqualFold(ra.actor, rb.actor) || isDID(ra.actor) != isDID(rb.actor)
	}
	if ma, mb := mastodonID(ua), mastodonID(ub); ma != "" && mb != "" {
		return ma == mb && strings.EqualFold(ua.Hostname(), ub.Hostname())
	}
	return sources.Key(a) == sources.Key(b)
}

func isDID(actor string) bool { return strings.HasPrefix(actor, "did:") }

// mastodonID is a Mastodon status ID, from its address or its embed's
// (/@user/ID/embed).
func mastodonID(u *url.URL) string {
	c := *u
	c.Path = strings.TrimSuffix(c.Path, "/embed")
	return mastodonStatus(&c)
}

func unarchive(u string) string {
	u = strings.TrimSpace(u)
	if m := archived.FindStringSubmatch(u); m != nil {
		inner := m[1]
		if i := strings.Index(inner, ":/"); i >= 0 && !strings.HasPrefix(inner[i:], "://") {
			inner = inner[:i] + ":/" + inner[i+1:] // web.archive.org folds "//" to "/"
		}
		return inner
	}
	return u
}
