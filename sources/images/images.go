// Package images loads the images of a post from files or URLs, refusing
// what is not an image or is too large to decode safely, reads the text in
// them with tesseract when it is installed, and compares them by perceptual
// hash.
//
// Formats are sniffed from the content, never from the file name or the
// Content-Type: PNG, JPEG, GIF (its first frame) and WebP. Dimensions are
// read from the header before any pixel is decoded, so a small file that
// claims to be 100000×100000 pixels (a decompression bomb) is refused
// without allocating its pixels.
package images

import (
	"bytes"
	"context"
	"encoding/base64"
	"errors"
	"fmt"
	"image"
	"image/color"
	"image/gif"
	"image/jpeg"
	"image/png"
	"io"
	"net/http"
	"net/url"
	"os"
	"strings"
	"time"

	"golang.org/x/image/webp"
)

// Errors Load can return, wrapped with the source and the detail, so a
// caller can tell why an image was skipped with errors.Is and still print
// err as a one-line reason.
var (
	// ErrNotImage: the content is not PNG, JPEG, GIF or WebP (whatever its
	// name or declared type says).
	ErrNotImage = errors.New("not a supported image")
	// ErrTooLarge: the file is over Options.MaxBytes, or its dimensions
	// are over Options.MaxSide or Options.MaxPixels.
	ErrTooLarge = errors.New("image too large")
	// ErrCorrupt: the header is an image's but the pixels cannot be decoded
	// (a truncated download, a damaged file).
	ErrCorrupt = errors.New("image cannot be decoded")
)

// Options bounds what Load accepts and says how URLs are fetched. The zero
// value is safe: every zero field takes the default given beside it.
type Options struct {
	// MaxBytes caps the encoded file, read from disk or the network.
	// Default 20 MiB, the most OpenAI-compatible vision APIs accept.
	MaxBytes int64
	// MaxSide caps width and height each. Default 12000 pixels.
	MaxSide int
	// MaxPixels caps width×height. Default 50 million.
	MaxPixels int64
	// MaxDecodedBytes caps the memory the decoded pixels take, computed
	// from the header before decoding: width × height × the bytes a pixel
	// of its colour model takes (8 for 16-bit RGBA PNG, 4 for 8-bit, 3 at
	// most for JPEG's YCbCr, 1 for a palette). Default 128 MiB: a 7000×7000
	// 16-bit PNG (392 MB decoded, from a 394 KB file) is refused, a
	// 24-megapixel photo is not.
	MaxDecodedBytes int64
	// Timeout bounds one URL download as a whole. Default 20s.
	Timeout time.Duration
	// AllowPrivate lets URLs reach loopback, private and other non-public
	// addresses (tests, self-hosted services); image URLs come from posts
	// and pages, so by default they may not. Set from
	// --allow-private-addresses or MUSE_ALLOW_PRIVATE_ADDRESSES=1.
	AllowPrivate bool
	// Client, when set, downloads URLs instead of the built-in client that
	// dials public addresses only; it is then the caller's job to guard it,
	// e.g. with a shared (*fetch.Fetcher).Client().
	Client *http.Client
	// Proxy picks the proxy for the built-in client. Default
	// http.ProxyFromEnvironment.
	Proxy func(*http.Request) (*url.URL, error)
	// UserAgent is sent with URL requests. Default "muse (+https://github.com/musecheck/muse)".
	UserAgent string
}

func (o Options) withDefaults() Options {
	if o.MaxBytes <= 0 {
		o.MaxBytes = 20 << 20
	}
	if o.MaxSide <= 0 {
		o.MaxSide = 12000
	}
	if o.MaxPixels <= 0 {
		o.MaxPixels = 50_000_000
	}
	if o.MaxDecodedBytes <= 0 {
		o.MaxDecodedBytes = 128 << 20
	}
	if o.Timeout <= 0 {
		o.Timeout = 20 * time.Second
	}
	if o.Proxy == nil {
		o.Proxy = http.ProxyFromEnvironment
	}
	if strings.TrimSpace(o.UserAgent) == "" {
		o.UserAgent = "muse (+https://github.com/musecheck/muse)"
	}
	return o
}

