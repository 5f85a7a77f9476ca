-- A term's postings as lists of document ids, instead of a GIN index over
-- one tsvector a document (archive_terms, migration 2). Keeping that index
-- was most of what an import cost the server (2.7-3.1 s of CPU per 10k
-- pages of 4.4-4.7 s), and a search visited one archive_terms row per
-- posting it read. Here a batch of documents adds one row per term it
-- holds: the term (a stem, or a title's stem after '!' as in
-- archive_terms), the batch's ids holding it, ascending, and their least
-- and greatest. An import sends the rows through COPY (copyNew in
-- postgres.go), in the transaction that stores the documents: a search
-- sees a batch's documents and postings together or neither, and no
-- writer updates a row another writer appends, so importers meet only on
-- archive_term_df. A term's postings are the union of its rows, read in
-- one index range: one row a batch that held it, never one a document.
-- Each row also says how many ids it holds, beside its key in the index,
-- so a term's document count is the sum of its rows' (an index-only scan
-- of the range): exact, and kept by the very rows a writer appends. The
-- counts table of migration 4, which every batch had to update (0.6 s of
-- server CPU per 10k pages) and importers met on, is dropped.
-- A document merged with new stems or deleted is taken out of the rows of
-- its old terms (docWriter's flushPostings, and the delete trigger below),
-- rows locked in (term, lo, ctid) order, so writers take their locks in one
-- order.

-- +goose Up
CREATE TABLE IF NOT EXISTS archive_postings (
	term text COLLATE "C" NOT NULL,
	lo   bigint NOT NULL, -- least and greatest of ids (bounds still, after a removal)
	hi   bigint NOT NULL,
	n    integer NOT NULL, -- cardinality(ids)
	ids  bigint[] NOT NULL -- archive_docs ids, ascending
);
-- +goose StatementBegin
DO $$
BEGIN
	EXECUTE 'ALTER TABLE archive_postings ALTER COLUMN ids SET COMPRESSION lz4';
EXCEPTION WHEN feature_not_supported OR syntax_error OR invalid_parameter_value THEN
	NULL; -- pglz
END;
$$;
-- +goose StatementEnd
-- An existing archive's postings, from its archive_terms rows: a row per
-- term and 4,096 ids.
INSERT INTO archive_postings (term, lo, hi, n, ids)
SELECT w, min(t.id), max(t.id), count(*), array_agg(t.id ORDER BY t.id)
FROM archive_terms t, unnest(tsvector_to_array(t.tsv)) w GROUP BY w, t.id / 4096;
CREATE INDEX IF NOT EXISTS archive_postings_term ON archive_postings (term, lo) INCLUDE (n);

-- A document's terms, as termVector in postgres.go computes them: its
-- distinct stems of every field, and its title's again after '!'; a stem
-- of 2,048 bytes or more is left out (an index key's limit).
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_doc_terms(title_terms text, text_terms text, publisher_terms text) RETURNS text[] AS $$
	SELECT coalesce(array_agg(t ORDER BY t COLLATE "C"), '{}') FROM (
		SELECT t FROM unnest(string_to_array(title_terms || ' ' || text_terms || ' ' || publisher_terms, ' ')) t
		WHERE t <> '' AND octet_length(t) < 2048
		UNION
		SELECT '!' || t FROM unnest(string_to_array(title_terms, ' ')) t
		WHERE t <> '' AND octet_length(t) < 2047) u
$$ LANGUAGE sql IMMUTABLE;
-- +goose StatementEnd

-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_docs_deleted() RETURNS trigger AS $$
DECLARE
	ts text[] := archive_doc_terms(OLD.title_terms, OLD.text_terms, OLD.publisher_terms);
BEGIN
	PERFORM 1 FROM archive_postings WHERE term = ANY(ts) AND lo <= OLD.id AND OLD.id <= hi AND OLD.id = ANY(ids)
		ORDER BY term, lo, ctid FOR UPDATE;
	UPDATE archive_postings SET ids = array_remove(ids, OLD.id), n = n - 1
		WHERE term = ANY(ts) AND lo <= OLD.id AND OLD.id <= hi AND OLD.id = ANY(ids);
	DELETE FROM archive_postings WHERE term = ANY(ts) AND lo <= OLD.id AND OLD.id <= hi AND n = 0;
	UPDATE archive_stats SET version = version + 1, n = n - 1, title_len = title_len - OLD.title_len,
		lead_len = lead_len - least(OLD.text_len, 50), rest_len = rest_len - greatest(OLD.text_len - 50, 0);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd

DROP TABLE IF EXISTS archive_terms;
DROP TABLE IF EXISTS archive_term_df;
-- No statement reads documents by date (the first stage reads a
-- candidate's date by its id), so the index is only a cost to every write.
DROP INDEX IF EXISTS archive_docs_published;

-- +goose Down
CREATE INDEX IF NOT EXISTS archive_docs_published ON archive_docs (published);
CREATE TABLE archive_terms (
	id  bigint PRIMARY KEY,
	tsv tsvector NOT NULL
);
INSERT INTO archive_terms (id, tsv)
SELECT d.id, array_to_tsvector(archive_doc_terms(d.title_terms, d.text_terms, d.publisher_terms)) FROM archive_docs d;
CREATE INDEX archive_terms_tsv ON archive_terms USING gin (tsv);
CREATE TABLE archive_term_df (
	term text COLLATE "C" PRIMARY KEY,
	df   bigint NOT NULL
) WITH (fillfactor = 70);
INSERT INTO archive_term_df (term, df)
SELECT term, sum(n) FROM archive_postings WHERE term NOT LIKE '!%' GROUP BY term;
-- +goose StatementBegin
CREATE OR REPLACE FUNCTION archive_docs_deleted() RETURNS trigger AS $$
DECLARE
	v tsvector;
	ts text[];
BEGIN
	DELETE FROM archive_terms WHERE id = OLD.id RETURNING tsv INTO v;
	IF v IS NOT NULL THEN
		ts := array(SELECT t FROM unnest(tsvector_to_array(v)) t WHERE t NOT LIKE '!%' ORDER BY t COLLATE "C");
		PERFORM 1 FROM archive_term_df WHERE term = ANY(ts) ORDER BY term FOR UPDATE;
		UPDATE archive_term_df SET df = df - 1 WHERE term = ANY(ts);
		DELETE FROM archive_term_df WHERE term = ANY(ts) AND df <= 0;
	END IF;
	UPDATE archive_stats SET version = version + 1, n = n - 1, title_len = title_len - OLD.title_len,
		lead_len = lead_len - least(OLD.text_len, 50), rest_len = rest_len - greatest(OLD.text_len - 50, 0);
	RETURN NULL;
END;
$$ LANGUAGE plpgsql;
-- +goose StatementEnd
DROP FUNCTION archive_doc_terms(text, text, text);
DROP TABLE archive_postings;
