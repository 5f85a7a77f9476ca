package images

import (
	"bytes"
	"context"
	"encoding/base64"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"net/http"
	"net/http/httptest"
	"net/url"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/musecheck/muse/sources/fetch"
	"github.com/musecheck/muse/sources/images/imagetest"
)

func writeFile(t *testing.T, name string, data []byte) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), name)
	if err := os.WriteFile(p, data, 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func hashOf(t *testing.T, img image.Image) uint64 {
	t.Helper()
	h, err := pHash(img)
	if err != nil {
		t.Fatal(err)
	}
	return h
}

func TestLoadFormats(t *testing.T) {
	ctx := context.Background()
	want := hashOf(t, imagetest.Scene(0, 320, 240))
	pngData := imagetest.PNG(t, imagetest.Scene(0, 320, 240))
	jpegData := imagetest.JPEG(t, imagetest.Scene(0, 320, 240), 85)
	gifData := imagetest.GIF(t, imagetest.Scene(0, 320, 240), imagetest.Scene(1, 320, 240))
	webpLossy, err := os.ReadFile("testdata/scene0.webp")
	if err != nil {
		t.Fatal(err)
	}
	webpLossless, err := os.ReadFile("testdata/scene0-lossless.webp")
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name, format, mime string
		data               []byte
		sameData           bool // Data is the file as given
	}{
		{"scene.png", "png", "image/png", pngData, true},
		{"scene.jpg", "jpeg", "image/jpeg", jpegData, true},
		{"scene.gif", "gif", "image/png", gifData, false},
		{"scene.webp", "webp", "image/png", webpLossy, false},
		{"lossless.webp", "webp", "image/png", webpLossless, false},
		// The name lies; the content decides.
		{"really-a-png.jpg", "png", "image/png", pngData, true},
		{"no-extension", "jpeg", "image/jpeg", jpegData, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.name, tc.data)
			img, err := Load(ctx, path, Options{})
			if err != nil {
				t.Fatal(err)
			}
			if img.Format != tc.format || img.MIME != tc.mime || img.Width != 320 || img.Height != 240 || img.Source != path {
				t.Errorf("got %s %s %d×%d from %s", img.Format, img.MIME, img.Width, img.Height, img.Source)
			}
			if bytes.Equal(img.Data, tc.data) != tc.sameData {
				t.Errorf("Data is the original file: %v, want %v", !tc.sameData, tc.sameData)
			}
			// Data must itself be a valid image of the same picture.
			again, err := Decode("data", img.Data, Options{})
			if err != nil {
				t.Fatalf("Data does not decode: %v", err)
			}
			if again.Format+"" != strings.TrimPrefix(tc.mime, "image/") {
				t.Errorf("Data decodes as %s, MIME says %s", again.Format, tc.mime)
			}
			// GIF: the first frame (scene 0), not the second (scene 1).
			if s := Similarity(img.Hash, want); s < 0.9 {
				t.Errorf("similarity to the drawn scene = %.2f, want ≥ 0.9", s)
			}
		})
	}
}

func TestDataURL(t *testing.T) {
	img, err := Decode("x", imagetest.PNG(t, imagetest.Scene(1, 40, 30)), Options{})
	if err != nil {
		t.Fatal(err)
	}
	u := img.DataURL()
	rest, ok := strings.CutPrefix(u, "data:image/png;base64,")
	if !ok {
		t.Fatalf("DataURL = %.40s…", u)
	}
	b, err := base64.StdEncoding.DecodeString(rest)
	if err != nil || !bytes.Equal(b, img.Data) {
		t.Errorf("DataURL payload does not round-trip: %v", err)
	}
}

// hugePNG is a valid PNG signature and IHDR chunk claiming w×h pixels,
// with a correct CRC, followed by nothing: a decoder that trusted it would
// allocate w×h×4 bytes.
func hugePNG(w, h uint32) []byte {
	ihdr := make([]byte, 13)
	binary.BigEndian.PutUint32(ihdr[0:], w)
	binary.BigEndian.PutUint32(ihdr[4:], h)
	ihdr[8], ihdr[9] = 8, 6 // 8-bit RGBA
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	binary.Write(&b, binary.BigEndian, uint32(13))
	chunk := append([]byte("IHDR"), ihdr...)
	b.Write(chunk)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(chunk))
	return b.Bytes()
}

