-- +goose Up
-- The same tables as on SQLite (migrations/sqlite, both steps): cases with
-- who made and last changed them and their version, every draft of the
-- correction, page snapshots, the versions a conflicting save kept, and the
-- audit trail. Times are Unix milliseconds.
CREATE TABLE cases (
	id              text PRIMARY KEY,
	created_at      bigint NOT NULL,
	updated_at      bigint NOT NULL,
	post_excerpt    text NOT NULL DEFAULT '',
	post_url        text NOT NULL DEFAULT '',
	correction_line text NOT NULL DEFAULT '',
	sources_used    integer NOT NULL DEFAULT 0,
	cost_usd        double precision NOT NULL DEFAULT 0,
	events          integer NOT NULL DEFAULT 0,
	check_json      bytea NOT NULL,
	created_by      text NOT NULL DEFAULT '',
	updated_by      text NOT NULL DEFAULT '',
	version         bigint NOT NULL DEFAULT 1,
	writer          text NOT NULL DEFAULT ''
);
CREATE INDEX cases_created ON cases(created_at);
CREATE INDEX cases_updated ON cases(updated_at);
CREATE INDEX cases_created_by ON cases(created_by);
CREATE TABLE drafts (
	seq     bigserial PRIMARY KEY,
	case_id text NOT NULL,
	at      bigint NOT NULL,
	text    text NOT NULL,
	edited  boolean NOT NULL DEFAULT false,
	author  text NOT NULL DEFAULT ''
);
CREATE INDEX drafts_case ON drafts(case_id, seq);
CREATE TABLE snapshots (
	case_id    text NOT NULL,
	url        text NOT NULL,
	final_url  text NOT NULL DEFAULT '',
	fetched_at bigint NOT NULL,
	text_gz    bytea NOT NULL,
	html_gz    bytea NOT NULL,
	PRIMARY KEY (case_id, url)
);
CREATE TABLE case_versions (
	case_id    text NOT NULL,
	version    bigint NOT NULL,
	updated_by text NOT NULL,
	updated_at bigint NOT NULL,
	check_json bytea NOT NULL,
	PRIMARY KEY (case_id, version)
);
CREATE TABLE audit (
	seq     bigserial PRIMARY KEY,
	case_id text NOT NULL,
	at      bigint NOT NULL,
	actor   text NOT NULL,
	action  text NOT NULL,
	detail  text NOT NULL DEFAULT ''
);
CREATE INDEX audit_case ON audit(case_id, seq);

-- +goose Down
DROP TABLE audit;
DROP TABLE case_versions;
DROP TABLE snapshots;
DROP TABLE drafts;
DROP TABLE cases;
