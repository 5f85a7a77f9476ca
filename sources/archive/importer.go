package archive

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/musecheck/muse/sources"
	"github.com/musecheck/muse/sources/extract"
	"github.com/musecheck/muse/sources/fetch"
)

// ImportOptions says how Import reads what it is given.
type ImportOptions struct {
	// Fetcher fetches URL arguments (and archives the raw page when its
	// Store is this archive). Nil: URL arguments fail.
	Fetcher *fetch.Fetcher
	// Errors receives one line per item that could not be added; nil
	// discards them.
	Errors io.Writer
	// Progress, when set, is called with the number of items done (added
	// or failed) so far: after each file or URL, and after each batch of
	// JSONL records.
	Progress func(done int)
	// Merging, when set, is called as the postings rows are merged after
	// the import (PostgreSQL, see MergePostings), with the terms merged so
	// far and the terms to merge.
	Merging func(done, of int)
}

// batchSize is how many JSONL records share one transaction: large enough
// that commits cost little per record, small enough that progress moves and
// a failed commit loses little. On SQLite a transaction writes each of its
// terms' postings and count once, however many of its pages hold the term,
// so the writer's work a page falls as a batch grows: 2,000 records took
// about a quarter less of the writer's CPU than 1,000 (BenchmarkImportJSONL),
// and batchBytes keeps a batch of long pages small.
const batchSize = 2000

// batchBytes bounds a batch's records by their size as read, so a file
// of very long pages does not hold thousands of them in memory at once
// (a batch is being read while the one before it is written).
const batchBytes = 32 << 20

// ImportResult counts what Import did.
type ImportResult struct {
	Added, Failed int
	// Skipped counts the files in the folders walked that are not pages or
	// records by their name (notes.txt, photo.jpg); they are not errors.
	Skipped int
	// Merged is what merging the postings rows after the import did (on
	// PostgreSQL, after batches of JSONL records); MergeErr, set when it
	// failed, leaves the archive as the import left it, complete.
	Merged   MergeResult
	MergeErr error

	batchRows bool // a batch large enough to write postings rows of its own was stored
}

// Import adds each argument to the archive: an http(s) URL is fetched and
// extracted, an .html/.htm file extracted, a .jsonl/.ndjson file read as
// one {url,title,text,published,publisher} record a line, and a folder
// walked for all of those. A bad item is reported on o.Errors and the rest
// go on.
func (s *Store) Import(ctx context.Context, args []string, o ImportOptions) ImportResult {
	var res ImportResult
	fail := func(what string, err error) {
		res.Failed++
		if o.Errors != nil {
			fmt.Fprintf(o.Errors, "muse: archive add %s: %v\n", what, err)
		}
	}
	progress := func() {
		if o.Progress != nil {
			o.Progress(res.Added + res.Failed)
		}
	}
	for _, arg := range args {
		if ctx.Err() != nil {
			fail(arg, ctx.Err())
			continue
		}
		lower := strings.ToLower(arg)
		if strings.HasPrefix(lower, "http://") || strings.HasPrefix(lower, "https://") {
			if err := s.importURL(ctx, arg, o.Fetcher); err != nil {
				fail(arg, err)
			} else {
				res.Added++
			}
			progress()
			continue
		}
		fi, err := os.Stat(arg)
		if err != nil {
			fail(arg, err)
			continue
		}
		if !fi.IsDir() {
			s.importFile(ctx, arg, &res, fail, progress)
			continue
		}
		err = filepath.WalkDir(arg, func(p string, d fs.DirEntry, err error) error {
			if err != nil {
				fail(p, err)
				return nil
			}
			switch {
			case d.IsDir():
			case importable(p):
				s.importFile(ctx, p, &res, fail, progress)
			default:
				res.Skipped++
			}
			return ctx.Err()
		})
		if err != nil {
			fail(arg, err)
		}
	}
	// An import's batches leave a term a small row each; once a term has
	// many, a search reads them all (PostgreSQL).
	if res.batchRows && s.postgres {
		res.Merged, res.MergeErr = s.MergePostings(ctx, nil, o.Merging)
	}
	return res
}

func importable(p string) bool {
	switch kind(p) {
	case ".html", ".htm", ".html.gz", ".htm.gz", ".jsonl", ".ndjson":
		return true
	}
	return false
}

