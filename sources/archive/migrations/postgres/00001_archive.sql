-- The archive on PostgreSQL: the same tables as the SQLite archive, named
-- archive_* since the newsroom's database holds every store's tables. The
-- stems are computed in Go (stem.go) and stored space-separated, so the
-- 'simple' text search configuration (lower-casing, no stemming, no stop
-- words) indexes exactly the tokens SQLite's FTS5 indexes, and the second
-- stage scores the same stems on both engines.

-- +goose Up
CREATE TABLE IF NOT EXISTS archive_docs (
	id              bigserial PRIMARY KEY,
	url             text NOT NULL UNIQUE, -- sources.Canonical form
	orig_url        text NOT NULL,
	title           text NOT NULL DEFAULT '',
	text            text NOT NULL DEFAULT '',
	publisher       text NOT NULL DEFAULT '',
	published       bigint,               -- Unix seconds; NULL when unknown
	title_len       integer NOT NULL DEFAULT 0,
	text_len        integer NOT NULL DEFAULT 0,
	added_at        bigint NOT NULL,
	updated_at      bigint NOT NULL,
	lang            text NOT NULL DEFAULT 'en',
	title_terms     text NOT NULL DEFAULT '',
	text_terms      text NOT NULL DEFAULT '',
	publisher_terms text NOT NULL DEFAULT '',
	-- Field weights as the first stage's column weights: A title, B text,
	-- C publisher.
	tsv tsvector GENERATED ALWAYS AS (
		setweight(to_tsvector('simple', title_terms), 'A') ||
		setweight(to_tsvector('simple', text_terms), 'B') ||
		setweight(to_tsvector('simple', publisher_terms), 'C')) STORED
);
CREATE INDEX IF NOT EXISTS archive_docs_tsv ON archive_docs USING gin (tsv);
-- The title's terms alone, which the first stage counts twice.
CREATE INDEX IF NOT EXISTS archive_docs_title_tsv ON archive_docs USING gin (to_tsvector('simple', title_terms));
CREATE INDEX IF NOT EXISTS archive_docs_published ON archive_docs (published);

-- One row of collection statistics, moved by every write transaction (the
-- writer adds its deltas once, before committing), so no search scans.
CREATE TABLE IF NOT EXISTS archive_stats (
	one       integer PRIMARY KEY CHECK (one = 1),
	version   bigint NOT NULL,
	n         bigint NOT NULL,
	title_len bigint NOT NULL,
	lead_len  bigint NOT NULL,
	rest_len  bigint NOT NULL
);
INSERT INTO archive_stats VALUES (1, 0, 0, 0, 0, 0) ON CONFLICT DO NOTHING;

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_docs_deleted() RETURNS trigger AS $$
BEGIN
	UPDATE archive_stats SET version = version + 1, n = n - 1, title_len = title_len - OLD.title_len,
		lead_len = lead_len - least(OLD.text_len, 50), rest_len = rest_len - greatest(OLD.text_len - 50, 0);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
CREATE TRIGGER archive_docs_ad AFTER DELETE ON archive_docs FOR EACH ROW EXECUTE FUNCTION archive_docs_deleted();

CREATE TABLE IF NOT EXISTS archive_pages (
	url           text PRIMARY KEY,
	request_url   text NOT NULL,
	final_url     text NOT NULL,
	final_key     text NOT NULL,
	status        integer NOT NULL,
	content_type  text NOT NULL DEFAULT '',
	charset       text NOT NULL DEFAULT '',
	raw_gz        bytea,
	body_gz       bytea,
	fetched_at    bigint NOT NULL,
	etag          text NOT NULL DEFAULT '',
	last_modified text NOT NULL DEFAULT ''
);
CREATE INDEX IF NOT EXISTS archive_pages_final_key ON archive_pages (final_key);

CREATE TABLE IF NOT EXISTS archive_claims (
	id          bigserial PRIMARY KEY,
	review_key  text NOT NULL,
	review_url  text NOT NULL DEFAULT '',
	claim       text NOT NULL,
	claimant    text NOT NULL DEFAULT '',
	claim_date  bigint,
	rating      text NOT NULL DEFAULT '',
	reviewer    text NOT NULL DEFAULT '',
	review_date bigint,
	lang        text NOT NULL DEFAULT 'en',
	claim_terms text NOT NULL DEFAULT '',
	tsv tsvector GENERATED ALWAYS AS (to_tsvector('simple', claim_terms)) STORED,
	UNIQUE (review_key, claim)
);
CREATE INDEX IF NOT EXISTS archive_claims_tsv ON archive_claims USING gin (tsv);

-- +goose Down
DROP TABLE archive_claims;
DROP TABLE archive_pages;
DROP TRIGGER archive_docs_ad ON archive_docs;
DROP FUNCTION archive_docs_deleted();
DROP TABLE archive_stats;
DROP TABLE archive_docs;
