-- +goose Up
-- A call in flight holds its estimate in the ledger (settled = 0) until it
-- settles, so every process sharing the ledger sees it; a reservation whose
-- process died stops counting at expires (unix milliseconds).
ALTER TABLE spend ADD COLUMN settled INTEGER NOT NULL DEFAULT 1;
ALTER TABLE spend ADD COLUMN expires INTEGER NOT NULL DEFAULT 0;

-- +goose Down
ALTER TABLE spend DROP COLUMN expires;
ALTER TABLE spend DROP COLUMN settled;
