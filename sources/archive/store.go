// Package archive keeps every page muse reads, and every document the user
// adds, in a local SQLite database with an inverted index of their stems
// (postings.go; or in a newsroom's PostgreSQL, see postgres.go), so that
// later checks can find
// fact-checks and articles already seen without asking the web again.
//
// Several muse processes may open the same database at once: it runs in WAL
// mode with a busy timeout, and every write transaction begins IMMEDIATE so
// that writers queue on the database lock instead of failing with
// SQLITE_BUSY when a read lock cannot be upgraded.
package archive

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/musecheck/muse/sources/pgdb"
	"github.com/musecheck/muse/sources/sqlitedb"
)

// Options configures an archive.
type Options struct {
	// Path is the database file. The caller passes
	// $XDG_DATA_HOME/muse/archive.db; missing directories are created. A
	// postgres:// URL keeps the archive in that database instead (tables
	// archive_*), shared by a newsroom's processes.
	Path string
}

// Store is an open archive. It is safe for concurrent use by several
// goroutines, and several processes may open the same file.
type Store struct {
	db       *sql.DB
	pool     *pgxpool.Pool // on PostgreSQL: the pool db runs on
	postgres bool
	path     string // the file, or the database URL without its password
	now      func() time.Time
	terms    termCache
	dfs      dfCache
	claimDFs dfCache   // claims_fts's document frequencies, as dfs for docs
	stmts    sync.Map  // query text → *sql.Stmt, see stmt
	ids      idCache   // SQLite: docs_terms ids already read or written
	heads    headCache // SQLite: the last blocks of terms' postings, as of a version
	vocabMu  sync.Mutex
	vocab    *vocab // PostgreSQL: the ids its searches give stems (vocabulary)
}

// busyTimeout is how long a connection waits for another writer (in this
// or another process) before giving up with SQLITE_BUSY. Writes are short
// single-document transactions, so waiting this long means something is
// wrong rather than merely busy.
const busyTimeout = 30 * time.Second

// Open opens (creating when needed) the archive database at path, switches
// it to WAL mode and brings its schema up to date.
func Open(ctx context.Context, path string) (*Store, error) {
	return OpenOptions(ctx, Options{Path: path})
}

// OpenOptions is Open with an Options struct, for callers that fill one
// from configuration.
func OpenOptions(ctx context.Context, o Options) (*Store, error) {
	if o.Path == "" {
		return nil, errors.New("open archive: no database path given")
	}
	if pgdb.IsURL(o.Path) {
		s, err := openPostgres(ctx, o.Path)
		if err != nil {
			return nil, err
		}
		s.now = time.Now
		return s, nil
	}
	// A larger page cache than SQLite's 2 MB default keeps the index pages
	// a search reads in memory from one search to the next. The file is
	// also mapped into memory, up to SQLite's ceiling of 2 GB (the whole
	// of a 100k-page archive), so a search's reads of its candidates'
	// rows are memory accesses, not a pread each: a fifth of their cost.
	// What that costs in memory is address space and the file's pages in
	// the OS's cache, which other processes share and the OS may drop, not
	// the heap; pages written go through the WAL as before. A write's
	// statements of many rows keep their statement journals (the pages
	// to restore should one fail half-way) in memory rather than in a
	// temporary file: a write to the file for every page they change.
	db, err := sqlitedb.Open(o.Path, sqlitedb.Options{Busy: busyTimeout,
		Pragmas: []string{"foreign_keys(ON)", "cache_size(-32768)", "mmap_size(2147418112)", "temp_store(MEMORY)"}})
	if err != nil {
		return nil, fmt.Errorf("open archive %s: %w", o.Path, err)
	}
	s := &Store{db: db, path: o.Path, now: time.Now}
	if err := s.migrate(ctx); err != nil {
		db.Close()
		return nil, fmt.Errorf("open archive %s: %w", o.Path, err)
	}
	return s, nil
}

// Close closes the database.
func (s *Store) Close() error {
	s.stmts.Range(func(_, st any) bool { st.(*sql.Stmt).Close(); return true })
	if s.pool != nil {
		defer s.pool.Close()
	}
	if err := s.db.Close(); err != nil {
		return fmt.Errorf("close archive %s: %w", s.path, err)
	}
	return nil
}

// Path returns the database file's path, or on PostgreSQL its URL with
// the password masked.
func (s *Store) Path() string { return s.path }

// leadWords is how many first words of a text make its lead, the field
// where news and fact-checks state their subject. The collection
// statistics keep the lead's mean length, so it is part of the schema.
const leadWords = 50

