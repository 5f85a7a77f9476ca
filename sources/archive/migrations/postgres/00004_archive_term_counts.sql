-- Each term's document count, as SQLite's docs_terms: the first stage
-- picks the query's rarest terms from these exact counts (one b-tree seek
-- a term) and reads only their postings, instead of estimating a common
-- term's count from its first postings. A term is an archive_terms lexeme
-- without the title mark: what a document holds in any field. The writer
-- moves the counts once a transaction, in term order (flushDFs), so two
-- writers lock the rows they share in the same order and never deadlock;
-- the delete trigger moves them for a deleted document, in the same
-- order. Terms sort bytewise (COLLATE "C"), as Go sorts them. Room is left
-- in each page (fillfactor) so that an update can stay on its page
-- without a new index entry.

-- +goose Up
CREATE TABLE IF NOT EXISTS archive_term_df (
	term text COLLATE "C" PRIMARY KEY,
	df   bigint NOT NULL
) WITH (fillfactor = 70);
-- An existing archive's counts, from its archive_terms rows.
INSERT INTO archive_term_df (term, df)
SELECT word, ndoc FROM ts_stat('SELECT tsv FROM archive_terms') WHERE word NOT LIKE '!%'
ON CONFLICT (term) DO UPDATE SET df = excluded.df;

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

-- +goose Down
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
DROP TABLE archive_term_df;
