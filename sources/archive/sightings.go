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

// FirstSighting says when a page of the registrable domain first came
// into the archive, read from the archive as it is (nothing is stored for
// it). A page fetched again keeps its first addition among the documents,
// though its fetch time moves. Every row holds the registrable domain of
// its address (and a page of its final address), indexed with its time
// (migration 9; 7 on PostgreSQL), so the answer is three index look-ups:
// a subdomain's pages count, a page merely naming the domain in its path
// does not.
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
	for _, q := range []struct {
		min  string
		unit time.Duration
	}{
		{`SELECT min(added_at) FROM docs WHERE domain = ?`, time.Second},
		{`SELECT min(fetched_at) FROM pages WHERE domain = ?`, time.Nanosecond},
		{`SELECT min(fetched_at) FROM pages WHERE final_domain = ?`, time.Nanosecond},
	} {
		var at *int64
		if err := s.queryRow(ctx, s.sql(q.min), domain).Scan(&at); err != nil {
			return Sighting{}, fmt.Errorf("archive: first sighting of %s: %w", domain, err)
		}
		if at != nil {
			if t := time.Unix(0, *at*int64(q.unit)); out.First.IsZero() || t.Before(out.First) {
				out.First = t
			}
		}
	}
	return out, nil
}

// domainOf is the registrable domain of an address's host, as
// FirstSighting is asked it.
func domainOf(key string) string {
	return sources.RegistrableDomain(sources.HostOf(key))
}

// fillDomainsSQLite adds the domain columns of migration 9 where they are
// missing and fills them for the rows an archive held before.
func fillDomainsSQLite(ctx context.Context, tx *sql.Tx) error {
	for _, c := range []struct{ table, column string }{{"docs", "domain"}, {"pages", "domain"}, {"pages", "final_domain"}} {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT count(*) FROM pragma_table_info(?) WHERE name = ?`, c.table, c.column).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			// Names of our own, not input.
			if _, err := tx.ExecContext(ctx, fmt.Sprintf(`ALTER TABLE %s ADD COLUMN %s TEXT NOT NULL DEFAULT ''`, c.table, c.column)); err != nil {
				return err
			}
		}
	}
	for _, q := range []struct {
		read, write string
		args        func(url, final string) []any
	}{
		{`SELECT url, url FROM docs`, `UPDATE docs SET domain = ? WHERE url = ?`,
			func(u, _ string) []any { return []any{domainOf(u), u} }},
		{`SELECT url, final_key FROM pages`, `UPDATE pages SET domain = ?, final_domain = ? WHERE url = ?`,
			func(u, f string) []any { return []any{domainOf(u), domainOf(f), u} }},
	} {
		rows, err := tx.QueryContext(ctx, q.read)
		if err != nil {
			return err
		}
		var keys [][2]string
		for rows.Next() {
			var k [2]string
			if err := rows.Scan(&k[0], &k[1]); err != nil {
				rows.Close()
				return err
			}
			keys = append(keys, k)
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return err
		}
		st, err := tx.PrepareContext(ctx, q.write)
		if err != nil {
			return err
		}
		for _, k := range keys {
			if _, err := st.ExecContext(ctx, q.args(k[0], k[1])...); err != nil {
				st.Close()
				return err
			}
		}
		st.Close()
	}
	return nil
}

// domainFillBatch is how many rows one statement of fillDomainsPostgres
// fills.
const domainFillBatch = 5000

// fillDomainsPostgres fills the domain columns left NULL: the rows stored
// before migration 7 (or by a muse that did not know them). Each batch is
// its own statement, so a large archive is not locked whole; two
// processes opening it at once write the same values.
func (s *Store) fillDomainsPostgres(ctx context.Context) error {
	for _, q := range []struct{ read, write string }{
		{`SELECT url, url FROM archive_docs WHERE domain IS NULL LIMIT $1`,
			`UPDATE archive_docs d SET domain = v.d FROM unnest($1::text[], $2::text[], $3::text[]) AS v(u, d, f) WHERE d.url = v.u`},
		{`SELECT url, final_key FROM archive_pages WHERE domain IS NULL OR final_domain IS NULL LIMIT $1`,
			`UPDATE archive_pages p SET domain = v.d, final_domain = v.f FROM unnest($1::text[], $2::text[], $3::text[]) AS v(u, d, f) WHERE p.url = v.u`},
	} {
		for {
			rows, err := s.db.QueryContext(ctx, q.read, domainFillBatch)
			if err != nil {
				return fmt.Errorf("archive: fill domains: %w", err)
			}
			var us, ds, fs []string
			for rows.Next() {
				var u, f string
				if err := rows.Scan(&u, &f); err != nil {
					rows.Close()
					return fmt.Errorf("archive: fill domains: %w", err)
				}
				us, ds, fs = append(us, u), append(ds, domainOf(u)), append(fs, domainOf(f))
			}
			rows.Close()
			if err := rows.Err(); err != nil {
				return fmt.Errorf("archive: fill domains: %w", err)
			}
			if len(us) == 0 {
				break
			}
			if _, err := s.db.ExecContext(ctx, q.write, us, ds, fs); err != nil {
				return fmt.Errorf("archive: fill domains: %w", err)
			}
			if len(us) < domainFillBatch {
				break
			}
		}
	}
	return nil
}
