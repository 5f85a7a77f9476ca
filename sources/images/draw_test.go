package images

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

// scene draws a picture with large shapes, the kind of content a
// perceptual hash sees; variant changes the layout entirely. testdata/
// scene0.webp was made from scene(0, 320, 240) with cwebp -q 80.
func scene(variant, w, h int) *image.RGBA {
	img := image.NewRGBA(image.Rect(0, 0, w, h))
	for y := 0; y < h; y++ {
		for x := 0; x < w; x++ {
			fx, fy := float64(x)/float64(w), float64(y)/float64(h)
			var v float64
			switch variant {
			case 0: // a bright disc off centre on a dark diagonal gradient
				d := math.Hypot(fx-0.35, fy-0.45)
				v = 0.3 * (fx + fy) / 2
				if d < 0.25 {
					v = 0.95
				}
			default: // horizontal bands and a dark square on the right
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

// textImage renders lines in black on white with the Go font at size
// points, large enough for tesseract to read without preprocessing.
func textImage(t testing.TB, lines []string, size float64) *image.RGBA {
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

func encodePNG(t testing.TB, img image.Image) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := png.Encode(&b, img); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func encodeJPEG(t testing.TB, img image.Image, quality int) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := jpeg.Encode(&b, img, &jpeg.Options{Quality: quality}); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

// encodeGIF writes a two-frame animation whose first frame is first.
func encodeGIF(t testing.TB, first, second image.Image) []byte {
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

func palette256() color.Palette {
	var p color.Palette
	for r := 0; r < 8; r++ {
		for g := 0; g < 8; g++ {
			for b := 0; b < 4; b++ {
				p = append(p, color.RGBA{uint8(r * 36), uint8(g * 36), uint8(b * 85), 255})
			}
		}
	}
	return p
}
