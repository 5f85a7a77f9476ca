// Package imagetest draws and encodes pictures for tests of code that
// hashes, decodes or reads text from images (sources/images, pipeline),
// so every test works on the same pixels and a hash-similarity threshold
// tuned in one package holds in the other. It is imported only by tests.
//
//	img := imagetest.Scene(0, 320, 240)
//	data := imagetest.PNG(t, img)
//	words := imagetest.Text(t, []string{"Flood in Paris"}, 48)
package imagetest

import (
	"bytes"
	"image"
	"image/color"
	"image/draw"
	"image/gif"
	"image/jpeg"
	"image/png"
	"math"
	"testing"

	"golang.org/x/image/font"
	"golang.org/x/image/font/gofont/goregular"
	"golang.org/x/image/font/opentype"
	"golang.org/x/image/math/fixed"
)

// Scene draws a w×h picture of large shapes, the kind of content a
// perceptual hash sees. Variant 0 is a bright disc on a dark gradient; any
// other variant is horizontal bands with a dark square, a different
// picture to a hash. sources/images/testdata/scene0.webp was made from
// Scene(0, 320, 240) with cwebp -q 80, so the drawing must not change.
func Scene(variant, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := range h {
		for x := range w {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			var v float64
			switch variant {
			case 0:
				v = 0.3 * (fx + fy) / 2
				if math.Hypot(fx-0.35, fy-0.45) < 0.25 {
					v = 0.95
				}
			default:
				v = 0.5 + 0.4*math.Sin(fy*3*math.Pi)
				if fx > 0.6 && fy > 0.2 && fy < 0.7 {
					v = 0.05
				}
			}
			c := uint8(v * 255)
			img.Set(x, y, color.RGBA{c, uint8(float64(c) * 0.8), 255 - c, 255})
		}
	}
	return img
}

// Text renders lines in black on white with the Go font at size points,
// with a margin of size pixels: large and clean enough for tesseract to
// read without preprocessing.
func Text(t testing.TB, lines []string, size float64) *image.RGBA {
	t.Helper()
	f, err := opentype.Parse(goregular.TTF)
	if err != nil {
		t.Fatal(err)
	}
	face, err := opentype.NewFace(f, &opentype.FaceOptions{Size: size, DPI: 72, Hinting: font.HintingFull})
	if err != nil {
		t.Fatal(err)
	}
	defer face.Close()
	lineH := int(size * 1.5)
	w := 0
	for _, l := range lines {
		w = max(w, font.MeasureString(face, l).Ceil())
	}
	img := image.NewRGBA(image.Rect(0, 0, w+2*int(size), lineH*len(lines)+2*int(size)))
	draw.Draw(img, img.Bounds(), image.White, image.Point{}, draw.Src)
	d := &font.Drawer{Dst: img, Src: image.Black, Face: face}
	for i, l := range lines {
		d.Dot = fixed.P(int(size), int(size)+lineH*i+int(size))
		d.DrawString(l)
	}
	return img
}

// PNG encodes img as PNG, failing the test if it cannot.
func PNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// JPEG encodes img as JPEG at quality (1–100), failing the test if it
// cannot.
func JPEG(t testing.TB, img image.Image, quality int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// GIF encodes a two-frame animation whose first frame is first, each
// frame dithered to a fixed 256-colour palette, failing the test if it
// cannot.
func GIF(t testing.TB, first, second image.Image) []byte {
	t.Helper()
	pal := func(img image.Image) *image.Paletted {
		p := image.NewPaletted(img.Bounds(), palette256())
		draw.FloydSteinberg.Draw(p, img.Bounds(), img, image.Point{})
		return p
	}
	var b bytes.Buffer
	if err := gif.EncodeAll(&b, &gif.GIF{Image: []*image.Paletted{pal(first), pal(second)}, Delay: []int{50, 50}}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// palette256 is 8 levels of red and green by 4 of blue.
func palette256() color.Palette {
	var p color.Palette
	for r := range 8 {
		for g := range 8 {
			for b := range 4 {
				p = append(p, color.RGBA{uint8(r * 36), uint8(g * 36), uint8(b * 85), 255})
			}
		}
	}
	return p
}
