-- +goose Up
CREATE TABLE IF NOT EXISTS muse_batch (
  batch_id   text PRIMARY KEY,
  created_at timestamptz NOT NULL,
  total      integer NOT NULL
);
CREATE TABLE IF NOT EXISTS muse_batch_item (
  batch_id text NOT NULL REFERENCES muse_batch (batch_id) ON DELETE CASCADE,
  line     integer NOT NULL,
  job_id   bigint NOT NULL,
  PRIMARY KEY (batch_id, line)
);

-- +goose Down
DROP TABLE muse_batch_item;
DROP TABLE muse_batch;
