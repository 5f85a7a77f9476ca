package extract

import (
	"fmt"
	"io"
	"os"

	"github.com/musecheck/muse/sources/fetch"
)

// maxFileBytes bounds what ExtractFile reads, as the fetcher bounds a body.
const maxFileBytes = 32 << 20

// ExtractFile extracts an article from a saved HTML page or PDF document
// ("-" reads standard input). The page may be in any charset its markup
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
	b, err := io.ReadAll(io.LimitReader(r, maxFileBytes+1))
	if err != nil {
		return nil, fmt.Errorf("extract: read %s: %w", path, err)
	}
	if len(b) > maxFileBytes {
		return nil, fmt.Errorf("extract %s: larger than %d MiB, not a web page", path, maxFileBytes>>20)
	}
	return b, nil
}