// A migration brings the schema from version i to i+1 (PRAGMA
// user_version): SQL, then Go code when the step needs it. Never edit a
// released step; append a new one.
type migration struct {
	sql   string
	after func(ctx context.Context, tx *sql.Tx) error
	sql2  string
}

var migrations = []migration{
	// 1: documents with an external-content FTS5 index kept in step by
	// triggers, and fetched pages with their raw bytes gzip-compressed.
	{sql: `
CREATE TABLE docs (
	id         INTEGER PRIMARY KEY,
	url        TEXT NOT NULL UNIQUE, -- sources.Canonical form
	orig_url   TEXT NOT NULL,        -- as given, to show and to fetch again
	title      TEXT NOT NULL DEFAULT '',
	text       TEXT NOT NULL DEFAULT '',
	publisher  TEXT NOT NULL DEFAULT '',
	published  INTEGER,              -- Unix seconds; NULL when unknown
	title_len  INTEGER NOT NULL DEFAULT 0, -- content words (see tokens), for BM25F length norms
	text_len   INTEGER NOT NULL DEFAULT 0,
	added_at   INTEGER NOT NULL,
	updated_at INTEGER NOT NULL
);
CREATE INDEX docs_published ON docs(published);
CREATE VIRTUAL TABLE docs_fts USING fts5(
	title, text, publisher,
	content='docs', content_rowid='id',
	tokenize='porter unicode61 remove_diacritics 2'
);
CREATE TRIGGER docs_ai AFTER INSERT ON docs BEGIN
	INSERT INTO docs_fts(rowid, title, text, publisher) VALUES (new.id, new.title, new.text, new.publisher);
END;
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
	INSERT INTO docs_fts(docs_fts, rowid, title, text, publisher) VALUES ('delete', old.id, old.title, old.text, old.publisher);
END;
CREATE TRIGGER docs_au AFTER UPDATE OF title, text, publisher ON docs BEGIN
	INSERT INTO docs_fts(docs_fts, rowid, title, text, publisher) VALUES ('delete', old.id, old.title, old.text, old.publisher);
	INSERT INTO docs_fts(rowid, title, text, publisher) VALUES (new.id, new.title, new.text, new.publisher);
END;
CREATE TABLE pages (
	url           TEXT PRIMARY KEY,  -- sources.Canonical of the requested URL
	request_url   TEXT NOT NULL,
	final_url     TEXT NOT NULL,
	final_key     TEXT NOT NULL,     -- sources.Canonical of final_url
	status        INTEGER NOT NULL,
	content_type  TEXT NOT NULL DEFAULT '',
	charset       TEXT NOT NULL DEFAULT '',
	raw_gz        BLOB,              -- gzip of the bytes as received
	body_gz       BLOB,              -- gzip of the UTF-8 body; NULL when identical to raw
	fetched_at    INTEGER NOT NULL,  -- Unix nanoseconds
	etag          TEXT NOT NULL DEFAULT '',
	last_modified TEXT NOT NULL DEFAULT ''
);
CREATE INDEX pages_final_key ON pages(final_key);
`},
	// 2: a language per document; the index holds the Snowball stems of
	// each field (computed in Go, stored beside the text so the second
	// stage reads them instead of cutting pages again); collection
	// statistics kept in docs_stats, so no search scans the table. The
	// index and the statistics are written by docWriter, in the same
	// transaction as the document, not by triggers (see docWriter), except
	// on delete.
	{sql: `
ALTER TABLE docs ADD COLUMN lang TEXT NOT NULL DEFAULT 'en';
ALTER TABLE docs ADD COLUMN title_terms TEXT NOT NULL DEFAULT '';     -- stems, space-separated (tokenStream)
ALTER TABLE docs ADD COLUMN text_terms TEXT NOT NULL DEFAULT '';
ALTER TABLE docs ADD COLUMN publisher_terms TEXT NOT NULL DEFAULT '';
DROP TRIGGER docs_ai;
DROP TRIGGER docs_ad;
DROP TRIGGER docs_au;
DROP TABLE docs_fts;
-- Covers the first stage's date filter, which must not read the wide rows.
CREATE INDEX docs_id_published ON docs(id, published);
`, after: stemAllDocs, sql2: `
CREATE VIRTUAL TABLE docs_fts USING fts5(
	title_terms, text_terms, publisher_terms,
	content='docs', content_rowid='id',
	tokenize='ascii'
);
INSERT INTO docs_fts(docs_fts) VALUES ('rebuild');
CREATE TABLE docs_stats (
	one       INTEGER PRIMARY KEY CHECK (one = 1),
	version   INTEGER NOT NULL, -- moved by every write, so caches know when to forget
	n         INTEGER NOT NULL, -- documents
	title_len INTEGER NOT NULL, -- sums of field lengths in content words
	lead_len  INTEGER NOT NULL, -- the first 50 (leadWords) words of text
	rest_len  INTEGER NOT NULL  -- the rest of text
);
INSERT INTO docs_stats SELECT 1, 0, count(*), coalesce(sum(title_len), 0),
	coalesce(sum(min(text_len, 50)), 0), coalesce(sum(max(text_len - 50, 0)), 0) FROM docs;
-- Deletes are rare and one at a time, so a trigger keeps the index and
-- the statistics whatever deletes the row; inserts and updates go through
-- docWriter.
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
	INSERT INTO docs_fts(docs_fts, rowid, title_terms, text_terms, publisher_terms)
	VALUES ('delete', old.id, old.title_terms, old.text_terms, old.publisher_terms);
	UPDATE docs_stats SET version = version + 1, n = n - 1, title_len = title_len - old.title_len,
		lead_len = lead_len - min(old.text_len, 50), rest_len = rest_len - max(old.text_len - 50, 0);
END;
`},
	// 3: fact-checks' ClaimReview records (claim, rating, reviewer, dates),
	// one per reviewed claim and review URL, with the claim's stems indexed
	// for claim matching. Written by AddClaimReviews only.
	{sql: `
CREATE TABLE claims (
	id          INTEGER PRIMARY KEY,
	review_key  TEXT NOT NULL,              -- sources.Canonical of review_url, or '' when the record has none
	review_url  TEXT NOT NULL DEFAULT '',
	claim       TEXT NOT NULL,
	claimant    TEXT NOT NULL DEFAULT '',
	claim_date  INTEGER,                    -- Unix seconds; NULL when unknown
	rating      TEXT NOT NULL DEFAULT '',
	reviewer    TEXT NOT NULL DEFAULT '',
	review_date INTEGER,
	lang        TEXT NOT NULL DEFAULT 'en',
	claim_terms TEXT NOT NULL DEFAULT '',   -- stems, as docs.text_terms
	UNIQUE (review_key, claim)
);
CREATE VIRTUAL TABLE claims_fts USING fts5(claim_terms, content='claims', content_rowid='id', tokenize='ascii');
`},
	// 4: a search reads from the index only which documents hold a term
	// (never where: the second stage reads the stems), so the index keeps
	// no positions (detail=none: a doclist is ids only, a fraction of the
	// size); titles get an index of their own, which a title's postings
	// are read from instead of filtering the whole index by column; and
	// each term's document count is a row of docs_terms, kept by docWriter
	// and Delete in the same transaction as the document, so a df is one
	// b-tree seek rather than a seek in each FTS5 segment.
	{sql: `
DROP TRIGGER docs_ad;
DROP TABLE docs_fts;
CREATE VIRTUAL TABLE docs_fts USING fts5(
	title_terms, text_terms, publisher_terms,
	content='docs', content_rowid='id',
	tokenize='ascii', detail=none
);
INSERT INTO docs_fts(docs_fts) VALUES ('rebuild');
CREATE VIRTUAL TABLE docs_title_fts USING fts5(
	title_terms,
	content='docs', content_rowid='id',
	tokenize='ascii', detail=none
);
INSERT INTO docs_title_fts(docs_title_fts) VALUES ('rebuild');
-- What the first stage reads of its candidates (dates, and the version
-- the rerank's cache is checked against) without the wide rows.
DROP INDEX docs_id_published;
CREATE INDEX docs_version ON docs(id, published, updated_at, title_len, text_len);
CREATE TABLE docs_terms (
	term TEXT PRIMARY KEY,
	df   INTEGER NOT NULL -- documents holding term in any field
) WITHOUT ROWID;
CREATE VIRTUAL TABLE temp.docs_vocab USING fts5vocab(main, docs_fts, 'row');
INSERT INTO docs_terms SELECT term, doc FROM temp.docs_vocab WHERE doc > 0;
DROP TABLE temp.docs_vocab;
-- Deletes go through Store.Delete, which moves docs_terms; the trigger
-- keeps both indexes and the statistics whatever deletes the row.
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
	INSERT INTO docs_fts(docs_fts, rowid, title_terms, text_terms, publisher_terms)
	VALUES ('delete', old.id, old.title_terms, old.text_terms, old.publisher_terms);
	INSERT INTO docs_title_fts(docs_title_fts, rowid, title_terms) VALUES ('delete', old.id, old.title_terms);
	UPDATE docs_stats SET version = version + 1, n = n - 1, title_len = title_len - old.title_len,
		lead_len = lead_len - min(old.text_len, 50), rest_len = rest_len - max(old.text_len - 50, 0);
END;
`},
	// 5: the language a ClaimReview record declares (inLanguage,
	// languageCode), as ISO 639-1; '' when it declares none (lang is the
	// one its claim is stemmed in). Written by AddClaimReviews only.
	{sql: `
ALTER TABLE claims ADD COLUMN in_language TEXT NOT NULL DEFAULT '';
`},
	// 6: what a search reads of its candidates (dates, the version the
	// rerank's cache is checked against, and the title's and text's
	// stems) in a narrow row of its own, keyed by the document's id: in
	// the wide row of docs the stems lie past the text, so reading them
	// walked its overflow pages. Kept by docWriter in the same transaction
	// as the document, and by the delete trigger; docs_version, which held
	// the dates, goes.
	{sql: `
CREATE TABLE docs_rank (
	id          INTEGER PRIMARY KEY, -- docs.id
	published   INTEGER,
	updated_at  INTEGER NOT NULL,
	title_len   INTEGER NOT NULL,
	text_len    INTEGER NOT NULL,
	title_terms TEXT NOT NULL,
	text_terms  TEXT NOT NULL
);
INSERT INTO docs_rank SELECT id, published, updated_at, title_len, text_len, title_terms, text_terms FROM docs ORDER BY id;
DROP INDEX docs_version;
DROP TRIGGER docs_ad;
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
	INSERT INTO docs_fts(docs_fts, rowid, title_terms, text_terms, publisher_terms)
	VALUES ('delete', old.id, old.title_terms, old.text_terms, old.publisher_terms);
	INSERT INTO docs_title_fts(docs_title_fts, rowid, title_terms) VALUES ('delete', old.id, old.title_terms);
	DELETE FROM docs_rank WHERE id = old.id;
	UPDATE docs_stats SET version = version + 1, n = n - 1, title_len = title_len - old.title_len,
		lead_len = lead_len - min(old.text_len, 50), rest_len = rest_len - max(old.text_len - 50, 0);
END;
`},
	// 7: each term of docs_terms gets an integer id (the commonest the
	// smallest), and docs_rank holds a candidate's stems as those ids,
	// varint-packed (appendIDs) rather than as text: a quarter of the
	// bytes a search reads of its candidates and an import writes, and
	// integers for the rerank to compare. Ids are for good: a term no
	// document holds any more keeps its row with df 0. Kept by docWriter;
	// docs_rank is altered in place, so 6's delete trigger stands.
	{sql: `
CREATE TABLE docs_terms_new (
	term TEXT PRIMARY KEY,
	id   INTEGER NOT NULL,
	df   INTEGER NOT NULL -- documents holding term in any field
) WITHOUT ROWID;
INSERT INTO docs_terms_new SELECT term, row_number() OVER (ORDER BY df DESC, term), df FROM docs_terms;
DROP TABLE docs_terms;
ALTER TABLE docs_terms_new RENAME TO docs_terms;
CREATE UNIQUE INDEX docs_terms_id ON docs_terms(id);
-- The title's and text's stems as docs_terms ids, varint-packed.
ALTER TABLE docs_rank ADD COLUMN title_ids BLOB NOT NULL DEFAULT x'';
ALTER TABLE docs_rank ADD COLUMN text_ids BLOB NOT NULL DEFAULT x'';
`, after: packRankRows, sql2: `
ALTER TABLE docs_rank DROP COLUMN title_terms;
ALTER TABLE docs_rank DROP COLUMN text_terms;
`},
	// 8: a term's postings are blocks of docs_postings (postings.go), no
	// longer FTS5's: the first stage read a common term's ids one step
	// of FTS5's cursor at a time, a third of a search. A block's rowid
	// packs the term's docs_terms id, the field (0: any; 1: the title) and
	// its first document id (postKey); its ids, ascending, are
	// delta-coded uvarints. Built from the stems the documents hold, and
	// kept by docWriter in the transaction that writes the documents; the
	// FTS5 tables and their delete trigger's lines go.
	{sql: `
CREATE TABLE docs_postings (
	block INTEGER PRIMARY KEY, -- postKey(term, field, the block's first id)
	hi    INTEGER NOT NULL,    -- its last id
	n     INTEGER NOT NULL,    -- its ids
	ids   BLOB NOT NULL
);
`, after: buildPostings, sql2: `
DROP TRIGGER docs_ad;
DROP TABLE docs_fts;
DROP TABLE docs_title_fts;
CREATE TRIGGER docs_ad AFTER DELETE ON docs BEGIN
	DELETE FROM docs_rank WHERE id = old.id;
	UPDATE docs_stats SET version = version + 1, n = n - 1, title_len = title_len - old.title_len,
		lead_len = lead_len - min(old.text_len, 50), rest_len = rest_len - max(old.text_len - 50, 0);
END;
`},
	// 9: the registrable domain of a document's address, and of a page's
	// address and final address (domainOf), indexed with the time of
	// addition or fetch, so a domain's first sighting is read from the
	// index (FirstSighting) instead of a scan of every address. Written
	// with the rows; added (when missing: SQLite has no ADD COLUMN IF NOT
	// EXISTS) and filled here for the rows already stored.
	{after: fillDomainsSQLite, sql2: `
CREATE INDEX IF NOT EXISTS docs_domain ON docs(domain, added_at);
CREATE INDEX IF NOT EXISTS pages_domain ON pages(domain, fetched_at);
CREATE INDEX IF NOT EXISTS pages_final_domain ON pages(final_domain, fetched_at);
`},
}

