-- +goose Up
CREATE TABLE IF NOT EXISTS spend (
  id      bigserial PRIMARY KEY,
  at      bigint NOT NULL,          -- unix milliseconds
  task    text NOT NULL,
  model   text NOT NULL,
  usd     double precision NOT NULL,
  settled boolean NOT NULL DEFAULT true,
  expires bigint NOT NULL DEFAULT 0 -- unix milliseconds; for reservations
);
CREATE INDEX IF NOT EXISTS spend_at ON spend(at);

-- +goose Down
DROP TABLE spend;
