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
	get, err := tx.PrepareContext(ctx, `SELECT id, claim_terms FROM claims WHERE review_key = ? AND claim = ?`)
	if err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	defer get.Close()
	for _, cr := range crs {
		if err := addClaim(ctx, tx, get, cr, lang); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	return nil
}

func addClaim(ctx context.Context, tx *sql.Tx, get *sql.Stmt, cr sources.ClaimReview, lang string) error {
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
		res, err := tx.ExecContext(ctx, `INSERT INTO claims (review_key, review_url, claim, claimant, claim_date, rating,
	reviewer, review_date, lang, claim_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
			key, cr.ReviewURL, claim, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, terms)
		if err != nil {
			return fail(err)
		}
		if id, err = res.LastInsertId(); err != nil {
			return fail(err)
		}
	case err != nil:
		return fail(err)
	default:
		if _, err := tx.ExecContext(ctx, `INSERT INTO claims_fts (claims_fts, rowid, claim_terms) VALUES ('delete', ?, ?)`, id, old); err != nil {
			return fail(err)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE claims SET review_url = ?, claimant = ?, claim_date = ?, rating = ?, reviewer = ?,
	review_date = ?, lang = ?, claim_terms = ? WHERE id = ?`,
			cr.ReviewURL, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, terms, id); err != nil {
			return fail(err)
		}
	}
	if _, err := tx.ExecContext(ctx, `INSERT INTO claims_fts (rowid, claim_terms) VALUES (?, ?)`, id, terms); err != nil {
		return fail(err)
	}
	return nil
}

// MatchClaims finds archived claims that a post (or any text) repeats,
// best first. FTS5's bm25() over the claims' stems picks candidates; each
// is scored from 0 to 1 by how much of its claim the text holds, so that
// one threshold (ClaimMatchThreshold) means the same for every post: the
// idf-weighted share of the claim's distinct stems found in the text,
// scaled down when what is found weighs less than claimSaturation (a
// short claim matched on two common words is no match). Limit zero or
// less means 5; lang is the text's language (empty: English).
func (s *Store) MatchClaims(ctx context.Context, text, lang string, limit int) ([]ClaimMatch, error) {
	return s.matchClaims(ctx, text, lang, limit, claimSaturation)
}

func (s *Store) matchClaims(ctx context.Context, text, lang string, limit int, saturation float64) ([]ClaimMatch, error) {
	if limit <= 0 {
		limit = 5
	}
	q := parseQuery(text, normLang(lang))
	if len(q.distinct) == 0 {
		return nil, nil
	}
	rows, err := s.db.QueryContext(ctx, `
WITH best AS (SELECT rowid AS id, bm25(claims_fts) AS score FROM claims_fts WHERE claims_fts MATCH ? ORDER BY score LIMIT ?)
SELECT c.claim, c.claimant, c.claim_date, c.rating, c.reviewer, c.review_url, c.review_date, c.claim_terms
FROM best JOIN claims c ON c.id = best.id ORDER BY best.score`, orQuery(q.distinct), max(limit, claimCandidates))
	if err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	var out []ClaimMatch
	var terms [][]string
	for rows.Next() {
		var m ClaimMatch
		var claimDate, reviewDate sql.NullInt64
		var ts string
		if err := rows.Scan(&m.Claim, &m.Claimant, &claimDate, &m.Rating, &m.Reviewer, &m.ReviewURL, &reviewDate, &ts); err != nil {
			rows.Close()
			return nil, fmt.Errorf("match claims: %w", err)
		}
		if claimDate.Valid {
			m.ClaimDate = time.Unix(claimDate.Int64, 0).UTC()
		}
		if reviewDate.Valid {
			m.ReviewDate = time.Unix(reviewDate.Int64, 0).UTC()
		}
		out = append(out, m)
		terms = append(terms, strings.Fields(ts))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	idf, err := s.claimIDF(ctx, terms)
	if err != nil {
		return nil, err
	}
	for i := range out {
		have, all := coverage(terms[i], q.qtf, idf)
		if all > 0 {
			out[i].Score = have / all * min(1, have/saturation)
		}
	}
	// bm25 order breaks ties (the sort is stable).
	sort.SliceStable(out, func(i, j int) bool { return out[i].Score > out[j].Score })
	return out[:min(len(out), limit)], nil
}

// claimCandidates is how many bm25 candidates MatchClaims scores.
const claimCandidates = 20

// claimSaturation is the idf mass (about two rare words) a match needs
// to count fully; chosen with ClaimMatchThreshold.
const claimSaturation = 10.0

// ClaimMatchThreshold is the least MatchClaims score at which a post is
// taken to repeat an archived claim. It was chosen on half of the real
// tweet↔fact-check pairs of the benchmark and checked on the other half
// (TestClaimMatchThreshold), which the README reports.
const ClaimMatchThreshold = 0.9

// MatchingFactChecks is MatchClaims kept to the matches at or above
// ClaimMatchThreshold: the fact-checks a post repeats the claim of.
func (s *Store) MatchingFactChecks(ctx context.Context, text, lang string, limit int) ([]ClaimMatch, error) {
	ms, err := s.MatchClaims(ctx, text, lang, limit)
	if err != nil {
		return nil, err
	}
	var out []ClaimMatch
	for _, m := range ms {
		if m.Score >= ClaimMatchThreshold {
			out = append(out, m)
		}
	}
	return out, nil
}

// coverage returns the idf mass of the claim's distinct stems that the
// text holds, and of all of them.
func coverage(claim []string, text map[string]int, idf map[string]float64) (have, all float64) {
	seen := map[string]bool{}
	for _, t := range claim {
		if seen[t] {
			continue
		}
		seen[t] = true
		all += idf[t]
		if text[t] > 0 {
			have += idf[t]
		}
	}
	return have, all
}

// claimIDF returns the idf, among archived claims, of every stem in terms.
func (s *Store) claimIDF(ctx context.Context, terms [][]string) (map[string]float64, error) {
	var n float64
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM claims`).Scan(&n); err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	stmt, err := s.stmt(ctx, `SELECT count(*) FROM claims_fts WHERE claims_fts MATCH ?`)
	if err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	idf := map[string]float64{}
	for _, ts := range terms {
		for _, t := range ts {
			if _, ok := idf[t]; ok {
				continue
			}
			var df float64
			if err := stmt.QueryRowContext(ctx, quote(t)).Scan(&df); err != nil {
				return nil, fmt.Errorf("match claims: document frequency of %q: %w", t, err)
			}
			idf[t] = bm25IDF(n, df)
		}
	}
	return idf, nil
}
