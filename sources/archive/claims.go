package archive

import (
	"bytes"
	"cmp"
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"os"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
	langs "github.com/musecheck/muse/sources/lang"
	"github.com/musecheck/muse/sources/search"
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
	// Lead is, when the archive holds the fact-check's own page and its
	// ranking of pages for the text puts that page first, how far ahead of
	// the second page: (first − second) / first of their scores, 0 to 1
	// (1 when no other page is found). Zero otherwise, and when it was not
	// asked (MatchingFactChecks asks it of the best match alone).
	Lead float64 `json:"lead,omitempty"`
}

// Repeats says whether the text is taken to repeat the match's claim:
// it holds enough of the claim (ClaimMatchThreshold), or it holds a fair
// part of it (ClaimLeadCoverage) and the archive's ranking of pages puts
// the fact-check's own page first by a clear lead (ClaimLeadThreshold).
func (m ClaimMatch) Repeats() bool {
	return m.repeats(ClaimLeadCoverage, ClaimLeadThreshold)
}

func (m ClaimMatch) repeats(coverage, lead float64) bool {
	return m.Score >= ClaimMatchThreshold || m.Lead > 0 && m.Score >= coverage && m.Lead >= lead
}

// AddClaimReviews stores fact-checks' ClaimReview records, each in the
// language it declares (cr.Language, kept with it), else in lang (empty:
// English), replacing a record with the same review URL and claim. Records
// without a claim are refused.
func (s *Store) AddClaimReviews(ctx context.Context, crs []sources.ClaimReview, lang string) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("archive claim reviews: %w", err)
	}
	defer tx.Rollback()
	var get *sql.Stmt // on SQLite: the stored record's look-up (PostgreSQL upserts)
	if !s.postgres {
		if get, err = tx.PrepareContext(ctx, `SELECT id, claim_terms FROM claims WHERE review_key = ? AND claim = ?`); err != nil {
			return fmt.Errorf("archive claim reviews: %w", err)
		}
		defer get.Close()
	}
	if s.postgres {
		// Two writers adding the same fact-checks lock their rows in one
		// order, so neither waits on the other while holding what the
		// other waits for (a record met twice keeps its last version).
		key := func(cr sources.ClaimReview) string {
			k, _ := sources.Canonical(cr.ReviewURL) // a bad URL fails in addClaim
			return k + "\x00" + strings.Join(strings.Fields(cr.Claim), " ")
		}
		crs = slices.Clone(crs)
		slices.SortStableFunc(crs, func(a, b sources.ClaimReview) int { return strings.Compare(key(a), key(b)) })
	}
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
	declared := langs.Normalise(cr.Language)
	lang = normLang(cmp.Or(declared, lang))
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
	if s.postgres {
		// One statement, so a writer adding the same new fact-check at
		// the same moment updates the row the other inserted rather than
		// failing on the unique key; tsv is a generated column.
		if _, err := tx.ExecContext(ctx, s.sql(`INSERT INTO claims (review_key, review_url, claim, claimant, claim_date, rating,
	reviewer, review_date, lang, in_language, claim_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT (review_key, claim) DO UPDATE SET review_url = excluded.review_url, claimant = excluded.claimant,
	claim_date = excluded.claim_date, rating = excluded.rating, reviewer = excluded.reviewer, review_date = excluded.review_date,
	lang = excluded.lang, in_language = excluded.in_language, claim_terms = excluded.claim_terms`),
			key, cr.ReviewURL, claim, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, declared, terms); err != nil {
			return fail(err)
		}
		return nil
	}
	var id int64
	var old string
	switch err := get.QueryRowContext(ctx, key, claim).Scan(&id, &old); {
	case errors.Is(err, sql.ErrNoRows):
		ins, err := tx.PrepareContext(ctx, s.sql(`INSERT INTO claims (review_key, review_url, claim, claimant, claim_date, rating,
	reviewer, review_date, lang, in_language, claim_terms) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`+returning(s.postgres)))
		if err != nil {
			return fail(err)
		}
		defer ins.Close()
		if id, err = insertID(ctx, ins, s.postgres,
			key, cr.ReviewURL, claim, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, declared, terms); err != nil {
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
	review_date = ?, lang = ?, in_language = ?, claim_terms = ? WHERE id = ?`),
			cr.ReviewURL, cr.Claimant, unix(cr.ClaimDate), cr.Rating, cr.Reviewer, unix(cr.ReviewDate), lang, declared, terms, id); err != nil {
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
// best first. FTS5's bm25() over the claims' stems picks candidates; each
// is scored from 0 to 1 by how much of its claim the text holds, so that
// one threshold (ClaimMatchThreshold) means the same for every post: the
// idf-weighted share of the claim's distinct stems found in the text,
// scaled down when fewer than claimSaturation of them are found (a short
// claim matched on one or two words is no match, however rare they are). Limit zero or
// less means 5; lang is the text's language (empty: English). Of two
// matches with the same score, one declared in lang comes first.
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
	query, match := `
WITH best AS (SELECT rowid AS id, bm25(claims_fts) AS score FROM claims_fts WHERE claims_fts MATCH ? ORDER BY score LIMIT ?)
SELECT c.claim, c.claimant, c.claim_date, c.rating, c.reviewer, c.review_url, c.review_date, c.in_language, c.claim_terms
FROM best JOIN claims c ON c.id = best.id ORDER BY best.score`, orQuery(q.distinct)
	if s.postgres {
		query, match = `
SELECT claim, claimant, claim_date, rating, reviewer, review_url, review_date, in_language, claim_terms
FROM claims, to_tsquery('simple', ?) q WHERE tsv @@ q ORDER BY ts_rank_cd(tsv, q) DESC, id LIMIT ?`, tsOr(q.distinct)
	}
	rows, err := s.query(ctx, s.sql(query), match, max(limit, claimCandidates))
	if err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	var out []ClaimMatch
	var terms [][]string
	for rows.Next() {
		var m ClaimMatch
		var claimDate, reviewDate sql.NullInt64
		var ts string
		if err := rows.Scan(&m.Claim, &m.Claimant, &claimDate, &m.Rating, &m.Reviewer, &m.ReviewURL, &reviewDate, &m.Language, &ts); err != nil {
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
		have, all, n := coverage(terms[i], q.qtf, idf)
		if all > 0 {
			out[i].Score = have / all * min(1, float64(n)/saturation)
		}
	}
	// A fact-check in the text's own language breaks a tie, then bm25
	// order (the sort is stable). lang is known only when given.
	own := func(m ClaimMatch) bool { return lang != "" && m.Language == normLang(lang) }
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Score != out[j].Score {
			return out[i].Score > out[j].Score
		}
		return own(out[i]) && !own(out[j])
	})
	return out[:min(len(out), limit)], nil
}

// claimCandidates is how many bm25 candidates MatchClaims scores.
const claimCandidates = 20

// claimSaturation is how many of a claim's distinct stems a text must hold
// for its share to count fully; chosen with ClaimMatchThreshold.
const claimSaturation = 3.0

// ClaimMatchThreshold is the least MatchClaims score at which a post is
// taken to repeat an archived claim. It was chosen on half of the real
// tweet↔fact-check pairs of the benchmark and checked on the other half
// (TestClaimMatchThreshold), which docs/benchmarks.md reports.
const ClaimMatchThreshold = 0.9

// ClaimLeadCoverage and ClaimLeadThreshold are the second way a post is
// taken to repeat a claim (ClaimMatch.Repeats): the least share of the
// claim the post must hold and the least lead of the fact-check's page in
// the archive's ranking of pages for the post. They were chosen, with the
// lexical threshold fixed, on the same tuning half as ClaimMatchThreshold
// and checked on the other half (TestClaimMatchThreshold); without the
// fact-checks' pages in the archive, the lexical threshold alone decides.
const (
	ClaimLeadCoverage  = 0.1
	ClaimLeadThreshold = 0.65
)

// dateSlack is how long after a post a fact-check dated to the day may be
// and still have been out before it.
const dateSlack = 24 * time.Hour

// MatchingFactChecks is MatchClaims kept to the matches that the text
// repeats the claim of (ClaimMatch.Repeats), best first, at most limit
// (zero or less: 5). posted is when the text was posted, when known and
// wanted (zero: not used): a fact-check reviewed more than a day after it
// is then no match — a repeat repeats a claim already checked. A check
// that looks for later debunks as well passes zero.
func (s *Store) MatchingFactChecks(ctx context.Context, text, lang string, limit int, posted time.Time) ([]ClaimMatch, error) {
	if limit <= 0 {
		limit = 5
	}
	ms, err := s.repeatCandidates(ctx, text, lang, posted, ClaimLeadCoverage)
	if err != nil {
		return nil, err
	}
	var out []ClaimMatch
	for _, m := range ms {
		if m.Repeats() && len(out) < limit {
			out = append(out, m)
		}
	}
	return out, nil
}

// repeatCandidates is MatchClaims' candidates, those reviewed more than a
// day after posted left out when posted is known, the best one's Lead
// filled when its Score is at least leadFrom but short of
// ClaimMatchThreshold (where the lead could decide).
func (s *Store) repeatCandidates(ctx context.Context, text, lang string, posted time.Time, leadFrom float64) ([]ClaimMatch, error) {
	ms, err := s.MatchClaims(ctx, text, lang, claimCandidates)
	if err != nil {
		return nil, err
	}
	if !posted.IsZero() {
		ms = slices.DeleteFunc(ms, func(m ClaimMatch) bool { return m.ReviewDate.After(posted.Add(dateSlack)) })
	}
	if len(ms) == 0 || ms[0].Score < leadFrom || ms[0].Score >= ClaimMatchThreshold {
		return ms, nil
	}
	if ms[0].Lead, err = s.pageLead(ctx, text, lang, ms[0].ReviewURL); err != nil {
		return nil, err
	}
	return ms, nil
}

// pageLead is the lead of the page at reviewURL in the archive's ranking
// of pages for text (ClaimMatch.Lead): 0 when another page comes first or
// the archive does not hold it. A search that fails for another reason
// than ctx's end gives no lead: the lexical match still decides.
func (s *Store) pageLead(ctx context.Context, text, lang string, reviewURL string) (float64, error) {
	want, err := sources.Canonical(reviewURL)
	if err != nil || reviewURL == "" {
		return 0, nil
	}
	// Without the page there is no lead: one look-up by the key, not a
	// search (an archive of fact-checks' claims alone is the usual case).
	var held int
	switch err := s.queryRow(ctx, s.sql(`SELECT 1 FROM docs WHERE url = ?`), want).Scan(&held); {
	case errors.Is(err, sql.ErrNoRows):
		return 0, nil
	case err != nil:
		return 0, fmt.Errorf("match claims: %w", err)
	}
	// The ranking is asked without the post's time, as the lead's
	// threshold was chosen: leaving later pages out, or taking the time
	// prior, would lengthen leads past what the threshold means.
	hits, err := s.Search(ctx, text, SearchOptions{Limit: 2, Language: lang})
	if err != nil {
		if ctx.Err() != nil {
			return 0, fmt.Errorf("match claims: %w", ctx.Err())
		}
		return 0, nil
	}
	if len(hits) == 0 || hits[0].Score <= 0 {
		return 0, nil
	}
	if first, err := sources.Canonical(hits[0].URL); err != nil || first != want {
		return 0, nil
	}
	second := 0.0
	if len(hits) > 1 {
		second = max(hits[1].Score, 0)
	}
	return (hits[0].Score - second) / hits[0].Score, nil
}

// coverage returns the idf mass of the claim's distinct stems that the
// text holds, and of all of them, and how many it holds.
func coverage(claim []string, text map[string]int, idf map[string]float64) (have, all float64, n int) {
	seen := map[string]bool{}
	for _, t := range claim {
		if seen[t] {
			continue
		}
		seen[t] = true
		all += idf[t]
		if text[t] > 0 {
			have += idf[t]
			n++
		}
	}
	return have, all, n
}

// claimIDF returns the idf, among archived claims, of every stem in terms.
// Document frequencies are remembered while the number of claims moves by
// no more than a hundredth, as the pages' are (postings): an idf moves too
// little to matter meanwhile, and triage of a feed asks about the same
// words post after post.
func (s *Store) claimIDF(ctx context.Context, terms [][]string) (map[string]float64, error) {
	var n float64
	if err := s.db.QueryRowContext(ctx, s.sql(`SELECT count(*) FROM claims`)).Scan(&n); err != nil {
		return nil, fmt.Errorf("match claims: %w", err)
	}
	dfQuery, operand := `SELECT count(*) FROM claims_fts WHERE claims_fts MATCH ?`, quote
	if s.postgres {
		dfQuery, operand = `SELECT count(*) FROM claims WHERE tsv @@ to_tsquery('simple', ?)`, tsQuote
	}
	dfQuery = s.sql(dfQuery)
	idf := map[string]float64{}
	read := map[string]float64{}
	for _, ts := range terms {
		for _, t := range ts {
			if _, ok := idf[t]; ok {
				continue
			}
			s.claimDFs.mu.Lock()
			e, ok := s.claimDFs.m[t]
			s.claimDFs.mu.Unlock()
			if ok && math.Abs(n-e.n) <= e.n/100 {
				idf[t] = bm25IDF(n, e.df)
				continue
			}
			var df float64
			if err := s.queryRow(ctx, dfQuery, operand(t)).Scan(&df); err != nil {
				return nil, fmt.Errorf("match claims: document frequency of %q: %w", t, err)
			}
			idf[t] = bm25IDF(n, df)
			read[t] = df
		}
	}
	if len(read) > 0 {
		s.claimDFs.mu.Lock()
		if s.claimDFs.m == nil || len(s.claimDFs.m)+len(read) > dfCacheSize {
			s.claimDFs.m = make(map[string]dfEntry, 1024)
		}
		for t, df := range read {
			s.claimDFs.m[t] = dfEntry{df: df, n: n}
		}
		s.claimDFs.mu.Unlock()
	}
	return idf, nil
}

// ImportClaimReviews adds the fact-checks in each argument, a file or an
// http(s) URL (fetched through o.Fetcher), in the forms fact-checkers
// publish them: an HTML page with ClaimReview markup (JSON-LD or
// microdata; the page itself is archived too), a ClaimReview JSON-LD
// document or a DataFeed of them (the Data Commons fact-check feed), or a
// saved Google Fact Check Tools answer ({"claims": [...]}). Added counts
// claim reviews; an argument holding none is a failure.
func (s *Store) ImportClaimReviews(ctx context.Context, args []string, o ImportOptions) ImportResult {
	var res ImportResult
	for _, arg := range args {
		n, err := s.importClaimReviews(ctx, arg, o.Fetcher)
		res.Added += n
		if err != nil {
			res.Failed++
			if o.Errors != nil {
				fmt.Fprintf(o.Errors, "muse: archive add --claimreview %s: %v\n", arg, err)
			}
		}
		if o.Progress != nil {
			o.Progress(res.Added + res.Failed)
		}
	}
	return res
}

func (s *Store) importClaimReviews(ctx context.Context, arg string, f *fetch.Fetcher) (int, error) {
	var body []byte
	pageURL := ""
	if lower := strings.ToLower(arg); strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
		if f == nil {
			return 0, errors.New("fetching is not available here")
		}
		p, err := f.Fetch(ctx, arg)
		switch {
		case errors.Is(err, fetch.ErrNotHTML):
			// A feed or API answer is JSON, which Fetch (pages only)
			// refuses; the Fetcher's client reads it under the same guard.
			if body, err = getJSON(ctx, f, arg); err != nil {
				return 0, err
			}
		case err != nil:
			return 0, err
		default:
			body, pageURL = p.Body, p.FinalURL
		}
	} else {
		b, err := os.ReadFile(arg)
		if err != nil {
			return 0, err
		}
		body = b
	}
	trimmed := bytes.TrimLeft(body, " \t\r\n\ufeff")
	if len(trimmed) > 0 && (trimmed[0] == '{' || trimmed[0] == '[') {
		crs, err := claimReviewsJSON(trimmed)
		if err != nil {
			return 0, err
		}
		return s.addReviews(ctx, crs, pageURL)
	}
	a, err := extract.Extract(body, pageURL)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, cr := range a.ClaimReviews {
		if strings.TrimSpace(cr.Claim) != "" {
			n++
		}
	}
	switch {
	case n == 0:
		return 0, errors.New("no ClaimReview markup (JSON-LD or microdata) naming a claim on the page")
	case a.CanonicalURL == "" && a.URL == "" && pageURL == "":
		// A saved page that names no URL of its own: its reviews still
		// name theirs.
		return s.addReviews(ctx, a.ClaimReviews, "")
	}
	if err := s.addArticle(ctx, a, pageURL); err != nil {
		return 0, err
	}
	return n, nil
}

// claimReviewsJSON reads a Fact Check Tools answer or JSON-LD.
func claimReviewsJSON(b []byte) ([]sources.ClaimReview, error) {
	var probe struct {
		Claims json.RawMessage `json:"claims"`
	}
	if json.Unmarshal(b, &probe) == nil && len(probe.Claims) > 0 {
		return search.FactCheckReviews(b)
	}
	return extract.ClaimReviewsJSON(b)
}

// addReviews stores the reviews that name a claim; a review without a URL
// takes the document's, when it came from one.
func (s *Store) addReviews(ctx context.Context, crs []sources.ClaimReview, docURL string) (int, error) {
	var keep []sources.ClaimReview
	for _, cr := range crs {
		if strings.TrimSpace(cr.Claim) == "" {
			continue
		}
		cr.ReviewURL = cmp.Or(cr.ReviewURL, docURL)
		keep = append(keep, cr)
	}
	if len(keep) == 0 {
		return 0, errors.New("no ClaimReview with a claim found")
	}
	if err := s.AddClaimReviews(ctx, keep, ""); err != nil {
		return 0, err
	}
	return len(keep), nil
}

// getJSON reads a JSON document through f's guarded client.
func getJSON(ctx context.Context, f *fetch.Fetcher, u string) ([]byte, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	req.Header.Set("Accept", "application/json, application/ld+json")
	resp, err := f.Client().Do(req)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("fetch %s: %s", u, resp.Status)
	}
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return nil, fmt.Errorf("fetch %s: %w", u, err)
	}
	return b, nil
}
