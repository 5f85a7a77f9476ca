-- +goose Up
-- Each snapshot keeps the page's HTTP response headers as received (the
-- wire format, "Name: value" lines), for the evidence pack. Snapshots
-- saved before keep none.
ALTER TABLE snapshots ADD COLUMN headers text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE snapshots DROP COLUMN headers;
