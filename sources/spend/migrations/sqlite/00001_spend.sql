-- +goose Up
-- The table as muse wrote it before migrations were versioned; a ledger
-- created then is adopted as it is.
CREATE TABLE IF NOT EXISTS spend (
  at    INTEGER NOT NULL, -- unix milliseconds
  task  TEXT NOT NULL,
  model TEXT NOT NULL,
  usd   REAL NOT NULL
);
CREATE INDEX IF NOT EXISTS spend_at ON spend(at);

-- +goose Down
DROP TABLE spend;
