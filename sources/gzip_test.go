package sources

import (
	"bytes"
	"compress/gzip"
	"fmt"
	"io"
	"sync"
	"testing"
)

// Gzip's output is plain gzip (any reader reads it back), and writers
// reused by goroutines at once never mix their inputs.
func TestGzipRoundTrip(t *testing.T) {
	var wg sync.WaitGroup
	for g := range 8 {
		wg.Go(func() {
			for i := range 50 {
				in := bytes.Repeat([]byte(fmt.Sprintf("<p>page %d of writer %d</p>\n", i, g)), 1+i*37)
				z, err := Gzip(in)
				if err != nil {
					t.Error(err)
					return
				}
				r, err := gzip.NewReader(bytes.NewReader(z))
				if err != nil {
					t.Error(err)
					return
				}
				out, err := io.ReadAll(r)
				if err != nil || !bytes.Equal(out, in) {
					t.Errorf("writer %d page %d: read back %d bytes (%v), want %d", g, i, len(out), err, len(in))
					return
				}
				if back, err := Gunzip(z); err != nil || !bytes.Equal(back, in) {
					t.Errorf("Gunzip: %d bytes, %v", len(back), err)
				}
			}
		})
	}
	wg.Wait()
	if b, err := Gunzip(nil); b != nil || err != nil {
		t.Errorf("Gunzip(nil) = %v, %v; want nil, nil", b, err)
	}
	if _, err := Gunzip([]byte("not gzip")); err == nil {
		t.Error("Gunzip of bytes that are not gzip: no error")
	}
}
