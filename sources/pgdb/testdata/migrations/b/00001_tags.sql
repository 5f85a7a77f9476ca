-- +goose Up
CREATE TABLE tags (name text PRIMARY KEY);

-- +goose Down
DROP TABLE tags;
