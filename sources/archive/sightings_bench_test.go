package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
)

// sightingDomains is how many registrable domains the benchmark's
// archive spreads its documents over.
const sightingDomains = 5000

// sightingBenchArchive fills s with docs documents, each on one of
// sightingDomains domains (a third on a subdomain), and pages fetched
// pages of them, added over a year.
func sightingBenchArchive(b *testing.B, s *Store, docs, pages int) {
	ctx := context.Background()
	start := time.Date(2024, 1, 1, 0, 0, 0, 0, time.UTC)
	host := func(i int) string {
		d := fmt.Sprintf("site%04d.example", i%sightingDomains)
		if i%3 == 0 {
			d = "www." + d
		}
		return d
	}
	const batch = 5000
	for lo := 0; lo < docs; lo += batch {
		at := start.Add(time.Duration(lo) * time.Minute)
		s.now = func() time.Time { return at }
		var ds []Doc
		for i := lo; i < min(lo+batch, docs); i++ {
			ds = append(ds, Doc{URL: fmt.Sprintf("https://%s/news/%d/story-%d", host(i), i/sightingDomains, i),
				Title: fmt.Sprintf("Council vote %d", i), Text: "The council voted on the bicycle lanes and the bridge repairs."})
		}
		if err := s.AddAll(ctx, ds); err != nil {
			b.Fatal(err)
		}
	}
	for i := range pages {
		p := &fetch.Page{URL: fmt.Sprintf("https://%s/p/%d", host(i*7), i), Status: 200, Raw: []byte("<p>x</p>"), Body: []byte("<p>x</p>"),
			FetchedAt: start.Add(time.Duration(i) * time.Minute)}
		if err := s.SavePage(ctx, p); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkFirstSighting measures FirstSighting on an archive of 200,000
// documents and 20,000 fetched pages over 5,000 domains, against the scan
// it replaced (url LIKE '%domain%' over every address, the host checked
// in Go), on SQLite and on PostgreSQL (skipped without
// MUSE_TEST_DATABASE_URL); each asks about a different domain, and both
// give the same answers.
func BenchmarkFirstSighting(b *testing.B) {
	for _, engine := range []string{"sqlite", "postgres"} {
		b.Run("engine="+engine, func(b *testing.B) {
			var s *Store
			if engine == "postgres" {
				s = openPostgresTemp(b)
			} else {
				var err error
				if s, err = Open(context.Background(), b.TempDir()+"/archive.db"); err != nil {
					b.Fatal(err)
				}
				b.Cleanup(func() { s.Close() })
			}
			sightingBenchArchive(b, s, 200_000, 20_000)
			ctx := context.Background()
			for d := range 50 {
				domain := fmt.Sprintf("site%04d.example", d*97%sightingDomains)
				got, err := s.FirstSighting(ctx, domain)
				if err != nil {
					b.Fatal(err)
				}
				if old, err := firstSightingByScan(ctx, s, domain); err != nil || !old.Equal(got.First) {
					b.Fatalf("%s: first sighting %v; the scan says %v (%v)", domain, got.First, old, err)
				}
			}
			for _, way := range []struct {
				name  string
				first func(ctx context.Context, domain string) error
			}{
				{"index", func(ctx context.Context, domain string) error { _, err := s.FirstSighting(ctx, domain); return err }},
				{"scan", func(ctx context.Context, domain string) error {
					_, err := firstSightingByScan(ctx, s, domain)
					return err
				}},
			} {
				b.Run("query="+way.name, func(b *testing.B) {
					for i := range b.N {
						if err := way.first(ctx, fmt.Sprintf("site%04d.example", i*31%sightingDomains)); err != nil {
							b.Fatal(err)
						}
					}
				})
			}
		})
	}
}

// firstSightingByScan is how FirstSighting found a domain's first
// sighting before the domain columns: every address holding the name,
// found by LIKE, its host checked in Go, then the earliest time of those.
func firstSightingByScan(ctx context.Context, s *Store, domain string) (time.Time, error) {
	var first time.Time
	like := "%" + domain + "%"
	for _, q := range []struct {
		keys, min string
		unit      time.Duration
	}{
		{`SELECT url FROM docs WHERE url LIKE ?`, `SELECT min(added_at) FROM docs WHERE url IN (%s)`, time.Second},
		{`SELECT url FROM pages WHERE url LIKE ?`, `SELECT min(fetched_at) FROM pages WHERE url IN (%s)`, time.Nanosecond},
		{`SELECT final_key FROM pages WHERE final_key LIKE ?`, `SELECT min(fetched_at) FROM pages WHERE final_key IN (%s)`, time.Nanosecond},
	} {
		rows, err := s.db.QueryContext(ctx, s.sql(q.keys), like)
		if err != nil {
			return first, err
		}
		var keys []any
		for rows.Next() {
			var k string
			if err := rows.Scan(&k); err != nil {
				rows.Close()
				return first, err
			}
			if sources.RegistrableDomain(sources.HostOf(k)) == domain {
				keys = append(keys, k)
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return first, err
		}
		for len(keys) > 0 {
			n := min(len(keys), 500)
			var at *int64
			stmt := fmt.Sprintf(q.min, strings.TrimSuffix(strings.Repeat("?, ", n), ", "))
			if err := s.db.QueryRowContext(ctx, s.sql(stmt), keys[:n]...).Scan(&at); err != nil && !errors.Is(err, sql.ErrNoRows) {
				return first, err
			}
			if at != nil {
				if t := time.Unix(0, *at*int64(q.unit)); first.IsZero() || t.Before(first) {
					first = t
				}
			}
			keys = keys[n:]
		}
	}
	return first, nil
}
