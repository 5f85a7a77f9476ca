-- +goose Up
-- The model calls of each case, so that the list can say a cost is unknown
-- (calls whose server reported no usage) rather than $0. Cases saved before
-- this migration take them from their check.
ALTER TABLE cases ADD COLUMN llm_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cases ADD COLUMN cached_calls INTEGER NOT NULL DEFAULT 0;
ALTER TABLE cases ADD COLUMN unreported_calls INTEGER NOT NULL DEFAULT 0;
UPDATE cases SET
	llm_calls = COALESCE(json_extract(CAST(check_json AS TEXT), '$.usage.llm_calls'), 0),
	cached_calls = COALESCE(json_extract(CAST(check_json AS TEXT), '$.usage.cached_calls'), 0),
	unreported_calls = COALESCE(json_extract(CAST(check_json AS TEXT), '$.usage.unreported_calls'), 0)
WHERE json_valid(CAST(check_json AS TEXT));

-- +goose Down
ALTER TABLE cases DROP COLUMN unreported_calls;
ALTER TABLE cases DROP COLUMN cached_calls;
ALTER TABLE cases DROP COLUMN llm_calls;
