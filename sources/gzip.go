package sources

import (
	"bytes"
	"compress/gzip"
	"io"
	"sync"
)

// gzipWriters keeps gzip writers for Gzip to reuse: a new one allocates
// and clears its compressor's tables (about 1 MiB) on its first write,
// which cost a queued check's page saves and snapshots a third of their
// compression's CPU.
var gzipWriters = sync.Pool{New: func() any { return gzip.NewWriter(nil) }}

// Gzip compresses b (gzip, the default level), for a page or text kept in
// a store.
func Gzip(b []byte) ([]byte, error) {
	var buf bytes.Buffer
	w := gzipWriters.Get().(*gzip.Writer)
	defer gzipWriters.Put(w)
	w.Reset(&buf)
	if _, err := w.Write(b); err != nil {
		return nil, err
	}
	if err := w.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// Gunzip decompresses what Gzip compressed; nil stays nil.
func Gunzip(b []byte) ([]byte, error) {
	if b == nil {
		return nil, nil
	}
	r, err := gzip.NewReader(bytes.NewReader(b))
	if err != nil {
		return nil, err
	}
	defer r.Close()
	return io.ReadAll(r)
}
