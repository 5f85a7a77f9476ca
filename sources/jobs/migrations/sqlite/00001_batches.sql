-- +goose Up
CREATE TABLE IF NOT EXISTS muse_batch (
  batch_id   TEXT PRIMARY KEY,
  created_at TEXT NOT NULL,
  total      INTEGER NOT NULL
);
CREATE TABLE IF NOT EXISTS muse_batch_item (
  batch_id TEXT NOT NULL REFERENCES muse_batch (batch_id) ON DELETE CASCADE,
  line     INTEGER NOT NULL,
  job_id   INTEGER NOT NULL,
  PRIMARY KEY (batch_id, line)
);

-- +goose Down
DROP TABLE muse_batch_item;
DROP TABLE muse_batch;