// Image is one decoded, checked image.
type Image struct {
	// Source is the path or URL it was loaded from.
	Source string `json:"source"`
	// Format is what the content is: "png", "jpeg", "gif" or "webp".
	Format string `json:"format"`
	Width  int    `json:"width"`
	Height int    `json:"height"`
	// Data is what to send a vision model: the original bytes of a JPEG or
	// PNG, the first frame of a GIF or a WebP re-encoded as PNG.
	Data []byte `json:"-"`
	// MIME is Data's media type, "image/jpeg" or "image/png".
	MIME string `json:"mime"`
	// Hash is the 64-bit perceptual hash (pHash) of the image; compare two
	// with Similarity.
	Hash uint64 `json:"phash"`
}

// DataURL returns Data as a data: URL, the form OpenAI-compatible chat APIs
// take in an image_url content part.
func (i *Image) DataURL() string {
	return "data:" + i.MIME + ";base64," + base64.StdEncoding.EncodeToString(i.Data)
}

// Load reads the image at src, an http(s) URL or a file path (a file://
// URL also works), checks it and computes its hash. Every failure names
// src and matches ErrNotImage, ErrTooLarge, ErrCorrupt or says what else
// went wrong (file missing, HTTP status, refused address).
func Load(ctx context.Context, src string, opts Options) (*Image, error) {
	opts = opts.withDefaults()
	src = strings.TrimSpace(src)
	var data []byte
	var err error
	switch {
	case hasScheme(src, "http"), hasScheme(src, "https"):
		data, err = download(ctx, src, opts)
	case hasScheme(src, "file"):
		u, perr := url.Parse(src)
		if perr != nil {
			return nil, fmt.Errorf("load image %s: %w", src, perr)
		}
		data, err = readFile(u.Path, opts.MaxBytes)
	default:
		data, err = readFile(src, opts.MaxBytes)
	}
	if err != nil {
		return nil, fmt.Errorf("load image %s: %w", src, err)
	}
	img, err := Decode(src, data, opts)
	if err != nil {
		return nil, err
	}
	return img, nil
}

func hasScheme(s, scheme string) bool {
	return len(s) > len(scheme)+3 && strings.EqualFold(s[:len(scheme)+3], scheme+"://")
}

func readFile(path string, limit int64) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	if st, err := f.Stat(); err == nil {
		if st.IsDir() {
			return nil, fmt.Errorf("%w: %s is a directory", ErrNotImage, path)
		}
		if st.Size() > limit {
			return nil, fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, st.Size(), limit)
		}
	}
	data, err := io.ReadAll(io.LimitReader(f, limit+1))
	if err != nil {
		return nil, fmt.Errorf("read: %w", err)
	}
	if int64(len(data)) > limit {
		return nil, fmt.Errorf("%w: more than %d bytes", ErrTooLarge, limit)
	}
	return data, nil
}

// Decode checks and decodes data already in memory (a pasted image, a
// body fetched elsewhere); src only names it in errors and Image.Source.
func Decode(src string, data []byte, opts Options) (*Image, error) {
	opts = opts.withDefaults()
	fail := func(err error) (*Image, error) { return nil, fmt.Errorf("load image %s: %w", src, err) }
	if int64(len(data)) > opts.MaxBytes {
		return fail(fmt.Errorf("%w: %d bytes, limit %d", ErrTooLarge, len(data), opts.MaxBytes))
	}
	format := sniff(data)
	if format == "" {
		return fail(fmt.Errorf("%w: content looks like %s", ErrNotImage, describe(data)))
	}
	cfg, err := decodeConfig(format, data)
	if err != nil {
		return fail(fmt.Errorf("%w: %s header: %v", ErrCorrupt, format, err))
	}
	if cfg.Width <= 0 || cfg.Height <= 0 {
		return fail(fmt.Errorf("%w: %s claims %d×%d pixels", ErrCorrupt, format, cfg.Width, cfg.Height))
	}
	if cfg.Width > opts.MaxSide || cfg.Height > opts.MaxSide || int64(cfg.Width)*int64(cfg.Height) > opts.MaxPixels {
		return fail(fmt.Errorf("%w: %d×%d pixels, limit %d a side and %d in all", ErrTooLarge, cfg.Width, cfg.Height, opts.MaxSide, opts.MaxPixels))
	}
	if n := DecodedBytes(cfg); n > opts.MaxDecodedBytes {
		return fail(fmt.Errorf("%w: %d×%d pixels at %d bytes a pixel take %d MiB decoded, limit %d MiB",
			ErrTooLarge, cfg.Width, cfg.Height, bytesPerPixel(cfg.ColorModel), n>>20, opts.MaxDecodedBytes>>20))
	}
	pix, err := decodePixels(format, data)
	if err != nil {
		return fail(fmt.Errorf("%w: %s: %v", ErrCorrupt, format, err))
	}
	img := &Image{Source: src, Format: format, Width: cfg.Width, Height: cfg.Height}
	switch format {
	case "jpeg", "png":
		img.Data, img.MIME = data, "image/"+format
	default:
		var buf bytes.Buffer
		if err := png.Encode(&buf, pix); err != nil {
			return fail(fmt.Errorf("re-encode %s as PNG: %w", format, err))
		}
		img.Data, img.MIME = buf.Bytes(), "image/png"
	}
	h, err := pHash(pix)
	if err != nil {
		return fail(err)
	}
	img.Hash = h
	return img, nil
}