// kind is a file's extension in lower case, with a compressed page's two
// (".html.gz").
func kind(p string) string {
	ext := strings.ToLower(filepath.Ext(p))
	if ext == ".gz" {
		ext = strings.ToLower(filepath.Ext(strings.TrimSuffix(p, filepath.Ext(p)))) + ext
	}
	return ext
}

func (s *Store) importFile(ctx context.Context, path string, res *ImportResult, fail func(string, error), progress func()) {
	defer progress()
	switch kind(path) {
	case ".jsonl", ".ndjson":
		s.importJSONL(ctx, path, res, fail, progress)
	case ".html", ".htm", ".html.gz", ".htm.gz":
		a, err := extract.Options{}.ExtractFile(path, "")
		if err == nil {
			err = s.addArticle(ctx, a, "")
		}
		if err != nil {
			fail(path, err)
			return
		}
		res.Added++
	default:
		fail(path, errors.New("not an HTML (.html, .htm, .html.gz) or JSONL (.jsonl, .ndjson) file"))
	}
}

func (s *Store) importURL(ctx context.Context, rawURL string, f *fetch.Fetcher) error {
	if f == nil {
		return errors.New("fetching is not available here")
	}
	p, err := f.Fetch(ctx, rawURL)
	if err != nil {
		return err
	}
	a, err := extract.Extract(p.Body, p.FinalURL)
	if err != nil {
		return err
	}
	return s.addArticle(ctx, a, p.FinalURL)
}

// addArticle archives an extracted article under its canonical URL, else
// the URL it was read from.
func (s *Store) addArticle(ctx context.Context, a *extract.Article, pageURL string) error {
	u := a.CanonicalURL
	if u == "" {
		u = a.URL
	}
	if u == "" {
		u = pageURL
	}
	if u == "" {
		return errors.New("the page names no address of its own (no absolute canonical link or og:url); give its URL instead")
	}
	pub := a.Publisher
	if pub == "" {
		pub = a.SiteName
	}
	if err := s.Add(ctx, Doc{URL: u, Title: a.Title, Text: a.Text, Publisher: pub, Published: a.Published, Language: a.Language}); err != nil {
		return err
	}
	// A fact-check's ClaimReview records name the page they came from when
	// they name none themselves.
	var crs []sources.ClaimReview
	for _, cr := range a.ClaimReviews {
		if strings.TrimSpace(cr.Claim) == "" {
			continue
		}
		if cr.ReviewURL == "" {
			cr.ReviewURL = u
		}
		crs = append(crs, cr)
	}
	if len(crs) == 0 {
		return nil
	}
	return s.AddClaimReviews(ctx, crs, a.Language)
}

// record is one JSONL line.
type record struct {
	URL       string `json:"url"`
	Title     string `json:"title"`
	Text      string `json:"text"`
	Published string `json:"published"`
	Publisher string `json:"publisher"`
	Language  string `json:"language"`
}

func (s *Store) importJSONL(ctx context.Context, path string, res *ImportResult, fail func(string, error), progress func()) {
	f, err := os.Open(path)
	if err != nil {
		fail(path, err)
		return
	}
	defer f.Close()
	// Reading, decoding and stemming the next batch runs beside the writing
	// of this one: on two cores it nearly halves an import.
	batches := make(chan lineBatch, 1)
	var readErr error
	go func() {
		defer close(batches)
		readErr = s.readJSONL(ctx, f, path, batches)
	}()
	for batch := range batches {
		var rows []lineDoc
		for _, d := range batch.docs {
			if d.err != nil {
				fail(d.where, d.err)
			} else {
				rows = append(rows, d)
			}
		}
		if len(rows) > 0 {
			s.addBatch(ctx, rows, batch.dfs, res, fail)
		}
		progress()
	}
	if readErr != nil {
		fail(path, fmt.Errorf("read: %w", readErr))
	}
}

