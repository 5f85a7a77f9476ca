-- +goose Up
-- Checkers, not files: who made and last changed each case, the version
-- every save moves on (a save based on an older one is a conflict, and the
-- state it would have replaced is kept in case_versions), which Store wrote
-- it (writer: a random token per open store, so a store's watch skips its
-- own saves), who wrote each draft, and the audit trail. Cases made before
-- this migration have no recorded checker.
ALTER TABLE cases ADD COLUMN created_by TEXT NOT NULL DEFAULT '';
ALTER TABLE cases ADD COLUMN updated_by TEXT NOT NULL DEFAULT '';
ALTER TABLE cases ADD COLUMN version INTEGER NOT NULL DEFAULT 1;
ALTER TABLE cases ADD COLUMN writer TEXT NOT NULL DEFAULT '';
CREATE INDEX cases_updated ON cases(updated_at);
CREATE INDEX cases_created_by ON cases(created_by);
ALTER TABLE drafts ADD COLUMN author TEXT NOT NULL DEFAULT '';
CREATE TABLE case_versions (
	case_id    TEXT NOT NULL,
	version    INTEGER NOT NULL,
	updated_by TEXT NOT NULL,
	updated_at INTEGER NOT NULL, -- Unix milliseconds
	check_json BLOB NOT NULL,
	PRIMARY KEY (case_id, version)
);
CREATE TABLE audit (
	seq     INTEGER PRIMARY KEY AUTOINCREMENT,
	case_id TEXT NOT NULL,
	at      INTEGER NOT NULL, -- Unix milliseconds
	actor   TEXT NOT NULL,
	action  TEXT NOT NULL,    -- created, changed, ran, edited, exported, deleted, conflict
	detail  TEXT NOT NULL DEFAULT ''
);
CREATE INDEX audit_case ON audit(case_id, seq);

-- +goose Down
DROP TABLE audit;
DROP TABLE case_versions;
ALTER TABLE drafts DROP COLUMN author;
DROP INDEX cases_created_by;
DROP INDEX cases_updated;
ALTER TABLE cases DROP COLUMN writer;
ALTER TABLE cases DROP COLUMN version;
ALTER TABLE cases DROP COLUMN updated_by;
ALTER TABLE cases DROP COLUMN created_by;
