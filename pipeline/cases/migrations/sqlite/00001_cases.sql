-- +goose Up
-- The schema as muse wrote it before migrations were versioned (PRAGMA
-- user_version 1); a cases.db created then is adopted as it is. Drafts and
-- snapshots carry no foreign key so that the engine may store a page before
-- the case's first Save; Delete removes all three in one transaction.
CREATE TABLE IF NOT EXISTS cases (
	id              TEXT PRIMARY KEY,
	created_at      INTEGER NOT NULL, -- Unix milliseconds
	updated_at      INTEGER NOT NULL,
	post_excerpt    TEXT NOT NULL DEFAULT '',
	post_url        TEXT NOT NULL DEFAULT '',
	correction_line TEXT NOT NULL DEFAULT '',
	sources_used    INTEGER NOT NULL DEFAULT 0,
	cost_usd        REAL NOT NULL DEFAULT 0,
	events          INTEGER NOT NULL DEFAULT 0,
	check_json      BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS cases_created ON cases(created_at);
CREATE TABLE IF NOT EXISTS drafts (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	case_id TEXT NOT NULL,
	at      INTEGER NOT NULL,          -- Unix milliseconds
	text    TEXT NOT NULL,
	edited  INTEGER NOT NULL DEFAULT 0 -- 1: a person wrote or changed it
);
CREATE INDEX IF NOT EXISTS drafts_case ON drafts(case_id, seq);
CREATE TABLE IF NOT EXISTS snapshots (
	case_id    TEXT NOT NULL,
	url        TEXT NOT NULL,
	final_url  TEXT NOT NULL DEFAULT '',
	fetched_at INTEGER NOT NULL,       -- Unix milliseconds
	text_gz    BLOB NOT NULL,
	html_gz    BLOB NOT NULL,
	PRIMARY KEY (case_id, url)
);

-- +goose Down
DROP TABLE snapshots;
DROP TABLE drafts;
DROP TABLE cases;
