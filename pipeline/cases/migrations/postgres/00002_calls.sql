-- +goose Up
-- The model calls of each case, so that the list can say a cost is unknown
-- (calls whose server reported no usage) rather than $0. Cases saved before
-- this migration take them from their check.
ALTER TABLE cases ADD COLUMN llm_calls integer NOT NULL DEFAULT 0;
ALTER TABLE cases ADD COLUMN cached_calls integer NOT NULL DEFAULT 0;
ALTER TABLE cases ADD COLUMN unreported_calls integer NOT NULL DEFAULT 0;
UPDATE cases SET
	llm_calls = COALESCE((convert_from(check_json, 'UTF8')::jsonb #>> '{usage,llm_calls}')::integer, 0),
	cached_calls = COALESCE((convert_from(check_json, 'UTF8')::jsonb #>> '{usage,cached_calls}')::integer, 0),
	unreported_calls = COALESCE((convert_from(check_json, 'UTF8')::jsonb #>> '{usage,unreported_calls}')::integer, 0);

-- +goose Down
ALTER TABLE cases DROP COLUMN unreported_calls;
ALTER TABLE cases DROP COLUMN cached_calls;
ALTER TABLE cases DROP COLUMN llm_calls;
