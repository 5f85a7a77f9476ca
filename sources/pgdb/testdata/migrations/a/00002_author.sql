-- +goose Up
ALTER TABLE notes ADD COLUMN author text NOT NULL DEFAULT '';

-- +goose Down
ALTER TABLE notes DROP COLUMN author;
