package fetch

import (
	"bytes"
	"compress/gzip"
	"compress/zlib"
	"io"
	"net/http"
	"net/url"
	"testing"
	"unicode/utf8"

	"github.com/andybalholm/brotli"
)

// A page's bytes, Content-Type and Content-Encoding all come from whoever
// runs the server. readPage is everything the fetcher does with them after
// the connection (decompression with its cap, type sniffing, charset
// conversion), so it is fuzzed on its own, without sockets.

const fuzzLimit = 64 << 10

var fuzzEncodings = []string{"", "gzip", "deflate", "br", "gzip, br", "identity", "x-gzip", "compress"}

func FuzzReadPage(f *testing.F) {
	page := []byte("<!doctype html><html><head><meta charset=\"utf-8\"><title>Caf\u00e9</title></head><body><p>Stra\u00dfe \u2014 \u201cquoted\u201d</p></body></html>")
	latin1 := []byte("<html><head><meta charset=\"iso-8859-1\"></head><body><p>caf\xe9 cr\xe8me</p></body></html>")
	bomb := bytes.Repeat([]byte("A"), 4*fuzzLimit)
	for enc := range fuzzEncodings {
		f.Add(uint8(enc), "text/html; charset=utf-8", page)
	}
	for _, c := range []struct {
		enc  string
		ct   string
		body []byte
	}{
		{"gzip", "text/html", page}, {"deflate", "text/html", page}, {"br", "text/html", page},
		{"gzip", "text/html", bomb}, {"", "text/html; charset=windows-1252", latin1},
		{"", "", latin1}, {"", "text/html; charset=shift_jis", []byte("<p>\x82\xa0\x82\xa2</p>")},
		{"", "text/html; charset=utf-16le", []byte("<\x00p\x00>\x00h\x00i\x00")},
		{"", "application/octet-stream", []byte("\x89PNG\r\n\x1a\n\x00\x00")},
		{"", "text/html; charset=\"bogus", []byte("<p>\xff\xfe\xfd\xfc\xfb\xfa\xf9\xf8\xf7\xf6</p>")},
	} {
		body := c.body
		if c.enc != "" {
			body = pack(c.enc, body)
		}
		i := 0
		for j, e := range fuzzEncodings {
			if e == c.enc {
				i = j
			}
		}
		f.Add(uint8(i), c.ct, body)
	}
	fe := New(Options{MaxBytes: fuzzLimit})
	final, _ := url.Parse("http://news.example/story")
	f.Fuzz(func(t *testing.T, enc uint8, contentType string, body []byte) {
		h := http.Header{}
		h.Set("Content-Type", contentType)
		if e := fuzzEncodings[int(enc)%len(fuzzEncodings)]; e != "" {
			h.Set("Content-Encoding", e)
		}
		resp := &http.Response{StatusCode: 200, Status: "200 OK", Header: h,
			Body: io.NopCloser(bytes.NewReader(body)), ContentLength: int64(len(body))}
		p, err := fe.readPage(resp, final.String(), final)
		if err != nil {
			if p != nil {
				t.Fatal("page with an error")
			}
			return
		}
		if len(p.Raw) > fuzzLimit {
			t.Fatalf("%d bytes kept, limit %d", len(p.Raw), fuzzLimit)
		}
		if !utf8.Valid(p.Body) {
			t.Fatalf("body is not UTF-8 after conversion from %s", p.Charset)
		}
		if len(bytes.TrimSpace(p.Body)) == 0 {
			t.Fatal("empty page accepted")
		}
	})
}

// pack compresses a seed; writes to a bytes.Buffer cannot fail.
func pack(enc string, b []byte) []byte {
	var buf bytes.Buffer
	var w io.WriteCloser
	switch enc {
	case "gzip":
		w = gzip.NewWriter(&buf)
	case "deflate":
		w = zlib.NewWriter(&buf)
	default:
		w = brotli.NewWriter(&buf)
	}
	w.Write(b)
	w.Close()
	return buf.Bytes()
}