func TestBadImages(t *testing.T) {
	ctx := context.Background()
	pngData := imagetest.PNG(t, imagetest.Scene(0, 320, 240))
	jpegData := imagetest.JPEG(t, imagetest.Scene(0, 320, 240), 85)
	for _, tc := range []struct {
		name    string
		data    []byte
		opts    Options
		want    error
		message string
	}{
		{"truncated.png", pngData[:len(pngData)/2], Options{}, ErrCorrupt, "png"},
		{"truncated.jpg", jpegData[:len(jpegData)/2], Options{}, ErrCorrupt, "jpeg"},
		{"header-only.jpg", jpegData[:3], Options{}, ErrCorrupt, "jpeg header"},
		{"bomb.png", hugePNG(100000, 100000), Options{}, ErrTooLarge, "100000×100000 pixels"},
		{"wide.png", hugePNG(20000, 10), Options{}, ErrTooLarge, "20000×10"},
		{"zero.png", hugePNG(0, 10), Options{}, ErrCorrupt, ""},
		{"pixels.png", pngData, Options{MaxPixels: 320*240 - 1}, ErrTooLarge, "320×240"},
		{"bytes.png", pngData, Options{MaxBytes: 100}, ErrTooLarge, "limit 100"},
		{"page.png", []byte("<!DOCTYPE html><html><body>404 not found</body></html>"), Options{}, ErrNotImage, "text/html"},
		{"notes.jpg", []byte("just some words\n"), Options{}, ErrNotImage, "text/plain"},
		{"empty.gif", nil, Options{}, ErrNotImage, "empty"},
		{"icon.png", []byte("BM\x3a\x00\x00\x00\x00\x00\x00\x00\x36\x00\x00\x00\x28\x00"), Options{}, ErrNotImage, "image/bmp (unsupported"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			path := writeFile(t, tc.name, tc.data)
			_, err := Load(ctx, path, tc.opts)
			if !errors.Is(err, tc.want) {
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), tc.message) {
				t.Errorf("err = %q, want it to name %s and say %q", err, path, tc.message)
			}
		})
	}
	if _, err := Load(ctx, filepath.Join(t.TempDir(), "missing.png"), Options{}); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: %v", err)
	}
	if _, err := Load(ctx, t.TempDir(), Options{}); !errors.Is(err, ErrNotImage) {
		t.Errorf("directory: %v", err)
	}
}

func TestFileURL(t *testing.T) {
	path := writeFile(t, "a b.png", imagetest.PNG(t, imagetest.Scene(0, 64, 48)))
	img, err := Load(context.Background(), (&url.URL{Scheme: "file", Path: path}).String(), Options{})
	if err != nil || img.Width != 64 {
		t.Fatalf("file URL: %v", err)
	}
}

func imageServer(t *testing.T) *httptest.Server {
	jpegData := imagetest.JPEG(t, imagetest.Scene(0, 320, 240), 85)
	mux := http.NewServeMux()
	mux.HandleFunc("/media/photo.jpg", func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.Header.Get("Accept"), "image/") || r.Header.Get("User-Agent") == "" {
			t.Errorf("Accept %q, User-Agent %q", r.Header.Get("Accept"), r.Header.Get("User-Agent"))
		}
		w.Header().Set("Content-Type", "image/jpeg")
		w.Write(jpegData)
	})
	// Some CDNs serve every image as octet-stream; the content decides.
	mux.HandleFunc("/blob", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "application/octet-stream")
		w.Write(jpegData)
	})
	mux.HandleFunc("/short", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/media/photo.jpg", http.StatusFound)
	})
	mux.HandleFunc("/loop", func(w http.ResponseWriter, r *http.Request) {
		http.Redirect(w, r, "/loop", http.StatusFound)
	})
	mux.HandleFunc("/post/123", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/html; charset=utf-8")
		w.Write([]byte("<html><title>A post</title></html>"))
	})
	mux.HandleFunc("/big.jpg", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "image/jpeg")
		w.Header().Set("Content-Length", strconv.Itoa(50<<20))
		w.Write(jpegData)
	})
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return srv
}

func TestLoadURL(t *testing.T) {
	srv := imageServer(t)
	ctx := context.Background()
	open := Options{AllowPrivate: true}
	for _, path := range []string{"/media/photo.jpg", "/blob", "/short"} {
		img, err := Load(ctx, srv.URL+path, open)
		if err != nil {
			t.Fatalf("%s: %v", path, err)
		}
		if img.Format != "jpeg" || img.Width != 320 || img.Source != srv.URL+path {
			t.Errorf("%s: %+v", path, img)
		}
	}
	for path, want := range map[string]error{
		"/post/123": ErrNotImage,
		"/big.jpg":  ErrTooLarge,
		"/loop":     fetch.ErrRedirects,
	} {
		_, err := Load(ctx, srv.URL+path, open)
		if !errors.Is(err, want) || !strings.Contains(err.Error(), srv.URL+path) {
			t.Errorf("%s: err = %v, want %v naming the URL", path, err, want)
		}
	}
	_, err := Load(ctx, srv.URL+"/gone.png", open)
	var se *fetch.StatusError
	if !errors.As(err, &se) || se.Code != 404 {
		t.Errorf("404: err = %v", err)
	}
	_, err = Load(ctx, srv.URL+"/post/123", open)
	if err == nil || !strings.Contains(err.Error(), "HTML page") {
		t.Errorf("page URL: err = %v, want it to say the URL is a page", err)
	}
}

