// Package rdap asks the Registration Data Access Protocol (RFC 9082,
// RFC 9083) when a domain was registered: IANA's bootstrap file (RFC 9224)
// names each top-level domain's RDAP server, and that server's answer for
// the domain carries a "registration" event. muse uses the date to flag a
// page whose domain is only weeks old, the mark of a site set up to be
// found (a content farm, a look-alike of a newsroom).
package rdap

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"golang.org/x/sync/singleflight"
)

// DefaultBootstrapURL is IANA's bootstrap file for domain names.
const DefaultBootstrapURL = "https://data.iana.org/rdap/dns.json"

// ErrNoServer: the domain's top-level domain has no RDAP server in the
// bootstrap file (many country codes have none).
var ErrNoServer = errors.New("no RDAP server for the domain's top-level domain")

// ErrNotFound: the RDAP server does not know the domain (404).
var ErrNotFound = errors.New("the RDAP server does not know the domain")

// ErrNoDate: the server's answer has no registration event.
var ErrNoDate = errors.New("the RDAP answer gives no registration date")

// maxAnswer bounds a bootstrap file or a domain's answer (IANA's dns.json
// is about 50 KB; a domain's answer a few KB).
const maxAnswer = 4 << 20

// Client asks RDAP servers. It remembers the bootstrap file for a day and
// each domain's answer (or its failure: not found, no server) for as long
// as it lives, so that a check asks about each domain once.
type Client struct {
	// HTTP sends the requests; it should refuse private addresses, since
	// the bootstrap file names the servers (fetch.Fetcher.Client).
	HTTP *http.Client
	// BootstrapURL is the bootstrap file's address; empty means
	// DefaultBootstrapURL.
	BootstrapURL string
	// Now is the clock the bootstrap file's age is told by; nil is time.Now.
	Now func() time.Time

	mu        sync.Mutex
	services  []service
	fetchedAt time.Time
	answers   map[string]answer
	asking    singleflight.Group // one request a domain, however many pages ask at once
}

type service struct {
	tlds []string
	urls []string
}

type answer struct {
	at  time.Time
	err error
}

// Registered returns when domain (a registrable domain, "example.com") was
// registered.
func (c *Client) Registered(ctx context.Context, domain string) (time.Time, error) {
	domain = strings.ToLower(strings.TrimSuffix(strings.TrimSpace(domain), "."))
	if domain == "" || !strings.Contains(domain, ".") {
		return time.Time{}, fmt.Errorf("rdap: %q is not a domain name", domain)
	}
	c.mu.Lock()
	if a, ok := c.answers[domain]; ok {
		c.mu.Unlock()
		return a.at, a.err
	}
	c.mu.Unlock()
	v, err, _ := c.asking.Do(domain, func() (any, error) {
		c.mu.Lock()
		a, ok := c.answers[domain] // answered since it was looked for above
		c.mu.Unlock()
		if ok {
			return a.at, a.err
		}
		at, err := c.ask(ctx, domain)
		if ctx.Err() != nil || (err != nil && !errors.Is(err, ErrNotFound) && !errors.Is(err, ErrNoServer) && !errors.Is(err, ErrNoDate)) {
			return at, err // a network failure is not remembered: asked again next time
		}
		c.mu.Lock()
		if c.answers == nil {
			c.answers = map[string]answer{}
		}
		c.answers[domain] = answer{at, err}
		c.mu.Unlock()
		return at, err
	})
	at, _ := v.(time.Time)
	return at, err
}

