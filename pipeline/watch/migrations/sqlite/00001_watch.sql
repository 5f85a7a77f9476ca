-- +goose Up
CREATE TABLE watch_cursor (
    feed       TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_us INTEGER NOT NULL
);
CREATE TABLE watch_cluster (
    id          INTEGER PRIMARY KEY,
    sketch      TEXT NOT NULL,
    first_post  TEXT NOT NULL,
    post        TEXT NOT NULL,
    lang        TEXT NOT NULL,
    image_keys  TEXT NOT NULL,
    size        INTEGER NOT NULL,
    first_us    INTEGER NOT NULL,
    last_us     INTEGER NOT NULL,
    fact_checks TEXT NOT NULL DEFAULT '',
    score       REAL,
    score_note  TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL DEFAULT 'new',
    state_note  TEXT NOT NULL DEFAULT '',
    state_us    INTEGER NOT NULL DEFAULT 0,
    batch_id    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX watch_cluster_last ON watch_cluster (last_us);
CREATE INDEX watch_cluster_state ON watch_cluster (state, state_us);
CREATE TABLE watch_post (
    id      TEXT PRIMARY KEY,
    feed    TEXT NOT NULL,
    seen_us INTEGER NOT NULL,
    cluster INTEGER NOT NULL REFERENCES watch_cluster (id)
);
CREATE INDEX watch_post_cluster ON watch_post (cluster);

-- +goose Down
DROP TABLE watch_post;
DROP TABLE watch_cluster;
DROP TABLE watch_cursor;
