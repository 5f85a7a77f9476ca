package extract

import (
	"bufio"
	"compress/gzip"
	"fmt"
	"io"
	"os"

	"github.com/musecheck/muse/sources/fetch"
)

// maxFileBytes bounds what ExtractFile reads, as the fetcher bounds a body.
const maxFileBytes = 32 << 20

// ExtractFile extracts an article from a saved HTML page or PDF document
// ("-" reads standard input), gzip-compressed or not (page.html.gz). The page may be in any charset its markup
// declares or that can be guessed; it is converted to UTF-8 first, as the
// fetcher does for pages it downloads. pageURL is where the page came from
// and may be "".
func (o Options) ExtractFile(path, pageURL string) (*Article, error) {
	raw, err := readFile(path)
	if err != nil {
		return nil, err
	}
	if isPDF(raw) {
		a, err := o.ExtractPDF(raw, pageURL)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", path, err)
		}
		return a, nil
	}
	if err := checkHTML(raw, false); err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	page, _, err := fetch.ToUTF8(raw, "")
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	a, err := o.Extract(page, pageURL)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	return a, nil
}

func readFile(path string) ([]byte, error) {
	var r io.Reader
	if path == "-" {
		r = os.Stdin
	} else {
		f, err := os.Open(path)
		if err != nil {
			return nil, fmt.Errorf("extract: %w", err)
		}
		defer f.Close()
		if fi, err := f.Stat(); err == nil && fi.IsDir() {
			return nil, fmt.Errorf("extract %s: is a directory, not an HTML file", path)
		}
		r = f
	}
	r, err := gunzipped(r)
	if err != nil {
		return nil, fmt.Errorf("extract %s: %w", path, err)
	}
	// The bound applies to what the page is once decompressed, so a small
	// compressed file that unpacks to gigabytes is refused like a large one.
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if _, gz := r.(*gzip.Reader); gz && err != nil {
		return nil, fmt.Errorf("extract %s: a damaged or cut-off gzip file: %w", path, err)
	}
	if err != nil {
		return nil, fmt.Errorf("extract: read %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("extract %s: larger than %d MiB, not a web page", path, maxFileBytes>>20)
	}
	return b, nil
}

// gunzipped reads r through gzip when it starts with gzip's magic bytes,
// whatever the file is called, and as it is otherwise.
func gunzipped(r io.Reader) (io.Reader, error) {
	br := bufio.NewReader(r)
	if magic, err := br.Peek(2); err != nil || magic[0] != 0x1f || magic[1] != 0x8b {
		return br, nil
	}
	zr, err := gzip.NewReader(br)
	if err != nil {
		return nil, fmt.Errorf("not a readable gzip file: %w", err)
	}
	return zr, nil
}
