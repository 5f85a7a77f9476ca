-- +goose Up
-- What a model server's 400s taught muse about a model (the parameters it
-- does not take), so that the next process does not pay for the lesson
-- again; caps is JSON (llm.Capabilities).
CREATE TABLE IF NOT EXISTS model_capabilities (
  server     TEXT NOT NULL,     -- the server's base URL
  model      TEXT NOT NULL,
  caps       TEXT NOT NULL,
  learned_at INTEGER NOT NULL,  -- Unix milliseconds
  PRIMARY KEY (server, model)
);

-- +goose Down
DROP TABLE model_capabilities;