// stemAllDocs fills the stem columns (and the lengths, counted the same
// way) of the documents a version-1 archive holds.
func stemAllDocs(ctx context.Context, tx *sql.Tx) error {
	rows, err := tx.QueryContext(ctx, `SELECT id, lang, title, text, publisher FROM docs`)
	if err != nil {
		return err
	}
	type fields struct {
		id          int64
		title, text string
		pub, lang   string
	}
	var all []fields
	for rows.Next() {
		var f fields
		if err := rows.Scan(&f.id, &f.lang, &f.title, &f.text, &f.pub); err != nil {
			rows.Close()
			return err
		}
		all = append(all, f)
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return err
	}
	st, err := tx.PrepareContext(ctx, `UPDATE docs SET title_terms = ?, text_terms = ?, publisher_terms = ?, title_len = ?, text_len = ? WHERE id = ?`)
	if err != nil {
		return err
	}
	defer st.Close()
	for _, f := range all {
		lang := normLang(f.lang)
		title, nTitle := tokenStream(f.title, lang)
		text, nText := tokenStream(f.text, lang)
		pub, _ := tokenStream(f.pub, lang)
		if _, err := st.ExecContext(ctx, title, text, pub, nTitle, nText, f.id); err != nil {
			return err
		}
	}
	return nil
}

