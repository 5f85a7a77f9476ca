-- +goose Up
-- The posts' IDs are kept to drop a post delivered twice; those older than
-- the watch's retention are forgotten by the time they were seen.
CREATE INDEX watch_post_seen ON watch_post (seen_us);

-- +goose Down
DROP INDEX watch_post_seen;
