package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

// Sighting is what the archive says of a domain: when muse first read a
// page of it, and how long and how much the archive has been collecting,
// without which a first reading says little (every domain is new to an
// empty archive).
type Sighting struct {
	// First is when a page of the domain (or of a subdomain) first came
	// into the archive: the earliest a document of it was added, or a
	// page of it (asked for, or redirected to) fetched; zero when never.
	First time.Time
	// Since is when the archive's oldest document was added; zero when
	// the archive holds none.
	Since time.Time
	// Docs is how many documents the archive holds.
	Docs int
}

// sightingBatch is how many keys one statement asks about.
const sightingBatch = 500

// FirstSighting says when a page of the registrable domain first came
// into the archive, read from the archive as it is (nothing is stored for
// it). A page fetched again keeps its first addition among the documents,
// though its fetch time moves. The addresses are found by a scan of the
// address indexes only (the rows are read for the matches), the domain
// checked in Go: a subdomain's pages count, a page merely naming the
// domain in its path does not.
func (s *Store) FirstSighting(ctx context.Context, domain string) (Sighting, error) {
	domain = strings.ToLower(strings.TrimSpace(domain))
	if domain == "" || strings.ContainsAny(domain, "/:?#%_! ") {
		return Sighting{}, fmt.Errorf("archive: first sighting of %q: not a domain", domain)
	}
	var out Sighting
	var err error
	if out.Docs, err = s.Count(ctx); err != nil {
		return Sighting{}, err
	}
	var since int64
	switch err := s.db.QueryRowContext(ctx, s.sql(`SELECT added_at FROM docs ORDER BY id LIMIT 1`)).Scan(&since); {
	case err == nil:
		out.Since = time.Unix(since, 0)
	case !errors.Is(err, sql.ErrNoRows):
		return Sighting{}, fmt.Errorf("archive: oldest document: %w", err)
	}
	like := "%" + domain + "%"
	first := func(t time.Time) {
		if !t.IsZero() && (out.First.IsZero() || t.Before(out.First)) {
			out.First = t
		}
	}
	for _, q := range []struct {
		keys, min string
		unit      time.Duration
	}{
		{`SELECT url FROM docs WHERE url LIKE ?`, `SELECT min(added_at) FROM docs WHERE url IN (%s)`, time.Second},
		{`SELECT url FROM pages WHERE url LIKE ?`, `SELECT min(fetched_at) FROM pages WHERE url IN (%s)`, time.Nanosecond},
		{`SELECT final_key FROM pages WHERE final_key LIKE ?`, `SELECT min(fetched_at) FROM pages WHERE final_key IN (%s)`, time.Nanosecond},
	} {
		keys, err := s.domainKeys(ctx, q.keys, like, domain)
		if err != nil {
			return Sighting{}, err
		}
		for len(keys) > 0 {
			n := min(len(keys), sightingBatch)
			var at *int64
			stmt := fmt.Sprintf(q.min, strings.TrimSuffix(strings.Repeat("?, ", n), ", "))
			if err := s.db.QueryRowContext(ctx, s.sql(stmt), keys[:n]...).Scan(&at); err != nil {
				return Sighting{}, fmt.Errorf("archive: first sighting of %s: %w", domain, err)
			}
			if at != nil {
				first(time.Unix(0, *at*int64(q.unit)))
			}
			keys = keys[n:]
		}
	}
	return out, nil
}

// domainKeys are the addresses q finds (one column, matched by like)
// whose host is the domain or one of its subdomains.
func (s *Store) domainKeys(ctx context.Context, q, like, domain string) ([]any, error) {
	rows, err := s.db.QueryContext(ctx, s.sql(q), like)
	if err != nil {
		return nil, fmt.Errorf("archive: first sighting of %s: %w", domain, err)
	}
	defer rows.Close()
	var keys []any
	for rows.Next() {
		var k string
		if err := rows.Scan(&k); err != nil {
			return nil, fmt.Errorf("archive: first sighting of %s: %w", domain, err)
		}
		if sources.RegistrableDomain(sources.HostOf(k)) == domain {
			keys = append(keys, k)
		}
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("archive: first sighting of %s: %w", domain, err)
	}
	return keys, nil
}
