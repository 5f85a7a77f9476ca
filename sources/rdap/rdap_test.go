package rdap

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// rdapServer is a loopback IANA bootstrap file and two registries' RDAP
// servers, answering as Verisign's and a ccTLD's do (application/rdap+json,
// events with eventAction and eventDate).
func rdapServer(t *testing.T) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var asked atomic.Int32
	var srv *httptest.Server
	srv = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.Contains(r.Header.Get("Accept"), "application/rdap+json") {
			http.Error(w, "bad accept", http.StatusNotAcceptable)
			return
		}
		w.Header().Set("Content-Type", "application/rdap+json")
		switch r.URL.Path {
		case "/rdap/dns.json":
			w.Write([]byte(`{"version":"1.0","publication":"2026-11-30T22:00:01Z","description":"RDAP bootstrap file for Domain Name System registrations",
"services":[[["com","net"],["` + srv.URL + `/com/v1/"]],[["uk"],["http://old.example/uk/","` + srv.URL + `/uk/"]],[["co.uk"],["` + srv.URL + `/couk/"]]]}`))
		case "/com/v1/domain/reuters-news-now.com":
			asked.Add(1)
			w.Write([]byte(`{"objectClassName":"domain","handle":"2934871_DOMAIN_COM-VRSN","ldhName":"REUTERS-NEWS-NOW.COM",
"links":[{"value":"https://rdap.verisign.com/com/v1/domain/REUTERS-NEWS-NOW.COM","rel":"self","href":"https://rdap.verisign.com/com/v1/domain/REUTERS-NEWS-NOW.COM","type":"application/rdap+json"}],
"status":["client transfer prohibited"],"entities":[{"objectClassName":"entity","handle":"1068","roles":["registrar"]}],
"events":[{"eventAction":"registration","eventDate":"2026-11-20T09:14:02Z"},{"eventAction":"expiration","eventDate":"2027-11-20T09:14:02Z"},{"eventAction":"last update of RDAP database","eventDate":"2026-12-06T13:01:44Z"}],
"secureDNS":{"delegationSigned":false},"nameservers":[{"objectClassName":"nameserver","ldhName":"NS1.EXAMPLE.NET"}],
"rdapConformance":["rdap_level_0","icann_rdap_technical_implementation_guide_1","icann_rdap_response_profile_1"],
"notices":[{"title":"Terms of Use","description":["Service subject to Terms of Use."]}]}`))
		case "/couk/domain/bbc.co.uk":
			asked.Add(1)
			w.Write([]byte(`{"objectClassName":"domain","ldhName":"bbc.co.uk","events":[{"eventAction":"last changed","eventDate":"2024-02-01T00:00:00Z"},{"eventAction":"registration","eventDate":"1996-08-01T00:00:00Z"}]}`))
		case "/com/v1/domain/nodate.com":
			w.Write([]byte(`{"objectClassName":"domain","ldhName":"NODATE.COM","events":[]}`))
		default:
			asked.Add(1)
			w.WriteHeader(http.StatusNotFound)
			w.Write([]byte(`{"errorCode":404,"title":"Not Found"}`))
		}
	}))
	t.Cleanup(srv.Close)
	return srv, &asked
}

func TestRegistered(t *testing.T) {
	srv, asked := rdapServer(t)
	c := &Client{HTTP: srv.Client(), BootstrapURL: srv.URL + "/rdap/dns.json"}
	ctx := context.Background()
	at, err := c.Registered(ctx, "Reuters-News-Now.com.")
	if err != nil || !at.Equal(time.Date(2026, 11, 20, 9, 14, 2, 0, time.UTC)) {
		t.Fatalf("registered %v, %v", at, err)
	}
	// The longest suffix's server answers (co.uk before uk).
	if at, err := c.Registered(ctx, "bbc.co.uk"); err != nil || at.Year() != 1996 {
		t.Errorf("bbc.co.uk: %v, %v", at, err)
	}
	if _, err := c.Registered(ctx, "gone.com"); !errors.Is(err, ErrNotFound) {
		t.Errorf("an unknown domain: %v", err)
	}
	if _, err := c.Registered(ctx, "example.de"); !errors.Is(err, ErrNoServer) {
		t.Errorf("a TLD without a server: %v", err)
	}
	if _, err := c.Registered(ctx, "nodate.com"); !errors.Is(err, ErrNoDate) {
		t.Errorf("an answer without a registration: %v", err)
	}
	// Each domain is asked once, its answer (or not-found) remembered.
	n := asked.Load()
	c.Registered(ctx, "reuters-news-now.com")
	c.Registered(ctx, "gone.com")
	if asked.Load() != n {
		t.Errorf("asked again: %d requests, then %d", n, asked.Load())
	}
	// Pages of one domain read at once ask about it once.
	c = &Client{HTTP: srv.Client(), BootstrapURL: srv.URL + "/rdap/dns.json"}
	n = asked.Load()
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() { c.Registered(ctx, "reuters-news-now.com") })
	}
	wg.Wait()
	if got := asked.Load() - n; got != 1 {
		t.Errorf("8 pages at once asked %d times", got)
	}
}

func TestRegisteredServerDown(t *testing.T) {
	srv, _ := rdapServer(t)
	c := &Client{HTTP: srv.Client(), BootstrapURL: srv.URL + "/missing.json"}
	if _, err := c.Registered(context.Background(), "reuters-news-now.com"); err == nil || !strings.Contains(err.Error(), "bootstrap") {
		t.Errorf("a bootstrap file that is not there: %v", err)
	}
	srv.Close()
	c = &Client{HTTP: http.DefaultClient, BootstrapURL: srv.URL + "/rdap/dns.json"}
	if _, err := c.Registered(context.Background(), "reuters-news-now.com"); err == nil {
		t.Error("no error from a server that is down")
	}
}
