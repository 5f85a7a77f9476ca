-- The cases schema as muse wrote it before its migrations were goose files
-- (pipeline/cases/store.go's migrations[0], PRAGMA user_version 1).
CREATE TABLE cases (
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
CREATE INDEX cases_created ON cases(created_at);
CREATE TABLE drafts (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	case_id TEXT NOT NULL,
	at      INTEGER NOT NULL,          -- Unix milliseconds
	text    TEXT NOT NULL,
	edited  INTEGER NOT NULL DEFAULT 0 -- 1: a person wrote or changed it
);
CREATE INDEX drafts_case ON drafts(case_id, seq);
CREATE TABLE snapshots (
	case_id    TEXT NOT NULL,
	url        TEXT NOT NULL,
	final_url  TEXT NOT NULL DEFAULT '',
	fetched_at INTEGER NOT NULL,       -- Unix milliseconds
	text_gz    BLOB NOT NULL,
	html_gz    BLOB NOT NULL,
	PRIMARY KEY (case_id, url)
);
PRAGMA user_version = 1;
