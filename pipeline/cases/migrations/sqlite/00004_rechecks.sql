-- +goose Up
-- What the last recheck of each cited page found (muse cases recheck): one
-- row per case and page, replaced at each recheck. reasons is a JSON array
-- of what changed since the page was cited (empty: nothing); error says why
-- the page could not be read this time (not a change). acknowledged is set
-- when the checker accepts the revision draft, and cleared when a later
-- recheck finds something else. Whether a case's evidence changed is
-- derived from these rows when the list is read.
CREATE TABLE rechecks (
	case_id      TEXT NOT NULL,
	url          TEXT NOT NULL,
	checked_at   INTEGER NOT NULL, -- Unix milliseconds
	status       INTEGER NOT NULL DEFAULT 0,
	final_url    TEXT NOT NULL DEFAULT '',
	not_modified INTEGER NOT NULL DEFAULT 0, -- 1: the server answered 304
	reasons      TEXT NOT NULL DEFAULT '[]',
	error        TEXT NOT NULL DEFAULT '',
	acknowledged INTEGER NOT NULL DEFAULT 0,
	PRIMARY KEY (case_id, url)
);

-- +goose Down
DROP TABLE rechecks;