func (c *Client) ask(ctx context.Context, domain string) (time.Time, error) {
	base, err := c.server(ctx, domain)
	if err != nil {
		return time.Time{}, err
	}
	u, err := url.JoinPath(base, "domain", domain)
	if err != nil {
		return time.Time{}, fmt.Errorf("rdap: server address %q: %w", base, err)
	}
	var d struct {
		ObjectClassName string `json:"objectClassName"`
		Events          []struct {
			Action string `json:"eventAction"`
			Date   string `json:"eventDate"`
		} `json:"events"`
	}
	if err := c.get(ctx, u, &d); err != nil {
		return time.Time{}, err
	}
	for _, e := range d.Events {
		if !strings.EqualFold(e.Action, "registration") {
			continue
		}
		t, err := time.Parse(time.RFC3339, strings.TrimSpace(e.Date))
		if err != nil {
			return time.Time{}, fmt.Errorf("rdap: %s: registration date %q: %w", domain, e.Date, err)
		}
		return t.UTC(), nil
	}
	return time.Time{}, fmt.Errorf("rdap: %s: %w", domain, ErrNoDate)
}

// server returns the RDAP base URL for domain: the service whose label
// set holds the longest suffix of the domain's labels (RFC 9224 §4).
func (c *Client) server(ctx context.Context, domain string) (string, error) {
	if err := c.bootstrap(ctx); err != nil {
		return "", err
	}
	c.mu.Lock()
	defer c.mu.Unlock()
	best, bestLen := "", 0
	for _, s := range c.services {
		for _, tld := range s.tlds {
			tld = strings.ToLower(strings.Trim(tld, "."))
			if (domain == tld || strings.HasSuffix(domain, "."+tld)) && len(tld) > bestLen && len(s.urls) > 0 {
				best, bestLen = pickURL(s.urls), len(tld)
			}
		}
	}
	if best == "" {
		return "", fmt.Errorf("rdap: %s: %w", domain, ErrNoServer)
	}
	return best, nil
}

// pickURL prefers an https server address, as RFC 9224 §4 asks.
func pickURL(urls []string) string {
	for _, u := range urls {
		if strings.HasPrefix(strings.ToLower(u), "https://") {
			return u
		}
	}
	return urls[0]
}

// bootstrap reads the bootstrap file when it is not read yet or is older
// than a day.
func (c *Client) bootstrap(ctx context.Context) error {
	now := time.Now
	if c.Now != nil {
		now = c.Now
	}
	c.mu.Lock()
	fresh := c.services != nil && now().Sub(c.fetchedAt) < 24*time.Hour
	c.mu.Unlock()
	if fresh {
		return nil
	}
	var b struct {
		Services [][][]string `json:"services"`
	}
	at := c.BootstrapURL
	if at == "" {
		at = DefaultBootstrapURL
	}
	if err := c.get(ctx, at, &b); err != nil {
		return fmt.Errorf("rdap bootstrap: %w", err)
	}
	var ss []service
	for _, e := range b.Services {
		if len(e) == 2 {
			ss = append(ss, service{tlds: e[0], urls: e[1]})
		}
	}
	if len(ss) == 0 {
		return fmt.Errorf("rdap bootstrap %s: no services in it", at)
	}
	c.mu.Lock()
	c.services, c.fetchedAt = ss, now()
	c.mu.Unlock()
	return nil
}

func (c *Client) get(ctx context.Context, u string, into any) error {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return fmt.Errorf("rdap: %w", err)
	}
	req.Header.Set("Accept", "application/rdap+json, application/json")
	hc := c.HTTP
	if hc == nil {
		return errors.New("rdap: no HTTP client")
	}
	resp, err := hc.Do(req)
	if err != nil {
		return fmt.Errorf("rdap: %w", err)
	}
	defer resp.Body.Close()
	switch {
	case resp.StatusCode == http.StatusNotFound:
		return fmt.Errorf("rdap: %s: %w", u, ErrNotFound)
	case resp.StatusCode != http.StatusOK:
		return fmt.Errorf("rdap: %s answered %s", u, resp.Status)
	}
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxAnswer+1))
	if err != nil {
		return fmt.Errorf("rdap: %s: %w", u, err)
	}
	if len(body) > maxAnswer {
		return fmt.Errorf("rdap: %s: answer over %d bytes", u, maxAnswer)
	}
	if err := json.Unmarshal(body, into); err != nil {
		return fmt.Errorf("rdap: %s: not an RDAP answer: %w", u, err)
	}
	return nil
}
