package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
)

// Doc is one archived document: a fetched and extracted page, a fact-check
// imported from a file, or anything else worth finding again.
type Doc struct {
	URL       string    `json:"url"`
	Title     string    `json:"title"`
	Text      string    `json:"text"`
	Publisher string    `json:"publisher,omitempty"`
	Published time.Time `json:"published,omitzero"` // zero when unknown
	// Language is the text's ISO 639-1 code; empty means English. Words
	// are stemmed in it, and a query finds them when asked in it.
	Language string `json:"language,omitempty"`
}

// ErrNotFound is returned when the archive holds nothing under a URL.
var ErrNotFound = errors.New("not in the archive")

// Add stores d, replacing the document archived under the same canonical
// URL (sources.Canonical). Empty fields of d keep what was stored before, so
// adding a page's extracted text never erases a title or date known from
// elsewhere.
func (s *Store) Add(ctx context.Context, d Doc) error {
	return s.add(ctx, s.db, d)
}

// AddAll stores many documents in one transaction, which is much faster
// than one Add each. It stops at the first bad document and stores none.
func (s *Store) AddAll(ctx context.Context, docs []Doc) error {
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("archive %d documents: %w", len(docs), err)
	}
	defer tx.Rollback()
	for _, d := range docs {
		if err := s.add(ctx, tx, d); err != nil {
			return err
		}
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("archive %d documents: %w", len(docs), err)
	}
	return nil
}

type execer interface {
	ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error)
}

// upsertDoc inserts a document or merges it into the one stored under the
// same canonical URL.
const upsertDoc = `
INSERT INTO docs (url, orig_url, title, text, publisher, published, added_at, updated_at,
	title_len, text_len, lang, title_terms, text_terms, publisher_terms)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
ON CONFLICT(url) DO UPDATE SET
	title           = COALESCE(NULLIF(excluded.title, ''), docs.title),
	title_len       = CASE excluded.title WHEN '' THEN docs.title_len ELSE excluded.title_len END,
	title_terms     = CASE excluded.title WHEN '' THEN docs.title_terms ELSE excluded.title_terms END,
	text            = COALESCE(NULLIF(excluded.text, ''), docs.text),
	text_len        = CASE excluded.text WHEN '' THEN docs.text_len ELSE excluded.text_len END,
	text_terms      = CASE excluded.text WHEN '' THEN docs.text_terms ELSE excluded.text_terms END,
	lang            = CASE excluded.text WHEN '' THEN docs.lang ELSE excluded.lang END,
	publisher       = COALESCE(NULLIF(excluded.publisher, ''), docs.publisher),
	publisher_terms = CASE excluded.publisher WHEN '' THEN docs.publisher_terms ELSE excluded.publisher_terms END,
	published       = COALESCE(excluded.published, docs.published),
	updated_at      = excluded.updated_at`

func (s *Store) add(ctx context.Context, db execer, d Doc) error {
	args, err := s.docArgs(d)
	if err != nil {
		return err
	}
	if _, err = db.ExecContext(ctx, upsertDoc, args...); err != nil {
		return fmt.Errorf("archive %s: %w", strings.TrimSpace(d.URL), err)
	}
	return nil
}

// docArgs checks d and returns upsertDoc's arguments for it.
func (s *Store) docArgs(d Doc) ([]any, error) {
	key, err := sources.Canonical(d.URL)
	if err != nil {
		return nil, fmt.Errorf("archive %q: %w", d.URL, err)
	}
	if strings.TrimSpace(d.Title) == "" && strings.TrimSpace(d.Text) == "" {
		// Trimmed: a URL read from the user's file may end in a newline
		// (Canonical accepts it), which would split Import's
		// one-line-per-item error report.
		return nil, fmt.Errorf("archive %s: document has neither title nor text", strings.TrimSpace(d.URL))
	}
	var pub any
	// Stored in whole seconds, so a time within the zero second would read
	// back as unknown; call it unknown here too.
	if !d.Published.Truncate(time.Second).IsZero() {
		pub = d.Published.Unix()
	}
	now := s.now().Unix()
	lang := normLang(d.Language)
	title, text, publisher := strings.TrimSpace(d.Title), strings.TrimSpace(d.Text), strings.TrimSpace(d.Publisher)
	titleTerms, nTitle := tokenStream(title, lang)
	textTerms, nText := tokenStream(text, lang)
	pubTerms, _ := tokenStream(publisher, lang)
	return []any{key, strings.TrimSpace(d.URL), title, text, publisher, pub, now, now,
		nTitle, nText, lang, titleTerms, textTerms, pubTerms}, nil
}

// Delete removes the document archived under url's canonical form; it
// reports whether there was one.
func (s *Store) Delete(ctx context.Context, rawURL string) (bool, error) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return false, fmt.Errorf("archive delete %q: %w", rawURL, err)
	}
	res, err := s.db.ExecContext(ctx, `DELETE FROM docs WHERE url = ?`, key)
	if err != nil {
		return false, fmt.Errorf("archive delete %s: %w", rawURL, err)
	}
	n, err := res.RowsAffected()
	return n > 0, err
}

// Get returns the document archived under url's canonical form, or an
// error wrapping ErrNotFound.
func (s *Store) Get(ctx context.Context, rawURL string) (Doc, error) {
	key, err := sources.Canonical(rawURL)
	if err != nil {
		return Doc{}, fmt.Errorf("archive lookup %q: %w", rawURL, err)
	}
	var d Doc
	var pub sql.NullInt64
	err = s.db.QueryRowContext(ctx,
		`SELECT orig_url, title, text, publisher, published, lang FROM docs WHERE url = ?`, key).
		Scan(&d.URL, &d.Title, &d.Text, &d.Publisher, &pub, &d.Language)
	if errors.Is(err, sql.ErrNoRows) {
		return Doc{}, fmt.Errorf("archive lookup %s: %w", rawURL, ErrNotFound)
	}
	if err != nil {
		return Doc{}, fmt.Errorf("archive lookup %s: %w", rawURL, err)
	}
	if pub.Valid {
		d.Published = time.Unix(pub.Int64, 0).UTC()
	}
	return d, nil
}

// Count returns how many documents the archive holds (from the collection
// statistics, without a scan).
func (s *Store) Count(ctx context.Context) (int, error) {
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT n FROM docs_stats`).Scan(&n); err != nil {
		return 0, fmt.Errorf("count archived documents: %w", err)
	}
	return n, nil
}
