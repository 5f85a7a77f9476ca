package archive

import (
	"bytes"
	"context"
	"database/sql"
	"errors"
	"fmt"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/fetch"
)

// *Store is the fetcher's page store: every fetched page is kept with its
// raw bytes gzip-compressed, final URL, fetch time and HTTP validators, so a
// refetch can be conditional and a 304 answered from here.
var _ fetch.Store = (*Store)(nil)

// SavePage stores a freshly fetched page under the canonical form of the
// URL asked for (and finds it by its final URL too). It needs no
// extraction: the caller adds the extracted article with Add.
func (s *Store) SavePage(ctx context.Context, p *fetch.Page) error {
	if p == nil {
		return errors.New("archive page: nil page")
	}
	key, err := sources.Canonical(p.URL)
	if err != nil {
		return fmt.Errorf("archive page %q: %w", p.URL, err)
	}
	final := p.FinalURL
	if final == "" {
		final = p.URL
	}
	finalKey, err := sources.Canonical(final)
	if err != nil {
		finalKey = key
	}
	raw, err := sources.Gzip(p.Raw)
	if err != nil {
		return fmt.Errorf("archive page %s: compress: %w", p.URL, err)
	}
	var body []byte
	if !bytes.Equal(p.Body, p.Raw) {
		if body, err = sources.Gzip(p.Body); err != nil {
			return fmt.Errorf("archive page %s: compress: %w", p.URL, err)
		}
	}
	at := p.FetchedAt
	if at.IsZero() {
		at = s.now()
	}
	_, err = s.db.ExecContext(ctx, s.sql(`
INSERT INTO pages (url, request_url, final_url, final_key, status, content_type, charset, raw_gz, body_gz, fetched_at, etag, last_modified,
	domain, final_domain)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET
	request_url = excluded.request_url, final_url = excluded.final_url, final_key = excluded.final_key,
	domain = excluded.domain, final_domain = excluded.final_domain,
	status = excluded.status, content_type = excluded.content_type, charset = excluded.charset,
	raw_gz = excluded.raw_gz, body_gz = excluded.body_gz, fetched_at = excluded.fetched_at,
	etag = excluded.etag, last_modified = excluded.last_modified`),
		key, p.URL, final, finalKey, p.Status, p.ContentType, p.Charset, raw, body, at.UnixNano(), p.ETag, p.LastModified,
		domainOf(key), domainOf(finalKey))
	if err != nil {
		return fmt.Errorf("archive page %s: %w", p.URL, err)
	}
	return nil
}

// Validators returns the ETag and Last-Modified stored for url, for a
// conditional refetch; ok is false when the page was never stored or had
// neither.
func (s *Store) Validators(ctx context.Context, rawURL string) (etag, lastModified string, ok bool) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return "", "", false
	}
	err = s.db.QueryRowContext(ctx, s.sql(`SELECT etag, last_modified FROM pages WHERE url = ?
UNION ALL SELECT etag, last_modified FROM pages WHERE final_key = ? LIMIT 1`), key, key).Scan(&etag, &lastModified)
	if err != nil {
		return "", "", false
	}
	return etag, lastModified, etag != "" || lastModified != ""
}

// Cached returns the page stored for url (asked for or final), marked
// FromCache, or an error wrapping ErrNotFound.
func (s *Store) Cached(ctx context.Context, rawURL string) (*fetch.Page, error) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return nil, fmt.Errorf("archived page %q: %w", rawURL, err)
	}
	p := &fetch.Page{FromCache: true}
	var raw, body []byte
	var at int64
	err = s.db.QueryRowContext(ctx, s.sql(`
SELECT request_url, final_url, status, content_type, charset, raw_gz, body_gz, fetched_at, etag, last_modified
FROM (SELECT *, 0 AS pref FROM pages WHERE url = ? UNION ALL SELECT *, 1 FROM pages WHERE final_key = ?) p
ORDER BY pref LIMIT 1`), key, key).
		Scan(&p.URL, &p.FinalURL, &p.Status, &p.ContentType, &p.Charset, &raw, &body, &at, &p.ETag, &p.LastModified)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, fmt.Errorf("archived page %s: %w", rawURL, ErrNotFound)
	}
	if err != nil {
		return nil, fmt.Errorf("archived page %s: %w", rawURL, err)
	}
	p.FetchedAt = time.Unix(0, at)
	if p.Raw, err = sources.Gunzip(raw); err != nil {
		return nil, fmt.Errorf("archived page %s: decompress: %w", rawURL, err)
	}
	p.Body = p.Raw
	if body != nil {
		if p.Body, err = sources.Gunzip(body); err != nil {
			return nil, fmt.Errorf("archived page %s: decompress: %w", rawURL, err)
		}
	}
	return p, nil
}
