package fetch

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"sync"
	"time"

	"github.com/temoto/robotstxt"
)

// maxRobotsBytes caps robots.txt (RFC 9309 asks crawlers to read at least
// 500 KiB).
const maxRobotsBytes = 512 << 10

// robotsFailTTL is how long an unreachable robots.txt is remembered, shorter
// than RobotsTTL so a host that was down is asked again soon.
const robotsFailTTL = 5 * time.Minute

type robotsCache struct {
	mu sync.Mutex
	m  map[string]*robotsEntry // by scheme://host:port
}

type robotsEntry struct {
	lock    chan struct{} // held while the file is fetched, so one fetch per host
	data    *robotstxt.RobotsData
	note    string // why the file could not be used, when it could not
	expires time.Time
}

func newRobotsCache() *robotsCache { return &robotsCache{m: map[string]*robotsEntry{}} }

func (c *robotsCache) entry(origin string) *robotsEntry {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(c.m) > 4096 {
		now := time.Now()
		for k, e := range c.m {
			if len(e.lock) == 0 && now.After(e.expires) {
				delete(c.m, k)
			}
		}
	}
	e := c.m[origin]
	if e == nil {
		e = &robotsEntry{lock: make(chan struct{}, 1)}
		c.m[origin] = e
	}
	return e
}

// robotsAllow says whether robots.txt lets muse fetch u. Policy:
//   - 2xx: the rules apply to the group that best matches muse's agent name;
//   - 4xx (including 401/403) or no file: everything is allowed (RFC 9309);
//   - 5xx, a network failure or an unreadable file: allowed, with a note in
//     Page.Notes. RFC 9309 would have a crawler stay away, but muse fetches
//     a handful of pages a person asked for, not a site, and a missing
//     source hurts a correction more than one request hurts a failing site.
//
// A destination refused as private fails here already, with the same error
// the page would get.
func (f *Fetcher) robotsAllow(ctx context.Context, u *url.URL) (note string, err error) {
	origin := u.Scheme + "://" + u.Host
	e := f.robots.entry(origin)
	select {
	case e.lock <- struct{}{}:
	case <-ctx.Done():
		return "", ctx.Err()
	}
	defer func() { <-e.lock }()

	if time.Now().After(e.expires) {
		data, note, err := f.fetchRobots(ctx, origin)
		if err != nil {
			// The page would be refused the same way: say so without
			// dragging robots.txt into the message.
			if ae := (*AddressError)(nil); errors.As(err, &ae) {
				return "", ae
			}
			return "", err
		}
		ttl := f.opts.RobotsTTL
		if note != "" && ttl > robotsFailTTL {
			ttl = robotsFailTTL
		}
		e.data, e.note, e.expires = data, note, time.Now().Add(ttl)
	}
	if e.data != nil && !e.data.TestAgent(u.EscapedPath()+queryPart(u), f.agent) {
		return "", fmt.Errorf("%w for %s", ErrRobots, f.agent)
	}
	return e.note, nil
}

func queryPart(u *url.URL) string {
	if u.RawQuery == "" {
		return ""
	}
	return "?" + u.RawQuery
}

// fetchRobots reads origin's robots.txt through the same guarded client.
// It returns nil data for "allow everything"; an error only for what must
// stop the page fetch too (a refused destination, the context ending).
func (f *Fetcher) fetchRobots(ctx context.Context, origin string) (*robotstxt.RobotsData, string, error) {
	ru, err := url.Parse(origin + "/robots.txt")
	if err != nil {
		return nil, "", fmt.Errorf("robots.txt: %w: %v", ErrBadURL, err)
	}
	resp, _, release, _, err := f.follow(ctx, ru, 5, false, "", "")
	if err != nil {
		// A refused origin refuses the page too; a robots.txt that
		// redirects somewhere refused is only a robots.txt not read.
		var re *redirectError
		if ctx.Err() != nil || (errors.Is(err, ErrPrivateAddress) && !errors.As(err, &re)) {
			return nil, "", err
		}
		return nil, fmt.Sprintf("robots.txt unavailable (%v); fetched anyway", err), nil
	}
	defer release()
	switch {
	case resp.StatusCode >= 500:
		drain(resp)
		return nil, fmt.Sprintf("robots.txt answered HTTP %d; fetched anyway", resp.StatusCode), nil
	case resp.StatusCode < 200 || resp.StatusCode > 299:
		drain(resp)
		return nil, "", nil
	}
	defer resp.Body.Close()
	body, err := readBody(resp, maxRobotsBytes)
	if err != nil {
		if ctx.Err() != nil {
			return nil, "", ctx.Err()
		}
		return nil, fmt.Sprintf("robots.txt unreadable (%v); fetched anyway", err), nil
	}
	data, err := robotstxt.FromBytes(body)
	if err != nil {
		return nil, fmt.Sprintf("robots.txt unparsable (%v); fetched anyway", err), nil
	}
	return data, "", nil
}
