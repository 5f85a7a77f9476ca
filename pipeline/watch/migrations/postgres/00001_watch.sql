-- +goose Up
CREATE TABLE watch_cursor (
    feed       TEXT PRIMARY KEY,
    cursor     TEXT NOT NULL,
    updated_us BIGINT NOT NULL
);
CREATE TABLE watch_cluster (
    id          BIGSERIAL PRIMARY KEY,
    sketch      TEXT NOT NULL,
    first_post  TEXT NOT NULL,
    post        TEXT NOT NULL,
    lang        TEXT NOT NULL,
    image_keys  TEXT NOT NULL,
    size        BIGINT NOT NULL,
    first_us    BIGINT NOT NULL,
    last_us     BIGINT NOT NULL,
    fact_checks TEXT NOT NULL DEFAULT '',
    score       DOUBLE PRECISION,
    score_note  TEXT NOT NULL DEFAULT '',
    state       TEXT NOT NULL DEFAULT 'new',
    state_note  TEXT NOT NULL DEFAULT '',
    state_us    BIGINT NOT NULL DEFAULT 0,
    batch_id    TEXT NOT NULL DEFAULT ''
);
CREATE INDEX watch_cluster_last ON watch_cluster (last_us);
CREATE INDEX watch_cluster_state ON watch_cluster (state, state_us);
CREATE TABLE watch_post (
    id      TEXT PRIMARY KEY,
    feed    TEXT NOT NULL,
    seen_us BIGINT NOT NULL,
    cluster BIGINT NOT NULL REFERENCES watch_cluster (id)
);
CREATE INDEX watch_post_cluster ON watch_post (cluster);

-- +goose Down
DROP TABLE watch_post;
DROP TABLE watch_cluster;
DROP TABLE watch_cursor;