func TestLoadURLRefusesPrivateAddresses(t *testing.T) {
	srv := imageServer(t)
	_, err := Load(context.Background(), srv.URL+"/media/photo.jpg", Options{})
	var ae *fetch.AddressError
	if !errors.Is(err, fetch.ErrPrivateAddress) || !errors.As(err, &ae) || ae.Kind != "loopback" {
		t.Fatalf("err = %v, want loopback refused", err)
	}
	// Through a proxy the target is checked before the request.
	proxyURL, _ := url.Parse(srv.URL)
	for _, target := range []string{"http://127.0.0.1:9/x.png", "http://localhost/x.png", "http://[::1]/x.png", "http://10.1.2.3/x.png"} {
		_, err := Load(context.Background(), target, Options{Proxy: http.ProxyURL(proxyURL)})
		if !errors.Is(err, fetch.ErrPrivateAddress) {
			t.Errorf("%s through proxy: err = %v, want refused", target, err)
		}
	}
	if _, err := Load(context.Background(), "https:///x.png", Options{}); !errors.Is(err, fetch.ErrBadURL) {
		t.Errorf("no host: %v", err)
	}
}

func TestSimilarity(t *testing.T) {
	base := hashOf(t, imagetest.Scene(0, 320, 240))
	jpegged, err := Decode("q40", imagetest.JPEG(t, imagetest.Scene(0, 320, 240), 40), Options{})
	if err != nil {
		t.Fatal(err)
	}
	for name, h := range map[string]uint64{
		"JPEG quality 40":  jpegged.Hash,
		"drawn at 800×600": hashOf(t, imagetest.Scene(0, 800, 600)),
		"drawn at 160×120": hashOf(t, imagetest.Scene(0, 160, 120)),
	} {
		if s := Similarity(base, h); s < 0.9 {
			t.Errorf("%s: similarity %.3f, want ≥ 0.85", name, s)
		}
	}
	full := imagetest.Scene(0, 320, 240)
	if s := Similarity(base, hashOf(t, full.SubImage(full.Rect.Inset(12)))); s < MatchThreshold {
		t.Errorf("trimmed by 12 px a side: similarity %.3f, want ≥ %.2f", s, MatchThreshold)
	}
	other := hashOf(t, imagetest.Scene(1, 320, 240))
	text := hashOf(t, imagetest.Text(t, []string{"Nothing to see here"}, 40))
	for name, h := range map[string]uint64{"other scene": other, "text card": text} {
		if s := Similarity(base, h); s >= MatchThreshold {
			t.Errorf("%s: similarity %.3f, want < %.2f", name, s, MatchThreshold)
		}
	}
	if Similarity(base, base) != 1 || Distance(base, ^base) != 64 || Similarity(base, ^base) != 0 {
		t.Errorf("identity %v, complement %d", Similarity(base, base), Distance(base, ^base))
	}
	a, b := &Image{Hash: base}, &Image{Hash: other}
	if a.Similarity(b) != Similarity(base, other) {
		t.Error("method and function disagree")
	}
}

// A 16-bit PNG is 8 bytes a pixel decoded: a 7000×7000 one, a few hundred
// KB on the wire and under the pixel cap, is refused from its header
// before its pixels are decoded; a small one decodes.
func TestDecodedSizeFromHeader(t *testing.T) {
	bomb := imagetest.PNG16(t, 7000, 7000)
	if len(bomb) > 1<<20 {
		t.Fatalf("the bomb is %d bytes", len(bomb))
	}
	var before, after runtime.MemStats
	runtime.ReadMemStats(&before)
	_, err := Decode("bomb.png", bomb, Options{})
	runtime.ReadMemStats(&after)
	if !errors.Is(err, ErrTooLarge) || !strings.Contains(err.Error(), "7000×7000 pixels at 8 bytes a pixel take 373 MiB decoded, limit 128 MiB") {
		t.Errorf("bomb: %v", err)
	}
	if d := after.TotalAlloc - before.TotalAlloc; d > 16<<20 {
		t.Errorf("refusing the bomb allocated %d MB", d>>20)
	}
	small, err := Decode("small.png", imagetest.PNG16(t, 64, 48), Options{})
	if err != nil || small.Width != 64 {
		t.Errorf("small 16-bit PNG: %+v, %v", small, err)
	}
}