// readJSONL sends the records of r in batches of batchSize, each checked
// and stemmed or carrying its error.
func (s *Store) readJSONL(ctx context.Context, r io.Reader, path string, out chan<- lineBatch) error {
	var batch []lineDoc
	var size int
	send := func() bool {
		size = 0
		rows := make([]docRow, 0, len(batch))
		var at []int
		for i, d := range batch {
			if d.err == nil {
				rows = append(rows, d.row)
				at = append(at, i)
			}
		}
		tb := s.newDFs(rows)
		for k, i := range at {
			batch[i].row = rows[k] // with its sequences
		}
		select {
		case out <- lineBatch{docs: batch, dfs: tb}:
			batch = nil
			return true
		case <-ctx.Done():
			return false
		}
	}
	br := bufio.NewReaderSize(r, 64*1024)
	for line := 1; ; line++ {
		raw, n, rerr := readLine(br, maxRecordBytes)
		if rerr != nil && rerr != io.EOF {
			return rerr
		}
		d := lineDoc{where: fmt.Sprintf("%s:%d", path, line)}
		b := bytes.TrimSpace(raw)
		switch {
		case n > maxRecordBytes:
			// Skipped without being held in memory; the lines after it
			// are read as usual.
			d.err = fmt.Errorf("the record is %d bytes, over the limit of %d MiB; skipped", n, maxRecordBytes>>20)
		case len(b) == 0:
			if rerr == io.EOF {
				break
			}
			continue
		default:
			d.row, d.err = s.decodeRecord(b)
			size += len(b)
		}
		if n > maxRecordBytes || len(b) > 0 {
			if batch = append(batch, d); (len(batch) == batchSize || size >= batchBytes) && !send() {
				return ctx.Err()
			}
		}
		if rerr == io.EOF {
			break
		}
	}
	if len(batch) > 0 && !send() {
		return ctx.Err()
	}
	return nil
}

// maxRecordBytes is the largest JSONL record read; a longer line is
// skipped with an error and the import goes on.
const maxRecordBytes = 64 << 20

// readLine reads one line of br, without its newline: its bytes when it is
// at most max long, and its length n either way (a longer line is read
// through and dropped, never held whole). err is io.EOF after the last
// line.
func readLine(br *bufio.Reader, max int) (line []byte, n int, err error) {
	for {
		chunk, err := br.ReadSlice('\n')
		n += len(chunk)
		if n <= max+1 {
			line = append(line, chunk...)
		} else {
			line = nil
		}
		if err == bufio.ErrBufferFull {
			continue
		}
		if len(line) > 0 && line[len(line)-1] == '\n' {
			line = line[:len(line)-1]
			n--
		}
		return line, n, err
	}
}

// decodeRecord reads one JSONL record into a row.
func (s *Store) decodeRecord(b []byte) (docRow, error) {
	var r record
	if err := json.Unmarshal(b, &r); err != nil {
		return docRow{}, fmt.Errorf("decode JSON record: %w", err)
	}
	pub, err := parseDate(r.Published)
	if err != nil {
		return docRow{}, err
	}
	return s.newRow(Doc{URL: r.URL, Title: r.Title, Text: r.Text, Publisher: r.Publisher, Published: pub, Language: r.Language})
}

// lineBatch is a batch of records, with newDFs of those that passed.
type lineBatch struct {
	docs []lineDoc
	dfs  termBatch
}

// lineDoc is a JSONL record, checked, waiting for its batch.
type lineDoc struct {
	where string
	row   docRow
	err   error
}

// addBatch stores a batch in one transaction through prepared statements.
// Records were checked when read, so the database refusing one means the
// database itself is in trouble (disk full, locked too long): the batch is
// rolled back and each of its records reported.
func (s *Store) addBatch(ctx context.Context, batch []lineDoc, dfs termBatch, res *ImportResult, fail func(string, error)) {
	rows := make([]docRow, len(batch))
	for i, d := range batch {
		rows[i] = d.row
	}
	err := s.write(ctx, dfs, func(w *docWriter) error {
		if err := w.importing(ctx); err != nil {
			return err
		}
		return w.putAll(ctx, rows)
	})
	if err != nil {
		for _, d := range batch {
			fail(d.where, fmt.Errorf("batch of %d records not stored: %w", len(batch), err))
		}
		return
	}
	res.Added += len(batch)
	res.batchRows = res.batchRows || len(batch) >= appendDocs
}

// parseDate accepts RFC 3339 and YYYY-MM-DD; empty means unknown.
func parseDate(s string) (time.Time, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return time.Time{}, nil
	}
	for _, layout := range []string{time.RFC3339Nano, "2006-01-02T15:04:05", "2006-01-02"} {
		if t, err := time.Parse(layout, s); err == nil {
			return t, nil
		}
	}
	return time.Time{}, fmt.Errorf("published %q: want RFC 3339 or YYYY-MM-DD", s)
}
