package fetch

import (
	"bufio"
	"bytes"
	"compress/flate"
	"compress/gzip"
	"compress/zlib"
	"fmt"
	"io"
	"mime"
	"net/http"
	"strings"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
	"golang.org/x/net/html/charset"
)

// acceptEncoding is sent on every request; decoding is ours (the transport's
// transparent gzip is off) so the decoded size can be capped.
const acceptEncoding = "gzip, deflate, br"

// readBody reads a response body, undoing its Content-Encoding, and refuses
// bodies over limit bytes either on the wire or once decoded.
func readBody(resp *http.Response, limit int64) ([]byte, error) {
	encodings := contentEncodings(resp.Header)
	if len(encodings) == 0 && resp.ContentLength > limit {
		return nil, fmt.Errorf("%w: declared %d bytes, limit %d", ErrTooLarge, resp.ContentLength, limit)
	}
	wire := &countingReader{r: io.LimitReader(resp.Body, limit+1)}
	var r io.Reader = wire
	// Encodings are listed in the order they were applied; undo from the end.
	for i := len(encodings) - 1; i >= 0; i-- {
		dec, err := decoder(encodings[i], r)
		if err != nil {
			return nil, err
		}
		r = dec
	}
	body, err := io.ReadAll(io.LimitReader(r, limit+1))
	if wire.n > limit {
		return nil, fmt.Errorf("%w: more than %d bytes on the wire", ErrTooLarge, limit)
	}
	if int64(len(body)) > limit {
		if len(encodings) > 0 {
			return nil, fmt.Errorf("%w: %d compressed bytes (%s) expand past %d bytes (compression bomb?)",
				ErrTooLarge, wire.n, strings.Join(encodings, ", "), limit)
		}
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	if err != nil {
		if len(encodings) > 0 && wire.err == nil {
			return nil, fmt.Errorf("%w (%s): %v", ErrDecode, strings.Join(encodings, ", "), err)
		}
		return nil, fmt.Errorf("read body: %w", err)
	}
	return body, nil
}

func contentEncodings(h http.Header) []string {
	var out []string
	for _, v := range h.Values("Content-Encoding") {
		for _, e := range strings.Split(v, ",") {
			e = strings.ToLower(strings.TrimSpace(e))
			if e != "" && e != "identity" {
				out = append(out, e)
			}
		}
	}
	return out
}

func decoder(enc string, r io.Reader) (io.Reader, error) {
	switch enc {
	case "gzip", "x-gzip":
		zr, err := gzip.NewReader(r)
		if err != nil {
			return nil, fmt.Errorf("%w (gzip): %v", ErrDecode, err)
		}
		return zr, nil
	case "deflate":
		// "deflate" is zlib-wrapped by the spec, but some servers send a raw
		// deflate stream; the zlib header tells them apart.
		br := bufio.NewReader(r)
		hdr, _ := br.Peek(2)
		if len(hdr) == 2 && hdr[0]&0x0f == 8 && (uint16(hdr[0])<<8|uint16(hdr[1]))%31 == 0 {
			zr, err := zlib.NewReader(br)
			if err != nil {
				return nil, fmt.Errorf("%w (deflate): %v", ErrDecode, err)
			}
			return zr, nil
		}
		return flate.NewReader(br), nil
	case "br":
		return brotli.NewReader(r), nil
	}
	return nil, fmt.Errorf("%w: unsupported Content-Encoding %q", ErrDecode, enc)
}

// countingReader counts wire bytes and keeps the connection's own error, so
// a broken connection can be told from a broken compressed stream.
type countingReader struct {
	r   io.Reader
	n   int64
	err error
}

func (c *countingReader) Read(p []byte) (int, error) {
	n, err := c.r.Read(p)
	c.n += int64(n)
	if err != nil && err != io.EOF {
		c.err = err
	}
	return n, err
}

// mediaType returns the lower-cased media type of a Content-Type header, ""
// when absent or unparsable.
func mediaType(contentType string) string {
	mt, _, err := mime.ParseMediaType(contentType)
	if err != nil {
		return ""
	}
	return strings.ToLower(mt)
}

// pdfType is fetched too: its text is extracted (sources/extract).
const pdfType = "application/pdf"

func isHTMLType(mt string) bool {
	return mt == "text/html" || mt == "application/xhtml+xml"
}

// mustSniff: types that say nothing about the content.
func mustSniff(mt string) bool {
	return mt == "" || mt == "application/octet-stream" || mt == "binary/octet-stream" || mt == "application/unknown"
}

// checkDeclaredType refuses a response by its header alone when it declares
// something that is certainly not a page, before the body is read.
func checkDeclaredType(contentType string) error {
	mt := mediaType(contentType)
	if isHTMLType(mt) || mustSniff(mt) || mt == pdfType {
		return nil
	}
	return fmt.Errorf("%w: content type %s", ErrNotHTML, mt)
}

// checkContent looks at the body itself: an undeclared type must sniff as
// HTML or PDF, a declared HTML page must not be binary, and a declared PDF
// must be one.
func checkContent(contentType string, body []byte) (string, error) {
	mt := mediaType(contentType)
	sniffed := mediaType(http.DetectContentType(body))
	if mt == pdfType || (mustSniff(mt) && sniffed == pdfType) {
		// Official reports are often PDFs: the document goes to extraction
		// as served, if it is one.
		if !bytes.Contains(body[:min(len(body), 1024)], []byte("%PDF-")) {
			return "", fmt.Errorf("%w: declared %s but content looks like %s", ErrNotHTML, pdfType, sniffed)
		}
		return pdfType, nil
	}
	if mustSniff(mt) {
		if sniffed != "text/html" {
			return "", fmt.Errorf("%w: content type %q, content looks like %s", ErrNotHTML, contentType, sniffed)
		}
		return sniffed, nil
	}
	if !strings.HasPrefix(sniffed, "text/") && sniffed != "application/xml" {
		return "", fmt.Errorf("%w: declared %s but content looks like %s", ErrNotHTML, mt, sniffed)
	}
	return mt, nil
}

// ToUTF8 converts an HTML page to UTF-8 and names the charset it was in:
// the charset in the Content-Type header (contentType may be ""), then a
// BOM or <meta charset>, then a sniff. Invalid sequences become U+FFFD; a
// text that is mostly invalid is ErrCharset. Fetch uses it on every page;
// saved pages read from disk go through it too (sources/extract).
func ToUTF8(body []byte, contentType string) ([]byte, string, error) {
	enc, name, certain := charset.DetermineEncoding(body, contentType)
	// DetermineEncoding judges UTF-8 from the first 1024 bytes only and
	// otherwise falls back to windows-1252, which garbles UTF-8 pages whose
	// first non-ASCII byte comes later. Valid UTF-8 with high bytes is
	// almost never windows-1252 text.
	if !certain && name == "windows-1252" && utf8.Valid(body) {
		return body, "utf-8", nil
	}
	var out []byte
	if name == "utf-8" {
		out = body
	} else {
		var err error
		out, err = enc.NewDecoder().Bytes(body)
		if err != nil {
			return nil, name, fmt.Errorf("%w: decode %s: %v", ErrCharset, name, err)
		}
	}
	valid := utf8.Valid(out)
	if !valid || bytes.Contains(out, []byte("\uFFFD")) {
		// A few bad bytes are common and harmless; a text that is mostly
		// undecodable is not a page in this charset at all.
		bad, nonASCII := undecodable(out)
		if bad >= 8 && bad*2 > nonASCII {
			return nil, name, fmt.Errorf("%w: %d of %d non-ASCII characters are not valid %s", ErrCharset, bad, nonASCII, name)
		}
	}
	if !valid {
		out = bytes.ToValidUTF8(out, []byte("\uFFFD"))
	}
	return out, name, nil
}

// undecodable counts invalid UTF-8 sequences and U+FFFD (what decoders put
// in place of bytes they cannot map) among the non-ASCII runes of b; the
// ASCII markup says nothing about whether the charset fits.
func undecodable(b []byte) (bad, nonASCII int) {
	for len(b) > 0 {
		r, n := utf8.DecodeRune(b)
		b = b[n:]
		if r < utf8.RuneSelf {
			continue
		}
		if r == utf8.RuneError {
			bad++
		}
		nonASCII++
	}
	return bad, nonASCII
}