// migrate applies the missing migrations in one IMMEDIATE transaction, so a
// second process opening the same new database waits and then finds the
// schema already in place.
func (s *Store) migrate(ctx context.Context) error {
	var v int
	if err := s.db.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v == len(migrations) {
		return nil
	}
	tx, err := s.db.BeginTx(ctx, nil)
	if err != nil {
		return fmt.Errorf("begin migration: %w", err)
	}
	defer tx.Rollback()
	if err := tx.QueryRowContext(ctx, "PRAGMA user_version").Scan(&v); err != nil {
		return fmt.Errorf("read schema version: %w", err)
	}
	if v > len(migrations) {
		return fmt.Errorf("database schema version %d is newer than this muse understands (%d)", v, len(migrations))
	}
	for i := v; i < len(migrations); i++ {
		if err := migrations[i].run(ctx, tx); err != nil {
			return fmt.Errorf("migrate schema to version %d: %w", i+1, err)
		}
	}
	// PRAGMA takes no bound parameters; the value is our own integer.
	if _, err := tx.ExecContext(ctx, fmt.Sprintf("PRAGMA user_version = %d", len(migrations))); err != nil {
		return fmt.Errorf("record schema version: %w", err)
	}
	if err := tx.Commit(); err != nil {
		return fmt.Errorf("commit migration: %w", err)
	}
	return nil
}

func (m migration) run(ctx context.Context, tx *sql.Tx) error {
	if m.sql != "" {
		if _, err := tx.ExecContext(ctx, m.sql); err != nil {
			return err
		}
	}
	if m.after != nil {
		if err := m.after(ctx, tx); err != nil {
			return err
		}
	}
	if m.sql2 != "" {
		if _, err := tx.ExecContext(ctx, m.sql2); err != nil {
			return err
		}
	}
	return nil
}
