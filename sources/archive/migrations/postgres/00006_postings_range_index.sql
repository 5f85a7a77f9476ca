-- A document merged with new stems, or deleted, is taken out of the rows
-- that can hold it: those of its terms with lo <= id <= hi (docWriter's
-- flushPostings, and the delete trigger of migration 5). The index of
-- migration 5 has only (term, lo) as its key, so every row of a term
-- starting at or before the id was read from the table to look at its hi:
-- at 1M pages about 27,000 rows for one page's 164 terms, 90-460 ms to
-- delete a page. With hi in the key the index scan tests it on the index
-- entries and reads from the table only the rows that can hold the id
-- (33-76 ms for the same deletes). The first stage's bound (pgTermDocs,
-- from the rows' hi and n) is then read from the index alone too.

-- +goose Up
CREATE INDEX IF NOT EXISTS archive_postings_term_range ON archive_postings (term, lo, hi) INCLUDE (n);
DROP INDEX IF EXISTS archive_postings_term;

-- +goose Down
CREATE INDEX IF NOT EXISTS archive_postings_term ON archive_postings (term, lo) INCLUDE (n);
DROP INDEX IF EXISTS archive_postings_term_range;
