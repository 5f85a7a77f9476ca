package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

// Claim matching: fact-checks publish what they checked as ClaimReview
// records (schema.org). The archive keeps them apart from pages, so a post
// can be matched against the claims themselves — "already checked by
// PolitiFact, rated False" — rather than against whole articles.

// ClaimMatch is an archived ClaimReview that matches a post.
type ClaimMatch struct {
	sources.ClaimReview
	// Score orders matches within one answer (higher is better).
	Score float64 `json:"score"`
}

// AddClaimReviews stores fact-checks' ClaimReview records in lang (empty:
// English), replacing a record with the same review URL and claim. Records
// without a claim are refused.
func (s *Store) AddClaimReviews(ctx context.Context, crs []sources.ClaimReview, lang string) error {
	lang = normLang(lang)
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	defer tx.Rollback()
	get, err := tx.PrepareContext(ctx, s.sql(`SELECT id, claim_terms FROM claims WHERE review_key = ? AND claim = ?`))
	if err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	defer get.Close()
	for _, cr := range crs {
		if err := s.addClaim(ctx, tx, get, cr, lang); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	return nil
}

func (s *Store) addClaim(ctx context.Context, tx *sql.Tx, get *sql.Stmt, cr sources.ClaimReview, lang string) error {
	claim := strings.Join(strings.Fields(cr.Claim), " ")
	if claim == "" {
		return fmt.Errorf("archive claim review %s: no claim", cr.ReviewURL)
	}
	key := ""
	if cr.ReviewURL != "" {
		k, err := sources.Canonical(cr.ReviewURL)
		if err != nil {
			return fmt.Errorf("archive claim review %q: %w", cr.ReviewURL, err)
		}
		key = k
	}
	terms, _ := tokenStream(claim, lang)
	unix := func(t time.Time) sql.NullInt64 {
		if t.Truncate(time.Second).IsZero() {
			return sql.NullInt64{}
		}
		return sql.NullInt64{Int64: t.Unix(), Valid: true}
	}
	fail := func(err error) error { return fmt.Errorf("archive claim review %s: %w", cr.ReviewURL, err) }
	var id int64
	var old string
	switch err := get.QueryRowContext(ctx, key, claim).Scan(&id, &old); {
	case errors.Is(err, sql.ErrNoRows):
		ins, err := tx.PrepareContext(ctx, s.sql(`INSERT INTO claims (review_key, review_url, claim, claimant, claim_date, rating,
	reviewer, review_date, lang, claim_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+returning(s.postgres)))
		if err != nil {
			return fail(err)
		}
		defer ins.Close()
		if id, err = insertID(ctx, ins, s.postgres,
			key, cr.ReviewURL, claim, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, terms); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	default:
		if !s.postgres { // PostgreSQL's tsvector is a generated column
			if _, err := tx.ExecContext(ctx, `INSERT INTO claims_fts (claims_fts, rowid, claim_terms) VALUES ('delete', ?, ?)`, id, old); err != nil {
				return fail(err)
			}
		}
		if _, err := tx.ExecContext(ctx, s.sql(`UPDATE claims SET review_url = ?, claimant = ?, claim_date = ?, rating = ?, reviewer = ?,
	review_date = ?, lang = ?, claim_terms = ? WHERE id = ?`),
			cr.ReviewURL, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, terms, id); err != nil {
			return fail(err)
		}
	}
	if s.postgres {
		return nil
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO claims_fts (rowid, claim_terms) VALUES (?, ?)`, id, terms); err != nil {
		return fail(err)
	}
	return nil
}

// MatchClaims finds archived claims that a post (or any text) repeats,
// best first: FTS5's bm25() over the claims' stems. Limit zero or less
// means 5; lang is the text's language (empty: English).
func (s *Store) MatchClaims(ctx context.Context, text, lang string, limit int) ([]ClaimMatch, error) {
	if limit <= 0 {
		limit = 5
	}
	q := parseQuery(text, normLang(lang))
	if len(q.distinct) == 0 {
		return nil, nil
	}
	query, match := `
WITH best AS (SELECT rowid AS id, bm25(claims_fts) AS score FROM claims_fts WHERE claims_fts MATCH ? ORDER BY score LIMIT ?)
SELECT c.claim, c.claimant, c.claim_date, c.rating, c.reviewer, c.review_url, c.review_date, best.score
FROM best JOIN claims c ON c.id = best.id ORDER BY best.score`, orQuery(q.distinct)
	if s.postgres {
		// ts_rank_cd is higher-is-better; negated like bm25().
		query, match = `
SELECT claim, claimant, claim_date, rating, reviewer, review_url, review_date, -ts_rank_cd(tsv, q) AS score
FROM claims, to_tsquery('simple', ?) q WHERE tsv @@ q ORDER BY score LIMIT ?`, tsOr(q.distinct)
	}
	rows, err := s.db.QueryContext(ctx, s.sql(query), match, limit)
	if err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	defer rows.Close()
	var out []ClaimMatch
	for rows.Next() {
		var m ClaimMatch
		var claimDate, reviewDate sql.NullInt64
		if err := rows.Scan(&m.Claim, &m.Claimant, &claimDate, &m.Rating, &m.Reviewer, &m.ReviewURL, &reviewDate, &m.Score); err != nil {
			return nil, fmt.Errorf("match claims: %w", err)
		}
		m.Score = -m.Score
		if claimDate.Valid {
			m.ClaimDate = time.Unix(claimDate.Int64, 0).UTC()
		}
		if reviewDate.Valid {
			m.ReviewDate = time.Unix(reviewDate.Int64, 0).UTC()
		}
		out = append(out, m)
	}
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out, nil
}
