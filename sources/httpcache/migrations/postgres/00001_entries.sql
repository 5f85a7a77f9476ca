-- +goose Up
CREATE TABLE IF NOT EXISTS http_cache (
  key        bytea PRIMARY KEY, -- SHA-256 of the request
  method     text NOT NULL,
  url        text NOT NULL,     -- secret query parameters replaced by REDACTED
  created_at bigint NOT NULL,   -- Unix milliseconds
  expires_at bigint NOT NULL,
  header     bytea NOT NULL,    -- JSON of the response headers kept
  body       bytea NOT NULL,
  stream     boolean NOT NULL DEFAULT false
);
CREATE INDEX IF NOT EXISTS http_cache_expires ON http_cache(expires_at);

-- +goose Down
DROP TABLE http_cache;
