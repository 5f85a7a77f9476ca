-- +goose Up
-- As muse wrote it before migrations were versioned; such a cache is adopted.
CREATE TABLE IF NOT EXISTS entries (
  key        BLOB PRIMARY KEY,  -- SHA-256 of the request
  method     TEXT NOT NULL,
  url        TEXT NOT NULL,     -- secret query parameters replaced by REDACTED
  created_at INTEGER NOT NULL,  -- Unix milliseconds
  expires_at INTEGER NOT NULL,
  header     BLOB NOT NULL,     -- JSON of the response headers kept
  body       BLOB NOT NULL,
  stream     INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS entries_expires ON entries(expires_at);

-- +goose Down
DROP TABLE entries;
