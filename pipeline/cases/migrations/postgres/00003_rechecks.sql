-- +goose Up
-- As on SQLite (migrations/sqlite/00004_rechecks.sql): what the last
-- recheck of each cited page found.
CREATE TABLE rechecks (
	case_id      text NOT NULL,
	url          text NOT NULL,
	checked_at   bigint NOT NULL,
	status       integer NOT NULL DEFAULT 0,
	final_url    text NOT NULL DEFAULT '',
	not_modified boolean NOT NULL DEFAULT false,
	reasons      text NOT NULL DEFAULT '[]',
	error        text NOT NULL DEFAULT '',
	acknowledged boolean NOT NULL DEFAULT false,
	PRIMARY KEY (case_id, url)
);

-- +goose Down
DROP TABLE rechecks;
