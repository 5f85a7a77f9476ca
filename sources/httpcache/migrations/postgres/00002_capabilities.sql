-- +goose Up
-- What a model server's 400s taught muse about a model (the parameters it
-- does not take), so that the next process does not pay for the lesson
-- again; caps is JSON (llm.Capabilities).
CREATE TABLE IF NOT EXISTS model_capabilities (
  server     text NOT NULL,     -- the server's base URL
  model      text NOT NULL,
  caps       text NOT NULL,
  learned_at bigint NOT NULL,   -- Unix milliseconds
  PRIMARY KEY (server, model)
);

-- +goose Down
DROP TABLE model_capabilities;
