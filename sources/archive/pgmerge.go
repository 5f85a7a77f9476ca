package archive

import (
	"context"
	"fmt"
	"slices"
)

// Merging postings rows on PostgreSQL. An import's batch copies one row a
// term it holds (copyPostings), so a term that a few pages of every batch
// hold ends an import of 1M pages with 500 rows of a few ids each, and a
// search reads every one of them: one index entry and one heap page a
// row. MergePostings rewrites each such term's small rows (at most rowIDs
// ids, the rows small writes append to) as rows of up to mergedRowIDs ids, in
// id order. The documents a term lists, and its count, do not change, so a
// search finds the same documents in the same order, and the statistics
// version is left alone.

// mergeRows is the fewest small rows a term must have to be merged. Fewer
// cost a search little, and are left for a later merge: an import of up to
// 15 batches (30k pages) into a new archive merges nothing, while a term
// of an import of 1M pages has 500. Merged, an archive of 100k pages
// imported searched a little faster than before (the server's CPU a
// search 8.0-8.7 ms against 9.9), one of 1M nearly twice as fast (see
// docs/benchmarks.md).
const mergeRows = 16

// mergedRowIDs is how many ids a merged row holds at most: 32 KiB of ids,
// stored compressed out of line (TOAST), read in a few chunks. No write
// appends to a row this full (they append to rows of up to rowIDs), so
// its size costs only a delete, which rewrites the row once.
const mergedRowIDs = 4096

// mergeTerms is how many terms one merge transaction rewrites: small
// enough that it holds its row locks briefly (a quarter of a second at
// 100k pages), large enough that its statements cost little per term.
const mergeTerms = 2000

// MergeResult says what MergePostings did.
type MergeResult struct {
	// Terms is how many terms were merged; Before and After their rows
	// before and after (their rows of more than rowIDs ids not counted:
	// they are left as they are).
	Terms, Before, After int
}

// MergePostings merges the postings rows of the terms of an archive on
// PostgreSQL that have mergeRows rows of at most rowIDs ids or more
// (terms nil: every term; else those of terms, which must be sorted),
// calling progress, when set, with the terms merged so far and the terms
// to merge. On SQLite, whose postings are blocks appended to in place, it
// does nothing. Import calls it after writing batches of its own.
//
// It runs beside searches and writes. Each transaction locks a batch of
// terms' small rows in (term, lo, ctid) order, as every writer locks
// postings rows it waits for, then deletes them and inserts their merged
// rows in one statement; a search's snapshot sees either the old rows or
// the new. A writer adding to a term's row with room passes over a row the
// merge holds (SKIP LOCKED) and makes a new row; a writer taking a
// document out of a row waits for the merge, then finds the document in
// the merged row.
func (s *Store) MergePostings(ctx context.Context, terms []string, progress func(done, of int)) (MergeResult, error) {
	var res MergeResult
	if !s.postgres {
		return res, nil
	}
	cands, err := s.mergeCandidates(ctx, terms)
	if err != nil {
		return res, err
	}
	for chunk := range slices.Chunk(cands, mergeTerms) {
		var r MergeResult
		err := retryConflicts(ctx, func() error {
			var err error
			r, err = s.mergeTerms(ctx, chunk)
			return err
		})
		if err != nil {
			return res, fmt.Errorf("archive: merge postings: %w", err)
		}
		res.Terms, res.Before, res.After = res.Terms+r.Terms, res.Before+r.Before, res.After+r.After
		if progress != nil {
			progress(res.Terms, len(cands))
		}
	}
	return res, nil
}

// mergeCandidates lists, in term order, the terms (of terms, else all)
// with mergeRows small rows or more, from the postings index alone (its
// rows carry n).
func (s *Store) mergeCandidates(ctx context.Context, terms []string) ([]string, error) {
	const q = `SELECT term FROM archive_postings WHERE n <= $1 %s GROUP BY term HAVING count(*) >= $2 ORDER BY term`
	var out []string
	run := func(stmt string, args ...any) error {
		rows, err := s.db.QueryContext(ctx, stmt, args...)
		if err != nil {
			return fmt.Errorf("archive: merge postings: %w", err)
		}
		defer rows.Close()
		for rows.Next() {
			var t string
			if err := rows.Scan(&t); err != nil {
				return fmt.Errorf("archive: merge postings: %w", err)
			}
			out = append(out, t)
		}
		return rows.Err()
	}
	if terms == nil {
		return out, run(fmt.Sprintf(q, ""), rowIDs, mergeRows)
	}
	// A chunk at a time, so a statement's array stays small.
	for chunk := range slices.Chunk(terms, 8*mergeTerms) {
		if err := run(fmt.Sprintf(q, "AND term = ANY($3)"), rowIDs, mergeRows, chunk); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// mergeTerms merges the small rows of terms (sorted) in one transaction.
func (s *Store) mergeTerms(ctx context.Context, terms []string) (MergeResult, error) {
	res := MergeResult{Terms: len(terms)}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return res, err
	}
	defer tx.Rollback()
	// Nothing is lost to a server crash right after the commit but the
	// merge itself: the rows before it are still there.
	if _, err := tx.ExecContext(ctx, `SET LOCAL synchronous_commit = off`); err != nil {
		return res, err
	}
	if _, err := tx.ExecContext(ctx, `SELECT 1 FROM archive_postings WHERE term = ANY($1) AND n <= $2
ORDER BY term, lo, ctid FOR UPDATE`, terms, rowIDs); err != nil {
		return res, err
	}
	// The delete sees the rows the locks above hold as their holders left
	// them, and rows committed since (a writer's new rows), which it
	// merges too.
	err = tx.QueryRowContext(ctx, `WITH old AS (
	DELETE FROM archive_postings WHERE term = ANY($1) AND n <= $2 RETURNING term, ids),
merged AS (SELECT o.term, array_agg(d ORDER BY d) a FROM old o, unnest(o.ids) d GROUP BY o.term),
cut AS (
	INSERT INTO archive_postings (term, lo, hi, n, ids)
	SELECT term, a[i], a[least(i + $3 - 1, cardinality(a))], least($3, cardinality(a) - i + 1), a[i:i + $3 - 1]
	FROM merged, generate_series(1, cardinality(a), $3) i
	RETURNING 1)
SELECT (SELECT count(*) FROM old), (SELECT count(*) FROM cut)`, terms, rowIDs, mergedRowIDs).Scan(&res.Before, &res.After)
	if err != nil {
		return res, err
	}
	return res, tx.Commit()
}