// DecodedBytes is the memory an image's pixels take once decoded, from its
// header: width × height × the bytes a pixel of its colour model takes.
func DecodedBytes(cfg image.Config) int64 {
	return int64(cfg.Width) * int64(cfg.Height) * int64(bytesPerPixel(cfg.ColorModel))
}

// bytesPerPixel is what the standard decoders allocate a pixel for each
// colour model: image.RGBA64/NRGBA64 8, RGBA/NRGBA, CMYK and YCbCr with
// alpha 4, YCbCr at most 3 (4:4:4), Gray16 and Alpha16 2, Gray, Alpha and a palette 1. An
// unknown model is taken as 8, the most.
func bytesPerPixel(m color.Model) int {
	switch m {
	case color.RGBA64Model, color.NRGBA64Model:
		return 8
	case color.RGBAModel, color.NRGBAModel, color.CMYKModel, color.NYCbCrAModel:
		return 4
	case color.YCbCrModel:
		return 3
	case color.Gray16Model, color.Alpha16Model:
		return 2
	case color.GrayModel, color.AlphaModel:
		return 1
	}
	if _, ok := m.(color.Palette); ok {
		return 1
	}
	return 8
}

// sniff names the format by its magic bytes (the signatures in each
// format's specification), or "" when it is none of the four.
func sniff(b []byte) string {
	switch {
	case bytes.HasPrefix(b, []byte("\x89PNG\r\n\x1a\n")):
		return "png"
	case bytes.HasPrefix(b, []byte("\xff\xd8\xff")):
		return "jpeg"
	case bytes.HasPrefix(b, []byte("GIF87a")), bytes.HasPrefix(b, []byte("GIF89a")):
		return "gif"
	case len(b) >= 12 && string(b[:4]) == "RIFF" && string(b[8:12]) == "WEBP":
		return "webp"
	}
	return ""
}

// describe says what non-image content looks like, so "photo.jpg" that is
// really an HTML error page is reported as such.
func describe(b []byte) string {
	if len(bytes.TrimSpace(b)) == 0 {
		return "nothing (empty)"
	}
	ct := http.DetectContentType(b)
	if mt, _, ok := strings.Cut(ct, ";"); ok {
		ct = mt
	}
	switch ct {
	case "image/bmp", "image/x-icon", "image/avif", "image/tiff":
		return ct + " (unsupported: use PNG, JPEG, GIF or WebP)"
	}
	return ct
}

func decodeConfig(format string, data []byte) (image.Config, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.DecodeConfig(r)
	case "jpeg":
		return jpeg.DecodeConfig(r)
	case "gif":
		return gif.DecodeConfig(r)
	default:
		return webp.DecodeConfig(r)
	}
}

// decodePixels decodes the image; a GIF gives its first frame. Decoders are
// called by name rather than through image.Decode so that no other
// registered format can be reached through crafted magic bytes.
func decodePixels(format string, data []byte) (image.Image, error) {
	r := bytes.NewReader(data)
	switch format {
	case "png":
		return png.Decode(r)
	case "jpeg":
		return jpeg.Decode(r)
	case "gif":
		return gif.Decode(r)
	default:
		return webp.Decode(r)
	}
}
