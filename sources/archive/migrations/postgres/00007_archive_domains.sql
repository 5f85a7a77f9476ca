-- The registrable domain of a document's address, and of a page's address
-- and final address (domainOf in Go, which knows the public suffix list),
-- indexed with the time of addition or fetch: a domain's first sighting
-- (FirstSighting) was a scan of every address with LIKE '%domain%', once
-- per unrated domain a check reads. Written with the rows; NULL until
-- then, so the rows stored before are filled when the archive is opened
-- (fillDomainsPostgres), a batch at a time.

-- +goose Up
ALTER TABLE archive_docs ADD COLUMN IF NOT EXISTS domain text;
ALTER TABLE archive_pages ADD COLUMN IF NOT EXISTS domain text;
ALTER TABLE archive_pages ADD COLUMN IF NOT EXISTS final_domain text;
CREATE INDEX IF NOT EXISTS archive_docs_domain ON archive_docs (domain, added_at);
CREATE INDEX IF NOT EXISTS archive_pages_domain ON archive_pages (domain, fetched_at);
CREATE INDEX IF NOT EXISTS archive_pages_final_domain ON archive_pages (final_domain, fetched_at);

-- +goose Down
DROP INDEX IF EXISTS archive_pages_final_domain;
DROP INDEX IF EXISTS archive_pages_domain;
DROP INDEX IF EXISTS archive_docs_domain;
ALTER TABLE archive_pages DROP COLUMN IF EXISTS final_domain;
ALTER TABLE archive_pages DROP COLUMN IF EXISTS domain;
ALTER TABLE archive_docs DROP COLUMN IF EXISTS domain;
