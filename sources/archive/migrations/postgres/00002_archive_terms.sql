-- The first stage's postings move to a narrow side table: one row a
-- document, its id and one tsvector of its distinct stems, without
-- positions (the first stage reads none), the title's stems once more
-- with a '!' before them (a stem is letters, digits and marks only, so no
-- stem begins with one). A term's postings are then visits of these small
-- rows, not of the wide documents row with its text, and one GIN index
-- serves the text and the title postings. The lexemes are the Go stems
-- as they are (the writer sends the tsvector itself, see termVector in
-- postgres.go), so PostgreSQL matches exactly the tokens SQLite's FTS5
-- does; the documents lose the generated tsvector and its two GIN
-- indexes, which the server had to parse and update on every write.

-- +goose Up
CREATE TABLE IF NOT EXISTS archive_terms (
	id  bigint PRIMARY KEY, -- archive_docs.id; the delete trigger removes it
	tsv tsvector NOT NULL
);
-- An existing archive's documents, as termVector builds them (stems of
-- 2,048 bytes or more are left out there too: a lexeme's limit).
INSERT INTO archive_terms (id, tsv)
SELECT d.id, array_to_tsvector(array(
	SELECT t FROM unnest(string_to_array(d.title_terms || ' ' || d.text_terms || ' ' || d.publisher_terms, ' ')) t
	WHERE t <> '' AND octet_length(t) < 2048
	UNION
	SELECT '!' || t FROM unnest(string_to_array(d.title_terms, ' ')) t
	WHERE t <> '' AND octet_length(t) < 2047))
FROM archive_docs d
ON CONFLICT (id) DO NOTHING;
CREATE INDEX IF NOT EXISTS archive_terms_tsv ON archive_terms USING gin (tsv);

DROP INDEX IF EXISTS archive_docs_title_tsv;
DROP INDEX IF EXISTS archive_docs_tsv;
ALTER TABLE archive_docs DROP COLUMN IF EXISTS tsv;

-- A page's text and stems are compressed with LZ4 where the server has
-- it (PostgreSQL 14 and later, built with lz4): measured on 10k pages it
-- costs the server 0.47 s of CPU to store them, against 0.74 s with the
-- default pglz. Rows written before keep their compression.
-- +goose StatementBegin
DO $$
BEGIN
	EXECUTE 'ALTER TABLE archive_docs ALTER COLUMN text SET COMPRESSION lz4, ALTER COLUMN title SET COMPRESSION lz4, '
		'ALTER COLUMN text_terms SET COMPRESSION lz4, ALTER COLUMN title_terms SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
	NULL; -- pglz, as before
END;
$$;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_docs_deleted() RETURNS trigger AS $$
BEGIN
	DELETE FROM archive_terms WHERE id = OLD.id;
	UPDATE archive_stats SET version = version + 1, n = n - 1, title_len = title_len - OLD.title_len,
		lead_len = lead_len - least(OLD.text_len, 50), rest_len = rest_len - greatest(OLD.text_len - 50, 0);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

-- +goose Down
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_docs_deleted() RETURNS trigger AS $$
BEGIN
	UPDATE archive_stats SET version = version + 1, n = n - 1, title_len = title_len - OLD.title_len,
		lead_len = lead_len - least(OLD.text_len, 50), rest_len = rest_len - greatest(OLD.text_len - 50, 0);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
ALTER TABLE archive_docs ADD COLUMN tsv tsvector GENERATED ALWAYS AS (
	setweight(to_tsvector('simple', title_terms), 'A') ||
	setweight(to_tsvector('simple', text_terms), 'B') ||
	setweight(to_tsvector('simple', publisher_terms), 'C')) STORED;
CREATE INDEX archive_docs_tsv ON archive_docs USING gin (tsv);
CREATE INDEX archive_docs_title_tsv ON archive_docs USING gin (to_tsvector('simple', title_terms));
DROP TABLE archive_terms;
